"""Find Codex CLI rollouts to import.

Layout (reference §1.1)::

    $CODEX_HOME or ~/.codex/
      sessions/YYYY/MM/DD/rollout-<local time>-<thread id>.jsonl      live rollouts
      sessions/YYYY/MM/DD/rollout-…-<thread id>.jsonl.zst             compressed by newer builds
      archived_sessions/rollout-…-<thread id>.jsonl[.zst]            archived (flat)

A session is identified by its thread id (``session_meta.payload.id``, else the
UUID at the end of the file name), never by its path: Codex moves rollouts to
``archived_sessions/`` and compresses them, and the ledger must not import the
moved or compressed copy again (:meth:`memloom.agents.codex.Codex.ledger_identity`).

**Sub-agent rollouts** (``session_meta.payload.source`` is an object with a
``subagent`` key: ``thread_spawn``, ``review``, ``compact``,
``memory_consolidation``) are skipped as ``sidecars``, like Claude Code's
sub-agent files: the child's "user" messages are the parent's instructions, not
typed text, and the parent rollout already carries the outcome (the
``spawn_agent`` call and its output, the sub-agent's final message returned to
the parent). Importing both would distil the same work twice under two sessions.

``discover`` applies its rules in this order, each file counted under the first
rule that skips it:

1. ``not_transcripts`` -- by name and place: anything in ``sessions/`` or
   ``archived_sessions/`` that is not a ``rollout-*.jsonl[.zst]`` regular file
   at its place (``sessions/Y/M/D/``, or flat in ``archived_sessions/``);
2. ``superseded`` -- a ``.jsonl.zst`` whose plain ``.jsonl`` sibling exists (the
   plain file wins, as in Codex itself);
3. ``project_filter`` -- only when ``project`` is given (reads each file's first
   line: the session's cwd, normalised to its git root);
4. ``active`` -- modified within the last ``quiet_seconds``;
5. ``outside_window`` -- not modified within the last ``days`` days;
6. ``sidecars`` -- sub-agent rollouts (reads the first line);
7. ``superseded`` -- a second copy of a thread id already listed (a rollout
   caught both in ``sessions/`` and ``archived_sessions/``: the newest wins);
8. ``over_cap`` -- after sorting newest first, everything past ``max_sessions``.

``SessionFile.size`` is the *content* size: decompressed for ``.zst`` (memloom's
watermarks count decompressed bytes). ``SessionFile.project_dir`` is the
session's project (its cwd, normalised), or ``""`` when the file names none.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Unpack

from memloom.agents import discovery
from memloom.agents.base import Discovery, SessionFile
from memloom.agents.codex.home import ARCHIVED_DIR, SESSIONS_DIR, codex_home
from memloom.agents.codex.parse import project_root
from memloom.agents.codex.stream import ZST_SUFFIX, content_size, open_session

__all__ = [
    "Head",
    "discover",
    "discover_paths",
    "is_rollout_name",
    "plain_name",
    "read_head",
    "session_project",
]

ROLLOUT_RE = re.compile(r"^rollout-.*\.jsonl(?:\.zst)?$")
_UUID_TAIL_RE = re.compile(
    r"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl(?:\.zst)?$"
)
_YEAR_RE = re.compile(r"^\d{4}$")
_MD_RE = re.compile(r"^\d{2}$")
#: The first line (session_meta) holds the instructions text: allow it to be large.
HEAD_LIMIT = 4 << 20


def is_rollout_name(name: str) -> bool:
    return bool(ROLLOUT_RE.match(name))


def plain_name(name: str) -> str:
    """``rollout-….jsonl`` for ``rollout-….jsonl.zst`` (and itself for a plain name)."""
    return name[: -len(ZST_SUFFIX)] if name.endswith(ZST_SUFFIX) else name


def id_from_name(name: str) -> str | None:
    """The thread id at the end of a rollout's file name, lower-cased."""
    m = _UUID_TAIL_RE.search(name)
    return m.group(1).lower() if m else None


@dataclass(frozen=True)
class Head:
    """What a rollout's first record says about the session."""

    session_id: str | None
    cwd: str | None
    subagent: bool
    parent_id: str | None = None


