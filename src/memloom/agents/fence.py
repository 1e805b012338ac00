"""The fence discovery never reads out of: one root, and the ownership rules on the way.

Moved out of :mod:`memloom.agents.discovery` (which re-exports :class:`Fence` and
:func:`inside`) so that a hook can fence a path in without loading discovery's
protocol module: standard library and :mod:`memloom.agents.files` only.

:class:`ProjectFence` is a project's top folder: what anchors (:mod:`memloom.anchors`)
read and what the read hook (:mod:`memloom.capture.reads`) looks memories up for;
besides the fence's rules, no path relative to it may climb out (``..``, absolute,
``~``), no file in a key or credential folder (:data:`PRIVATE_FOLDERS`) is admitted,
and a root no project has (``/``, the home folder or above) admits nothing.
"""

from __future__ import annotations

import os
import stat

from memloom.agents.files import UNSAFE_RULES, file_problem, folder_problem

TYPE_CHECKING = False  # typing's, without loading typing (~3 ms): the hooks load this module
if TYPE_CHECKING:
    from memloom.agents.base import Discovery

__all__ = ["PRIVATE_FOLDERS", "Fence", "ProjectFence", "escapes", "inside", "too_wide"]

#: A path discovery counts or reads: a path, its text, or a ``DirEntry``.
Where = str | os.PathLike[str]

