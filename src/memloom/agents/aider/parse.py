"""Read an Aider chat history (``.aider.chat.history.md``) as line-numbered units.

Grammar (reference ``agents.md`` §6; Aider's ``io.py`` writes it):

* ``# aider chat started at YYYY-MM-DD HH:MM:SS`` begins a session; one file
  holds many, appended one after another.
* ``#### <text>`` is a user line. Consecutive ``####`` lines are one multi-line
  prompt (Aider writes each line as ``#### <line>  ``); ``#### <blank>`` is an
  empty prompt.
* ``>`` lines are tool/system output (the command line, ``Aider vX``, ``Added …
  to the chat``, edits, errors, yes/no questions with their answers): dropped.
* Any other non-blank line is the assistant's Markdown reply. All reply text
  between two prompts is one unit (the ``>`` lines inside it are left out), from
  its first to its last text line.

The files Aider's ``>`` lines say it added to the chat (``> Added F to the chat``:
read) or edited (``> Applied edit to F``) go to ``ParseResult.touched``.

Dropped and counted: ``tool_output`` (each ``>`` line), ``slash_command``
(prompts that are commands to Aider -- ``/add``, ``/copy-context``, ``/drop``,
``!shell``, … -- not statements), ``yes_no`` (a prompt that is only ``y``/``n``/
``yes``/``no``), ``empty`` (``<blank>``, or nothing left once memloom's own
``<memloom-context>`` block is removed). Kept: ``/ask``, ``/code``, ``/architect``
and ``/context`` *with a message* -- those send the typed text to the model -- as
what was typed.

Each unit carries ``session_id = "aider:<file>:<header timestamp>"`` and a
stable ``uuid`` from (file, header timestamp, line number), so re-reading the
same lines dedupes. The file is append-only: reads resume at the byte watermark;
a resumed read finds the current session's header by scanning back from it.
Known limit: a reply that itself has a ``#### `` heading or a ``>`` quote cannot
be told from a prompt or tool output (the format has no other marker).

Lines are split on ``\\n`` only; NULs are removed (a line of only NULs is
``malformed``); lines over :data:`MAX_LINE_BYTES` are skipped (``oversized``);
with ``final=False`` an unterminated last line is left for the next read.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from memloom.agents.base import ParseResult, Unit
from memloom.agents.files import open_regular
from memloom.agents.reading import blocks, check_watermark, resume, stamp, without_memloom
from memloom.agents.touched import EDIT, READ, from_args

__all__ = [
    "DROP_REASONS",
    "HEADER_PREFIX",
    "KEPT_COMMANDS",
    "MAX_LINE_BYTES",
    "header_before",
    "parse_bytes",
    "parse_history",
]

HEADER_PREFIX = "# aider chat started at "
_HEADER_RE = re.compile(r"^# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\s*$")
#: Commands whose argument is a message to the model (kept as typed).
KEPT_COMMANDS = frozenset({"/ask", "/code", "/architect", "/context"})
_YES_NO = frozenset({"y", "n", "yes", "no"})
_COMMAND_RE = re.compile(r"^(?:/[A-Za-z][\w-]*|!)")

DROP_REASONS = ("tool_output", "slash_command", "yes_no", "empty")

BLOCK_SIZE = 1 << 20
MAX_LINE_BYTES = 32 << 20
#: How far back a resumed read looks for its session's header.
HEADER_SCAN_BYTES = 64 << 20

_BLANK_RUN_RE = re.compile(r"\n{3,}")
_NUL_LINE_RE = re.compile(r"^[ \t]*\x00[\x00 \t]*$", re.M)
_CR_RE = re.compile(r"\r$", re.M)
#: After a newline: a run of tool lines, a run of user lines (one prompt), or a
#: session header -- each without its final newline.
_USER_LINE = r"####(?:[ \t][^\n]*)?(?=\n|\Z)"
_TOKEN_RE = re.compile(
    r"\n(?:[ \t]*\n)*(?:(?P<tool>>[^\n]*(?:\n>[^\n]*)*)"
    rf"|(?P<user>{_USER_LINE}(?:\n{_USER_LINE})*)"
    r"|(?P<head># aider chat started at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d[ \t]*(?=\n|\Z)))"
)


# Aider's own lines for a file added to the chat and an edit it applied (io.py, coders).
_TOUCH_RE = re.compile(
    r"^> (?:Added (?P<added>\S.*?) to the chat\.?|Applied edit to (?P<edit>\S.*?))\s*$"
)


def _clean(text: str) -> str:
    """Without memloom's own block. (Text decoded from UTF-8 with replacement holds no
    lone surrogates, and NULs were removed per line, so nothing else needs cleaning.)"""
    return without_memloom(text).strip()


def _iso(header_ts: str | None) -> str | None:
    """Aider's local ``YYYY-MM-DD HH:MM:SS`` as ISO 8601 (naive: local time)."""
    return header_ts.replace(" ", "T", 1) if header_ts else None


