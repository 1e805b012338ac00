"""What the adapters' discovery shares: the time rules, the cap, and the ``--path`` walk.

Each adapter's ``discover.py`` knows its agent's layout and what a session file
looks like. Which of the sessions found are imported follows the same rules for
every agent, each file counted (:meth:`~memloom.agents.base.Discovery.skip`)
under the first rule that leaves it out:

* ``active`` -- modified within the last ``quiet_seconds`` (still being written),
  unless the agent marked the session finished;
* ``outside_window`` -- not modified within the last ``days`` days;
* ``over_cap`` -- after sorting newest first, everything past ``max_sessions``.

Every adapter's ``discover(root, **rules)`` takes the same keywords (:class:`Rules`,
with :class:`~memloom.agents.base.DiscoverOptions`' defaults). Files named with
``--path`` are exempt from all three: :func:`walk_named` hands each of them (and
each file in a named folder) to the adapter, which says whether it is a session.

Before any of them, every file is fenced in (:class:`Fence`), automatic discovery
and the ``--path`` walk alike, and counted ``unsafe`` (the rule logged) when:

* it is a symlink, or lies in a symlinked folder, whose real path leaves the root
  (the agent's folder; for ``--path``, the folder named, or a named file's folder);
* it belongs to another user, or its group or other users can write it, or a folder
  between it and the root can be written by others or belongs to another user
  (:func:`memloom.agents.files.file_problem`, :func:`~memloom.agents.files.folder_problem`);
* the root itself is such a folder -- a world-writable one (``/tmp``) included -- or
  lies inside one that is not sticky: then nothing under it is looked at.

:func:`memloom.agents.files.open_regular` checks the file again on the descriptor
it reads from.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from typing import TypedDict, Unpack

from memloom.agents.base import DiscoverOptions, Discovery, SessionFile
from memloom.agents.fence import Fence, inside

__all__ = [
    "Fence",
    "Rules",
    "Selection",
    "count_sidecars",
    "first_visit",
    "home_folder",
    "inside",
    "named_root",
    "named_roots",
    "newest_first",
    "regular_stat",
    "scan_sorted",
    "unsafe_reason",
    "walk_named",
]

#: A path discovery counts or reads: a path, its text, or a ``DirEntry``.
Where = str | os.PathLike[str]


class Rules(TypedDict, total=False):
    """The keywords of every adapter's ``discover`` (see :class:`DiscoverOptions`)."""

    days: float | None
    max_sessions: int | None
    project: str | None
    quiet_seconds: float
    now: float | None


class Selection:
    """A discovery's :class:`Rules`: the quiet period and the day window (``days=None``:
    no window) as of ``now`` (None: the clock, read once when discovery starts), the cap
    (``max_sessions=None``: none), and ``project`` (a case-insensitive substring)."""

    def __init__(self, **rules: Unpack[Rules]) -> None:
        given = DiscoverOptions(**rules)
        now = time.time() if given.now is None else given.now
        self.quiet_after = now - given.quiet_seconds
        self.window_start = None if given.days is None else now - given.days * 86400.0
        self.max_sessions = given.max_sessions
        self.project = given.project
        #: ``project`` case-folded, None when there is no project filter
        self.needle = given.project.casefold() if given.project else None

    def keeps(self, out: Discovery, path: Where, mtime: float, *, finished: bool = False) -> bool:
        """Whether a session modified at ``mtime`` passes; counted in ``out`` if not.
        ``finished``: the agent marked the session ended, so it is never ``active``."""
        if not finished and mtime > self.quiet_after:
            out.skip("active", path)
            return False
        if self.window_start is not None and mtime < self.window_start:
            out.skip("outside_window", path)
            return False
        return True

    def newest_first(self, out: Discovery, files: list[SessionFile]) -> list[SessionFile]:
        """``files`` newest first, within the cap (see :func:`newest_first`)."""
        return newest_first(out, files, self.max_sessions)


def unsafe_reason(path: Where, folders: Iterable[Where]) -> str | None:
    """Why ``path`` may not be read as a session file of an agent whose folders are
    ``folders`` (a :data:`~memloom.agents.files.UNSAFE_RULES` key), None when it may:
    it must exist and lie, resolved, inside one of them, and pass the :class:`Fence`
    rules there. What serves lines of a file named by a stored row (``/context``) asks."""
    real = os.path.realpath(path)
    for folder in folders:
        fence = Fence(folder, Discovery())
        if not inside(real, fence.root) or fence.problem is not None:
            continue
        problem, found = fence.verdict(path)
        if problem is not None:
            return problem
        return None if isinstance(found, os.stat_result) else "outside"
    return "outside"


