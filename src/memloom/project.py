"""A project is its repository: the one label every memory of a folder is filed under.

``project_key(folder)`` is the one function that turns a working folder (an agent's
cwd, a path the user named) into the project memories are kept under. Inside a git
repository that is the repository's identity, so worktrees, moved checkouts and clones
share one project:

- the normalised URL of its remote (``origin``, else the first), ``host/owner/repo``:
  the ssh, scp-like and https forms of one repository are one, and credentials or
  ports in the URL are never kept;
- without a remote, the folder of its main worktree (the common git dir's parent).

A folder outside git, a relative label, or anything that cannot be read as a
repository keeps today's behaviour: the label as given.

Read without running git (a hook answers in milliseconds), and never more than git
itself reads: ``.git`` is looked for upwards on one file system; a symlinked ``.git``,
one not owned by this user, or a ``gitdir:`` file whose target does not point back to
this folder (a worktree's ``gitdir`` file, a submodule's ``core.worktree``) is not a
repository; the common dir must look like one to git (``HEAD``, ``objects``,
``refs``); files are read only up to a bound. Standard library only.
"""

from __future__ import annotations

import os
import re
import stat
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["Repository", "normalise_remote", "project_key", "repository"]

#: The most of a ``.git`` file, ``commondir`` or ``gitdir`` file read (each is one path).
POINTER_BYTES = 4096
#: The most of a repository's ``config`` read: the remotes sit near its top.
CONFIG_BYTES = 256 * 1024
#: Longest remote URL considered (longer: no remote).
MAX_URL_CHARS = 2048
#: How long a folder's answer is reused by a long-lived process (the daemon).
CACHE_SECONDS = 30.0
_CACHE_MAX = 512

#: Hosts whose repository paths are case-insensitive.
_CASELESS_HOSTS = frozenset({"github.com", "gitlab.com", "bitbucket.org", "codeberg.org"})
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://(.*)$", re.S)
_SCP = re.compile(r"^(?:[^@/:]+@)?([^@/:]+):(?!//)(.*)$", re.S)
_SECTION = re.compile(r'^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]')
_KEY = re.compile(r"^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$")


class Repository:
    """What identifies one repository: the folder its ``.git`` is in (``root``), its
    common git dir, and its remote, normalised (None: none)."""

    __slots__ = ("common_dir", "remote", "root")

    def __init__(self, root: str, common_dir: str, remote: str | None) -> None:
        self.root = root
        self.common_dir = common_dir
        self.remote = remote

    @property
    def key(self) -> str:
        """The project label: the remote, else the main worktree's folder."""
        if self.remote:
            return self.remote
        if os.path.basename(self.common_dir) == ".git":
            return os.path.dirname(self.common_dir)
        return self.common_dir

    def __repr__(self) -> str:
        return f"Repository({self.root!r}, {self.common_dir!r}, {self.remote!r})"


_cache: dict[str, tuple[float, Repository | None]] = {}


def project_key(folder: str | None) -> str | None:
    """The project ``folder`` belongs to: its repository's key, else ``folder`` as given.

    Only an absolute path is looked up: a label such as ``acme-api`` or a key this
    function returned (``github.com/acme/api``) is returned unchanged, so calling it
    twice is calling it once."""
    if not folder or not os.path.isabs(folder):
        return folder
    repo = repository(folder)
    return folder if repo is None else repo.key


def repository(folder: str) -> Repository | None:
    """The git repository ``folder`` lies in, read as described above; None when there
    is none, or it cannot be read safely. Answers are reused for ``CACHE_SECONDS``."""
    now = time.monotonic()
    hit = _cache.get(folder)
    if hit is not None and now - hit[0] < CACHE_SECONDS:
        return hit[1]
    try:
        repo = _find(folder)
    except (OSError, ValueError):
        repo = None
    if len(_cache) >= _CACHE_MAX:
        _cache.clear()
    _cache[folder] = (now, repo)
    return repo


