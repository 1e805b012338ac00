"""What the session readers share: clean text, the watermark, and the JSON Lines driver.

Every adapter's ``parse.py`` reads its agent's records its own way; these are the
parts that are the same for all of them:

* **Text**: :func:`safe_text` (from :mod:`memloom.text`: no lone surrogates, no NULs)
  and :func:`without_memloom` (memloom's own ``<memloom-context>`` block taken
  out, so recalled memories are never imported again); :func:`clean_text`, both and
  stripped; :func:`text_or_none`, a record's optional string field.
* **The watermark** (a byte offset and the physical line count there): the
  keywords of :meth:`memloom.agents.base.Agent.read` (:class:`Resume`), read into a
  :class:`Watermark`; :func:`end_within` and :func:`resume` before reading,
  :func:`stamp` after.
* **JSON Lines** (Claude Code, Codex, Copilot's ``events.jsonl``): a reader is a
  :class:`LineReader` (its ``recover`` rule for :func:`decode_line`, its ``record`` of
  one object); :func:`read_lines` feeds it the lines of a stream. Bytes are split on
  ``\\n`` only (:func:`memloom.agents.files.line_segments`); a line longer than
  the reader's ``limit`` is skipped unread (``oversized``); with ``final=False`` an
  unterminated last segment is consumed only when it decodes completely (the agent
  may still be writing it); a resume at an offset not preceded by ``\\n`` continues
  that physical line (same number). :func:`read_file` reads a regular file from a
  :class:`Watermark`, :func:`read_bytes` bytes already in memory (re-read context,
  cited lines). Each reader passes its own block size and line limit (its module's
  ``BLOCK_SIZE`` and ``MAX_LINE_BYTES``, read at the call).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypedDict

from memloom.agents.base import MEMLOOM_CONTEXT_CLOSE, MEMLOOM_CONTEXT_OPEN, ParseResult
from memloom.agents.files import line_segments, open_regular
from memloom.text import safe_text

__all__ = [
    "MEMLOOM_BLOCK_RE",
    "LineReader",
    "Resume",
    "Watermark",
    "blocks",
    "check_watermark",
    "clean_text",
    "decode_line",
    "end_line",
    "end_within",
    "feed_lines",
    "read_bytes",
    "read_file",
    "read_from",
    "read_lines",
    "resume",
    "resync_at",
    "safe_text",
    "stamp",
    "take_ids",
    "text_or_none",
    "without_memloom",
]

#: memloom's own block, from its opening tag at a line start to its closing tag
#: (or the end of the text, when the closing tag is missing).
MEMLOOM_BLOCK_RE = re.compile(
    r"^[ \t]*"
    + re.escape(MEMLOOM_CONTEXT_OPEN)
    + r".*?(?:"
    + re.escape(MEMLOOM_CONTEXT_CLOSE)
    + r"|\Z)",
    re.S | re.M,
)


# --------------------------------------------------------------------------- text


def without_memloom(text: str) -> str:
    """``text`` without memloom's own blocks (:data:`MEMLOOM_BLOCK_RE`)."""
    if MEMLOOM_CONTEXT_OPEN in text:
        return MEMLOOM_BLOCK_RE.sub("", text)
    return text


def clean_text(text: str) -> str:
    """``text`` made safe, without memloom's own blocks, stripped."""
    return without_memloom(safe_text(text)).strip()


def text_or_none(value: Any, *, empty: bool = True) -> str | None:
    """A string field made safe; None for anything else (and, with ``empty=False``, for
    an empty string)."""
    if isinstance(value, str) and (empty or value):
        return safe_text(value)
    return None


# --------------------------------------------------------------------------- watermark


def check_watermark(start_offset: int, start_line: int) -> None:
    """``ValueError`` for a negative watermark."""
    if start_offset < 0 or start_line < 0:
        raise ValueError("start_offset and start_line must be >= 0")


class Resume(TypedDict, total=False):
    """The keywords of every reader: see :class:`Watermark`."""

    start_offset: int
    start_line: int
    seen: set[str] | None
    final: bool


@dataclass(frozen=True)
class Watermark:
    """Where a read starts: ``start_offset`` bytes in, after ``start_line`` physical
    lines; ``seen``, the record ids read already (updated; duplicates are dropped);
    ``final``, whether the file is complete (False: its unterminated last line may
    still be being written). ``ValueError`` for a negative offset or line."""

    start_offset: int = 0
    start_line: int = 0
    seen: set[str] | None = None
    final: bool = False

    def __post_init__(self) -> None:
        check_watermark(self.start_offset, self.start_line)


def end_within(f: Any, path: Any, start_offset: int) -> int:
    """The size of the seekable ``f`` (left at its end); ``ValueError`` when ``start_offset``
    is past it (the file was truncated or replaced: start over from 0)."""
    size = f.seek(0, 2)
    if start_offset > size:
        raise ValueError(f"start_offset {start_offset} is beyond the end of {path} ({size} bytes)")
    return size