def newest_first(
    out: Discovery, files: list[SessionFile], max_sessions: int | None = None
) -> list[SessionFile]:
    """``files`` newest first (then by path); those past ``max_sessions`` counted ``over_cap``
    and left out (None: no cap)."""
    files.sort(key=lambda sf: (-sf.mtime, os.fspath(sf.path)))
    if max_sessions is not None and len(files) > max_sessions:
        for sf in files[max(max_sessions, 0) :]:
            out.skip("over_cap", sf.path)
        files = files[: max(max_sessions, 0)]
    return files


def home_folder(root: Path, name: str) -> Path:
    """``root/name``, the sessions folder of an agent's home ``root``; ``root`` itself when
    it is that folder already (a caller may name the folder instead of the home)."""
    inner = root / name
    if not inner.is_dir() and root.name == name and root.is_dir():
        return root
    return inner


def scan_sorted(folder: Where) -> list[os.DirEntry[str]]:
    """The entries of ``folder`` in name order; none if it cannot be listed."""
    try:
        with os.scandir(folder) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError:
        return []


def regular_stat(path: Where, out: Discovery) -> os.stat_result | None:
    """``path``'s stat (symlinks followed), or None counted: ``missing`` when it cannot be
    read, ``not_transcripts`` when it is no regular file (a FIFO would hang the reader).
    For a path :func:`walk_named` handed over (already fenced); discovery of an agent's
    folder uses :meth:`Fence.regular_stat`."""
    try:
        st = os.stat(path)
    except OSError:
        out.skip("missing", path)
        return None
    if not stat.S_ISREG(st.st_mode):
        out.skip("not_transcripts", path)
        return None
    return st


def count_sidecars(folder: str, out: Discovery, is_sidecar: Callable[[str], bool]) -> None:
    """Count every file under ``folder`` (a sub-agent's place): ``sidecars`` when
    ``is_sidecar(name)``, else ``not_transcripts``."""
    try:
        it = os.scandir(folder)
    except OSError:
        return
    with it:
        for e in it:
            try:
                if e.is_dir(follow_symlinks=False):
                    count_sidecars(e.path, out, is_sidecar)
                    continue
            except OSError:
                continue
            out.skip("sidecars" if is_sidecar(e.name) else "not_transcripts", e.path)


def first_visit(seen: set[str], path: Where) -> bool:
    """Whether ``path`` (resolved) is met for the first time; it is remembered in ``seen``."""
    key = os.path.realpath(path)
    if key in seen:
        return False
    seen.add(key)
    return True


def walk_named(
    paths: Sequence[Path] | Iterable[Path],
    out: Discovery,
    consider: Callable[[Path, bool], None],
    *,
    prune: Collection[str] = (),
    links: bool = False,
) -> None:
    """The ``--path`` walk: ``consider(path, True)`` for each named file, and
    ``consider(path, False)`` for each file in a named folder (walked recursively in
    name order, never entering a folder named in ``prune``, a symlinked folder or an
    unsafe one). A path that does not exist counts as ``missing`` (``links``: a
    dangling symlink is named all the same). Each named folder, and a named file's
    folder, is a :class:`Fence`: what it refuses is counted ``unsafe`` and never
    handed to ``consider``."""
    for given in paths:
        p = Path(given).expanduser()
        if p.is_dir():
            fence = Fence(p, out)
            if fence.refused():
                continue
            for dirpath, dirnames, filenames in os.walk(p):
                dirnames[:] = [
                    d
                    for d in sorted(dirnames)
                    if d not in prune and fence.enters(os.path.join(dirpath, d))
                ]
                for fn in sorted(filenames):
                    path = Path(dirpath) / fn
                    if fence.admits(path):
                        consider(path, False)
        elif p.exists() or (links and p.is_symlink()):
            if Fence(p.absolute().parent, out).admits(p):
                consider(p, True)
        else:
            out.skip("missing", p)


def named_roots(paths: Iterable[Path]) -> list[tuple[str, str]]:
    """For each path the owner named: (its real path, the folder that fences what is read
    of it), as the ``--path`` walk fences it: a named folder itself, a named file's folder."""
    out = []
    for given in paths:
        p = Path(given).expanduser()
        real = os.path.realpath(p)
        out.append((real, real if os.path.isdir(real) else os.path.realpath(p.absolute().parent)))
    return out


def named_root(path: str, roots: Sequence[tuple[str, str]]) -> str | None:
    """The fence of the first named path that is ``path`` or holds it (None: none)."""
    return next((root for real, root in roots if inside(path, real)), None)
