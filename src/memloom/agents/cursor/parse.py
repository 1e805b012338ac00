"""Read a Cursor agent transcript as line-numbered user/assistant units.

Cursor documents neither format (its hook docs only name ``transcript_path``); both
readers follow what public tools that read these files found, and are tolerant of
everything else (see ``docs/agents.md``, *Cursor*, for the sources):

* **JSON Lines** (``<id>.jsonl``, since about February 2026): one message a line,
  ``{"role": "user"|"assistant", "message": {"content": [{"type": "text", "text"}, …]}}``.
  Kept: the ``text`` blocks of user and assistant messages (``content`` may also be a
  plain string). A user message's typed text is inside ``<user_query>…</user_query>``;
  when that tag is there only its inside is kept (Cursor puts attached files, rules
  and other context around it). Dropped and counted: messages with no text (only
  ``tool_use`` / ``tool_result`` / ``thinking`` blocks: ``tool_only``), ``system``
  and ``tool`` roles, records with a ``type`` and no role (``{"type":"turn_ended"}``
  and any other event: ``event``), and objects that are neither (``not_a_message``).
* **Plain text** (``<id>.txt``, the older form): blocks opened by a line ``user:`` or
  ``assistant:``. A user block's text is its ``<user_query>`` inside (else the whole
  block); in an assistant block, a ``[Thinking] …`` line, and ``[Tool call] Name`` or
  ``[Tool result] Name`` with every line after it up to the next block or marker,
  are left out.

The files Cursor's file tools read or edit (``tool_use`` blocks of ``Read``,
``Edit``, ``Write``, … with ``path``/``file_path``/``target_file``; in the text form, the
``path:`` argument under ``[Tool call] Read``) go to ``ParseResult.touched``. The tool
names are those public readers of these files report: unverified against Cursor.

Records carry no ids: a unit's ``uuid`` is a hash of its line, role and text, so a
transcript rewritten in place with the same lines is not distilled twice, and a
changed line is. memloom's own ``<memloom-context>`` block is removed from every
text (the sessionStart digest may be recorded into the conversation).

Both readers split bytes on ``\\n`` only, skip lines over :data:`MAX_LINE_BYTES`
unread (``oversized``), count lines that do not decode (``malformed``), and with
``final=False`` leave an unterminated last line for the next read (Cursor may still
be writing it). A resume offset inside a line continues that physical line.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, Unpack

from memloom.agents.base import ParseResult, Unit
from memloom.agents.files import line_segments, open_regular
from memloom.agents.reading import (
    LineReader,
    Resume,
    Watermark,
    blocks,
    clean_text,
    read_bytes,
    read_file,
    resume,
    stamp,
)
from memloom.agents.touched import EDIT, READ, from_args

__all__ = [
    "DROP_REASONS",
    "MAX_LINE_BYTES",
    "is_text_transcript",
    "parse_bytes",
    "parse_jsonl_bytes",
    "parse_text_bytes",
    "parse_transcript",
    "user_query",
]

DROP_REASONS = (
    "empty",  # a message whose text is blank (or only memloom's own block)
    "tool_only",  # only tool_use / tool_result / thinking blocks
    "system",  # role "system"
    "tool",  # role "tool"
    "event",  # a record with a "type" and no role (turn_ended, …)
    "not_a_message",  # a JSON object with neither
    "duplicate_id",  # a unit already read (same line, role and text)
    "continuation",  # plain text: lines before the first block header (a resumed read)
)

BLOCK_SIZE = 1 << 20
MAX_LINE_BYTES = 32 << 20
#: Recovery attempts on one corrupt line (each scans at most the rest of the line).
MAX_RECOVERIES = 16

Role = Literal["user", "assistant"]
_RECORD_STARTS = ('{"role"', '{"type"')
_USER_QUERY_RE = re.compile(r"<user_query>(.*?)(?:</user_query>|\Z)", re.S)
_HEADER_RE = re.compile(rb"^(user|assistant):[ \t\r]*$")
_MARKER_RE = re.compile(r"^\[(Thinking|Tool call|Tool result)\]\s*(\S*)")
_ARG_RE = re.compile(r"^\s+(path|file_path|target_file|filePath):\s*(\S.*?)\s*$")
#: Cursor's file tools as public readers of its transcripts name them (unverified here:
#: Cursor is closed source, tests/fixtures/agents/cursor/README.md), and the arguments
#: that may name the file.
_FILE_TOOLS = {
    "Read": READ,
    "read_file": READ,
    "ReadFile": READ,
    "Edit": EDIT,
    "edit_file": EDIT,
    "MultiEdit": EDIT,
    "Write": EDIT,
    "write": EDIT,
    "StrReplace": EDIT,
    "search_replace": EDIT,
}
_FILE_KEYS = ("path", "file_path", "target_file", "filePath")


def user_query(text: str) -> str:
    """What the user typed: the inside of ``<user_query>`` tags when there are any."""
    found = _USER_QUERY_RE.findall(text)
    return "\n\n".join(part.strip() for part in found) if found else text


def _uuid(line: int, role: str, text: str) -> str:
    digest = hashlib.sha256(f"{line}\0{role}\0{text}".encode("utf-8", "surrogatepass"))
    return "cursor-" + digest.hexdigest()[:24]


class _Units:
    """What both readers share: the result, the dedupe, the unit itself."""

    def __init__(self, seen: set[str] | None) -> None:
        self.seen: set[str] = seen if seen is not None else set()
        self.res = ParseResult(dropped=dict.fromkeys(DROP_REASONS, 0))

    def add(self, role: str, raw: str, start: int, end: int) -> None:
        text = clean_text(user_query(raw) if role == "user" else raw)
        if not text:
            self.res.dropped["empty"] += 1
            return
        uuid = _uuid(start, role, text)
        if uuid in self.seen:
            self.res.dropped["duplicate_id"] += 1
            return
        self.seen.add(uuid)
        kind: Role = "user" if role == "user" else "assistant"
        self.res.units.append(Unit(kind, text, start, end, uuid, None))


# --------------------------------------------------------------------------- JSON Lines


def _resync(s: str, i: int, failures: int) -> tuple[list[Any], int]:
    """After a corrupt record at ``i``: go on at the next record start."""
    found = [j for j in (s.find(start, i + 1) for start in _RECORD_STARTS) if j >= 0]
    if not found or failures > MAX_RECOVERIES:
        return [], len(s)
    return [], min(found)


def _texts(content: Any) -> tuple[list[str], bool]:
    """The text blocks of ``content`` and whether it held any other block."""
    if isinstance(content, str):
        return [content], False
    texts: list[str] = []
    other = False
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "text":
            if isinstance(block.get("text"), str):
                texts.append(block["text"])
        elif isinstance(block, str):
            texts.append(block)
        else:
            other = True
    return texts, other


def _tool_files(content: Any) -> list[tuple[str, str]]:
    """The files the ``tool_use`` blocks of a message read or edit."""
    out: list[tuple[str, str]] = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "tool_use":
            kind = _FILE_TOOLS.get(block.get("name"))  # type: ignore[arg-type]
            if kind is not None:
                out.extend(from_args(block.get("input"), _FILE_KEYS, kind))
    return out


class _Jsonl(LineReader, _Units):
    """The JSON Lines record handler."""

    recover = staticmethod(_resync)

    def record(self, o: dict[str, Any], line: int) -> None:
        self.res.records += 1
        role = o.get("role")
        if role in ("user", "assistant"):
            message = o.get("message")
            content = message.get("content") if isinstance(message, dict) else o.get("content")
            if role == "assistant":
                self.res.touched.extend((line, p, k) for p, k in _tool_files(content))
            texts, other = _texts(content)
            if not any(t.strip() for t in texts):
                self.res.dropped["tool_only" if other else "empty"] += 1
                return
            self.add(role, "\n\n".join(t for t in texts if t.strip()), line, line)
        elif role in ("system", "tool"):
            self.res.dropped[role] += 1
        elif isinstance(o.get("type"), str):
            self.res.dropped["event"] += 1
        else:
            self.res.dropped["not_a_message"] += 1


def parse_jsonl_bytes(
    data: bytes, *, first_line: int = 1, final: bool = True, seen: set[str] | None = None
) -> ParseResult:
    """A JSONL transcript (or the part of one in ``data``) as units."""
    return read_bytes(_Jsonl(seen), data, limit=MAX_LINE_BYTES, first_line=first_line, final=final)


# --------------------------------------------------------------------------- plain text


class _Text(_Units):
    """The ``user:`` / ``assistant:`` block reader, one physical line at a time."""

    def __init__(self, seen: set[str] | None) -> None:
        super().__init__(seen)
        self.role: str | None = None
        self.start = 0
        self.end = 0
        self.lines: list[str] = []
        self.skip: str | None = None  # the marker whose section is being left out
        self.tool: str | None = None  # the file tool whose call is being read
        self.orphans = False

    def line(self, raw: bytes, number: int) -> None:
        header = _HEADER_RE.match(raw)
        if header:
            self.flush()
            self.res.records += 1
            self.role, self.start, self.end = header.group(1).decode(), number, number
            self.lines, self.skip, self.tool = [], None, None
            return
        if self.role is None:
            self.orphans = self.orphans or bool(raw.strip())
            return
        text = raw.decode("utf-8", "replace").rstrip("\r")
        if "\x00" in text:
            text = text.replace("\x00", "")
        self.end = number
        if self.role == "assistant" and self._skipped(text, number):
            return
        self.lines.append(text)

    def _skipped(self, text: str, number: int) -> bool:
        """Whether ``text`` is a thinking line or part of a tool call or tool result
        (a file tool's ``path:`` argument goes to ``touched``)."""
        marker = _MARKER_RE.match(text)
        if marker:
            self.skip = None if marker.group(1) == "Thinking" else marker.group(1)
            self.tool = _FILE_TOOLS.get(marker.group(2)) if self.skip == "Tool call" else None
            return True
        if self.tool is not None:
            arg = _ARG_RE.match(text)
            if arg:
                found = from_args({"p": arg.group(2)}, ("p",), self.tool)
                self.res.touched.extend((number, p, k) for p, k in found)
                self.tool = None  # one file a call
        return self.skip is not None

    def flush(self) -> None:
        if self.role is not None:
            self.add(self.role, "\n".join(self.lines), self.start, self.end)
        self.role = None

    def finish(self) -> ParseResult:
        self.flush()
        if self.orphans:
            self.res.dropped["continuation"] += 1
        return self.res


def _read_text(
    p: _Text, chunks: Iterable[bytes], *, first_line: int, final: bool, continuation: bool
) -> tuple[int, int]:
    """Feed the lines of ``chunks`` to ``p``: (lines consumed, bytes consumed)."""
    line = first_line - 1
    consumed = 0
    for seg, length, terminated in line_segments(chunks, MAX_LINE_BYTES):
        this_line = first_line - 1 if continuation else line + 1
        continuation = False
        if not terminated and not final:
            break  # may still be being written
        consumed += length + (1 if terminated else 0)
        line = max(line, this_line)
        if seg is None:
            p.res.oversized += 1
        else:  # the tail of a line read before has no block: counted as continuation
            p.line(seg, this_line)
    return line - first_line + 1, consumed


def parse_text_bytes(
    data: bytes, *, first_line: int = 1, final: bool = True, seen: set[str] | None = None
) -> ParseResult:
    """A plain-text transcript (or the part of one in ``data``) as units."""
    p = _Text(seen)
    counts = _read_text(p, [data], first_line=first_line, final=final, continuation=False)
    return stamp(p.finish(), counts, first_line=first_line)


# --------------------------------------------------------------------------- entry points


def is_text_transcript(head: bytes) -> bool:
    """Whether ``head`` starts like the plain-text form (a ``user:`` line first)."""
    first = head.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0]
    return bool(_HEADER_RE.match(first))


