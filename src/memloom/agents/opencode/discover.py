"""Find OpenCode sessions to import: every session of the stores, and of the JSON layout.

The stores are OpenCode's (``opencode.db``) and Kilo Code's (``kilo.db``), found by
:mod:`.home` (or in the folder ``DiscoverOptions.root`` names); the JSON layout is
``storage/session/*/*.json`` beside them. A session updated within the quiet period is
``active`` (OpenCode marks no end; the plugin queues a session when it goes idle, and a
queued session is named by path, exempt from the time rules). Sub-agent sessions (a
``parent_id``) and legacy copies of a session the store also holds count as
``sidecars``; a store that cannot be read now (locked, corrupt) as ``unreadable``,
with the reason logged, and is tried again on the next run.

``size`` of a session is the length of its rendering (:func:`.store.render_session`):
what the ledger compares to decide whether anything is new.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Unpack

from memloom.agents import discovery
from memloom.agents.base import Discovery, SessionFile
from memloom.agents.opencode import home, store

__all__ = ["discover", "discover_paths", "recognizes", "session_project"]

log = logging.getLogger(__name__)

_PRUNE = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", "log", "snapshot"})


def _places(root: Path | None) -> tuple[list[Path], list[Path]]:
    """(store files, legacy storage folders) under ``root``; the homes' when None."""
    if root is None:
        return home.stores(), home.legacy_roots()
    root = Path(root)
    stores = [e for e in discovery.scan_sorted(root) if home.is_store_name(e.name)]
    return [Path(e.path) for e in stores], [root / home.LEGACY_DIR]


def _where(info: store.SessionInfo) -> Path:
    if info.source.suffix == ".json":
        return info.source
    return store.session_path(info.source, info.id)


def _sized(sf: SessionFile, out: Discovery) -> SessionFile | None:
    """``sf`` with its size (its rendering's length: reading the session), or None counted
    ``unreadable``. Done last, for the sessions the rules keep."""
    try:
        sf.size = len(store.render_session(sf.path))
    except OSError as exc:
        log.warning("cannot read OpenCode session %s: %s", sf.path, exc)
        out.skip("unreadable", sf.path)
        return None
    return sf


def _session_file(info: store.SessionInfo, out: Discovery) -> SessionFile | None:
    return _sized(SessionFile(_where(info), info.id, info.directory, 0, info.updated), out)


def _sessions(
    stores: Iterable[Path], legacy: Iterable[Path], out: Discovery
) -> list[store.SessionInfo]:
    found: list[store.SessionInfo] = []
    ids: set[str] = set()
    for db in stores:
        if not db.exists() or not discovery.Fence(db.absolute().parent, out).admits(db):
            continue
        try:
            sessions = store.list_sessions(db)
        except OSError as exc:
            log.warning("cannot read %s: %s", db, exc)
            out.skip("unreadable", db)
            continue
        found += sessions
        ids.update(s.id for s in sessions)
    for folder in legacy:
        fence = discovery.Fence(folder, out)
        if fence.refused():
            continue
        for info in store.legacy_sessions(folder, fence.admits):
            if info.id in ids:
                out.skip("sidecars", info.source)  # migrated into the store: read there
                continue
            found.append(info)
    kept = []
    for info in found:
        if info.parent_id:
            out.skip("sidecars", store.session_path(info.source, info.id))  # a sub-agent's session
        else:
            kept.append(info)
    return kept


def discover(root: Path | None, **rules: Unpack[discovery.Rules]) -> Discovery:
    """The sessions of the stores (and JSON layout) in ``root`` (None: the homes), newest first."""
    out = Discovery()
    pick = discovery.Selection(**rules)
    kept: list[SessionFile] = []
    stores, legacy = _places(root)
    for info in _sessions(stores, legacy, out):
        where = _where(info)
        if pick.needle is not None and pick.needle not in info.directory.casefold():
            out.skip("project_filter", where)
        elif pick.keeps(out, where, info.updated):
            kept.append(SessionFile(where, info.id, info.directory, 0, info.updated))
    sized = (_sized(sf, out) for sf in pick.newest_first(out, kept))
    out.files = [sf for sf in sized if sf is not None]
    return out


def recognizes(path: Path) -> bool:
    """Whether ``path`` is an OpenCode store, one session of it, or a legacy session file."""
    db, sid = store.split_path(path)
    if sid is not None:
        return store.is_store(db)
    return store.is_legacy_session(path) or store.is_store(path)


def session_project(path: Path) -> str | None:
    """The session's directory (its project); None when the store cannot be read."""
    db, sid = store.split_path(path)
    try:
        if sid is None:
            return store.read_messages(path)[1] or None
        for info in store.list_sessions(db):
            if info.id == sid:
                return info.directory or None
    except OSError:
        return None
    return None


def discover_paths(paths: Sequence[Path], *, project: str | None = None) -> Discovery:
    """Sessions named explicitly (``--path``, a queued session): ``<store>#<id>``, a store
    file (all its sessions), a legacy session file, or a folder (walked for stores and
    ``storage/session/*/*.json``). No time rule applies."""
    out = Discovery()
    needle = project.casefold() if project else None
    seen: set[str] = set()
    found: list[SessionFile] = []

    def add(info: store.SessionInfo) -> None:
        sf = _session_file(info, out)
        if sf is None or not discovery.first_visit(seen, os.fspath(sf.path)):
            return
        if needle is not None and needle not in info.directory.casefold():
            out.skip("project_filter", sf.path)
            return
        found.append(sf)

    def whole_store(db: Path) -> None:
        for info in _sessions([db], [], out):
            add(info)

    def consider(path: Path, named: bool) -> None:
        db, sid = store.split_path(path)
        if sid is not None:
            if not discovery.Fence(db.absolute().parent, out).admits(db):
                return
            try:
                match = [s for s in store.list_sessions(db) if s.id == sid]
            except OSError as exc:
                log.warning("cannot read %s: %s", db, exc)
                out.skip("unreadable", path)
                return
            if not match:
                out.skip("missing", path)
            elif match[0].parent_id:
                out.skip("sidecars", path)  # a sub-agent's session, queued when it went idle
            else:
                add(match[0])
            return
        if not named and not (
            home.is_store_name(path.name) or path.parent.parent.name == "session"
        ):
            return  # a folder walk looks for stores and session files by name
        if discovery.regular_stat(path, out) is None:
            return
        info = store.legacy_info(path) if store.is_legacy_session(path) else None
        if info is not None:
            if info.parent_id:
                out.skip("sidecars", path)
            else:
                add(info)
            return
        if home.is_store_name(path.name) or named:
            if store.is_store(path):
                whole_store(path)
            elif named:
                out.skip("not_transcripts", path)

    for given in paths:
        if store.split_path(Path(given))[1] is not None:
            consider(Path(given), True)
        else:
            discovery.walk_named([given], out, consider, prune=_PRUNE, links=True)
    out.files = discovery.newest_first(out, found)
    return out
