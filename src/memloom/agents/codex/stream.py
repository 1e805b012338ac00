"""A rollout's content as one binary stream, whether it is plain ``.jsonl`` or ``.jsonl.zst``.

Codex may replace a cold ``rollout-*.jsonl`` by ``rollout-*.jsonl.zst`` (reference
§1.1, [C3]). memloom's watermarks (byte offsets, line counts) and the ledger's
prefix hash are defined on the *decompressed* content, so a compressed rollout
resumes exactly where its plain predecessor stopped and is never imported again.

:func:`open_session` is the one way this package (and, through
``Codex.open``, the importer and ledger) opens a rollout: ``.zst`` files are
read through a decompressing stream; anything else is
:func:`memloom.agents.files.open_regular`. Only the standard library is imported
here; ``zstandard`` loads when a ``.zst`` is first opened.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

from memloom.agents.files import open_regular

__all__ = ["ZST_SUFFIX", "ZstReader", "content_size", "is_compressed", "open_session"]

ZST_SUFFIX = ".zst"
_BLOCK = 1 << 20
#: Compressed bytes fed to the decompressor per step.
_FEED = 16 * 1024


def is_compressed(path: str | os.PathLike[str]) -> bool:
    return os.fspath(path).endswith(ZST_SUFFIX)


class ZstReader(io.RawIOBase):
    """A read-only, seekable view of a zstd file's decompressed bytes (all its frames).

    Seeking forward decompresses and discards; seeking backward starts over from
    the beginning (the callers -- ledger hashing, resume, context windows -- only
    ever seek forward from a fresh open, so this stays linear). Corrupt data, and
    a file that ends inside a frame (cut short), raise ``OSError`` like an
    unreadable file: a truncated copy must never pass for a shorter session.
    Compressed input is fed :data:`_FEED` bytes at a time, which bounds what one
    step can expand to.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__()
        self._path = os.fspath(path)
        self._raw: Any = None
        self._size: int | None = None
        self._open()

    def _open(self) -> None:
        import zstandard  # lazily: only .zst rollouts need it

        if self._raw is not None:
            self._raw.close()
        self._raw = open_regular(self._path)  # never a FIFO or a device
        self._dctx = zstandard.ZstdDecompressor()
        self._dobj = self._dctx.decompressobj()
        self._in_frame = False
        self._pending = b""
        self._buf = bytearray()
        self._eof = False
        self._pos = 0

    def _fill(self, want: int) -> None:
        """Decompress until ``want`` bytes are buffered or the data ends."""
        while len(self._buf) < want and not self._eof:
            if not self._pending:
                self._pending = self._raw.read(_FEED)
                if not self._pending:
                    if self._in_frame:
                        raise OSError(f"{self._path}: zstd data ends inside a frame (cut short)")
                    self._eof = True
                    if self._size is None:
                        self._size = self._pos + len(self._buf)
                    return
            chunk, self._pending = self._pending[:_FEED], self._pending[_FEED:]
            try:
                out = self._dobj.decompress(chunk)
            except Exception as exc:  # zstandard.ZstdError: not zstd, or corrupt
                raise OSError(f"{self._path}: corrupt zstd data ({exc})") from None
            self._in_frame = True
            self._buf += out
            if self._dobj.eof:  # a frame ended: the next one (if any) starts in unused_data
                self._pending = self._dobj.unused_data + self._pending
                self._dobj = self._dctx.decompressobj()
                self._in_frame = False

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        if self.closed:
            raise ValueError("read from a closed file")
        if size is None or size < 0:
            parts = []
            while True:
                self._fill(_BLOCK)
                if not self._buf:
                    return b"".join(parts)
                parts.append(bytes(self._buf))
                self._pos += len(self._buf)
                self._buf.clear()
        self._fill(size)
        out = bytes(self._buf[:size])
        del self._buf[:size]
        self._pos += len(out)
        return out

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if whence == io.SEEK_CUR:
            offset += self._pos
        elif whence == io.SEEK_END:
            offset += self.size()
        elif whence != io.SEEK_SET:
            raise ValueError(f"invalid whence {whence}")
        if offset < 0:
            raise ValueError("negative seek position")
        if offset < self._pos:
            self._open()
        while self._pos < offset:
            if not self.read(min(_BLOCK, offset - self._pos)):
                break  # past the end: stay at the end, like a plain file's read()
        return self._pos

    def size(self) -> int:
        """The decompressed length (decompresses the rest once if not yet known)."""
        if self._size is None:
            here = self._pos
            while self.read(_BLOCK):
                pass
            self.seek(here)
        assert self._size is not None
        return self._size

    def close(self) -> None:
        if not self.closed and self._raw is not None:
            self._raw.close()
            self._raw = None
        super().close()


def open_session(path: str | os.PathLike[str]) -> Any:
    """The rollout's content as a binary file object (decompressed for ``.zst``)."""
    if is_compressed(path):
        return ZstReader(path)
    return open_regular(path)


_size_cache: dict[tuple[str, int, int], int] = {}


def content_size(path: Path, st: os.stat_result) -> int:
    """The content length memloom's watermarks count in: ``st_size`` for a plain
    file, the decompressed length for a ``.zst`` (cached per size and mtime)."""
    if not is_compressed(path):
        return st.st_size
    key = (os.fspath(path), st.st_size, st.st_mtime_ns)
    found = _size_cache.get(key)
    if found is None:
        with ZstReader(path) as f:
            found = f.size()
        if len(_size_cache) > 10_000:
            _size_cache.clear()
        _size_cache[key] = found
    return found