def resume(f: Any, path: Any, start_offset: int, *, sized: bool = True) -> bool:
    """Seek ``f`` to ``start_offset`` (checked by :func:`end_within`); whether that is
    inside a physical line (the byte before it is no newline).

    ``sized=False``: ``f`` is a stream whose size costs a full read (a decompressed
    rollout); the offset is checked by the byte before it existing instead.
    """
    if sized:
        end_within(f, path, start_offset)
    continuation = False
    if start_offset > 0:
        f.seek(start_offset - 1)
        before = f.read(1)
        if len(before) != 1:
            raise ValueError(f"start_offset {start_offset} is beyond the end of {path}")
        continuation = before != b"\n"
    f.seek(start_offset)
    return continuation


def blocks(f: Any, size: int, limit: int | None = None) -> Iterator[bytes]:
    """``f``'s bytes from where it is, ``size`` at a time (at most ``limit`` in all)."""
    left = limit
    while left is None or left > 0:
        block = f.read(size if left is None else min(size, left))
        if not block:
            return
        if left is not None:
            left -= len(block)
        yield block


def stamp(
    res: ParseResult, counts: tuple[int, int], *, first_line: int, offset: int = 0
) -> ParseResult:
    """``res`` with its watermark, ``counts`` being the (lines, bytes) consumed from
    physical line ``first_line`` at byte ``offset``."""
    lines, consumed = counts
    res.lines_read = first_line - 1 + lines
    res.end_offset = offset + consumed
    return res


# --------------------------------------------------------------------------- JSON Lines

_decoder = json.JSONDecoder()
_loads = _decoder.decode
_raw_decode = _decoder.raw_decode
_WS = " \t\r\n"

#: ``recover(text, index, failures)`` after a record failed to decode at ``index``
#: (``failures``: how many did on this line, this one included): the values it
#: recovers, and the index to decode on from (the text's length: stop).
Recover = Callable[[str, int, int], tuple[list[Any], int]]


#: Deepest JSON nesting a record may have. Deeper lines are corrupt whatever the
#: caller's stack: left to ``RecursionError``, a line nested about a thousand deep
#: would be a record or not depending on how deep the reader itself was called.
#: Agents' records nest a few dozen levels; Python's parser manages about a thousand.
MAX_NESTING = 512
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(rb"[^\[\]{}]+")
_DEPTH_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def end_line(s: str, i: int, failures: int) -> tuple[list[Any], int]:
    """The ``recover`` that gives up on the rest of the line."""
    return [], len(s)


def resync_at(record_start: str, max_recoveries: int = 16) -> Recover:
    """A ``recover`` for :func:`decode_line` when every record of a format opens alike
    (``'{"uuid"'``): after a corrupt record, go on at the next ``record_start`` (at most
    ``max_recoveries`` times a line, each scanning at most the rest of it)."""

    def recover(s: str, i: int, failures: int) -> tuple[list[Any], int]:
        j = s.find(record_start, i + 1)
        if j < 0 or failures > max_recoveries:
            return [], len(s)
        return [], j

    return recover


def take_ids(res: ParseResult, record: dict[str, Any]) -> None:
    """The first ``sessionId``, ``cwd`` and ``version`` a session's records carry at their
    top level (Claude Code's and Qwen Code's do), into ``res`` where it has none yet."""
    for attr, key in (("session_id", "sessionId"), ("cwd", "cwd"), ("version", "version")):
        value = record.get(key)
        if getattr(res, attr) is None and isinstance(value, str) and value:
            setattr(res, attr, safe_text(value))


def nested_too_deep(raw: bytes, limit: int = MAX_NESTING) -> bool:
    """Whether the brackets of ``raw`` outside its JSON strings nest deeper than ``limit``
    (cheap unless the line holds more than ``limit`` brackets at all)."""
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    structure = _NOT_BRACKET.sub(b"", _STRING.sub(b"", raw))
    depth = 0
    for c in structure:
        depth += _DEPTH_STEP[c]
        if depth > limit:
            return True
    return False


def decode_line(
    raw: bytes, recover: Recover, *, bytes_first: bool = False
) -> tuple[list[Any], int]:
    """One physical line of JSON Lines: (decoded values, 1 if any part was corrupt, else 0).

    NUL bytes are removed (a line of only NULs is corrupt, a blank line empty); the
    rest is decoded as UTF-8 with replacement, without a byte order mark. A line may
    hold several records (``}{``); where one does not decode, ``recover`` (the
    reader's own rule) says what follows. ``bytes_first``: a line that is one JSON
    value is checked with ``json.loads`` on the bytes, before decoding (which
    detects UTF-16 and UTF-32 itself). A line nested deeper than :data:`MAX_NESTING`
    is one corrupt segment.
    """
    had_nul = b"\x00" in raw
    if had_nul:
        raw = raw.replace(b"\x00", b"")
    if nested_too_deep(raw):
        return [], 1
    if bytes_first:
        try:
            return [json.loads(raw)], 0
        except (ValueError, RecursionError):
            pass
    s = raw.decode("utf-8", "replace")
    if s.startswith("\ufeff"):
        s = s[1:]
    if not bytes_first:
        try:
            return [_loads(s)], 0
        except (ValueError, RecursionError):
            pass
    n = len(s)
    i = n - len(s.lstrip(_WS))
    if i >= n:
        return [], 1 if had_nul else 0
    values: list[Any] = []
    failures = 0
    while i < n:
        try:
            obj, i = _raw_decode(s, i)
        except (ValueError, RecursionError):
            failures += 1
            found, i = recover(s, i, failures)
            values.extend(found)
            continue
        values.append(obj)
        while i < n and s[i] in _WS:
            i += 1
    return values, 1 if failures else 0