def _ancestors(folder: str) -> Iterator[str]:
    """``folder`` and its parents, up to the root or the edge of its file system (git
    stops there too unless told otherwise)."""
    here = os.path.normpath(folder)
    try:
        device = os.stat(here).st_dev
    except OSError:
        return
    while True:
        yield here
        parent = os.path.dirname(here)
        if parent == here:
            return
        try:
            if os.stat(parent).st_dev != device:
                return
        except OSError:
            return
        here = parent


def _find(folder: str) -> Repository | None:
    for here in _ancestors(folder):
        dot_git = os.path.join(here, ".git")
        try:
            st = os.lstat(dot_git)
        except FileNotFoundError:
            continue
        # The first .git up the tree decides, as it does for git: one that cannot be
        # read safely makes the folder no repository rather than its parent's.
        if not _owned(st):
            return None
        if stat.S_ISDIR(st.st_mode):
            common = os.path.realpath(dot_git)
        elif stat.S_ISREG(st.st_mode):
            common = _linked_common_dir(here, dot_git)
        else:  # a symlink, a FIFO, a device: not followed
            return None
        if common is None or not _is_git_dir(common):
            return None
        return Repository(os.path.realpath(here), common, _remote(common))
    return None


def _owned(st: os.stat_result) -> bool:
    """Whether this user owns the file (git refuses another user's repository)."""
    uid = getattr(os, "geteuid", None)
    return uid is None or st.st_uid == uid()


def _read_small(path: str, limit: int) -> str | None:
    """A regular file of this user's, at most ``limit`` bytes (None: anything else)."""
    try:
        fd = os.open(
            path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        )
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or not _owned(st):
            return None
        data = os.read(fd, limit)
    finally:
        os.close(fd)
    return data.decode("utf-8", "replace")


def _is_git_dir(path: str) -> bool:
    """What git asks of a git dir: ``HEAD``, ``objects/`` and ``refs/``, this user's."""
    try:
        st = os.stat(path)
        head = os.lstat(os.path.join(path, "HEAD"))
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode) or not _owned(st) or not stat.S_ISREG(head.st_mode):
        return False
    return os.path.isdir(os.path.join(path, "objects")) and os.path.isdir(
        os.path.join(path, "refs")
    )


def _pointer(path: str, prefix: str = "") -> str | None:
    """The one path a pointer file holds (``gitdir: X``, ``commondir``), or None."""
    text = _read_small(path, POINTER_BYTES)
    if text is None:
        return None
    line = text.splitlines()[0].strip() if text.strip() else ""
    if prefix:
        if not line.startswith(prefix):
            return None
        line = line[len(prefix) :].strip()
    return line or None


def _linked_common_dir(worktree: str, dot_git: str) -> str | None:
    """The common dir of a ``.git`` file (a linked worktree or a submodule), accepted
    only when its target points back here: ``gitdir: /etc`` or a path into another
    repository makes no repository."""
    target = _pointer(dot_git, "gitdir:")
    if target is None:
        return None
    gitdir = os.path.realpath(os.path.join(worktree, target))
    try:
        head = os.lstat(os.path.join(gitdir, "HEAD"))
    except OSError:
        return None
    if not stat.S_ISREG(head.st_mode):
        return None
    here = os.path.realpath(dot_git)
    common_ref = os.path.join(gitdir, "commondir")
    if os.path.lexists(common_ref):
        # A linked worktree: its gitdir file names this .git file.
        back = _pointer(os.path.join(gitdir, "gitdir"))
        if back is None or os.path.realpath(os.path.join(gitdir, back)) != here:
            return None
        common = _pointer(common_ref)
        return None if common is None else os.path.realpath(os.path.join(gitdir, common))
    # A submodule (or --separate-git-dir with a worktree set): core.worktree names us.
    config = _read_small(os.path.join(gitdir, "config"), CONFIG_BYTES)
    back = _config_value(config or "", "core", None, "worktree")
    if back is None or os.path.realpath(os.path.join(gitdir, back)) != os.path.realpath(worktree):
        return None
    return gitdir


