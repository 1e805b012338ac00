"""Stores written before a project was its repository: their folder labels, filed
under the repository's key (:func:`memloom.project.project_key`).

A label is a folder on this machine inside a git repository: its rows move to the
repository's project, so two worktrees or clones of one repository that had a project
each end up in one, every memory kept. A folder gone from this machine, outside git,
or a label that is no folder keeps its label: nothing is guessed. Provenance, the
ledger and the native-notes rows keep the folder they name. On a shared PostgreSQL
store only this owner's rows move (another machine's folders mean nothing here).
"""

from __future__ import annotations

import logging
import os

from memloom.core.context import CoreContext
from memloom.errors import StoreError
from memloom.project import project_key

__all__ = ["META_KEY", "VERSION", "relabel", "relabel_once"]

log = logging.getLogger(__name__)

#: The meta row that says the store's labels were moved once, at an upgrade.
META_KEY = "project_identity"
VERSION = "1"


def relabel(ctx: CoreContext) -> dict[str, str]:
    """Move every folder label of a git repository here to its key; ``old -> new``.
    Idempotent: a key is its own key, so a second run moves nothing."""
    store = ctx.store
    moves: dict[str, str] = {}
    for label in store.project_labels():
        if not os.path.isabs(label):
            continue
        key = project_key(label)
        if key and key != label:
            moves[label] = key
    if not moves:
        return moves
    with ctx.lock, store.transaction():
        for old, new in sorted(moves.items()):
            moved = store.rename_project(old, new)
            log.info("project %s is now %s (%d memories)", old, new, moved)
    return moves


def relabel_once(ctx: CoreContext) -> dict[str, str]:
    """:func:`relabel` the first time a store is opened by this version; a store that
    cannot be written (a read-only file) is opened all the same, and says why."""
    store = ctx.store
    try:
        if store.get_meta(META_KEY) == VERSION:
            return {}
        moves = relabel(ctx)
        store.set_meta(META_KEY, VERSION)
    except StoreError as exc:
        log.warning("project labels not moved to their repositories: %s", exc)
        return {}
    return moves
