"""Find Cursor agent transcripts to import.

Layout (``~/.cursor``; public readers of these files, see ``docs/agents.md``)::

    projects/<workspace slug>/agent-transcripts/<id>/<id>.jsonl        current (JSONL)
    projects/<workspace slug>/agent-transcripts/<id>/subagents/*.jsonl  sub-agents' (sidecars)
    projects/<workspace slug>/agent-transcripts/<id>.jsonl             JSONL, flat
    projects/<workspace slug>/agent-transcripts/<id>.txt               older plain text

Other folders under ``projects/<slug>/`` are Cursor's own (terminals, MCP tool
lists) and are not looked at. Files under ``agent-transcripts`` that are none of
the above count as ``not_transcripts``; sub-agents' transcripts as ``sidecars``
(a sub-agent's conversation belongs to its parent's, which the parent reports).

The workspace slug is its absolute path without the leading ``/``, with ``/``
replaced by ``-``: lossy (a ``-`` in a folder name reads the same), so
:func:`slug_path` finds the folder that exists on this machine, else the session's
project is the slug itself. The rules (quiet window, days, cap, project needle)
are :mod:`memloom.agents.discovery`'s, each skip counted.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Unpack

from memloom.agents import discovery
from memloom.agents.base import Discovery, SessionFile
from memloom.agents.cursor.home import TRANSCRIPTS_DIR, cursor_home
from memloom.agents.files import read_head

__all__ = ["discover", "discover_paths", "recognizes", "session_project", "slug_path"]

SUFFIXES = (".jsonl", ".txt")
SIDECAR_DIR = "subagents"
#: Most folders :func:`slug_path` stats for one slug (a slug of many dashes).
MAX_PROBES = 512


def slug_path(slug: str) -> str | None:
    """The existing folder whose slug is ``slug`` (``-`` stands for ``/`` or itself),
    None if there is none on this machine."""
    parts = slug.lstrip("-").split("-")
    if not parts[0]:
        return None
    probes = 0

    def walk(base: str, i: int) -> str | None:
        nonlocal probes
        # The next component is parts[i..j] joined by "-"; longest first.
        for j in range(len(parts), i, -1):
            name = "-".join(parts[i:j])
            if not name or probes >= MAX_PROBES:
                continue
            probes += 1
            candidate = os.path.join(base, name)
            if not os.path.isdir(candidate):
                continue
            if j == len(parts):
                return candidate
            found = walk(candidate, j)
            if found is not None:
                return found
        return None

    return walk(os.sep, 0)


def _slug_of(path: Path) -> str | None:
    """The workspace slug of a transcript under ``<slug>/agent-transcripts/``."""
    for parent in path.parents:
        if parent.name == TRANSCRIPTS_DIR:
            return parent.parent.name or None
    return None


_project_cache: dict[str, str | None] = {}


def session_project(path: Path) -> str | None:
    """The workspace folder the transcript belongs to (from its slug), None if unknown."""
    slug = _slug_of(Path(path))
    if slug is None:
        return None
    if slug not in _project_cache:
        if len(_project_cache) > 10_000:
            _project_cache.clear()
        _project_cache[slug] = slug_path(slug)
    return _project_cache[slug]


def _project_dir(path: Path) -> str:
    """The project a session is filed under: its workspace folder, else the slug."""
    return session_project(path) or _slug_of(path) or path.parent.name


def recognizes(head: bytes) -> bool:
    """Whether ``head`` (a file's first bytes) is a Cursor transcript: JSON lines whose
    messages carry a top-level ``role`` and a ``message`` (Claude Code's carry ``type``
    and ``message.role``), or text opening with a ``user:`` block and ``<user_query>``."""
    from memloom.agents.cursor.parse import is_text_transcript
    from memloom.agents.files import head_records

    if is_text_transcript(head):
        return b"<user_query>" in head or b"\nassistant:" in head
    return any(
        r.get("role") in ("user", "assistant")
        and isinstance(r.get("message"), dict)
        and "type" not in r
        and "sessionId" not in r
        for r in head_records(head)
    )


def _place(path: Path) -> str:
    """``session``, ``sidecar`` or ``other``, by where the file is and its name."""
    if path.suffix not in SUFFIXES:
        return "other"
    parent = path.parent
    if parent.name == SIDECAR_DIR:
        return "sidecar"
    if parent.name == TRANSCRIPTS_DIR:
        return "session"
    if parent.parent.name == TRANSCRIPTS_DIR and path.stem == parent.name:
        return "session"
    return "other"


def _session(path: Path, st: os.stat_result) -> SessionFile:
    return SessionFile(path, path.stem, _project_dir(path), st.st_size, st.st_mtime)


def _transcripts_of(folder: str, out: Discovery) -> list[Path]:
    """The session files in one ``agent-transcripts`` folder; the rest counted."""
    found: list[Path] = []
    for e in discovery.scan_sorted(folder):
        try:
            is_dir = e.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if not is_dir:
            if _place(Path(e.path)) == "session":
                found.append(Path(e.path))
            else:
                out.skip("not_transcripts", e.path)
            continue
        for inner in discovery.scan_sorted(e.path):
            path = Path(inner.path)
            try:
                inner_dir = inner.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if inner_dir:
                if inner.name == SIDECAR_DIR:
                    discovery.count_sidecars(inner.path, out, lambda n: n.endswith(SUFFIXES))
                else:
                    out.skip("not_transcripts", inner.path)
            elif _place(path) == "session":
                found.append(path)
            else:
                out.skip("not_transcripts", inner.path)
    return found


def discover(root: Path | None = None, **rules: Unpack[discovery.Rules]) -> Discovery:
    """Transcripts under ``<root>/projects/*/agent-transcripts/``, newest first.

    ``root`` defaults to ``~/.cursor`` (a ``projects`` folder itself is accepted too).
    ``project``: a case-insensitive substring of the workspace folder (else its slug).
    """
    out = Discovery()
    pick = discovery.Selection(**rules)
    candidates: list[SessionFile] = []
    home = cursor_home() if root is None else Path(root)
    projects = discovery.home_folder(home, "projects")
    fence = discovery.Fence(projects, out)
    if fence.refused():
        return out
    for pd in discovery.scan_sorted(projects):
        folder = os.path.join(pd.path, TRANSCRIPTS_DIR)
        if not os.path.isdir(folder):
            continue  # a workspace Cursor keeps no agent transcripts for
        for path in _transcripts_of(folder, out):
            st = fence.regular_stat(path)
            if st is None:
                continue
            if pick.needle is not None:
                where = f"{_project_dir(path)}\0{pd.name}".casefold()
                if pick.needle not in where:
                    out.skip("project_filter", path)
                    continue
            candidates.append(_session(path, st))
    kept = [sf for sf in candidates if pick.keeps(out, sf.path, sf.mtime)]
    out.files = pick.newest_first(out, kept)
    return out


def discover_paths(paths: Sequence[Path], *, project: str | None = None) -> Discovery:
    """Transcripts named with ``--path``: files or folders, no time rules.

    A named ``.jsonl`` or ``.txt`` file is taken as it is (the user asked for it),
    unless it is a sub-agent's (``sidecars``). In a named folder, a file is taken only
    when its content is a Cursor transcript (:func:`recognizes`). Anything else, and
    anything that is not a regular file, is ``not_transcripts``.
    """
    out = Discovery()
    needle = project.casefold() if project else None
    seen: set[str] = set()
    found: list[SessionFile] = []

    def consider(path: Path, named: bool) -> None:
        if path.suffix not in SUFFIXES:
            out.skip("not_transcripts", path)
            return
        if _place(path) == "sidecar":
            out.skip("sidecars", path)
            return
        st = discovery.regular_stat(path, out)
        if st is None or not discovery.first_visit(seen, path):
            return
        if not named and not recognizes(read_head(path)):
            out.skip("not_transcripts", path)
            return
        if needle is not None and needle not in _project_dir(path).casefold():
            out.skip("project_filter", path)
            return
        found.append(_session(path, st))

    discovery.walk_named(paths, out, consider)
    out.files = discovery.newest_first(out, found)
    return out
