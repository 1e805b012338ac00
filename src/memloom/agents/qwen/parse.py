"""Reading a Qwen Code session (``chats/<id>.jsonl``) as line-numbered units.

One JSON record a line, appended as the session goes (Qwen Code 0.24.4, tests/e2e;
``chatRecordingService``): ``{uuid, parentUuid, sessionId, timestamp, type, subtype?,
provenance?, cwd, version, message?, systemPayload?, …}`` with ``message`` a Gemini
``Content`` (``{role, parts: [{text} | {text, thought: true} | {functionCall} |
{functionResponse}]}``).

What becomes a unit, by Qwen's own rule for real conversation records: a ``user``
record whose ``provenance`` is ``real_user`` (or absent, in older files) and whose
``subtype`` is absent or ``mid_turn_user_message``; an ``assistant`` record
(``assistant_output``, no subtype) with text parts that are not thoughts. Tool calls,
tool results (``tool_result``), ``system`` records (telemetry, attribution, compression)
and any other type are counted in ``dropped``, never read as text. The files an
assistant record's ``functionCall`` parts read or edit (Gemini's file tools, Qwen's
``edit``) go to ``ParseResult.touched``.

memloom's injection is never read back: a UserPromptSubmit hook's context is a
second part ``<qwen:user-prompt-submit-context>…</qwen:user-prompt-submit-context>``
(HTML-escaped inside), and such a record carries ``systemPayload.displayText`` (what
was typed) with ``systemPayload.hookContext``. The typed text is ``displayText`` when
``hookContext`` is there (Qwen's hooks doc: other records' ``displayText`` is only a
label), else the text parts less every tagged part. memloom's ``<memloom-context>``
block is removed as for every agent.

A corrupt line counts in ``malformed``; a half-written last line is left for the
next read (``final=False``) or counted; a line over :data:`MAX_LINE_BYTES` is
skipped unread (``oversized``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Unpack

from memloom.agents.base import ParseResult, Unit
from memloom.agents.reading import (
    LineReader,
    Resume,
    Watermark,
    clean_text,
    read_bytes,
    read_file,
    resync_at,
    take_ids,
    text_or_none,
)
from memloom.agents.touched import gemini_call

__all__ = [
    "CONTEXT_CLOSE",
    "CONTEXT_OPEN",
    "DROP_REASONS",
    "MAX_LINE_BYTES",
    "parse_bytes",
    "parse_session",
    "typed_text",
]

DROP_REASONS = (
    "not_typed",  # a user record Qwen did not get from the user (at_command, notifications…)
    "empty",  # no text left (only memloom's or Qwen's hook context; thoughts only)
    "tool_calls_only",  # an assistant turn that only calls tools
    "tool_result",
    "system",  # telemetry, attribution snapshots, compression, titles…
    "duplicate_uuid",
    "other_type",  # a record type this reader does not know
    "not_a_record",  # a JSON object without a string "type"
)
#: The markup Qwen wraps a UserPromptSubmit hook's context in (a part of its own).
CONTEXT_OPEN = "<qwen:user-prompt-submit-context>"
CONTEXT_CLOSE = "</qwen:user-prompt-submit-context>"
BLOCK_SIZE = 1 << 20
MAX_LINE_BYTES = 32 << 20
#: Recovery attempts on one corrupt line (each scans at most the rest of the line).
MAX_RECOVERIES = 16
_TYPED_SUBTYPES = (None, "mid_turn_user_message")


def _is_context_part(text: str) -> bool:
    stripped = text.strip()
    return stripped.startswith(CONTEXT_OPEN) and stripped.endswith(CONTEXT_CLOSE)


def _text_parts(message: Any) -> list[str]:
    """The text parts of a Gemini ``Content``, thoughts left out."""
    parts = message.get("parts") if isinstance(message, dict) else None
    if not isinstance(parts, list):
        return []
    return [
        p["text"]
        for p in parts
        if isinstance(p, dict) and isinstance(p.get("text"), str) and not p.get("thought")
    ]


def typed_text(record: dict[str, Any]) -> str:
    """What the user typed in a ``user`` record (see the module doc), cleaned."""
    payload = record.get("systemPayload")
    if isinstance(payload, dict) and isinstance(payload.get("hookContext"), str):
        shown = payload.get("displayText")
        if isinstance(shown, str):
            return clean_text(shown)
    parts = [t for t in _text_parts(record.get("message")) if not _is_context_part(t)]
    return clean_text("\n".join(parts))


def _tool_files(message: Any) -> list[tuple[str, str]]:
    """The files an assistant record's ``functionCall`` parts read or edit
    (``read_file``, ``read_many_files``, ``write_file``, ``edit``)."""
    parts = message.get("parts") if isinstance(message, dict) else None
    if not isinstance(parts, list):
        return []
    out: list[tuple[str, str]] = []
    for part in parts[:256]:
        call = part.get("functionCall") if isinstance(part, dict) else None
        if isinstance(call, dict):
            out.extend(gemini_call(call.get("name"), call.get("args")))
    return out


_resync = resync_at('{"uuid"', MAX_RECOVERIES)


class _Records(LineReader):
    """The chat record handler."""

    recover = staticmethod(_resync)

    def __init__(self, seen: set[str] | None) -> None:
        self.seen: set[str] = seen if seen is not None else set()
        self.res = ParseResult(dropped=dict.fromkeys(DROP_REASONS, 0))
        self.dropped = self.res.dropped

    def record(self, o: dict[str, Any], line: int) -> None:
        self.res.records += 1
        take_ids(self.res, o)
        kind = o.get("type")
        provenance = o.get("provenance")
        if kind == "user":
            typed = provenance in (None, "real_user") and o.get("subtype") in _TYPED_SUBTYPES
            if not typed:
                self.dropped["not_typed"] += 1
                return
            self.unit(o, line, "user", typed_text(o))
        elif kind == "assistant":
            if provenance not in (None, "assistant_output") or o.get("subtype") is not None:
                self.dropped["system"] += 1
                return
            self.res.touched.extend((line, p, k) for p, k in _tool_files(o.get("message")))
            text = clean_text("\n".join(_text_parts(o.get("message"))))
            if not text and self._calls_tools(o.get("message")):
                self.dropped["tool_calls_only"] += 1
                return
            self.unit(o, line, "assistant", text)
        elif kind in ("tool_result", "system"):
            self.dropped[kind] += 1
        elif isinstance(kind, str):
            self.dropped["other_type"] += 1
        else:
            self.dropped["not_a_record"] += 1

    @staticmethod
    def _calls_tools(message: Any) -> bool:
        parts = message.get("parts") if isinstance(message, dict) else None
        return isinstance(parts, list) and any(
            isinstance(p, dict) and "functionCall" in p for p in parts
        )

    def unit(
        self, o: dict[str, Any], line: int, role: Literal["user", "assistant"], text: str
    ) -> None:
        uuid = text_or_none(o.get("uuid"), empty=False)
        if uuid is not None:
            if uuid in self.seen:
                self.dropped["duplicate_uuid"] += 1
                return
            self.seen.add(uuid)
        if not text:
            self.dropped["empty"] += 1
            return
        self.res.units.append(
            Unit(role, text, line, line, uuid, text_or_none(o.get("timestamp"), empty=False))
        )


def parse_session(path: Path, **resume: Unpack[Resume]) -> ParseResult:
    """Read ``path`` from a watermark. ``ValueError`` for an offset past the end,
    ``OSError`` when unreadable or not a regular file."""
    at = Watermark(**resume)
    return read_file(_Records(at.seen), path, at, block_size=BLOCK_SIZE, limit=MAX_LINE_BYTES)


def parse_bytes(data: bytes, *, first_line: int = 1, final: bool = True) -> ParseResult:
    """Bytes already in memory (re-read context, cited lines); ``end_offset`` is relative
    to ``data``."""
    return read_bytes(
        _Records(None), data, limit=MAX_LINE_BYTES, first_line=first_line, final=final
    )
