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
  ``workspace.yaml`` next to the file (``git_root``, else ``cwd``). The file a
  ``tool.execution_start`` of ``view``/``edit``/``create`` names (``arguments.path``)
  goes to ``ParseResult.touched``.
* **legacy one-JSON files** (2025): ``{sessionId, startTime, chatMessages[],
  timeline[]}``, rewritten whole. Kept: ``timeline`` entries of type ``user`` and
  ``copilot`` (their ``text``); dropped: ``tool_call_completed``, ``info`` and any
  other type, and ``chatMessages`` (the model-facing copy of the same talk: system
  prompt, tool results). Each unit spans the lines of its timeline object;
  ``uuid`` is the entry's ``id`` (else a hash of type, timestamp and text), so a
  rewritten file re-read from the start dedupes in the importer. A
  ``tool_call_completed`` of ``str_replace_editor`` (``view``, ``str_replace``,
  ``create``, ``insert``) reports its ``path`` in ``touched``. The file
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
from pathlib import Path
from typing import Any, Unpack

from memloom.agents.base import ParseResult, Unit
from memloom.agents.files import open_regular
from memloom.agents.reading import (
    LineReader,
    Resume,
    Watermark,
    clean_text,
    end_within,
    read_bytes,
    read_file,
    text_or_none,
)
from memloom.agents.touched import EDIT, READ, from_args

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

_WS_RE = re.compile(r"[ \t\r\n]*")
_RECORD_START = '{"type"'

_decoder = json.JSONDecoder()
_raw_decode = _decoder.raw_decode


# --------------------------------------------------------------------------- text


# --------------------------------------------------------------------------- events


def _resync(s: str, i: int, failures: int) -> tuple[list[Any], int]:
    """After a corrupt record at ``i``: go on at the next record start (at most
    :data:`MAX_RECOVERIES` times a line)."""
    j = s.find(_RECORD_START, i + 1)
    if j < 0 or failures > MAX_RECOVERIES:
        return [], len(s)
    return [], j


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


#: Copilot CLI's file tools (``str_replace_editor``: legacy, by its ``command``).
_FILE_TOOLS = {"view": READ, "edit": EDIT, "create": EDIT, "str_replace": EDIT}
_EDITOR_COMMANDS = {"view": READ, "str_replace": EDIT, "create": EDIT, "insert": EDIT}


def _tool_files(name: Any, args: Any) -> list[tuple[str, str]]:
    """The file a ``view``/``edit``/``create`` call (``path``) reads or edits; a
    folder ``view`` names is no file (the fence anchors regular files only)."""
    if name == "str_replace_editor" and isinstance(args, dict):
        kind = _EDITOR_COMMANDS.get(args.get("command"))  # type: ignore[arg-type]
    else:
        kind = _FILE_TOOLS.get(name) if isinstance(name, str) else None
    return [] if kind is None else from_args(args, ("path",), kind)


class _Events(LineReader):
    """The events.jsonl record handler."""

    recover = staticmethod(_resync)

    def __init__(self, seen: set[str] | None) -> None:
        self.seen: set[str] = seen if seen is not None else set()
        self.message_ids: set[str] = set()
        self.res = ParseResult(dropped=dict.fromkeys(DROP_REASONS, 0))
        self.dropped = self.res.dropped
        self.units = self.res.units

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
            elif kind == "tool.execution_start":
                found = _tool_files(data.get("toolName"), data.get("arguments"))
                res.touched.extend((line, p, k) for p, k in found)
            self.dropped[_family(kind)] += 1
        else:
            self.dropped["not_an_event"] += 1

    def session(self, data: dict[str, Any]) -> None:
        """``session.start`` (and ``session.resume``, which may repeat it): id, project, version."""
        res = self.res
        if res.session_id is None:
            res.session_id = text_or_none(data.get("sessionId"), empty=False)
        if res.version is None:
            res.version = text_or_none(data.get("copilotVersion"), empty=False)
        ctx = data.get("context")
        if res.cwd is None and isinstance(ctx, dict):
            res.cwd = text_or_none(ctx.get("gitRoot"), empty=False) or text_or_none(
                ctx.get("cwd"), empty=False
            )

    def message(self, o: dict[str, Any], data: dict[str, Any], line: int, role: str) -> None:
        eid = text_or_none(o.get("id"), empty=False)
        mid = text_or_none(data.get("messageId"), empty=False)
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
        text = clean_text(content) if isinstance(content, str) else ""
        if not text:
            requests = data.get("toolRequests")
            only_tools = role == "assistant" and isinstance(requests, list) and requests
            self.dropped["tool_requests_only" if only_tools else "empty"] += 1
            return
        self.units.append(
            Unit(role, text, line, line, uuid, text_or_none(o.get("timestamp"), empty=False))  # type: ignore[arg-type]
        )


def parse_events_bytes(
    data: bytes, *, first_line: int = 1, seen: set[str] | None = None, final: bool = True
) -> ParseResult:
    """events.jsonl bytes already in memory; ``end_offset`` is relative to ``data``."""
    return read_bytes(_Events(seen), data, limit=MAX_LINE_BYTES, first_line=first_line, final=final)


def _parse_events_file(path: Path, at: Watermark) -> ParseResult:
    res = read_file(_Events(at.seen), path, at, block_size=BLOCK_SIZE, limit=MAX_LINE_BYTES)
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
    res.session_id = text_or_none(doc.get("sessionId"), empty=False)
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
        if kind == "tool_call_completed":
            found = _tool_files(entry.get("name"), entry.get("arguments"))
            res.touched.extend((start_line, p, k) for p, k in found)
        if role is None:
            res.dropped["timeline_other"] += 1
            continue
        raw = entry.get("text")
        text = clean_text(raw) if isinstance(raw, str) else ""
        ts = text_or_none(entry.get("timestamp"), empty=False)
        uuid = text_or_none(entry.get("id"), empty=False)
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


def _parse_legacy_file(path: Path, at: Watermark) -> ParseResult:
    with open_regular(path) as f:
        size = end_within(f, path, at.start_offset)
        if size > MAX_DOC_BYTES:
            res = ParseResult(dropped=dict.fromkeys(DROP_REASONS, 0), oversized=1)
            res.end_offset = size
            return res
        f.seek(0)
        data = f.read()
    # The ledger resumes only when the bytes before start_offset are unchanged, so
    # the entries on those lines were read before: skip them.
    after = at.start_line if at.start_offset else 0
    return parse_legacy_bytes(data, after_line=after, seen=at.seen)


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


def parse_session(path: Path, **resume: Unpack[Resume]) -> ParseResult:
    """Read ``path`` from a watermark: ``.jsonl`` as events, ``.json`` as a legacy file.

    Raises ``ValueError`` for an offset past the end, ``OSError`` when unreadable
    or not a regular file.
    """
    at = Watermark(**resume)
    legacy = path.suffix == ".json"
    if path.suffix not in (".json", ".jsonl"):
        with open_regular(path) as f:
            legacy = _looks_legacy(f.read(4096))
    if legacy:
        return _parse_legacy_file(path, at)
    return _parse_events_file(path, at)


def parse_bytes(data: bytes, *, first_line: int = 1, final: bool = True) -> ParseResult:
    """Bytes already in memory (re-read context, cited lines), either format by content."""
    if first_line == 1 and _looks_legacy(data[:4096]):
        return parse_legacy_bytes(data, first_line=first_line)
    return parse_events_bytes(data, first_line=first_line, final=final)


# --------------------------------------------------------------------------- workspace.yaml