def parse_bytes(data: bytes, *, first_line: int = 1, final: bool = True) -> ParseResult:
    """Bytes of either form (re-read context, cited lines): JSONL when they hold a
    JSON object start, else plain text."""
    if data.lstrip()[:1] == b"{" or b'\n{"' in data[:65536]:
        return parse_jsonl_bytes(data, first_line=first_line, final=final)
    return parse_text_bytes(data, first_line=first_line, final=final)


def parse_transcript(path: Path, **watermark: Unpack[Resume]) -> ParseResult:
    """Read ``path`` from the watermark: ``.txt`` as plain text, anything else as JSONL.
    ``ValueError`` for an offset past the end, ``OSError`` if unreadable."""
    at = Watermark(**watermark)
    if Path(path).suffix != ".txt":
        return read_file(_Jsonl(at.seen), path, at, block_size=BLOCK_SIZE, limit=MAX_LINE_BYTES)
    with open_regular(path) as f:
        continuation = resume(f, path, at.start_offset)
        p = _Text(at.seen)
        counts = _read_text(
            p,
            blocks(f, BLOCK_SIZE),
            first_line=at.start_line + 1,
            final=at.final,
            continuation=continuation,
        )
        return stamp(p.finish(), counts, first_line=at.start_line + 1, offset=at.start_offset)
