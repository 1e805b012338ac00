"""Memories at the moment a file is opened: what the read hook looks up.

When the agent's own read tool opens a file, its after-tool hook (``memloom hook
read``) hands the payload here. The file is named relative to the project's top
folder (the repository's, :func:`memloom.project.repository`; the agent's folder
outside git) and the memories anchored to it (:mod:`memloom.anchors`: an anchor's
``path`` is relative to that top) in that project are the ones given -- only those.

The path is untrusted (the model chose it): it goes through the project's fence
(:class:`memloom.agents.fence.ProjectFence`) before anything is looked up, so a path
outside the top folder (``/etc/passwd``, ``../../.ssh/id_rsa``), a symlink out of it,
a file in a key folder, a FIFO, a device or a folder gives nothing. The file itself is
never opened: it is only stat'ed, its folders checked.

Read-only and without a model, so the daemon is never asked: SQLite is read directly
(like the prompt hook's fallback, :func:`memloom.capture.prompt.keyword_recall`),
PostgreSQL through the store; the condition is the dialect's ``anchored_to``, the
same as :meth:`~memloom.store.sql.SQLStore.anchored_to`'s, indexed on both backends
(SQLite: ``memory_anchor_paths``, migration 11; PostgreSQL: a GIN index on
``anchors``, migration 10). A SQLite store not yet migrated to 11 (nothing has opened
it since the upgrade) is scanned instead. Standard library only on the SQLite path:
no pydantic.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time

from memloom.agents.markup import native_tag
from memloom.store.dialect import SQLITE
from memloom.store.filters import SearchFilter, where

TYPE_CHECKING = False  # typing's, without loading typing (~3 ms): the hooks load this module
if TYPE_CHECKING:
    from typing import Any

    from memloom.location import Location

__all__ = ["READ_CANDIDATES", "READ_MEMORIES", "anchored_memories", "opened_file", "read_mark"]

#: The most memories one opened file is shown (the token budget usually stops it first).
READ_MEMORIES = 5
#: Rows read for one file before the budget and the session's shown set pick from them.
READ_CANDIDATES = 50
#: What a file's mark in the session's shown set starts with (the file once a session).
READ_MARK = "memloom:read:"


def opened_file(cwd: Any, path: Any) -> tuple[str, str] | None:
    """``(top, rel)``: the project's top folder for the agent folder ``cwd`` and
    ``path`` (absolute, or relative to ``cwd``) relative to it, ``/``-separated; None
    when ``path`` is not a regular file the project's fence admits (outside the top
    folder, through a symlink out, in a key folder, no regular file, missing)."""
    from memloom.agents.fence import ProjectFence
    from memloom.project import repository

    if not isinstance(cwd, str) or not os.path.isabs(cwd) or not isinstance(path, str):
        return None
    if "\x00" in path or "\x00" in cwd or path.startswith("~"):
        return None
    repo = repository(cwd)
    top = os.path.normpath(repo.root if repo is not None else cwd)
    full = os.path.normpath(os.path.join(cwd, path))  # an absolute path stays itself
    rel = os.path.relpath(full, top)
    fence = ProjectFence(top)
    if rel == "." or fence.refusal(rel.replace(os.sep, "/")) is not None:
        return None
    return top, rel.replace(os.sep, "/")


def read_mark(project: str, rel: str) -> str:
    """The id recorded in the session's shown set once ``rel`` of ``project`` was read."""
    return f"{READ_MARK}{project}:{rel}"


def _read_filter(project: str, agent: str | None) -> SearchFilter:
    """What an opened file may be shown: active, below secret, not past its TTL, of
    this project or global (a global one only when its anchor is of this repository,
    :func:`_of_project`: an anchor's path means nothing in another), and not from
    ``agent``'s own memory (it shows that already)."""
    return SearchFilter(
        project=project,
        project_mode="scoped",
        max_sensitivity=2,
        alive_at=time.time(),
        exclude_tags=frozenset({native_tag(agent)}) if agent else None,
    )


def anchored_memories(
    location: Location, project: str, rel: str, *, agent: str | None = None
) -> list[dict[str, Any]]:
    """The memories of ``project`` anchored to ``rel`` (relative to the repository's
    top), pinned first, then the most used; at most :data:`READ_CANDIDATES`.
    ``location``: where the store is (:func:`memloom.location.locate`)."""
    path = location.sqlite_path
    if path is None:
        return _shared_anchored(location.home, project, rel, agent)
    if not path.exists():
        return []
    conditions, params = where(_read_filter(project, agent), SQLITE, "m")
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1.0)
    try:
        db.row_factory = sqlite3.Row
        try:
            rows = _select(db, conditions, [*params], SQLITE.anchored_to("m", rel))
        except sqlite3.OperationalError as exc:
            if "memory_anchor_paths" not in str(exc):
                raise
            # A store nothing has opened since memloom was upgraded (migration 11 not
            # run yet; the hook opens it read-only): the anchors' JSON, scanned.
            rows = _select(db, conditions, [*params], _scanned(rel))
    finally:
        db.close()
    found = [{**dict(r), "anchors": json.loads(r["anchors"] or "[]")} for r in rows]
    return _of_project(found, project, rel)


def _of_project(rows: list[dict[str, Any]], project: str, rel: str) -> list[dict[str, Any]]:
    """``rows`` without the global memories whose anchor to ``rel`` is of another
    repository: a memory saved with no project (``memloom save`` without
    ``--project``) in this repository is shown; one about a ``rel`` elsewhere is not."""
    from memloom.project import project_key

    keys: dict[str, str | None] = {}

    def ours(root: Any) -> bool:
        if not isinstance(root, str) or not os.path.isabs(root):
            return False  # given over HTTP: no folder says which repository
        if root not in keys:
            keys[root] = project_key(root) if os.path.isdir(root) else None
        return keys[root] == project

    return [
        r
        for r in rows
        if r.get("project") is not None
        or any(
            isinstance(a, dict) and a.get("path") == rel and ours(a.get("root"))
            for a in r.get("anchors") or ()
        )
    ]


def _select(
    db: sqlite3.Connection, conditions: list[str], params: list[Any], anchored: Any
) -> list[Any]:
    cond, values = anchored
    return db.execute(
        "SELECT m.id, m.text, m.type, m.project, m.sensitivity, m.pinned, m.anchors "
        f"FROM memories m WHERE {' AND '.join(conditions)} AND {cond} ORDER BY "
        "m.pinned DESC, m.access_count DESC, m.last_referenced DESC LIMIT ?",
        [*params, *values, READ_CANDIDATES],
    ).fetchall()


def _scanned(rel: str) -> tuple[str, list[Any]]:
    """The anchored-to condition without migration 11's index: rows whose anchors' text
    holds ``rel`` as a JSON string (a fast pre-filter), then their anchors read exactly
    (an item that is not an object has no path)."""
    return (
        "instr(m.anchors, ?) > 0 AND EXISTS (SELECT 1 FROM json_each(m.anchors) a "
        "WHERE json_extract(m.anchors, a.fullkey || '.path') = ?)",
        [json.dumps(rel), rel],
    )


def _shared_anchored(home: Any, project: str, rel: str, agent: str | None) -> list[dict[str, Any]]:
    """The same lookup on a PostgreSQL store, through the store (its GIN index)."""
    from memloom.capture.prompt import hook_rows
    from memloom.config import load_settings
    from memloom.store import open_store

    store = open_store(load_settings(home))
    try:
        rows = store.anchored_to(rel, _read_filter(project, agent), READ_CANDIDATES)
    finally:
        store.close()
    return _of_project(hook_rows(rows, "pinned"), project, rel)