class _History:
    """The line state machine (one instance per read)."""

    def __init__(self, file_label: str | None, header_ts: str | None) -> None:
        self.res = ParseResult(dropped=dict.fromkeys(DROP_REASONS, 0))
        self.dropped = self.res.dropped
        self.file = file_label
        self.fid = (
            hashlib.sha256(file_label.encode("utf-8", "surrogateescape")).hexdigest()[:12]
            if file_label
            else ""
        )
        self.ts = header_ts
        self.prompt: list[tuple[int, str]] = []
        #: the reply so far: (first line, last line, text) per stretch between tool lines
        self.reply: list[tuple[int, int, str]] = []

    # -- ids
    def session_id(self) -> str | None:
        if self.file is None:
            return None
        return f"aider:{self.file}:{self.ts}" if self.ts else f"aider:{self.file}"

    def _unit(self, role: str, text: str, start: int, end: int) -> None:
        uuid = f"aider:{self.fid}:{self.ts or '-'}:{start}"
        sid = self.session_id()
        if self.res.session_id is None:
            self.res.session_id = sid
        self.res.units.append(
            Unit(role, text, start, end, uuid, _iso(self.ts), session_id=sid)  # type: ignore[arg-type]
        )

    # -- blocks
    def close_prompt(self) -> None:
        if not self.prompt:
            return
        lines = self.prompt[:]
        self.prompt.clear()
        self.res.records += 1
        text = _clean("\n".join(t.rstrip() for _, t in lines))
        if not text or text == "<blank>":
            self.dropped["empty"] += 1
            return
        if _COMMAND_RE.match(text):
            word, *rest = text.split(None, 1)
            if not (word.lower() in KEPT_COMMANDS and rest):
                self.dropped["slash_command"] += 1
                return
        elif text.lower() in _YES_NO:
            self.dropped["yes_no"] += 1
            return
        self._unit("user", text, lines[0][0], lines[-1][0])

    def close_reply(self) -> None:
        if not self.reply:
            return
        parts = self.reply[:]
        self.reply.clear()
        self.res.records += 1
        joined = "\n\n".join(body for _, _, body in parts)
        text = _clean(joined)  # Aider writes replies stripped, without line-break spaces
        if "\n\n\n" in text:
            text = _BLANK_RUN_RE.sub("\n\n", text)
        if not text:
            self.dropped["empty"] += 1
            return
        self._unit("assistant", text, parts[0][0], parts[-1][1])

    # -- lines
    def feed_text(self, text: str, number: int) -> None:
        """Complete lines (``text`` split on ``\\n``), the first being line ``number``.

        One regex (anchored on the newline, so the scan runs in C) finds the runs of
        tool lines, the runs of user lines and the headers, each with the blank
        lines before it; what lies between them is reply text, so Python works per
        block, not per line.
        """
        if "\x00" in text:
            text, bad = _NUL_LINE_RE.subn("", text)
            self.res.malformed += bad
            text = text.replace("\x00", "")
        if "\r" in text:
            text = _CR_RE.sub("", text)
        t = "\n" + text
        pos = 0  # end of the last token (a newline or the end follows)
        line = number  # the line starting just after t[pos]
        prompt = self.prompt
        tools = 0
        for m in _TOKEN_RE.finditer(t):
            start = m.start()
            if start > pos:  # t[pos] is the newline ending the previous token
                self.gap(t, pos + 1, start, line)
                line += t.count("\n", pos + 1, start) + 1
            kind = m.lastgroup
            begin = m.start(kind)  # type: ignore[arg-type]
            if begin - start > 1:  # blank lines first: they end a prompt
                line += t.count("\n", start + 1, begin)
                if prompt:
                    self.close_prompt()
            chunk = t[begin : m.end()]
            lines = chunk.count("\n") + 1
            if kind == "tool":
                if prompt:
                    self.close_prompt()
                tools += lines
                if "Added " in chunk or "Applied edit to " in chunk:
                    self.touches(chunk, line)
            elif kind == "user":
                if prompt and prompt[-1][0] != line - 1:
                    self.close_prompt()  # (adjacent: a prompt cut by a read block goes on)
                if self.reply:
                    self.close_reply()
                prompt.extend((line + i, u[5:]) for i, u in enumerate(chunk.split("\n")))
            else:
                self.header(chunk.rstrip())
            line += lines
            pos = m.end()
        if pos < len(t):
            self.gap(t, pos + 1, len(t), line)
        self.dropped["tool_output"] += tools
        self.res.records += tools

    def touches(self, chunk: str, line: int) -> None:
        """The files tool lines say were added to the chat (read) or edited."""
        for i, raw in enumerate(chunk.split("\n")):
            m = _TOUCH_RE.match(raw)
            if m:
                kind = EDIT if m.group("edit") else READ
                found = from_args({"p": m.group("edit") or m.group("added")}, ("p",), kind)
                self.res.touched.extend((line + i, p, k) for p, k in found)

    def gap(self, text: str, start: int, end: int, line: int) -> None:
        """Reply text (or blank lines) between two tokens; ``line`` is its first line."""
        self.close_prompt()
        chunk = text[start:end]
        stripped = chunk.strip()
        if not stripped:
            return
        i = chunk.find(stripped[0])
        j = chunk.rfind(stripped[-1])
        line_start = chunk.rfind("\n", 0, i) + 1
        first = line + chunk.count("\n", 0, i)
        last = line + chunk.count("\n", 0, j)
        self.reply.append((first, last, chunk[line_start : j + 1]))

    def header(self, line: str) -> None:
        self.close_prompt()
        self.close_reply()
        self.res.records += 1
        m = _HEADER_RE.match(line)
        self.ts = m.group(1) if m else self.ts
        if self.res.session_id is None and self.file is not None:
            self.res.session_id = self.session_id()

    def finish(self) -> ParseResult:
        self.close_prompt()
        self.close_reply()
        if self.res.session_id is None:
            self.res.session_id = self.session_id()
        return self.res


