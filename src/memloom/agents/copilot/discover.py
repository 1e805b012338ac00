"""Find GitHub Copilot CLI sessions to import.

Layout (reference ``agents.md`` §5)::

    $COPILOT_HOME or ~/.copilot/
      session-state/<session id>/events.jsonl      the session's events (append-only)
      session-state/<session id>/workspace.yaml    id, cwd, git_root, summary, …
      history-session-state/*.json                 2025 one-JSON-per-session files (UNVERIFIED)

A session whose last record is ``session.shutdown`` is finished and importable at
once; any other session (and every legacy file, which has no end marker) only
after ``quiet_seconds`` without a write. Rules, each file counted under the first
that skips it: ``not_transcripts`` (a session folder without ``events.jsonl``,
stray files, FIFOs) -> ``project_filter`` (reads the session's head) -> ``active``
-> ``outside_window`` -> ``over_cap`` (newest first).

``SessionFile.session_id`` is the Copilot session id (the folder name, or the
``sessionId`` in the file for a named or legacy file); ``project_dir`` is the
session's project when the project filter read it, else ``""``.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Unpack

from memloom.agents import discovery
from memloom.agents.base import Discovery, SessionFile
from memloom.agents.copilot.home import LEGACY_DIR, SESSION_DIR, copilot_home
from memloom.agents.files import open_regular

__all__ = [
    "EVENTS_FILE",
    "discover",
    "discover_paths",
    "is_finished",
    "recognizes",
    "session_id_of",
    "session_project",
]

EVENTS_FILE = "events.jsonl"
HEAD_BYTES = 64 * 1024
TAIL_BYTES = 256 * 1024
_SESSION_ID_RE = re.compile(rb'"sessionId"\s*:\s*("(?:[^"\\]|\\.)*")')


def _head_events(path: Path) -> list[dict[str, object]]:
    """The complete ``session.*`` events in the first 64 KiB of an events file."""
    try:
        with open_regular(path) as f:
            head = f.read(HEAD_BYTES)
    except OSError:
        return []
    lines = head.split(b"\n")
    if len(head) == HEAD_BYTES:
        lines.pop()  # possibly cut
    out = []
    for raw in lines[:200]:
        if b'"session.' not in raw:
            continue
        try:
            obj = json.loads(raw.replace(b"\x00", b"").decode("utf-8", "replace"))
        except ValueError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("data"), dict):
            out.append(obj)
    return out


def _text(v: object) -> str | None:
    return v if isinstance(v, str) and v.strip() else None


def session_project(path: Path) -> str | None:
    """The session's project: ``session.start`` ``context.gitRoot``, else ``context.cwd``;
    else ``git_root``/``cwd`` of the ``workspace.yaml`` beside it. None for a legacy
    ``.json`` file (it records no directory) or when nothing says."""
    path = Path(path)
    if path.suffix == ".json":
        return None
    for event in _head_events(path):
        data = event["data"]
        ctx = data.get("context") if isinstance(data, dict) else None
        if isinstance(ctx, dict):
            found = _text(ctx.get("gitRoot")) or _text(ctx.get("cwd"))
            if found:
                return found
    ws = read_workspace_yaml(path.parent / "workspace.yaml")
    return _text(ws.get("git_root")) or _text(ws.get("cwd"))


def session_id_of(path: Path) -> str:
    """The Copilot session id of a file: from its content, else its folder or stem."""
    path = Path(path)
    if path.suffix == ".json":
        try:
            with open_regular(path) as f:
                head = f.read(4096)
        except OSError:
            head = b""
        m = _SESSION_ID_RE.search(head)
        if m:
            try:
                value = json.loads(m.group(1).decode("utf-8", "replace"))
            except ValueError:
                value = None
            if isinstance(value, str) and value.strip():
                return value
        return path.stem
    for event in _head_events(path):
        data = event["data"]
        sid = _text(data.get("sessionId")) if isinstance(data, dict) else None
        if sid:
            return sid
    return path.parent.name if path.name == EVENTS_FILE else path.stem


def is_finished(path: Path) -> bool:
    """Whether the last record of an events file is ``session.shutdown`` (the end marker).

    Reads at most the last 256 KiB; a resumed session (events after a shutdown)
    is not finished.
    """
    try:
        with open_regular(path) as f:
            size = f.seek(0, 2)
            window = min(size, TAIL_BYTES)
            f.seek(size - window)
            tail = f.read(window)
    except OSError:
        return False
    if b"session.shutdown" not in tail:
        return False
    lines = [ln for ln in tail.split(b"\n") if ln.strip()]
    if not lines or (len(lines) == 1 and window < size):
        return False  # the last line is longer than the window
    try:
        obj = json.loads(lines[-1].replace(b"\x00", b"").decode("utf-8", "replace"))
    except ValueError:
        return False
    return isinstance(obj, dict) and obj.get("type") == "session.shutdown"


@dataclass
class _Candidate:
    file: SessionFile
    finished: bool


def _consider_file(
    path: Path,
    st: os.stat_result,
    needle: str | None,
    out: Discovery,
    *,
    session_id: str | None = None,
) -> _Candidate | None:
    if not stat.S_ISREG(st.st_mode):  # a FIFO would hang the reader
        out.skip("not_transcripts", path)
        return None
    project = ""
    if needle is not None:
        project = session_project(path) or ""
        if needle not in project.casefold():
            out.skip("project_filter", path)
            return None
    legacy = path.suffix == ".json"
    sid = session_id or session_id_of(path)
    sf = SessionFile(path, sid, project, st.st_size, st.st_mtime)
    return _Candidate(sf, finished=not legacy and is_finished(path))


def _state_dir(root: Path) -> tuple[Path, Path]:
    """(session-state, history-session-state) under ``root``; ``root`` may be either itself."""
    if root.name == SESSION_DIR and not (root / SESSION_DIR).is_dir():
        return root, root.parent / LEGACY_DIR
    if root.name == LEGACY_DIR and not (root / LEGACY_DIR).is_dir():
        return root.parent / SESSION_DIR, root
    return root / SESSION_DIR, root / LEGACY_DIR


def discover(root: Path | None = None, **rules: Unpack[discovery.Rules]) -> Discovery:
    """Sessions under ``root`` (default: the Copilot home), newest first."""
    out = Discovery()
    pick = discovery.Selection(**rules)
    state, legacy = _state_dir(copilot_home() if root is None else Path(root))
    fence = discovery.Fence(state.parent, out)
    if fence.refused():
        return out
    candidates: list[_Candidate] = []
    for e in discovery.scan_sorted(state):
        try:
            is_dir = e.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if not is_dir:
            out.skip("not_transcripts", e.path)
            continue
        events = Path(e.path) / EVENTS_FILE
        if not os.path.lexists(events):
            out.skip("not_transcripts", e.path)  # a session folder with no events (yet)
            continue
        st = fence.regular_stat(events)
        if st is None:
            continue
        found = _consider_file(events, st, pick.needle, out, session_id=e.name)
        if found is not None:
            candidates.append(found)
    for e in discovery.scan_sorted(legacy):
        path = Path(e.path)
        if not e.name.endswith(".json"):
            out.skip("not_transcripts", path)
            continue
        st = fence.regular_stat(path)
        if st is None:
            continue
        found = _consider_file(path, st, pick.needle, out)
        if found is not None:
            candidates.append(found)
    kept = [
        c.file
        for c in candidates
        if pick.keeps(out, c.file.path, c.file.mtime, finished=c.finished)
    ]
    out.files = pick.newest_first(out, kept)
    return out


#: Files that sit beside ``events.jsonl`` in a session folder (never sessions themselves).
_COMPANIONS = frozenset({"workspace.yaml", "vscode.metadata.json"})


_EVENT_TYPE_RE = re.compile(r"^(?:session|user|assistant|tool|system|subagent|skill|hook)\.")


def recognizes(head: bytes) -> bool:
    """Whether ``head`` (a file's first bytes, ~4 KiB) is a Copilot CLI session.

    events.jsonl: the first line is an event ``{type: "<family>.<name>", data: {…},
    id, …}``. Legacy: a JSON object naming ``sessionId`` and ``timeline`` or
    ``chatMessages`` (Gemini's legacy files have ``messages`` instead).
    """
    body = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if body[:1] != b"{":
        return False
    first = body.split(b"\n", 1)[0]
    try:
        obj = json.loads(first.replace(b"\x00", b"").decode("utf-8", "replace"))
    except ValueError:
        obj = None
    if isinstance(obj, dict) and "timeline" not in obj and "chatMessages" not in obj:
        kind = obj.get("type")
        return (
            isinstance(kind, str)
            and bool(_EVENT_TYPE_RE.match(kind))
            and isinstance(obj.get("data"), dict)
            and "id" in obj
        )
    return b'"sessionId"' in body and (b'"timeline"' in body or b'"chatMessages"' in body)


def _looks_legacy_file(path: Path) -> bool:
    """A ``.json`` whose head is a legacy session (a folder walk meets many JSON files)."""
    try:
        with open_regular(path) as f:
            head = f.read(4096)
    except OSError:
        return False
    return recognizes(head)


def _named_ok(path: Path) -> bool:
    """A named ``.jsonl`` is taken as events; anything else must look like a session."""
    if path.suffix == ".jsonl":
        return True
    try:
        with open_regular(path) as f:  # never blocks on a FIFO
            return recognizes(f.read(4096))
    except OSError:
        return False


def discover_paths(paths: Sequence[Path], *, project: str | None = None) -> Discovery:
    """Sessions named explicitly (``--path``): files, or folders walked for them.

    No time rule applies. A named ``.jsonl`` file is taken as it is; any other
    named file when its content is a Copilot session (:func:`recognizes`). In a
    folder, ``events.jsonl`` files and legacy session ``.json`` files (told by
    their head) are taken; the session
    folder's companions (``workspace.yaml``, ``vscode.metadata.json``) are passed
    over silently; anything else counts as ``not_transcripts``. Missing paths
    count as ``missing``; a file reached twice is listed once.
    """
    out = Discovery()
    needle = project.casefold() if project else None
    seen: set[str] = set()
    found: list[SessionFile] = []

    def consider(path: Path, named: bool) -> None:
        if named:
            ok = _named_ok(path)
        elif path.name in _COMPANIONS:
            return
        else:
            ok = path.name == EVENTS_FILE or (path.suffix == ".json" and _looks_legacy_file(path))
        if not ok:
            out.skip("not_transcripts", path)
            return
        try:
            st = path.stat()
        except OSError:
            out.skip("missing", path)
            return
        if not discovery.first_visit(seen, path):
            return
        c = _consider_file(path, st, needle, out)
        if c is not None:
            found.append(c.file)

    discovery.walk_named(paths, out, consider, links=True)
    out.files = discovery.newest_first(out, found)
    return out


def read_workspace_yaml(path: Path) -> dict[str, str]:
    """The top-level ``key: value`` pairs of a ``workspace.yaml`` (no YAML library).

    Copilot writes a flat mapping (``id``, ``cwd``, ``git_root``, ``summary``, …).
    Plain and quoted scalars are read; nested blocks, lists and multi-line values
    are skipped. At most 64 KiB are read; an unreadable file gives ``{}``.
    """
    try:
        with open_regular(path) as f:
            raw = f.read(64 * 1024)
    except OSError:
        return {}
    out: dict[str, str] = {}
    for line in raw.decode("utf-8", "replace").splitlines():
        if not line or line[0] in " \t#-" or ":" not in line:
            continue
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if not key or key in out:
            continue
        if value.startswith('"'):
            try:
                parsed = json.loads(value)
            except ValueError:
                continue
            if not isinstance(parsed, str):
                continue
            value = parsed
        elif value.startswith("'"):
            if len(value) < 2 or not value.endswith("'"):
                continue
            value = value[1:-1].replace("''", "'")
        else:
            value = value.split(" #", 1)[0].strip()
            if value in ("|", ">", "|-", ">-", "~", "null"):
                continue
        out[key] = value.replace("\x00", "")  # decoded with "replace": no lone surrogates
    return out
