"""Safe access to session files every adapter shares: never block, never leave the agent's folder,
never read what another user could have written.

The ownership rules follow OpenSSH's StrictModes and git's ``safe.directory``: a
session file must belong to the user memloom runs as, and neither its group nor
other users may write it (:func:`file_problem`); a folder it lies in must belong to
that user or root and not be writable by others (:func:`folder_problem`). A file or
folder writable by its group passes only when that group is the owner's own private
group (Debian's and Ubuntu's umask 002: the owner is its only member), as Debian's
OpenSSH allows. :func:`open_regular` checks the file again on the open descriptor,
so nothing swapped in after discovery is read.

Standard library only: the hook fast path imports :func:`check_transcript_path`.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from memloom.errors import NotificationRefused

TYPE_CHECKING = False  # typing's, without loading typing (~3 ms): the hooks load this module
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "MAX_NAME_BYTES",
    "MAX_PATH_CHARS",
    "UNSAFE_RULES",
    "UnsafeFile",
    "check_transcript_path",
    "file_problem",
    "folder_problem",
    "head_records",
    "line_segments",
    "open_regular",
    "read_head",
]

#: Longest transcript_path accepted (Linux PATH_MAX) and longest path component (NAME_MAX).
MAX_PATH_CHARS = 4096
MAX_NAME_BYTES = 255


#: Why a file or folder is not read: the rule a log line and :class:`UnsafeFile` name.
UNSAFE_RULES = {
    "symlink_escape": "a symlink leading out of its root",
    "foreign_owner": "owned by another user",
    "group_writable": "writable by other users of its group",
    "world_writable": "writable by every user",
    "shared_root": "a folder every user can write (/tmp-like), or one on its way",
    "outside": "not a file in the agent's folder",
}


class UnsafeFile(OSError):
    """A file or folder memloom refuses to read; ``rule`` is a key of :data:`UNSAFE_RULES`."""

    def __init__(self, path: str | os.PathLike[str], rule: str) -> None:
        self.rule = rule
        super().__init__(f"{os.fspath(path)}: not read, {UNSAFE_RULES.get(rule, rule)} ({rule})")


_private_groups: dict[tuple[int, int], bool] = {}


def _private_group(gid: int, uid: int) -> bool:
    """Whether group ``gid`` is user ``uid``'s own: the owner is its only member (as the
    primary group of no other account, and no other name in its member list)."""
    key = (gid, uid)
    if key not in _private_groups:
        import grp
        import pwd

        try:
            group, owner = grp.getgrgid(gid), pwd.getpwuid(uid)
        except (KeyError, OverflowError):
            found = False
        else:
            primary = [p.pw_uid for p in pwd.getpwall() if p.pw_gid == gid]
            found = (
                all(m == owner.pw_name for m in group.gr_mem)
                and all(u == uid for u in primary)
                and bool(primary or group.gr_mem)
            )
        _private_groups[key] = found
    return _private_groups[key]


def file_problem(st: os.stat_result) -> str | None:
    """The rule a session file breaks (a :data:`UNSAFE_RULES` key), or None: it must
    belong to this user, and neither other users nor its group may write it (unless
    the group is the owner's private group)."""
    if st.st_uid != os.geteuid():
        return "foreign_owner"
    if st.st_mode & 0o002:
        return "world_writable"
    if st.st_mode & 0o020 and not _private_group(st.st_gid, st.st_uid):
        return "group_writable"
    return None


def folder_problem(st: os.stat_result, *, sticky_ok: bool = False) -> str | None:
    """The rule a folder breaks, or None: it must belong to this user or root, and no
    other user may write it -- a writable folder lets them swap the files in it.
    ``sticky_ok``: a sticky world-writable folder (``/tmp``) is accepted (for a folder
    *above* the one read: nobody else can rename or delete what lies in it)."""
    if st.st_uid not in (os.geteuid(), 0):
        return "foreign_owner"
    sticky = bool(st.st_mode & stat.S_ISVTX)
    if st.st_mode & 0o002:
        return None if sticky and sticky_ok else ("shared_root" if sticky else "world_writable")
    if st.st_mode & 0o020 and not sticky and not _private_group(st.st_gid, st.st_uid):
        return "group_writable"
    return None


def open_regular(path: str | os.PathLike[str]) -> Any:
    """``open(path, "rb")`` for a regular file only; ``OSError`` for anything else.

    Opened with ``O_NONBLOCK`` (no effect on regular files) so that a FIFO does
    not block the open, then checked with ``fstat`` on the open descriptor (no
    race between the check and the read): a file another user owns or can write
    raises :class:`UnsafeFile` (:func:`file_problem`).
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        mode = st.st_mode
        if not stat.S_ISREG(mode):
            kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file"
            raise OSError(f"{os.fspath(path)} is {kind}")
        if (problem := file_problem(st)) is not None:
            raise UnsafeFile(path, problem)
        if flags & getattr(os, "O_NONBLOCK", 0):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def check_transcript_path(
    path_text: Any, base: Path, *, suffixes: tuple[str, ...], folder: str
) -> Path:
    """The resolved session path from a hook payload, or NotificationRefused saying why not.

    The path is untrusted, so it is checked before anything opens it: an absolute
    path of sane length without ``..`` components, ending in one of ``suffixes``,
    that resolves (symlinks followed) inside ``base`` (``folder`` names it in the
    message), to an existing regular file -- never a FIFO or a device, which would
    block or feed the worker endlessly. Only ``stat`` is used; nothing is opened.
    """
    if not isinstance(path_text, str) or not path_text.strip():
        raise NotificationRefused("transcript_path is missing")
    if "\x00" in path_text:
        raise NotificationRefused("transcript_path contains a NUL byte")
    if len(path_text) > MAX_PATH_CHARS:
        raise NotificationRefused(
            f"transcript_path is too long ({len(path_text):,} characters; "
            f"at most {MAX_PATH_CHARS:,})"
        )
    given = Path(path_text).expanduser()
    if not given.is_absolute():
        raise NotificationRefused(f"transcript_path is not absolute: {path_text!r}")
    if ".." in given.parts:
        raise NotificationRefused(f"transcript_path contains '..': {path_text!r}")
    if any(len(part.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES for part in given.parts):
        raise NotificationRefused("transcript_path has a name longer than 255 bytes")
    base = base.resolve()
    try:
        path = given.resolve()
    except (OSError, RuntimeError) as exc:  # e.g. a symlink loop
        raise NotificationRefused(f"transcript_path does not resolve: {exc}") from None
    if path.suffix not in suffixes:
        raise NotificationRefused(f"not a {'/'.join(suffixes)} transcript: {path}")
    if not path.is_relative_to(base):
        raise NotificationRefused(f"outside the {folder} {base}: {path}")
    try:
        mode = os.stat(path).st_mode  # resolved: the final component is no symlink
    except OSError as exc:
        raise NotificationRefused(f"transcript does not exist: {path} ({exc.strerror})") from None
    if not stat.S_ISREG(mode):
        raise NotificationRefused(f"not a regular file: {path}")
    return path


def read_head(path: str | os.PathLike[str], size: int = 64 * 1024) -> bytes:
    """The first ``size`` bytes of a regular file; ``b""`` if it cannot be read."""
    try:
        with open_regular(path) as fh:
            return fh.read(size)
    except OSError:
        return b""


def head_records(head: bytes, limit: int = 20) -> list[dict[str, Any]]:
    """The JSON objects on the first complete lines of ``head`` (what content sniffing
    looks at); lines that are not JSON objects are passed over."""
    import json

    out: list[dict[str, Any]] = []
    for line in head.split(b"\n")[:-1][:limit] if b"\n" in head else [head]:
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def line_segments(blocks: Iterable[bytes], limit: int) -> Iterator[tuple[bytes | None, int, bool]]:
    """The physical lines of ``blocks``: ``(bytes, length, terminated)``.

    ``bytes`` is None for a line longer than ``limit``: its bytes are dropped as
    they arrive, so memory stays bounded by ``limit`` plus one block.
    ``terminated`` is False only for a last segment without a final newline.
    """
    parts: list[bytes] = []
    size = 0  # bytes of the current line seen so far
    over = False
    for block in blocks:
        start = 0
        while True:
            nl = block.find(b"\n", start)
            if nl < 0:
                break
            total = size + nl - start
            if over or total > limit:
                yield None, total, True
            elif parts:
                parts.append(block[start:nl])
                yield b"".join(parts), total, True
            else:
                yield block[start:nl], total, True
            parts, size, over = [], 0, False
            start = nl + 1
        rest = len(block) - start
        if rest:
            size += rest
            if over or size > limit:
                over, parts = True, []
            else:
                parts.append(block[start:] if start else block)
    if size:
        yield (None if over else b"".join(parts)), size, False