def _remote(common: str) -> str | None:
    """The normalised URL of ``origin``, else of the first remote with one."""
    text = _read_small(os.path.join(common, "config"), CONFIG_BYTES)
    if not text:
        return None
    urls: dict[str, str] = {}
    for section, sub, key, value in _config_items(text):
        if section == "remote" and key == "url" and sub is not None and sub not in urls:
            urls[sub] = value
    for url in ([urls["origin"]] if "origin" in urls else []) + list(urls.values()):
        found = normalise_remote(url)
        if found:
            return found
    return None


def _config_value(text: str, section: str, sub: str | None, key: str) -> str | None:
    found = None
    for s, b, k, v in _config_items(text):
        if (s, b, k) == (section, sub, key):
            found = v  # the last one wins, as in git
    return found


def _config_items(text: str) -> Iterator[tuple[str, str | None, str, str]]:
    """``(section, subsection, key, value)`` of a git config file: section and key
    names lower-cased, the subsection as written. Includes are not followed; a line
    it cannot read is skipped."""
    section: str | None = None
    sub: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            m = _SECTION.match(line)
            if m is None:
                section = None
                continue
            name = m.group(1).lower()
            section, sub = name, m.group(2)
            if sub is None and "." in name:  # the old [section.sub] form
                section, _, sub = name.partition(".")
            elif sub is not None:
                sub = re.sub(r"\\(.)", r"\1", sub)
            line = line[m.end() :].strip()
            if not line or line[0] in "#;":
                continue
        if section is None:
            continue
        m = _KEY.match(line)
        if m is None:
            continue
        yield section, sub, m.group(1).lower(), _config_text(m.group(2) or "")


def _config_text(value: str) -> str:
    """A config value: quotes removed, escapes read, a trailing comment dropped."""
    out: list[str] = []
    quoted = False
    i = 0
    while i < len(value):
        c = value[i]
        if c == '"':
            quoted = not quoted
        elif c == "\\" and i + 1 < len(value):
            i += 1
            out.append({"n": "\n", "t": "\t", "b": "\b"}.get(value[i], value[i]))
        elif c in "#;" and not quoted:
            break
        else:
            out.append(c)
        i += 1
    return "".join(out).strip()


def normalise_remote(url: str) -> str | None:
    """A remote URL as ``host/path``, the same for its ssh, scp-like, git and https
    forms (``git@github.com:acme/api.git`` = ``https://github.com/acme/api``), with no
    user, password, port, query or ``.git``; a local remote as its absolute path.
    None for what cannot be a repository's address."""
    url = url.strip()
    if not url or len(url) > MAX_URL_CHARS or any(ord(c) < 32 or c.isspace() for c in url):
        return None
    m = _SCHEME.match(url)
    if m:
        scheme, rest = m.group(1).lower(), m.group(2)
        if scheme == "file":
            return _local(rest)
        authority, _, path = rest.partition("/")
        host = authority.rpartition("@")[2]
        # No port: ssh on 22 and https on 443 reach one repository ([IPv6]:port too).
        host = host.partition("]")[0] + "]" if host.startswith("[") else host.partition(":")[0]
        path = re.split(r"[?#]", path, maxsplit=1)[0]
    else:
        s = _SCP.match(url)
        if s is None or len(s.group(1)) == 1:  # a path, or a Windows drive (C:\…)
            return _local(url)
        host, path = s.group(1), s.group(2)
    host = host.lower().rstrip(".")
    path = path.strip("/").lstrip("~").strip("/")
    path = path.removesuffix(".git").rstrip("/")
    if not host or not path or ".." in path.split("/"):
        return None
    if host in _CASELESS_HOSTS:
        path = path.lower()
    return f"{host}/{path}"


def _local(path: str) -> str | None:
    """A local remote (a clone of a folder): its absolute path, without ``/.git``."""
    if not os.path.isabs(path):
        return None
    path = os.path.normpath(path)
    if os.path.basename(path) == ".git":
        path = os.path.dirname(path)
    return path
