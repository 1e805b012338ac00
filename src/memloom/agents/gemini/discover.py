"""Find Gemini CLI chat recordings to import.

Layout (reference §2.1)::

    $GEMINI_CLI_HOME/.gemini or ~/.gemini/
      projects.json                                     root -> slug (>= v0.29)
      tmp/<project-id>/.project_root                    the root, as text (>= v0.29)
      tmp/<project-id>/chats/session-<time>-<sid8>.jsonl   a session (>= v0.39)
      tmp/<project-id>/chats/session-<time>-<sid8>.json    a session (legacy)
      tmp/<project-id>/chats/<parentSessionId>/<sessionId>.jsonl   a sub-agent

**Sub-agents** are skipped as ``sidecars`` (counted): the files under
``chats/<parentSessionId>/``, and any session file whose metadata says
``kind: "subagent"`` (legacy sub-agent files sat next to the main ones). A
sub-agent's "user" turns are prompts the main agent wrote, not the human, and
the parent session already holds the sub-agent's result as a tool call.

**One session, one file.** Resuming a legacy session converts it: Gemini writes
``<name>.jsonl`` next to ``<name>.json`` and leaves the ``.json`` in place. The
``.jsonl`` wins and the ``.json`` is left out as ``superseded``; so is any other
file with the same ``sessionId`` (a ``.jsonl`` over a ``.json``, then the newest).
The ledger is keyed by the ``sessionId`` (read from the file's head), so the
conversion and Gemini's folder migrations never import a session twice.

``discover`` applies its rules in this order, each file counted under the
first rule that skips it:

1. ``sidecars`` / ``not_transcripts`` -- by name and place (no reading);
2. ``superseded`` -- a ``.json`` with a ``.jsonl`` of the same name;
3. ``active`` -- modified within the last ``quiet_seconds``;
4. ``outside_window`` -- not modified within the last ``days`` days;
5. ``sidecars`` (``kind: "subagent"``) and ``superseded`` (same ``sessionId``)
   -- from the file's head (and, for legacy files, its last bytes);
6. ``project_filter`` -- ``project`` is a case-insensitive substring of the
   session's project root, or of its ``tmp`` folder name when the root is unknown;
7. ``over_cap`` -- after sorting newest first, everything past ``max_sessions``.

Only files inside ``chats/`` folders are looked at (the rest of ``tmp/<id>/`` is
logs, plans and checkpoints). A session whose project cannot be found gets
``project_dir=""``: its memories stay global (see :mod:`.project`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Unpack

from memloom.agents import discovery
from memloom.agents.base import Discovery, SessionFile
from memloom.agents.files import open_regular
from memloom.agents.gemini import project as project_mod
from memloom.agents.gemini.home import gemini_home

__all__ = ["Head", "discover", "discover_paths", "read_head", "session_project"]

SESSION_NAME_RE = re.compile(r"^session-.+\.jsonl?$")
HEAD_BYTES = 64 * 1024
TAIL_BYTES = 4096
_SID_RE = re.compile(rb'"sessionId"\s*:\s*("(?:[^"\\]|\\.)*")')
_HASH_RE = re.compile(rb'"projectHash"\s*:\s*("(?:[^"\\]|\\.)*")')
_MESSAGES_RE = re.compile(rb'"messages"\s*:\s*\[')
_KIND_TAIL_RE = re.compile(rb'"kind"\s*:\s*("(?:[^"\\]|\\.)*")\s*\}\s*$')


@dataclass(frozen=True)
class Head:
    """What a file's first (and, for legacy files, last) bytes say about it."""

    is_session: bool
    format: str  # "jsonl" | "json"
    session_id: str | None = None
    project_hash: str | None = None
    kind: str | None = None


def _json_str(raw: bytes | None) -> str | None:
    if raw is None:
        return None
    try:
        value = json.loads(raw.decode("utf-8", "replace"))
    except ValueError:
        return None
    return value if isinstance(value, str) and value else None


def _raw(pattern: re.Pattern[bytes], data: bytes) -> bytes | None:
    m = pattern.search(data)
    return m.group(1) if m else None