#: Folders whose files are never anchored, wherever the root is: keys and credentials.
PRIVATE_FOLDERS = frozenset({".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".git"})


def inside(path: str, root: str) -> bool:
    """Whether the real path ``path`` is ``root`` or lies under it (both resolved)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class Fence:
    """A root that discovery never reads out of, and the ownership rules on the way.

    ``root`` is resolved once (it may itself be a symlink: the agent's folder is where
    it points). :meth:`regular_stat` is the adapters' stat of a session file; counted
    ``unsafe`` (and logged with the rule, never the content) when a rule refuses it.
    ``out``: where skips are counted (None: refusals are only logged; a hook's fence).
    """

    def __init__(self, root: Where, out: Discovery | None = None) -> None:
        self.out = out
        self.given = os.path.abspath(os.fspath(root))
        self.root = os.path.realpath(self.given)
        self._reals: dict[str, str] = {}  # a folder as met -> its real path
        self._verdicts: dict[str, str | None] = {}  # a real folder -> the rule it breaks
        #: The rule the root breaks (None: none, or no root): nothing under it is read.
        self.problem = self._root_problem()
        self._counted = False

    def _root_problem(self) -> str | None:
        try:
            st = os.stat(self.root)
        except OSError:
            return None  # no root: nothing is found there
        problem = folder_problem(st)
        if problem is not None:
            return "shared_root" if st.st_mode & 0o002 else problem
        d = self.root
        while (parent := os.path.dirname(d)) != d:
            d = parent
            try:
                st = os.stat(d)
            except OSError:
                return None
            problem = folder_problem(st, sticky_ok=True)
            if problem is not None:  # others may swap the root itself
                return "shared_root" if problem == "world_writable" else problem
        self._verdicts[self.root] = None
        return None

    def refused(self) -> bool:
        """Whether the root is refused; counted ``unsafe`` once (when it exists)."""
        if self.problem is None:
            return False
        if not self._counted:
            self._counted = True
            self._refuse(self.given, self.problem)
        return True

    def _refuse(self, path: Where, rule: str) -> None:
        if self.out is not None:
            self.out.skip("unsafe", path)
        import logging  # only when something is refused: the read hook's path stays light

        logging.getLogger(__name__).warning(
            "not read: %s (%s: %s; root %s)", os.fspath(path), rule, UNSAFE_RULES[rule], self.root
        )

    def _chain(self, real: str) -> str | None:
        """The rule the first unsafe folder from ``real`` (inside the root) up to the root
        breaks, or None."""
        d = real
        while True:
            if d not in self._verdicts:
                try:
                    self._verdicts[d] = folder_problem(os.stat(d))
                except OSError:
                    self._verdicts[d] = None  # gone: what is in it will be missing
            if self._verdicts[d] is not None:
                return self._verdicts[d]
            parent = os.path.dirname(d)
            if d == self.root or parent == d:
                return None
            d = parent

    def _folder(self, folder: str) -> str | None:
        """The rule the folder ``folder`` (and those above it up to the root) breaks."""
        real = self._reals.get(folder)
        if real is None:
            real = self._reals[folder] = os.path.realpath(folder)
        if not inside(real, self.root):
            return "symlink_escape"
        return self._chain(real)

    def enters(self, folder: Where) -> bool:
        """Whether a walk may go into ``folder``; counted ``unsafe`` if not."""
        if self.refused():
            return False
        text = os.fspath(folder)
        problem = self._folder(os.path.abspath(text))
        if problem is not None:
            self._refuse(text, problem)
            return False
        return True

    def admits(self, path: Where) -> bool:
        """Whether ``path`` may be looked at: False (counted ``unsafe``) when a rule
        refuses it. A path that does not exist, or is no regular file, is admitted:
        the caller counts it as it always has."""
        return self._check(path) is not False

    def verdict(self, path: Where) -> tuple[str | None, os.stat_result | bool | None]:
        """``(rule, found)`` for ``path``, nothing counted: ``rule`` is the rule that
        refuses it (None: none); ``found`` its stat (symlinks followed) when it is a
        regular file, True when it is another kind of file, None when it is missing."""
        if self.problem is not None:
            return self.problem, None
        text = os.path.abspath(os.fspath(path))
        problem = self._folder(os.path.dirname(text))
        if problem is not None:
            return problem, None
        try:
            st = os.lstat(text)
            if stat.S_ISLNK(st.st_mode):
                real = os.path.realpath(text)
                if not inside(real, self.root):
                    return "symlink_escape", None
                problem = self._folder(os.path.dirname(real))
                if problem is not None:
                    return problem, None
                st = os.stat(text)
        except OSError:
            return None, None
        if not stat.S_ISREG(st.st_mode):
            return None, True
        return file_problem(st), st

    def _check(self, path: Where) -> os.stat_result | bool | None:
        """``path``'s stat (symlinks followed) when it is safe, True when it is no
        regular file, None when it is missing, False when refused (counted)."""
        if self.refused():
            return False
        problem, found = self.verdict(path)
        if problem is not None:
            self._refuse(path, problem)
            return False
        return found

    def regular_stat(self, path: Where) -> os.stat_result | None:
        """``path``'s stat (symlinks followed) when it may be read, or None counted:
        ``unsafe`` (a rule refuses it), ``missing``, ``not_transcripts`` (no regular
        file: a FIFO would hang the reader)."""
        found = self._check(path)
        if found is None and self.out is not None:
            self.out.skip("missing", path)
        elif found is True and self.out is not None:
            self.out.skip("not_transcripts", path)
        elif found is not False:
            return found
        return None


def too_wide(root: str) -> bool:
    """A root no project has: ``/``, the home folder, or a folder above it (a session
    run there must not anchor ``~/.netrc``)."""
    real = os.path.realpath(root)
    home = os.path.realpath(os.path.expanduser("~"))
    return real == os.path.dirname(real) or home == real or home.startswith(real + os.sep)


def escapes(rel: str) -> bool:
    """Whether a relative path could leave its root: absolute, ``..``, empty, NUL."""
    return (
        not rel
        or "\x00" in rel
        or rel.startswith(("/", "\\", "~"))
        or ".." in rel.replace("\\", "/").split("/")
    )


class ProjectFence(Fence):
    """A project's top folder (see the module's docstring): :meth:`file` says whether a
    path relative to it is a regular file that may be read there."""

    def __init__(self, root: Where, out: Discovery | None = None) -> None:
        super().__init__(root, out)
        self.wide = too_wide(self.given)

    def refusal(self, rel: str) -> str | None:
        """Why ``rel`` (relative to the root, ``/``-separated) is not a file that may be
        read (a rule, ``outside``, ``private``, ``missing``, ``not_regular``), None when
        it is one. Nothing is opened: the file is stat'ed, its folders are checked."""
        if self.wide or escapes(rel):
            return "outside"
        if PRIVATE_FOLDERS.intersection(rel.split("/")[:-1]):
            return "private"
        rule, found = self.verdict(os.path.join(self.given, rel))
        if rule is not None:
            return rule
        if found is None:
            return "missing"
        return None if isinstance(found, os.stat_result) else "not_regular"
