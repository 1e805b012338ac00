"""Safe access to session files every adapter shares: never block, never leave the agent's folder.

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
    "check_transcript_path",
    "head_records",
    "line_segments",
    "open_regular",
    "read_head",
]

#: Longest transcript_path accepted (Linux PATH_MAX) and longest path component (NAME_MAX).
MAX_PATH_CHARS = 4096
MAX_NAME_BYTES = 255


def open_regular(path: str | os.PathLike[str]) -> Any:
    """``open(path, "rb")`` for a regular file only; ``OSError`` for anything else.

    Opened with ``O_NONBLOCK`` (no effect on regular files) so that a FIFO does
    not block the open, then checked with ``fstat`` on the open descriptor (no
    race between the check and the read).
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file"
            raise OSError(f"{os.fspath(path)} is {kind}")
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