def _head_from(obj: Any) -> Head | None:
    if not isinstance(obj, dict):
        return None
    if obj.get("type") == "session_meta" and isinstance(obj.get("payload"), dict):
        p = obj["payload"]
    elif "type" not in obj and "id" in obj:  # legacy first line
        p = obj
    else:
        return None
    sid = p.get("id") if isinstance(p.get("id"), str) else p.get("session_id")
    cwd = p.get("cwd")
    source = p.get("source")
    subagent = isinstance(source, dict) and "subagent" in source
    parent = None
    if subagent:
        spawn = source.get("subagent")
        spawn = spawn.get("thread_spawn") if isinstance(spawn, dict) else None
        if isinstance(spawn, dict) and isinstance(spawn.get("parent_thread_id"), str):
            parent = spawn["parent_thread_id"]
    return Head(
        sid if isinstance(sid, str) and sid else None,
        cwd if isinstance(cwd, str) and cwd else None,
        subagent,
        parent,
    )


_head_cache: dict[tuple[str, int, int], Head | None] = {}


def read_head(path: Path, st: os.stat_result | None = None) -> Head | None:
    """The session_meta of ``path`` (its first line), or None if absent or unreadable.

    Reads (decompressing a ``.zst``) only up to the first newline, at most
    :data:`HEAD_LIMIT` bytes. Cached per (path, size, mtime).
    """
    key = None
    if st is not None:
        key = (os.fspath(path), st.st_size, st.st_mtime_ns)
        if key in _head_cache:
            return _head_cache[key]
    found: Head | None = None
    try:
        with open_session(path) as f:
            buf = b""
            while len(buf) < HEAD_LIMIT:
                block = f.read(64 * 1024)
                if not block:
                    break
                nl = block.find(b"\n")
                if nl >= 0:
                    buf += block[:nl]
                    break
                buf += block
        try:
            found = _head_from(json.loads(buf.replace(b"\x00", b"")))
        except (ValueError, RecursionError):
            found = None
    except OSError:
        found = None
    if key is not None:
        if len(_head_cache) > 100_000:
            _head_cache.clear()
        _head_cache[key] = found
    return found


def session_project(path: Path) -> str | None:
    """The session's project: its session_meta cwd normalised to the git root."""
    head = read_head(Path(path))
    return project_root(head.cwd) if head is not None and head.cwd else None


def _session_file(path: Path, st: os.stat_result, head: Head | None) -> SessionFile:
    sid = (
        (head.session_id if head else None)
        or id_from_name(path.name)
        or plain_name(path.name).removesuffix(".jsonl")
    )
    project = project_root(head.cwd) if head is not None and head.cwd else ""
    return SessionFile(path, sid, project, st.st_size, st.st_mtime)


def _walk_counting(d: str, out: Discovery) -> None:
    """Every file under ``d`` (an unexpected place) counts as not_transcripts."""
    for dirpath, _dirs, files in os.walk(d):
        for fn in files:
            out.skip("not_transcripts", os.path.join(dirpath, fn))


def _is_dir(e: os.DirEntry[str]) -> bool:
    try:
        return e.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _rollouts_in(d: str, fence: discovery.Fence, found: list[tuple[Path, os.stat_result]]) -> None:
    """The rollouts directly in ``d`` (plain wins over its .zst), others counted."""
    out = fence.out
    entries = discovery.scan_sorted(d)
    names = {e.name for e in entries}
    for e in entries:
        if _is_dir(e):
            _walk_counting(e.path, out)
            continue
        if not is_rollout_name(e.name):
            out.skip("not_transcripts", e.path)
            continue
        st = fence.regular_stat(e)  # symlinks followed inside the home only; never a FIFO
        if st is None:
            continue
        if e.name.endswith(ZST_SUFFIX) and plain_name(e.name) in names:
            out.skip("superseded", e.path)
            continue
        found.append((Path(e.path), st))


def _candidates(home: Path, out: Discovery) -> list[tuple[Path, os.stat_result]]:
    found: list[tuple[Path, os.stat_result]] = []
    sessions = home / SESSIONS_DIR
    if not sessions.is_dir() and home.name == SESSIONS_DIR and home.is_dir():
        sessions, home = home, home.parent  # a sessions folder given itself
    fence = discovery.Fence(home, out)
    if fence.refused():
        return found
    for year in discovery.scan_sorted(os.fspath(sessions)):
        if not (_is_dir(year) and _YEAR_RE.match(year.name)):
            _count_stray(year, out)
            continue
        for month in discovery.scan_sorted(year.path):
            if not (_is_dir(month) and _MD_RE.match(month.name)):
                _count_stray(month, out)
                continue
            for day in discovery.scan_sorted(month.path):
                if not (_is_dir(day) and _MD_RE.match(day.name)):
                    _count_stray(day, out)
                    continue
                _rollouts_in(day.path, fence, found)
    archived = home / ARCHIVED_DIR
    if archived.is_dir():
        _rollouts_in(os.fspath(archived), fence, found)
    return found