def read_head(path: Path) -> Head:
    """The session metadata at the top of ``path`` (never the whole file)."""
    from memloom.agents.gemini.parse import sniff

    try:
        with open_regular(path) as f:  # never another user's file, never a FIFO
            head = f.read(HEAD_BYTES)
            fmt = sniff(head, path.suffix)
            tail = b""
            if fmt == "json":
                size = f.seek(0, 2)
                f.seek(max(0, size - TAIL_BYTES))
                tail = f.read(TAIL_BYTES)
    except OSError:
        return Head(False, "jsonl")
    head = head.replace(b"\x00", b"")
    if fmt == "jsonl":
        first = head.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0]
        try:
            obj = json.loads(first.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            obj = None
        # Gemini's own test for the metadata line: a sessionId and a projectHash
        if (
            isinstance(obj, dict)
            and isinstance(obj.get("sessionId"), str)
            and isinstance(obj.get("projectHash"), str)
        ):
            kind = obj.get("kind")
            return Head(
                True,
                fmt,
                obj["sessionId"] or None,
                obj["projectHash"] or None,
                kind if isinstance(kind, str) else None,
            )
        return Head(False, fmt)
    sid = _json_str(_raw(_SID_RE, head))
    is_session = sid is not None and (
        _MESSAGES_RE.search(head) is not None or _HASH_RE.search(head) is not None
    )
    kind = _json_str(_raw(_KIND_TAIL_RE, tail))
    return Head(is_session, fmt, sid, _json_str(_raw(_HASH_RE, head)), kind)


_head_cache: dict[tuple[str, int, int], Head] = {}


def _cached_head(path: Path, st: os.stat_result) -> Head:
    """Heads by (path, device, inode): a session id never changes in a file Gemini rewrites."""
    key = (os.fspath(path), st.st_dev, st.st_ino)
    found = _head_cache.get(key)
    if found is None or not found.is_session:
        found = read_head(path)
        if len(_head_cache) > 100_000:
            _head_cache.clear()
        _head_cache[key] = found
    return found


def _project_folder(path: Path) -> Path | None:
    """``tmp/<id>`` for a file in ``tmp/<id>/chats/`` (else None)."""
    return path.parent.parent if path.parent.name == "chats" else None


def session_project(
    path: Path, head: Head | None = None, candidates: Iterable[str] = ()
) -> project_mod.ProjectMatch:
    """The session's project root (see :mod:`.project`), from its place and its projectHash."""
    if head is None:
        head = read_head(path)
    folder = _project_folder(path)
    if folder is None:
        folder = path.parent  # not in Gemini's layout: only the hash can tell
        match = project_mod.resolve(
            folder, project_hash=head.project_hash, candidates=candidates, home=None
        )
        if match.how in ("projects.json", project_mod.MARKER):
            return project_mod.ProjectMatch(None, "unresolved", "not in a tmp/<id>/chats folder")
        return match
    return project_mod.resolve(folder, project_hash=head.project_hash, candidates=candidates)


@dataclass
class _Candidate:
    path: Path
    st: os.stat_result
    folder: Path | None


def _is_recording(name: str) -> bool:
    """A ``.json``/``.jsonl`` file: in a ``chats/<parentSessionId>/`` folder, a sub-agent's."""
    return name.endswith((".jsonl", ".json"))


def _drop_converted(cands: list[_Candidate], out: Discovery) -> list[_Candidate]:
    """A ``.json`` whose ``.jsonl`` (same name, same folder) exists is superseded."""
    jsonl = {os.fspath(c.path) for c in cands if c.path.suffix == ".jsonl"}
    kept = []
    for c in cands:
        if c.path.suffix == ".json" and os.fspath(c.path) + "l" in jsonl:
            out.skip("superseded", c.path)
        else:
            kept.append(c)
    return kept


def _by_content(
    cands: list[_Candidate],
    out: Discovery,
    needle: str | None,
    candidates: Sequence[str],
) -> list[SessionFile]:
    """Sub-agents by kind, one file per sessionId, the project filter: SessionFiles."""
    best: dict[str, tuple[_Candidate, Head]] = {}
    for c in cands:
        head = _cached_head(c.path, c.st)
        if head.kind == "subagent":
            out.skip("sidecars", c.path)
            continue
        sid = head.session_id or c.path.stem
        pick = (c, head)
        if sid in best:
            other = best[sid]
            rank = (c.path.suffix == ".jsonl", c.st.st_mtime)
            if rank > (other[0].path.suffix == ".jsonl", other[0].st.st_mtime):
                out.skip("superseded", other[0].path)
                best[sid] = pick
            else:
                out.skip("superseded", c.path)
            continue
        best[sid] = pick
    files: list[SessionFile] = []
    for sid, (c, head) in best.items():
        match = session_project(c.path, head, candidates)
        folder_name = c.folder.name if c.folder is not None else c.path.parent.name
        if needle is not None and needle not in (match.root or folder_name).casefold():
            out.skip("project_filter", c.path)
            continue
        files.append(SessionFile(c.path, sid, match.root or "", c.st.st_size, c.st.st_mtime))
    return files


def discover(
    root: Path | None = None, *, candidates: Sequence[str] = (), **rules: Unpack[discovery.Rules]
) -> Discovery:
    """Main sessions under ``<root>/tmp/*/chats/``, newest first (order of rules: module doc).

    ``root`` defaults to :func:`gemini_home` (a ``tmp`` folder itself is accepted
    too). ``days=None`` and ``max_sessions=None`` disable the window and the cap.
    ``candidates``: project roots known from elsewhere (hashed against projectHash).
    """
    out = Discovery()
    pick = discovery.Selection(**rules)
    tmp = discovery.home_folder(gemini_home() if root is None else Path(root), "tmp")
    fence = discovery.Fence(tmp, out)
    if fence.refused():
        return out
    found: list[_Candidate] = []
    for pd in discovery.scan_sorted(tmp):
        try:
            if not pd.is_dir():
                continue
            it = os.scandir(os.path.join(pd.path, "chats"))
        except OSError:
            continue
        with it:
            entries = sorted(it, key=lambda e: e.name)
        for e in entries:
            try:
                is_dir = e.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                discovery.count_sidecars(e.path, out, _is_recording)
                continue
            if not SESSION_NAME_RE.match(e.name):
                out.skip("not_transcripts", e.path)
                continue
            st = fence.regular_stat(e)
            if st is None:
                continue
            found.append(_Candidate(Path(e.path), st, Path(pd.path)))
    found = _drop_converted(found, out)
    timely = [c for c in found if pick.keeps(out, c.path, c.st.st_mtime)]
    out.files = pick.newest_first(out, _by_content(timely, out, pick.needle, candidates))
    return out


def _in_sidecar_place(path: Path) -> bool:
    """``chats/<parentSessionId>/<file>``: a sub-agent's recording."""
    return path.parent.parent.name == "chats"


def discover_paths(
    paths: Sequence[Path], *, project: str | None = None, candidates: Sequence[str] = ()
) -> Discovery:
    """Sessions named explicitly (``--path``): files or folders, recognised by content.

    No time rule applies. A path that does not exist is ``missing``; a file that
    is not a Gemini recording by its content (or not a regular file) is
    ``not_transcripts``; sub-agent recordings are ``sidecars`` even when named;
    the one-file-per-session rule and the project filter apply as in
    :func:`discover`. Folders are walked recursively. A file reached twice is
    listed once. Files are sorted newest first.
    """
    out = Discovery()
    needle = project.casefold() if project else None
    seen: set[str] = set()
    cands: list[_Candidate] = []

    def consider(path: Path, named: bool) -> None:
        if not named and path.suffix not in (".json", ".jsonl"):
            out.skip("not_transcripts", path)
            return
        st = discovery.regular_stat(path, out)
        if st is None or not discovery.first_visit(seen, path):
            return
        if path.suffix in (".json", ".jsonl") and _in_sidecar_place(path):
            out.skip("sidecars", path)
            return
        if not _cached_head(path, st).is_session:
            out.skip("not_transcripts", path)
            return
        cands.append(_Candidate(path, st, _project_folder(path)))

    discovery.walk_named(paths, out, consider)
    out.files = discovery.newest_first(
        out, _by_content(_drop_converted(cands, out), out, needle, candidates)
    )
    return out