def _regions(blocks: Iterable[bytes], limit: int) -> Iterator[tuple[bytes | None, int, bool]]:
    """Runs of complete lines: ``(bytes without the last newline, byte length, terminated)``.

    A line longer than ``limit`` comes alone as ``(None, length, terminated)``. The
    last item may be an unterminated tail (``terminated`` False).
    """
    parts: list[bytes] = []
    size = 0
    over = False
    for block in blocks:
        cut = block.rfind(b"\n")
        if cut < 0:
            size += len(block)
            if over or size > limit:
                over, parts = True, []
            else:
                parts.append(block)
            continue
        if parts or over:  # finish the carried line first
            nl = block.find(b"\n")
            total = size + nl
            if over or total > limit:
                yield None, total, True
            else:
                parts.append(block[:nl])
                yield b"".join(parts), total, True
            parts, size, over = [], 0, False
            start = nl + 1
        else:
            start = 0
        if start <= cut:
            region = block[start:cut]
            if len(region) > limit:  # only when a block is larger than the line limit
                for line in region.split(b"\n"):
                    yield (None if len(line) > limit else line), len(line), True
            else:
                yield region, len(region), True
        rest = block[cut + 1 :]
        if rest:
            size = len(rest)
            if size > limit:
                over = True
            else:
                parts.append(rest)
    if size:
        yield (None if over else b"".join(parts)), size, False


