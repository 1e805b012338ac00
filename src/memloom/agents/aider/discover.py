"""Find Aider chat histories to import.

Aider has no home folder: it writes ``.aider.chat.history.md`` into the repository
root (its git root; ``--chat-history-file`` / ``AIDER_CHAT_HISTORY_FILE`` can move or
rename it). memloom therefore looks in the **project roots it already knows** --
the caller passes them (the working directories other agents' sessions reported)
-- at each root and at its ancestors up to the nearest folder holding ``.git``
(a cwd inside a repository finds the repository's history). A renamed or moved
history is imported when named with ``--path``: a named file is recognised by its
content (:func:`recognizes`), whatever its name.

Rules, each file counted under the first that skips it: ``project_filter`` (the
project is the history's folder) -> ``active`` (written within ``quiet_seconds``:
Aider has no end marker) -> ``outside_window`` -> ``over_cap`` (newest first). A
root without a history is not counted (most roots belong to other agents only).
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

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


def candidates(roots: Iterable[Path]) -> list[Path]:
    """The history files that may exist for ``roots``: each root and its ancestors up to
    the nearest one holding ``.git`` (at most 8 levels), deduplicated, in order."""
    out: list[Path] = []
    seen: set[str] = set()
    for root in roots:
        try:
            d = Path(root).expanduser().absolute()
        except (OSError, RuntimeError):
            continue
        for _ in range(_MAX_UP + 1):
            key = os.path.normpath(d)
            if key not in seen:
                seen.add(key)
                out.append(d / HISTORY_FILE)
            if (d / ".git").exists() or d.parent == d or d == Path.home():
                break
            d = d.parent
    return out


def _session_file(path: Path, st: os.stat_result) -> SessionFile:
    path = path.absolute()
    return SessionFile(path, f"aider:{path}", str(path.parent), st.st_size, st.st_mtime)


def discover(
    roots: Iterable[Path],
    *,
    days: float | None = 14,
    max_sessions: int | None = 20,
    project: str | None = None,
    quiet_seconds: float = 300,
    now: float | None = None,
) -> Discovery:
    """The histories at the known ``roots``, newest first."""
    out = Discovery()
    now = time.time() if now is None else now
    needle = project.casefold() if project else None
    kept: list[SessionFile] = []
    realpaths: set[str] = set()
    for path in candidates(roots):
        try:
            st = path.stat()
        except OSError:
            continue  # no history at this root: not an Aider project
        if not stat.S_ISREG(st.st_mode):
            out.skip("not_transcripts", path)
            continue
        real = os.path.realpath(path)
        if real in realpaths:
            continue
        realpaths.add(real)
        sf = _session_file(path, st)
        if needle is not None and needle not in sf.project_dir.casefold():
            out.skip("project_filter", path)
        elif sf.mtime > now - quiet_seconds:
            out.skip("active", path)
        elif days is not None and sf.mtime < now - days * 86400.0:
            out.skip("outside_window", path)
        else:
            kept.append(sf)
    kept.sort(key=lambda sf: (-sf.mtime, os.fspath(sf.path)))
    if max_sessions is not None and len(kept) > max_sessions:
        for sf in kept[max(max_sessions, 0) :]:
            out.skip("over_cap", sf.path)
        kept = kept[: max(max_sessions, 0)]
    out.files = kept
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
        try:
            st = path.stat()
        except OSError:
            out.skip("missing", path)
            return
        if not stat.S_ISREG(st.st_mode) or (named and not _is_history(path)):
            out.skip("not_transcripts", path)
            return
        real = os.path.realpath(path)
        if real in seen:
            return
        seen.add(real)
        sf = _session_file(path, st)
        if needle is not None and needle not in sf.project_dir.casefold():
            out.skip("project_filter", path)
            return
        found.append(sf)

    for given in paths:
        p = Path(given).expanduser()
        if p.is_dir():
            for dirpath, dirnames, filenames in os.walk(p):
                dirnames[:] = sorted(d for d in dirnames if d not in _PRUNE)
                if HISTORY_FILE in filenames:
                    consider(Path(dirpath) / HISTORY_FILE, named=False)
        elif p.exists() or p.is_symlink():
            consider(p, named=True)
        else:
            out.skip("missing", p)
    found.sort(key=lambda sf: (-sf.mtime, os.fspath(sf.path)))
    out.files = found
    return out