class LineReader:
    """A JSON Lines reader: ``decode`` one physical line into (values, corrupt segments),
    by :func:`decode_line` with the reader's ``recover`` rule (a ``staticmethod``; by
    default the line ends at a corrupt record) and ``bytes_first``; ``record`` each
    object; what is not an object is ``malformed``."""

    res: ParseResult
    recover: Recover = staticmethod(end_line)
    bytes_first = False

    def decode(self, raw: bytes) -> tuple[list[Any], int]:
        return decode_line(raw, self.recover, bytes_first=self.bytes_first)

    def record(self, o: dict[str, Any], line: int) -> None:
        raise NotImplementedError

    def feed(self, raw: bytes, line: int) -> None:
        values, bad = self.decode(raw)
        self.res.malformed += bad
        self.process(values, line)

    def process(self, values: list[Any], line: int) -> None:
        for obj in values:
            if isinstance(obj, dict):
                self.record(obj, line)
            else:
                self.res.malformed += 1

    def finish(self) -> ParseResult:
        """The result, once every line is fed."""
        return self.res


def feed_lines(
    p: LineReader,
    chunks: Iterable[bytes],
    *,
    limit: int,
    first_line: int,
    final: bool,
    continuation: bool = False,
) -> tuple[int, int]:
    """Feed the lines of ``chunks`` to ``p`` (a line over ``limit`` bytes is skipped
    unread): (lines consumed, bytes consumed)."""
    line = first_line - 1  # number of the last physical line fed
    consumed = 0
    cont = continuation
    for seg, length, terminated in line_segments(chunks, limit):
        if cont:  # the rest of the physical line before the start offset
            cont, this_line = False, first_line - 1
        else:
            this_line = line + 1
        if terminated:
            consumed += length + 1
            line = max(line, this_line)
            if seg is None:
                p.res.oversized += 1
            elif seg:
                p.feed(seg, this_line)
            continue
        # An unterminated last segment.
        if seg is None:
            if not final:  # may still be being written: leave it for the next call
                break
            p.res.oversized += 1
        elif final:
            p.feed(seg, this_line)
        else:
            values, bad = p.decode(seg)
            if bad or not values or not all(isinstance(v, dict) for v in values):
                break
            p.process(values, this_line)
        consumed += length
        line = max(line, this_line)
    return line - first_line + 1, consumed


def read_lines(
    p: LineReader,
    chunks: Iterable[bytes],
    *,
    limit: int,
    first_line: int = 1,
    offset: int = 0,
    final: bool,
    continuation: bool = False,
) -> ParseResult:
    """:func:`feed_lines`, then ``p``'s result with its watermark (:func:`stamp`)."""
    counts = feed_lines(
        p, chunks, limit=limit, first_line=first_line, final=final, continuation=continuation
    )
    return stamp(p.finish(), counts, first_line=first_line, offset=offset)


def read_bytes(
    p: LineReader,
    data: bytes,
    *,
    limit: int,
    first_line: int = 1,
    final: bool = True,
) -> ParseResult:
    """:func:`read_lines` of bytes already in memory, whose first line is physical line
    ``first_line``; ``end_offset`` is relative to ``data``."""
    chunks = (data,) if data else ()
    return read_lines(p, chunks, limit=limit, first_line=first_line, final=final)


def read_file(
    p: LineReader,
    path: Any,
    at: Watermark,
    *,
    block_size: int,
    limit: int,
) -> ParseResult:
    """:func:`read_from` of the regular file at ``path``, opened as
    :func:`memloom.agents.files.open_regular` opens it (``OSError`` when it is not one,
    or is unsafe; ``ValueError`` for an offset past its end)."""
    with open_regular(path) as f:
        return read_from(p, f, path, at, block_size=block_size, limit=limit)


def read_from(
    p: LineReader,
    f: Any,
    path: Any,
    at: Watermark,
    *,
    block_size: int,
    limit: int,
    sized: bool = True,
) -> ParseResult:
    """:func:`read_lines` of the seekable file ``f`` (``path``) from the watermark ``at``
    (``sized``: as :func:`resume`)."""
    continuation = resume(f, path, at.start_offset, sized=sized)
    return read_lines(
        p,
        blocks(f, block_size),
        limit=limit,
        first_line=at.start_line + 1,
        offset=at.start_offset,
        final=at.final,
        continuation=continuation,
    )
