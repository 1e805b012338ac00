"""Find Aider chat histories to import.

Aider has no home folder: it writes ``.aider.chat.history.md`` into the repository
root (its git root; ``--chat-history-file`` / ``AIDER_CHAT_HISTORY_FILE`` can move or
rename it). memloom therefore looks in the **project roots it already knows** --
the caller passes them (:func:`memloom.sessions.runs.share_project_roots`: the
working directories of sessions memloom imported from agents' own folders, the
folders of Aider histories it imported, and the folders ``memloom connect aider``
named; never a memory's ``project`` label, which any API caller can set) -- at each
root, and, when the root lies in a repository, at its ancestors up to the repository
root (the nearest folder holding ``.git``, at most 8 levels up), never above the home
folder. A renamed or moved history is imported when named with ``--path``: a named
file is recognised by its content (:func:`recognizes`), whatever its name.

Each root is a :class:`~memloom.agents.discovery.Fence`: a history that is a symlink
out of its folder, another user's, or writable by others, or a root others can write
(``/tmp``), is counted ``unsafe`` and never read.

Rules, each file counted under the first that skips it: ``unsafe`` -> ``project_filter``
(the project is the history's folder) -> ``active`` (written within ``quiet_seconds``:
Aider has no end marker) -> ``outside_window`` -> ``over_cap`` (newest first). A
root without a history is not counted (most roots belong to other agents only).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Unpack

from memloom.agents import discovery
from memloom.agents.base import Discovery, SessionFile
from memloom.agents.files import open_regular

__all__ = ["HISTORY_FILE", "candidates", "discover", "discover_paths", "recognizes"]

HISTORY_FILE = ".aider.chat.history.md"
#: Folders a ``--path`` walk never enters.
_PRUNE = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".hg"})
_MAX_UP = 8


def recognizes(head: bytes) -> bool:
    """Whether ``head`` (a file's first bytes) is an Aider chat history: a line that is
    a session header ``# aider chat started at …``."""
    text = head.decode("utf-8", "replace")
    return text.startswith("# aider chat started at ") or "\n# aider chat started at " in text


def _climb(d: str, home: str) -> list[str]:
    """``d`` and, when it lies in a repository, its ancestors up to the repository root
    (at most :data:`_MAX_UP` levels): never above ``home`` when ``d`` is under it."""
    chain = [d]
    if os.path.exists(os.path.join(d, ".git")):
        return chain
    for _ in range(_MAX_UP):
        parent = os.path.dirname(chain[-1])
        if chain[-1] == home or parent == chain[-1]:
            break
        chain.append(parent)
        if os.path.exists(os.path.join(parent, ".git")):
            return chain
    return [d]  # in no repository: the root alone


def candidates(roots: Iterable[Path]) -> list[Path]:
    """The history files that may exist for ``roots`` (each resolved): each root and,
    inside a repository, its ancestors up to the repository root, never above $HOME;
    deduplicated, in order."""
    out: list[Path] = []
    seen: set[str] = set()
    home = os.path.realpath(Path.home())
    for root in roots:
        try:
            d = os.path.realpath(Path(root).expanduser())
        except (OSError, RuntimeError, ValueError):
            continue
        for folder in _climb(d, home):
            if folder not in seen:
                seen.add(folder)
                out.append(Path(folder) / HISTORY_FILE)
    return out


def _session_file(path: Path, st: os.stat_result) -> SessionFile:
    path = path.absolute()
    return SessionFile(path, f"aider:{path}", str(path.parent), st.st_size, st.st_mtime)


def discover(roots: Iterable[Path], **rules: Unpack[discovery.Rules]) -> Discovery:
    """The histories at the known ``roots``, newest first."""
    out = Discovery()
    pick = discovery.Selection(**rules)
    kept: list[SessionFile] = []
    realpaths: set[str] = set()
    for path in candidates(roots):
        if not os.path.lexists(path):
            continue  # no history at this root: not an Aider project
        st = discovery.Fence(path.parent, out).regular_stat(path)
        if st is None:
            continue
        if not discovery.first_visit(realpaths, path):
            continue
        sf = _session_file(path, st)
        if pick.needle is not None and pick.needle not in sf.project_dir.casefold():
            out.skip("project_filter", path)
        elif pick.keeps(out, path, sf.mtime):
            kept.append(sf)
    out.files = pick.newest_first(out, kept)
    return out


def _is_history(path: Path) -> bool:
    if path.name.endswith(HISTORY_FILE):
        return True
    try:
        with open_regular(path) as f:
            return recognizes(f.read(4096))
    except OSError:
        return False


def discover_paths(paths: Sequence[Path], *, project: str | None = None) -> Discovery:
    """Histories named explicitly (``--path``): files (told by name or content) or folders
    (walked for ``.aider.chat.history.md``, skipping ``.git``, ``node_modules`` and
    virtualenvs). No time rule applies; missing paths count as ``missing``, named
    files that are not histories as ``not_transcripts``."""
    out = Discovery()
    needle = project.casefold() if project else None
    seen: set[str] = set()
    found: list[SessionFile] = []

    def consider(path: Path, named: bool) -> None:
        if not named and path.name != HISTORY_FILE:
            return  # a folder walk looks for histories by name only
        st = discovery.regular_stat(path, out)
        if st is None:
            return
        if named and not _is_history(path):
            out.skip("not_transcripts", path)
            return
        if not discovery.first_visit(seen, path):
            return
        sf = _session_file(path, st)
        if needle is not None and needle not in sf.project_dir.casefold():
            out.skip("project_filter", path)
            return
        found.append(sf)

    discovery.walk_named(paths, out, consider, prune=_PRUNE, links=True)
    out.files = discovery.newest_first(out, found)
    return out
