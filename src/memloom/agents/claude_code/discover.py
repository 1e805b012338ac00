"""Find Claude Code session transcripts to import.

Layout (reference ``claude-code-transcripts.md`` §2, §2.1)::

    $CLAUDE_CONFIG_DIR or ~/.claude/
      projects/<project-dir>/<session-uuid>.jsonl                 main transcript
      projects/<project-dir>/agent-<8 hex>.jsonl                  2.0.x sidecar
      projects/<project-dir>/<session-uuid>/subagents/agent-*.jsonl   2.1.x sidecar
      projects/<project-dir>/<session-uuid>/subagents/agent-*.meta.json
      projects/<project-dir>/<session-uuid>/subagents/workflows/<wf>/{agent-*,journal}.jsonl

Only main transcripts are imported. Sub-agent sidecars repeat the *parent's*
``sessionId`` and every line is ``isSidechain: true``, so they are skipped.

``discover`` applies its rules in this order, each file counted under the first
rule that skips it:

1. ``sidecars`` / ``not_transcripts`` -- by name and place (no stat needed);
2. ``project_filter`` -- only when ``project`` is given (reads each file's head);
3. ``active`` -- modified within the last ``quiet_seconds`` (still being written);
4. ``outside_window`` -- not modified within the last ``days`` days;
5. ``over_cap`` -- after sorting newest first, everything past ``max_sessions``.

Discovery only lists directories and stats main transcripts; it reads file
contents only for the project filter.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Unpack

from memloom.agents import discovery
from memloom.agents.base import SKIP_REASONS, Discovery, SessionFile
from memloom.agents.claude_code.home import claude_root
from memloom.agents.files import open_regular

__all__ = [
    "SKIP_REASONS",
    "Discovery",
    "SessionFile",
    "claude_root",
    "discover",
    "discover_paths",
    "is_main_transcript",
    "session_project",
]

SESSION_NAME_RE = re.compile(
    r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.jsonl$"
)
_SESSION_DIR_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
#: Folders (inside a session folder) that hold sub-agent and workflow files.
_SIDECAR_DIRS = frozenset({"subagents", "workflows"})

HEAD_BYTES = 64 * 1024
HEAD_LINES = 200
_CWD_RE = re.compile(rb'"cwd"\s*:\s*("(?:[^"\\]|\\.)*")')


def is_main_transcript(path: Path) -> bool:
    """A UUID-named ``.jsonl`` directly under ``projects/<dir>/``."""
    path = Path(path)
    return bool(SESSION_NAME_RE.match(path.name)) and path.parent.parent.name == "projects"


def _is_sidecar_name(name: str) -> bool:
    return name.startswith("agent-") and name.endswith(".jsonl")


def _in_sidecar_area(path: Path) -> bool:
    """Inside ``<session-uuid>/subagents/`` or ``<session-uuid>/workflows/`` (at any depth)."""
    parts = path.parent.parts
    return any(
        parts[i] in _SIDECAR_DIRS and _SESSION_DIR_RE.match(parts[i - 1])
        for i in range(1, len(parts))
    )


def session_project(path: Path) -> str | None:
    """The session's project: the first top-level ``cwd`` in the file's records.

    Reads only the head (at most 64 KiB or the first 200 lines). Complete lines
    are JSON-decoded; if the head ends inside a long first line without a
    ``cwd`` found, the first ``"cwd":"…"`` key in the raw head is used instead
    (JSON string escapes in record text never match that pattern). None if
    there is no ``cwd`` or the file can't be read.
    """
    try:
        with open_regular(path) as f:  # never another user's file, never a FIFO
            head = f.read(4096)  # the cwd is almost always in the first lines
            if len(head) < 4096:
                return _head_cwd(head, complete=True)
            found = _head_cwd(head, complete=False, partial_fallback=False)
            if found is not None:
                return found
            head += f.read(HEAD_BYTES - len(head))
    except OSError:
        return None
    return _head_cwd(head, complete=len(head) < HEAD_BYTES)


def _head_cwd(head: bytes, *, complete: bool, partial_fallback: bool = True) -> str | None:
    """The first ``cwd`` in ``head``.

    ``complete``: the head is the whole file. ``partial_fallback``: look for a
    raw ``"cwd"`` key in an unterminated last line.
    """
    lines = head.split(b"\n")
    partial = lines.pop() if not head.endswith(b"\n") else b""
    for raw in lines[:HEAD_LINES]:
        if b'"cwd"' not in raw:
            continue
        raw = raw.replace(b"\x00", b"")
        try:
            obj = json.loads(raw.decode("utf-8", "replace"))
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            cwd = obj.get("cwd")
            if isinstance(cwd, str) and cwd:
                return cwd
            continue
        # a corrupt line: fall back to the raw key
        found = _raw_cwd(raw)
        if found:
            return found
    if len(lines) < HEAD_LINES and partial and (complete or partial_fallback):
        if complete:  # an unterminated last line: decode it properly if possible
            try:
                obj = json.loads(partial.replace(b"\x00", b"").decode("utf-8", "replace"))
            except ValueError:
                obj = None
            if isinstance(obj, dict):
                cwd = obj.get("cwd")
                return cwd if isinstance(cwd, str) and cwd else None
        return _raw_cwd(partial)
    return None


def _raw_cwd(raw: bytes) -> str | None:
    m = _CWD_RE.search(raw)
    if not m:
        return None
    try:
        value = json.loads(m.group(1).decode("utf-8", "replace"))
    except ValueError:
        return None
    return value if isinstance(value, str) and value else None


_project_cache: dict[tuple[str, int, int], str] = {}


def _project_of(path: Path, st: os.stat_result | None, fallback: str) -> str:
    key = (os.fspath(path), st.st_dev, st.st_ino) if st is not None else None
    if key is not None and key in _project_cache:
        return _project_cache[key]
    found = session_project(path)
    if found is None:
        return fallback
    if key is not None:
        if len(_project_cache) > 100_000:
            _project_cache.clear()
        _project_cache[key] = found
    return found


def _session_dir_sidecar(name: str) -> bool:
    """A file inside a ``<session-uuid>/`` folder that is a sidecar (else metadata)."""
    return name.endswith(".jsonl") and name != "journal.jsonl"


def discover(root: Path | None = None, **rules: Unpack[discovery.Rules]) -> Discovery:
    """Main transcripts under ``<root>/projects/*/``, newest first.

    ``root`` defaults to :func:`claude_root` (a ``projects`` folder itself is
    accepted too). ``days=None`` and ``max_sessions=None`` disable the window and
    the cap. ``project`` is a case-insensitive substring of the session's
    project (its first ``cwd``, else the ``projects/<dir>`` folder name). See the
    module docstring for the order in which skip rules apply.
    """
    out = Discovery()
    pick = discovery.Selection(**rules)
    projects = discovery.home_folder(claude_root() if root is None else Path(root), "projects")
    fence = discovery.Fence(projects, out)
    if fence.refused():
        return out
    candidates: list[SessionFile] = []
    for pd in discovery.scan_sorted(projects):
        try:
            if not pd.is_dir():
                out.skip("not_transcripts", pd.path)
                continue
            it = os.scandir(pd.path)
        except OSError:
            continue
        with it:
            entries = list(it)
        for e in entries:
            name = e.name
            try:
                is_dir = e.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if _SESSION_DIR_RE.match(name):
                    discovery.count_sidecars(e.path, out, _session_dir_sidecar)
                continue  # e.g. memory/: not part of the session files
            if SESSION_NAME_RE.match(name):
                st = fence.regular_stat(e)
                if st is None:
                    continue
                path = Path(e.path)
                if (
                    pick.needle is not None
                    and pick.needle not in _project_of(path, st, pd.name).casefold()
                ):
                    out.skip("project_filter", path)
                    continue
                candidates.append(SessionFile(path, name[:-6], pd.name, st.st_size, st.st_mtime))
            elif _is_sidecar_name(name):
                out.skip("sidecars", e.path)
            else:
                out.skip("not_transcripts", e.path)
    kept = [sf for sf in candidates if pick.keeps(out, sf.path, sf.mtime)]
    out.files = pick.newest_first(out, kept)
    return out


def discover_paths(paths: Sequence[Path], *, project: str | None = None) -> Discovery:
    """Transcripts named explicitly (the ``--path`` option): files or folders.

    No discovery rule applies here: not the quiet period, the day window nor the
    cap -- the caller asked for these files. Still:

    * A path that does not exist counts as ``missing``.
    * A given file that is a sub-agent sidecar (``agent-*.jsonl``, or a
      ``.jsonl`` inside a ``subagents``/``workflows`` folder) is skipped as
      ``sidecars`` even though it was named: every line of it is a sidechain
      line carrying the *parent's* ``sessionId``, so importing it would yield
      nothing (the parser drops sidechain lines) or, worse, attribute sub-agent
      chatter to the parent session. Import the parent transcript instead.
    * Any other given ``.jsonl`` file is accepted, even if not UUID-named (its
      session id is then the file stem). Other given files, and anything that
      is not a regular file (a FIFO, a device), are ``not_transcripts``.
    * Folders are walked recursively: ``.jsonl`` files are accepted, except
      sidecars (counted) and ``journal.jsonl`` (workflow journals:
      ``not_transcripts``); other files count as ``not_transcripts``.
    * ``project`` filters as in :func:`discover` (fallback: parent folder name).

    A file reached twice (named and inside a named folder) is listed once.
    Files are sorted newest first.
    """
    out = Discovery()
    needle = project.casefold() if project else None
    seen: set[str] = set()
    found: list[SessionFile] = []

    def consider(path: Path, named: bool) -> None:
        name = path.name
        in_sidecar_dir = _in_sidecar_area(path)
        if not name.endswith(".jsonl"):
            out.skip("not_transcripts", path)
            return
        if _is_sidecar_name(name) or (in_sidecar_dir and name != "journal.jsonl"):
            out.skip("sidecars", path)
            return
        if name == "journal.jsonl" and in_sidecar_dir:
            out.skip("not_transcripts", path)
            return
        st = discovery.regular_stat(path, out)  # FIFOs, devices: never opened
        if st is None or not discovery.first_visit(seen, path):
            return
        parent = path.parent.name
        if needle is not None and needle not in _project_of(path, st, parent).casefold():
            out.skip("project_filter", path)
            return
        found.append(SessionFile(path, path.stem, parent, st.st_size, st.st_mtime))

    discovery.walk_named(paths, out, consider)
    out.files = discovery.newest_first(out, found)
    return out