def _run(
    h: _History, blocks: Iterable[bytes], *, first_line: int, final: bool, continuation: bool
) -> tuple[int, int]:
    """Feed the lines to ``h``: (lines consumed, bytes consumed)."""
    number = first_line - 1 if continuation else first_line  # of the next line to feed
    consumed = 0
    for region, length, terminated in _regions(blocks, MAX_LINE_BYTES):
        if not terminated and not final:
            break  # may still be being written
        consumed += length + (1 if terminated else 0)
        if region is None:
            h.res.oversized += 1
            number += 1
            continue
        h.feed_text(region.decode("utf-8", "replace"), number)
        number += region.count(b"\n") + 1
    first = first_line - 1 if continuation else first_line
    return max(number - first - (1 if continuation else 0), 0) if consumed else 0, consumed


def parse_bytes(
    data: bytes,
    *,
    first_line: int = 1,
    final: bool = True,
    file_label: str | None = None,
    header_ts: str | None = None,
) -> ParseResult:
    """History bytes already in memory; ``end_offset`` is relative to ``data``.

    ``file_label`` (the file's path) names the sessions (``Unit.session_id``);
    without it units carry no session id. ``header_ts``: the session the bytes
    start in (for bytes cut from the middle of a file).
    """
    h = _History(file_label, header_ts)
    counts = _run(
        h, (data,) if data else (), first_line=first_line, final=final, continuation=False
    )
    return stamp(h.finish(), counts, first_line=first_line)


def header_before(f: Any, offset: int) -> str | None:
    """The timestamp of the last session header that starts before ``offset`` in ``f``."""
    pos = offset
    carry = b""
    needle = b"\n" + HEADER_PREFIX.encode()
    floor = max(0, offset - HEADER_SCAN_BYTES)
    while pos > floor:
        size = min(BLOCK_SIZE, pos - floor)
        pos -= size
        f.seek(pos)
        block = f.read(size) + carry
        window = (b"\n" + block) if pos == 0 else block
        i = window.rfind(needle)
        while i >= 0:
            end = window.find(b"\n", i + 1)
            line = window[i + 1 : end if end >= 0 else len(window)]
            m = _HEADER_RE.match(line.decode("utf-8", "replace").rstrip("\r"))
            if m:
                return m.group(1)
            i = window.rfind(needle, 0, i)
        carry = block[: len(needle) + 64]  # a header cut by the block boundary
    return None


def parse_history(
    path: Path,
    *,
    start_offset: int = 0,
    start_line: int = 0,
    seen: set[str] | None = None,
    final: bool = False,
) -> ParseResult:
    """Read ``path`` from a watermark (byte offset + line count).

    ``seen``: unit ids already read (updated; their units are dropped, counted
    under ``duplicate_id``). Raises ``ValueError`` for an offset past the end,
    ``OSError`` when unreadable or not a regular file.
    """
    check_watermark(start_offset, start_line)
    label = str(Path(path).absolute())
    with open_regular(path) as f:
        continuation = resume(f, path, start_offset)
        header_ts = header_before(f, start_offset) if start_offset else None
        f.seek(start_offset)
        h = _History(label, header_ts)
        counts = _run(
            h,
            blocks(f, BLOCK_SIZE),
            first_line=start_line + 1,
            final=final,
            continuation=continuation,
        )
    res = stamp(h.finish(), counts, first_line=start_line + 1, offset=start_offset)
    res.cwd = str(Path(label).parent)
    if seen is not None:
        kept = []
        for unit in res.units:
            if unit.uuid in seen:
                res.dropped["duplicate_id"] = res.dropped.get("duplicate_id", 0) + 1
                continue
            if unit.uuid:
                seen.add(unit.uuid)
            kept.append(unit)
        res.units = kept
    return res