def _count_stray(e: os.DirEntry[str], out: Discovery) -> None:
    if _is_dir(e):
        _walk_counting(e.path, out)
    else:
        out.skip("not_transcripts", e.path)


def _matches(project: str, head: Head | None) -> bool:
    if head is None or not head.cwd:
        return False
    needle = project.casefold()
    return needle in project_root(head.cwd).casefold() or needle in head.cwd.casefold()


def discover(root: Path | None = None, **rules: Unpack[discovery.Rules]) -> Discovery:
    """Rollouts under ``<root>/sessions/Y/M/D/`` and ``<root>/archived_sessions/``, newest first.

    ``root`` defaults to the Codex home (a ``sessions`` folder itself is accepted
    too). ``days=None`` and ``max_sessions=None`` disable the window and the cap.
    ``project`` is a case-insensitive substring of the session's cwd or its git
    root. See the module docstring for the order of the skip rules.
    """
    out = Discovery()
    pick = discovery.Selection(**rules)
    home = codex_home() if root is None else Path(root)
    kept: list[tuple[Path, os.stat_result]] = []
    for path, st in _candidates(home, out):
        if pick.project and not _matches(pick.project, read_head(path, st)):
            out.skip("project_filter", path)
        elif pick.keeps(out, path, st.st_mtime):
            kept.append((path, st))
    files = pick.newest_first(out, _finish(kept, out))
    out.files = [_sized(sf) for sf in files]
    return out


def _finish(kept: list[tuple[Path, os.stat_result]], out: Discovery) -> list[SessionFile]:
    """Sidecars out, one file per thread id (the newest wins), newest first."""
    files: list[SessionFile] = []
    ids: set[str] = set()
    kept.sort(key=lambda c: (-c[1].st_mtime, os.fspath(c[0])))
    for path, st in kept:
        head = read_head(path, st)
        if head is not None and head.subagent:
            out.skip("sidecars", path)
            continue
        sf = _session_file(path, st, head)
        if sf.session_id in ids:
            out.skip("superseded", path)
            continue
        ids.add(sf.session_id)
        files.append(sf)
    return files


def _sized(sf: SessionFile) -> SessionFile:
    """``sf`` with its content size (decompressed length for a ``.zst``)."""
    if not sf.path.name.endswith(ZST_SUFFIX):
        return sf
    try:
        st = sf.path.stat()
        size = content_size(sf.path, st)
    except OSError:
        return sf  # unreadable: the importer reports it when it opens the file
    return SessionFile(sf.path, sf.session_id, sf.project_dir, size, sf.mtime)


def discover_paths(paths: Sequence[Path], *, project: str | None = None) -> Discovery:
    """Rollouts named explicitly (the ``--path`` option): files or folders.

    No time rule applies (not the quiet period, the window nor the cap). A path
    that does not exist is ``missing``. A named file ending in ``.jsonl`` or
    ``.jsonl.zst`` is accepted whatever its name (its session id comes from its
    session_meta, else its name); folders are walked recursively for
    ``rollout-*.jsonl[.zst]`` (other files: ``not_transcripts``). Sub-agent
    rollouts are ``sidecars`` even when named; a ``.zst`` next to its plain
    twin and a second copy of a thread id are ``superseded``; ``project``
    filters as in :func:`discover`. Files are sorted newest first.
    """
    out = Discovery()
    seen: set[str] = set()
    kept: list[tuple[Path, os.stat_result]] = []

    def consider(path: Path, named: bool) -> None:
        name = path.name
        if not (name.endswith((".jsonl", ".jsonl.zst")) and (named or is_rollout_name(name))):
            out.skip("not_transcripts", path)
            return
        st = discovery.regular_stat(path, out)
        if st is None:
            return
        if name.endswith(ZST_SUFFIX) and path.with_name(plain_name(name)).exists():
            out.skip("superseded", path)
            return
        if not discovery.first_visit(seen, path):
            return
        if project and not _matches(project, read_head(path, st)):
            out.skip("project_filter", path)
            return
        kept.append((path, st))

    discovery.walk_named(paths, out, consider)
    out.files = [_sized(sf) for sf in _finish(kept, out)]
    return out
