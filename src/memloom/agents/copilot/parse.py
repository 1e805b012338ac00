"""Read a GitHub Copilot CLI session as line-numbered user/assistant units.

Two formats (reference ``agents.md`` §5):

* **events.jsonl** (``session-state/<id>/events.jsonl``): one event per line,
  ``{type, data, id, timestamp, parentId}``. Kept: ``user.message`` ``data.content``
  (what was typed -- never ``transformedContent``, which adds the injected
  ``<current_datetime>`` and reminders) and ``assistant.message`` ``data.content``
  (the reply text; ``reasoningText`` and ``toolRequests`` are not text). Dropped
  and counted: an empty ``content`` (an assistant message that only requests tools,
  or an autopilot continuation whose ``content`` is ``""``), messages of a
  sub-agent (``data.parentToolCallId`` set), and every other event by family
  (``tool.*``, ``session.*``, ``system.message``, ``assistant.turn_*``, others).
  ``uuid`` is the event ``id`` (else ``messageId``); an id already seen, and a
  ``messageId`` already read in this call, are dropped as duplicates.
  Project: ``session.start`` ``data.context.gitRoot``, else ``.cwd``; else the
  ``workspace.yaml`` next to the file (``git_root``, else ``cwd``).
* **legacy one-JSON files** (2025): ``{sessionId, startTime, chatMessages[],
  timeline[]}``, rewritten whole. Kept: ``timeline`` entries of type ``user`` and
  ``copilot`` (their ``text``); dropped: ``tool_call_completed``, ``info`` and any
  other type, and ``chatMessages`` (the model-facing copy of the same talk: system
  prompt, tool results). Each unit spans the lines of its timeline object;
  ``uuid`` is the entry's ``id`` (else a hash of type, timestamp and text), so a
  rewritten file re-read from the start dedupes in the importer. The file
  carries no working directory: its project is unknown (None).

JSONL reading follows the Claude Code reader's contract: bytes split on ``\\n``
only, NULs removed (a line of only NULs is malformed), corrupt lines counted in
``malformed`` and skipped (decoding resumes at the next ``{"type"``), lines over
:data:`MAX_LINE_BYTES` skipped unread (``oversized``), an unterminated last line
consumed only when it decodes (or ``final``), and a resume offset inside a line
continues that physical line. memloom's own ``<memloom-context>`` block is removed
from every text.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from memloom.agents.base import MEMLOOM_CONTEXT_CLOSE, MEMLOOM_CONTEXT_OPEN, ParseResult, Unit
from memloom.agents.files import line_segments, open_regular

__all__ = [
    "DROP_REASONS",
    "MAX_DOC_BYTES",
    "MAX_LINE_BYTES",
    "is_legacy_doc",
    "parse_bytes",
    "parse_events_bytes",
    "parse_legacy_bytes",
    "parse_session",
]

DROP_REASONS = (
    "empty",  # no typed text (e.g. an autopilot continuation: content "")
    "tool_requests_only",  # an assistant message that only asks for tools
    "subagent",  # a sub-agent's message (data.parentToolCallId)
    "duplicate_id",
    "tool_event",  # tool.*
    "session_event",  # session.*
    "system_message",  # system.message: the system prompt
    "turn_marker",  # assistant.turn_start / turn_end
    "other_event",  # any other event type (assistant.reasoning, *_delta, …)
    "not_an_event",  # a JSON object without a string "type"
    "timeline_other",  # legacy: tool_call_completed, info, …
    "chat_messages",  # legacy: the model-facing chatMessages copy
)

BLOCK_SIZE = 1 << 20
MAX_LINE_BYTES = 32 << 20
#: A legacy one-JSON file larger than this is not loaded (counted in ``oversized``).
MAX_DOC_BYTES = 256 << 20
#: Recovery attempts on one corrupt line (each scans at most the rest of the line).
MAX_RECOVERIES = 16

_MEMLOOM_RE = re.compile(
    r"^[ \t]*"
    + re.escape(MEMLOOM_CONTEXT_OPEN)
    + r".*?(?:"
    + re.escape(MEMLOOM_CONTEXT_CLOSE)
    + r"|\Z)",
    re.S | re.M,
)
_UNSAFE_RE = re.compile("[\ud800-\udfff\x00]")
_WS_RE = re.compile(r"[ \t\r\n]*")
_RECORD_START = '{"type"'

_decoder = json.JSONDecoder()
_raw_decode = _decoder.raw_decode
_loads = _decoder.decode


# --------------------------------------------------------------------------- text


def _safe(text: str) -> str:
    """``text`` without lone surrogates (-> U+FFFD) and NULs: storable and sendable."""
    if _UNSAFE_RE.search(text) is None:
        return text
    return _UNSAFE_RE.sub(lambda m: "" if m.group() == "\x00" else "\ufffd", text)


def _clean(text: str) -> str:
    text = _safe(text)
    if MEMLOOM_CONTEXT_OPEN in text:
        text = _MEMLOOM_RE.sub("", text)
    return text.strip()


def _str(v: Any) -> str | None:
    return _safe(v) if isinstance(v, str) and v else None


# --------------------------------------------------------------------------- events


def _decode_line(raw: bytes) -> tuple[list[Any], int]:
    """One physical line: (decoded values, corrupt segments)."""
    had_nul = False
    if b"\x00" in raw:
        raw = raw.replace(b"\x00", b"")
        had_nul = True
    s = raw.decode("utf-8", "replace")
    if s.startswith("\ufeff"):
        s = s[1:]
    try:
        return [_loads(s)], 0
    except (ValueError, RecursionError):
        pass
    n = len(s)
    i = _WS_RE.match(s, 0).end()  # type: ignore[union-attr]
    if i >= n:
        return [], 1 if had_nul else 0
    values: list[Any] = []
    bad = 0
    tries = 0
    while i < n:
        try:
            obj, i = _raw_decode(s, i)
        except (ValueError, RecursionError):
            if not bad:
                bad = 1
            tries += 1
            j = s.find(_RECORD_START, i + 1)
            if j < 0 or tries > MAX_RECOVERIES:
                break
            i = j
            continue
        values.append(obj)
        i = _WS_RE.match(s, i).end()  # type: ignore[union-attr]
    return values, bad


def _family(kind: str) -> str:
    if kind.startswith("tool."):
        return "tool_event"
    if kind.startswith("session."):
        return "session_event"
    if kind == "system.message":
        return "system_message"
    if kind in ("assistant.turn_start", "assistant.turn_end"):
        return "turn_marker"
    return "other_event"


class _Events:
    """The events.jsonl record handler."""

    def __init__(self, seen: set[str] | None) -> None:
        self.seen: set[str] = seen if seen is not None else set()
        self.message_ids: set[str] = set()
        self.res = ParseResult(dropped=dict.fromkeys(DROP_REASONS, 0))
        self.dropped = self.res.dropped
        self.units = self.res.units

    def feed(self, raw: bytes, line: int) -> None:
        values, bad = _decode_line(raw)
        self.res.malformed += bad
        self.process(values, line)

    def process(self, values: list[Any], line: int) -> None:
        for obj in values:
            if isinstance(obj, dict):
                self.record(obj, line)
            else:
                self.res.malformed += 1

    def record(self, o: dict[str, Any], line: int) -> None:
        res = self.res
        res.records += 1
        kind = o.get("type")
        data = o.get("data")
        if not isinstance(data, dict):
            data = {}
        if kind == "user.message":
            self.message(o, data, line, "user")
        elif kind == "assistant.message":
            self.message(o, data, line, "assistant")
        elif isinstance(kind, str):
            if kind.startswith("session."):
                self.session(data)
            self.dropped[_family(kind)] += 1
        else:
            self.dropped["not_an_event"] += 1

    def session(self, data: dict[str, Any]) -> None:
        """``session.start`` (and ``session.resume``, which may repeat it): id, project, version."""
        res = self.res
        if res.session_id is None:
            res.session_id = _str(data.get("sessionId"))
        if res.version is None:
            res.version = _str(data.get("copilotVersion"))
        ctx = data.get("context")
        if res.cwd is None and isinstance(ctx, dict):
            res.cwd = _str(ctx.get("gitRoot")) or _str(ctx.get("cwd"))

    def message(self, o: dict[str, Any], data: dict[str, Any], line: int, role: str) -> None:
        eid = _str(o.get("id"))
        mid = _str(data.get("messageId"))
        uuid = eid or mid
        if uuid is not None:
            if uuid in self.seen:
                self.dropped["duplicate_id"] += 1
                return
            self.seen.add(uuid)
        if mid is not None and role == "assistant":
            if mid in self.message_ids:
                self.dropped["duplicate_id"] += 1
                return
            self.message_ids.add(mid)
        if data.get("parentToolCallId"):
            self.dropped["subagent"] += 1
            return
        content = data.get("content")
        text = _clean(content) if isinstance(content, str) else ""
        if not text:
            requests = data.get("toolRequests")
            only_tools = role == "assistant" and isinstance(requests, list) and requests
            self.dropped["tool_requests_only" if only_tools else "empty"] += 1
            return
        self.units.append(
            Unit(role, text, line, line, uuid, _str(o.get("timestamp")))  # type: ignore[arg-type]
        )


def _run(
    p: _Events, blocks: Iterable[bytes], *, first_line: int, final: bool, continuation: bool
) -> tuple[int, int]:
    """Feed the lines of ``blocks`` to ``p``: (lines consumed, bytes consumed)."""
    line = first_line - 1
    consumed = 0
    cont = continuation
    for seg, length, terminated in line_segments(blocks, MAX_LINE_BYTES):
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
        if seg is None:
            if not final:
                break
            p.res.oversized += 1
        elif final:
            p.feed(seg, this_line)
        else:
            values, bad = _decode_line(seg)
            if bad or not values or not all(isinstance(v, dict) for v in values):
                break  # may still be being written: leave it for the next call
            p.process(values, this_line)
        consumed += length
        line = max(line, this_line)
    return line - first_line + 1, consumed


def parse_events_bytes(
    data: bytes, *, first_line: int = 1, seen: set[str] | None = None, final: bool = True
) -> ParseResult:
    """events.jsonl bytes already in memory; ``end_offset`` is relative to ``data``."""
    p = _Events(seen)
    lines, consumed = _run(
        p, (data,) if data else (), first_line=first_line, final=final, continuation=False
    )
    p.res.lines_read = first_line - 1 + lines
    p.res.end_offset = consumed
    return p.res


def _blocks(f: Any) -> Iterator[bytes]:
    while True:
        block = f.read(BLOCK_SIZE)
        if not block:
            return
        yield block


def _parse_events_file(
    path: Path, *, start_offset: int, start_line: int, seen: set[str] | None, final: bool
) -> ParseResult:
    p = _Events(seen)
    with open_regular(path) as f:
        size = f.seek(0, 2)
        if start_offset > size:
            raise ValueError(
                f"start_offset {start_offset} is beyond the end of {path} ({size} bytes)"
            )
        continuation = False
        if start_offset > 0:
            f.seek(start_offset - 1)
            continuation = f.read(1) != b"\n"
        f.seek(start_offset)
        lines, consumed = _run(
            p, _blocks(f), first_line=start_line + 1, final=final, continuation=continuation
        )
    res = p.res
    res.lines_read = start_line + lines
    res.end_offset = start_offset + consumed
    if res.cwd is None:  # resumed past session.start, or it carries no context
        from memloom.agents.copilot.discover import session_project

        res.cwd = session_project(path)
    return res


# --------------------------------------------------------------------------- legacy


def is_legacy_doc(obj: Any) -> bool:
    """A legacy one-JSON session: an object with a ``timeline`` or ``chatMessages`` list."""
    return isinstance(obj, dict) and (
        isinstance(obj.get("timeline"), list) or isinstance(obj.get("chatMessages"), list)
    )


def _skip_ws(s: str, i: int) -> int:
    return _WS_RE.match(s, i).end()  # type: ignore[union-attr]


def _array_items(s: str, i: int, out: list[tuple[Any, int, int]]) -> tuple[list[Any], int]:
    """Decode the JSON array at ``s[i] == "["``: (its values, end); ``out`` gets
    (value, start, end) for each element."""
    values: list[Any] = []
    i = _skip_ws(s, i + 1)
    if s.startswith("]", i):
        return values, i + 1
    while True:
        start = i
        value, i = _raw_decode(s, i)
        values.append(value)
        out.append((value, start, i))
        i = _skip_ws(s, i)
        if s.startswith(",", i):
            i = _skip_ws(s, i + 1)
        elif s.startswith("]", i):
            return values, i + 1
        else:
            raise ValueError("expected ',' or ']'")


def _legacy_doc(s: str) -> tuple[dict[str, Any], list[tuple[Any, int, int]]]:
    """The document and its ``timeline`` elements with their spans, in one decoding pass."""
    doc: dict[str, Any] = {}
    timeline: list[tuple[Any, int, int]] = []
    i = _skip_ws(s, 0)
    if not s.startswith("{", i):
        raise ValueError("not a JSON object")
    i = _skip_ws(s, i + 1)
    if s.startswith("}", i):
        i += 1
    else:
        while True:
            key, i = _raw_decode(s, i)
            i = _skip_ws(s, i)
            if not isinstance(key, str) or not s.startswith(":", i):
                raise ValueError("expected a key and ':'")
            i = _skip_ws(s, i + 1)
            if key == "timeline" and s.startswith("[", i):
                timeline = []
                doc[key], i = _array_items(s, i, timeline)
            else:
                doc[key], i = _raw_decode(s, i)
            i = _skip_ws(s, i)
            if s.startswith(",", i):
                i = _skip_ws(s, i + 1)
            elif s.startswith("}", i):
                i += 1
                break
            else:
                raise ValueError("expected ',' or '}'")
    if _skip_ws(s, i) != len(s):
        raise ValueError("extra data after the document")
    return doc, timeline


def parse_legacy_bytes(
    data: bytes,
    *,
    first_line: int = 1,
    after_line: int = 0,
    seen: set[str] | None = None,
    final: bool = True,
) -> ParseResult:
    """A legacy one-JSON session; entries starting on or before ``after_line`` are skipped.

    The whole document is always consumed (``end_offset = len(data)``): the file is
    rewritten whole, never appended to, so there is no partial record to wait for.
    A document that does not parse counts once as malformed and yields nothing.
    ``final`` is accepted for the common signature and has no effect.
    """
    del final
    res = ParseResult(dropped=dict.fromkeys(DROP_REASONS, 0))
    seen = seen if seen is not None else set()
    res.end_offset = len(data)
    res.lines_read = first_line - 1 + data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    if not data.strip():
        res.lines_read = first_line - 1 + data.count(b"\n")
        return res
    s = data.replace(b"\x00", b"").decode("utf-8", "replace")
    if s.startswith("\ufeff"):
        s = s[1:]
    line_at = _LineCounter(s, first_line)
    try:
        doc, entries = _legacy_doc(s)
    except (ValueError, RecursionError):
        res.malformed += 1
        return res
    if not is_legacy_doc(doc):
        res.malformed += 1
        return res
    res.session_id = _str(doc.get("sessionId"))
    res.records = len(entries)
    chat = doc.get("chatMessages")
    if isinstance(chat, list):
        res.dropped["chat_messages"] += len(chat)
    for entry, start, end in entries:
        start_line = line_at(start)
        if start_line <= after_line:
            continue
        end_line = line_at(max(end - 1, start))
        if not isinstance(entry, dict):
            res.malformed += 1
            continue
        kind = entry.get("type")
        role = "user" if kind == "user" else "assistant" if kind == "copilot" else None
        if role is None:
            res.dropped["timeline_other"] += 1
            continue
        raw = entry.get("text")
        text = _clean(raw) if isinstance(raw, str) else ""
        ts = _str(entry.get("timestamp"))
        uuid = _str(entry.get("id"))
        if uuid is None and text:
            digest = hashlib.sha256(f"{kind}\0{ts}\0{text}".encode("utf-8", "replace"))
            uuid = "copilot-legacy:" + digest.hexdigest()[:32]
        if uuid is not None:
            if uuid in seen:
                res.dropped["duplicate_id"] += 1
                continue
            seen.add(uuid)
        if not text:
            res.dropped["empty"] += 1
            continue
        res.units.append(Unit(role, text, start_line, end_line, uuid, ts))  # type: ignore[arg-type]
    return res


class _LineCounter:
    """Line number of a position in ``s``, for increasing positions (linear overall)."""

    def __init__(self, s: str, first_line: int) -> None:
        self.s = s
        self.first = first_line
        self.pos = 0
        self.line = first_line

    def __call__(self, pos: int) -> int:
        if pos < self.pos:  # not expected: count from the start
            self.pos, self.line = 0, self.first
        self.line += self.s.count("\n", self.pos, pos)
        self.pos = pos
        return self.line


def _parse_legacy_file(
    path: Path, *, start_offset: int, start_line: int, seen: set[str] | None
) -> ParseResult:
    with open_regular(path) as f:
        size = f.seek(0, 2)
        if start_offset > size:
            raise ValueError(
                f"start_offset {start_offset} is beyond the end of {path} ({size} bytes)"
            )
        if size > MAX_DOC_BYTES:
            res = ParseResult(dropped=dict.fromkeys(DROP_REASONS, 0), oversized=1)
            res.end_offset = size
            return res
        f.seek(0)
        data = f.read()
    # The ledger resumes only when the bytes before start_offset are unchanged, so
    # the entries on those lines were read before: skip them.
    return parse_legacy_bytes(data, after_line=start_line if start_offset else 0, seen=seen)


# --------------------------------------------------------------------------- entry points


def _looks_legacy(head: bytes) -> bool:
    """Whether ``head`` starts a pretty-printed/one-line JSON document, not an event line."""
    first = head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    if first != b"{":
        return False
    line = head.split(b"\n", 1)[0]
    try:
        obj = json.loads(line.decode("utf-8", "replace").lstrip("\ufeff"))
    except ValueError:
        return True  # ``{`` alone on the first line, or a long one-line document
    return not (isinstance(obj, dict) and isinstance(obj.get("type"), str))


def parse_session(
    path: Path,
    *,
    start_offset: int = 0,
    start_line: int = 0,
    seen: set[str] | None = None,
    final: bool = False,
) -> ParseResult:
    """Read ``path`` from a watermark: ``.jsonl`` as events, ``.json`` as a legacy file.

    Raises ``ValueError`` for an offset past the end, ``OSError`` when unreadable
    or not a regular file.
    """
    if start_offset < 0 or start_line < 0:
        raise ValueError("start_offset and start_line must be >= 0")
    legacy = path.suffix == ".json"
    if path.suffix not in (".json", ".jsonl"):
        with open_regular(path) as f:
            legacy = _looks_legacy(f.read(4096))
    if legacy:
        res = _parse_legacy_file(path, start_offset=start_offset, start_line=start_line, seen=seen)
    else:
        res = _parse_events_file(
            path, start_offset=start_offset, start_line=start_line, seen=seen, final=final
        )
    return res


def parse_bytes(data: bytes, *, first_line: int = 1, final: bool = True) -> ParseResult:
    """Bytes already in memory (re-read context, cited lines), either format by content."""
    if first_line == 1 and _looks_legacy(data[:4096]):
        return parse_legacy_bytes(data, first_line=first_line)
    return parse_events_bytes(data, first_line=first_line, final=final)


# --------------------------------------------------------------------------- workspace.yaml
