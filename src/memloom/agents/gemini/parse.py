"""Read a Gemini CLI chat recording as line-numbered user/assistant units.

Two formats, told apart by content (:func:`sniff`), not by name (reference §2.2):

* **Legacy** ``session-*.json`` (v0.2 - v0.38): one pretty-printed
  ``ConversationRecord`` ``{sessionId, projectHash, startTime, lastUpdated,
  messages: [...], kind?}``, rewritten whole on every update. The top-level
  object is walked member by member and the ``messages`` array element by
  element (:func:`_walk_legacy`), so each message's unit spans exactly the
  physical lines its object occupies, and ``uuid`` = the message ``id``: a
  re-read of the rewritten file yields the same ids (the importer dedupes on
  them). A file that is not complete JSON: with ``final=False`` it yields no
  units -- it is being rewritten -- and is reported as ``dropped["incomplete"]``
  when it looks truncated (nothing consumed: the watermark stays) or as
  ``malformed`` when it is corrupt in the middle (consumed). With
  ``final=True`` the messages decoded before the damage are kept and the file
  counts once as ``malformed``.
* **JSONL** ``session-*.jsonl`` (>= v0.39), append-only: a metadata line, then
  full ``MessageRecord`` lines (an ``id`` re-emitted when the message is updated:
  last write wins), ``{"$set": {...}}`` patches (``$set.messages`` is a
  checkpoint: the message list becomes exactly that list) and
  ``{"$rewindTo": id}`` (that message and everything after it are deleted; an
  id that is not there clears every message, as Gemini's own loader does).
  The **whole file is folded** into the final message list on every read and
  units are emitted in message order, each message once, at its last version:
  ``start_line`` = the first line at which the message had text, ``end_line`` =
  the last message record that touched it (a checkpoint does not move it).
  Rewound and checkpoint-omitted messages are never emitted; messages a
  checkpoint introduces (compression summaries) are synthetic and dropped. One
  exception: a checkpoint that introduces nothing (a resume) keeps the user
  messages it leaves out because they start with ``<hook_context>`` (Gemini
  drops those from a resumed history, though the user typed a prompt in them).

**Watermarks.** ``end_offset``/``lines_read`` are always for the whole file as
read from byte 0 (an incomplete last JSONL line is left unread unless ``final``).
``start_offset``/``start_line`` do not say where reading starts -- the fold needs
the whole file -- but which units are new: JSONL units whose ``start_line`` is
after ``start_line``; legacy units whose ``end_line`` is after it (the bytes
before a verified watermark are unchanged). A rewind that deletes messages
before the watermark cannot take back what an earlier read emitted.

**What is kept.** User text: ``type:"user"``, ``displayContent`` when present (what
was typed: ``/init`` rather than its expanded template), else ``content``
(a string or ``[{text}]`` parts). Dropped: user turns that were not typed (only
a ``functionResponse``, ``[Function Response: …]`` text, the synthetic
``System: Please continue.``), memloom's own ``<memloom-context>`` block, hook
context blocks and the ``--- Content from referenced files ---`` expansion of
``@file``. Assistant text: ``type:"gemini"`` ``content`` text parts (``thought``
parts are reasoning and dropped); a gemini message with only ``toolCalls`` yields
no unit. The files its ``toolCalls`` read or edit (``read_file``, ``read_many_files``,
``write_file``, ``replace``) go to ``ParseResult.touched`` at the line that last
recorded them (legacy: the message's first line), when that is after ``start_line``.
``info``/``error``/``warning`` and unknown types are dropped and counted.

``dropped`` counts final messages by reason, and non-message records by kind
(``metadata``, ``patch``, ``checkpoint``, ``rewind``; ``reemitted`` for each
superseded version of a message). Corrupt lines count in ``malformed``, lines
longer than :data:`MAX_LINE_BYTES` in ``oversized``; neither aborts the file.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from memloom.agents.base import MEMLOOM_CONTEXT_CLOSE, MEMLOOM_CONTEXT_OPEN, ParseResult, Unit
from memloom.agents.files import open_regular
from memloom.agents.gemini.markup import HOOK_CONTEXT_OPEN, remove_blocks, without_hook_context
from memloom.agents.reading import check_watermark, end_within, safe_text, text_or_none
from memloom.agents.touched import gemini_call

__all__ = [
    "CONTINUE_PROMPT",
    "DROP_REASONS",
    "MAX_JSON_BYTES",
    "MAX_LINE_BYTES",
    "Meta",
    "parse_bytes",
    "parse_file",
    "sniff",
]

#: A JSONL line longer than this is skipped unread (counted in ``oversized``).
MAX_LINE_BYTES = 32 << 20
#: A legacy ``.json`` larger than this is not read (``oversized``).
MAX_JSON_BYTES = 256 << 20
#: The synthetic user turn Gemini sends to make the model go on.
CONTINUE_PROMPT = "System: Please continue."
_FUNCTION_RESPONSE = "[Function Response: "
_REFS_OPEN = "--- Content from referenced files ---"
_REFS_CLOSE = "--- End of content ---"
#: Recovery attempts on one corrupt JSONL line (each decodes at most the line).
_RECOVER_TRIES = 8

DROP_REASONS = (
    # final messages
    "info",
    "error",
    "warning",
    "other_type",
    "tool_only",
    "empty",
    "not_typed",
    "function_response",
    "continue_prompt",
    "rewound",
    "checkpoint_omitted",
    "checkpoint_synthetic",
    "before_start",
    "duplicate_id",
    # records that are not messages
    "metadata",
    "patch",
    "checkpoint",
    "rewind",
    "rewind_target_missing",
    "reemitted",
    "unknown_record",
    # whole legacy files
    "incomplete",
    "truncated",
)

_decoder = json.JSONDecoder()
_raw_decode = _decoder.raw_decode
_loads = _decoder.decode
_WS_RE = re.compile(r"[ \t\r\n]*")
_NUMBER_PREFIX = re.compile(r"-?\d*(?:\.\d*)?(?:[eE][-+]?\d*)?")


@dataclass
class Meta:
    """What the file says about its session (the importer's ParseResult lacks a place)."""

    format: str = "jsonl"  # "jsonl" | "json"
    session_id: str | None = None
    project_hash: str | None = None
    kind: str | None = None


# --------------------------------------------------------------------------- text


def _clean(text: str, *, user: bool) -> str:
    text = safe_text(text)
    if MEMLOOM_CONTEXT_OPEN in text:
        text = remove_blocks(text, MEMLOOM_CONTEXT_OPEN, MEMLOOM_CONTEXT_CLOSE, to_end=True)
    if user:
        text = without_hook_context(text)
        if "<session_context>" in text:
            text = remove_blocks(text, "<session_context>", "</session_context>", to_end=False)
        if _REFS_OPEN in text:
            text = remove_blocks(text, _REFS_OPEN, _REFS_CLOSE, to_end=True)
    return text.strip()


def _parts_text(value: Any) -> tuple[str, bool]:
    """The text of a ``PartListUnion`` (string, part, or list of both): (text, had other parts).

    ``thought`` parts are the model's reasoning, never text.
    """
    if isinstance(value, str):
        return value, False
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return "", value is not None
    texts: list[str] = []
    other = False
    for part in value:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict):
            t = part.get("text")
            if isinstance(t, str) and part.get("thought") is not True:
                texts.append(t)
            else:
                other = True
    return "".join(texts), other


def _classify(rec: dict[str, Any]) -> tuple[str | None, str, str | None]:
    """One message record: (role or None, unit text, drop reason or None)."""
    kind = rec.get("type")
    if kind == "user":
        display = rec.get("displayContent")
        if display is not None:
            raw, other = _parts_text(display)
            other = True  # displayContent present: nothing typed if it holds no text
        else:
            raw, other = _parts_text(rec.get("content"))
        text = _clean(raw, user=True)
        if not text:
            return None, "", "not_typed" if other else "empty"
        if text.startswith(_FUNCTION_RESPONSE):
            return None, "", "function_response"
        if text == CONTINUE_PROMPT:
            return None, "", "continue_prompt"
        return "user", text, None
    if kind == "gemini":
        raw, _ = _parts_text(rec.get("content"))
        text = _clean(raw, user=False)
        if not text:
            return None, "", "tool_only" if rec.get("toolCalls") else "empty"
        return "assistant", text, None
    if kind in ("info", "error", "warning"):
        return None, "", kind
    return None, "", "other_type"


# --------------------------------------------------------------------------- format


def sniff(head: bytes, suffix: str = "") -> str:
    """``"jsonl"`` or ``"json"`` (legacy) from the first bytes of a file.

    A first line that is a bare ``{`` is pretty-printed legacy JSON; a complete
    first-line object with a ``messages`` list is a one-line legacy file; any
    other complete object starts a JSONL file. Undecidable heads (empty, or a
    corrupt first line) follow the name: ``.json`` legacy, anything else JSONL.
    """
    data = head.replace(b"\x00", b"")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    data = data.lstrip(b" \t\r\n")
    fallback = "json" if suffix == ".json" else "jsonl"
    if not data:
        return fallback
    nl = data.find(b"\n")
    first = (data if nl < 0 else data[:nl]).strip()
    if first == b"{":
        return "json"
    try:
        obj = _loads(first.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return fallback
    if isinstance(obj, dict):
        return "json" if isinstance(obj.get("messages"), list) else "jsonl"
    return fallback


# --------------------------------------------------------------------------- JSONL


@dataclass(slots=True)
class _Msg:
    id: str
    role: str | None
    text: str
    reason: str | None
    timestamp: str | None
    last_line: int
    text_line: int = 0  # first line at which the message had unit text (0: never)
    synthetic: bool = False
    hook_led: bool = False  # a user message whose content starts with <hook_context>
    first_line: int = 0  # the line that first recorded it
    tools: list[tuple[str, str]] | None = None  # the files its toolCalls touch (last write)
    tool_line: int = 0  # the line that recorded them

    def __post_init__(self) -> None:
        self.first_line = self.first_line or self.last_line


class _Fold:
    """The message list a JSONL recording describes, built line by line."""

    def __init__(self) -> None:
        self.msgs: dict[str, _Msg] = {}
        self.left_out: dict[str, _Msg] = {}  # omitted by a checkpoint (a later one may restore)
        self.meta = Meta()
        self.res = ParseResult(dropped=dict.fromkeys(DROP_REASONS, 0))
        self.dropped = self.res.dropped

    def feed(self, raw: bytes, line: int, *, whole: bool = False) -> bool:
        """Decode one physical line. ``whole``: accept only a line that decodes cleanly
        (an unterminated last line); returns False if it does not."""
        had_nul = b"\x00" in raw
        if had_nul:
            raw = raw.replace(b"\x00", b"")
        s = raw.decode("utf-8", "replace")
        if s.startswith("\ufeff"):
            s = s[1:]
        if not s.strip():
            if had_nul:
                self.res.malformed += 1
            return True
        try:
            obj = _loads(s)
        except (ValueError, RecursionError):
            if whole:
                return False
            self.res.malformed += 1
            obj = _recover(s)
            if obj is None:
                return True
        if not isinstance(obj, dict):
            if whole:
                return False
            self.res.malformed += 1
            return True
        self.record(obj, line)
        return True

    def record(self, o: dict[str, Any], line: int) -> None:
        self.res.records += 1
        target = o.get("$rewindTo")
        if isinstance(target, str):
            self.rewind(target)
            return
        patch = o.get("$set")
        if isinstance(patch, dict):
            self.patch(patch, line)
            return
        mid = o.get("id")
        if isinstance(mid, str):
            self.message(mid, o, line)
            return
        sid = o.get("sessionId")
        if isinstance(sid, str):
            self.dropped["metadata"] += 1
            meta = self.meta
            if meta.session_id is None:
                meta.session_id = safe_text(sid)
            if meta.project_hash is None:
                meta.project_hash = text_or_none(o.get("projectHash"))
            if meta.kind is None:
                meta.kind = text_or_none(o.get("kind"))
            return
        self.dropped["unknown_record"] += 1

    def message(self, mid: str, o: dict[str, Any], line: int) -> None:
        role, text, reason = _classify(o)
        m = self.msgs.get(mid)
        if m is None:
            m = self.msgs[mid] = _Msg(
                mid, role, text, reason, text_or_none(o.get("timestamp")), line
            )
        else:
            self.dropped["reemitted"] += 1
            m.role, m.text, m.reason, m.last_line = role, text, reason, line
            m.timestamp = text_or_none(o.get("timestamp")) or m.timestamp
        m.hook_led = _hook_led(o)
        if role is not None and not m.text_line:
            m.text_line = line
        tools = _tool_files(o)
        if tools:
            m.tools, m.tool_line = tools, line

    def rewind(self, target: str) -> None:
        self.dropped["rewind"] += 1
        keys = list(self.msgs)
        try:
            cut = keys.index(target)
        except ValueError:
            self.dropped["rewind_target_missing"] += 1
            cut = 0  # Gemini's loader: an unknown target clears the conversation
        for key in keys[cut:]:
            del self.msgs[key]
        self.dropped["rewound"] += len(keys) - cut

    def patch(self, patch: dict[str, Any], line: int) -> None:
        sid = patch.get("sessionId")
        if self.meta.session_id is None and isinstance(sid, str):
            self.meta.session_id = safe_text(sid)
        messages = patch.get("messages")
        if not isinstance(messages, list):
            self.dropped["patch"] += 1
            return
        self.dropped["checkpoint"] += 1
        rebuilt: dict[str, _Msg] = {}
        known = True  # every message of the checkpoint was seen before
        for el in messages:
            if not isinstance(el, dict) or not isinstance(el.get("id"), str):
                self.res.malformed += 1
                continue
            mid = el["id"]
            role, text, reason = _classify(el)
            m = self.msgs.get(mid)
            if m is None and mid in self.left_out:  # left out by an earlier checkpoint
                m = self.left_out.pop(mid)
                self.dropped["checkpoint_omitted"] -= 1
            if m is None:  # a turn the checkpoint made up (a compression summary)
                known = False
                m = _Msg(
                    mid, role, text, reason, text_or_none(el.get("timestamp")), line, synthetic=True
                )
            else:
                m.role, m.text, m.reason = role, text, reason
            if role is not None and not m.text_line:
                m.text_line = line
                m.last_line = max(m.last_line, line)
            rebuilt[mid] = m
        # Resuming, Gemini rebuilds the list without the user messages that start with
        # <hook_context> (another hook's SessionStart context put before the prompt, in
        # headless mode): not undone by the user, so kept where they were. A checkpoint
        # that brings a new message (a compression summary) replaces what it leaves out.
        kept = {k: m for k, m in self.msgs.items() if known and k not in rebuilt and m.hook_led}
        for k, m in self.msgs.items():
            if k not in rebuilt and k not in kept:
                self.left_out[k] = m
                self.dropped["checkpoint_omitted"] += 1
        if kept:  # back in the order they were first recorded
            rebuilt.update(kept)
            rebuilt = dict(sorted(rebuilt.items(), key=lambda item: item[1].first_line))
        self.msgs = rebuilt

    def finish(self, start_line: int, seen: set[str] | None) -> ParseResult:
        units = self.res.units
        dropped = self.dropped
        for m in self.msgs.values():
            if m.tools and not m.synthetic and m.tool_line > start_line:
                self.res.touched.extend((m.tool_line, p, k) for p, k in m.tools)
            if m.synthetic:
                dropped["checkpoint_synthetic"] += 1
            elif m.role is None:
                dropped[m.reason or "empty"] += 1
            elif m.text_line <= start_line:
                dropped["before_start"] += 1
            elif seen is not None and m.id in seen:
                dropped["duplicate_id"] += 1
            else:
                if seen is not None:
                    seen.add(m.id)
                end = max(m.last_line, m.text_line)
                units.append(Unit(m.role, m.text, m.text_line, end, safe_text(m.id), m.timestamp))  # type: ignore[arg-type]
        self.res.touched.sort(key=lambda t: t[0])
        self.res.session_id = self.meta.session_id
        return self.res


def _tool_files(rec: dict[str, Any]) -> list[tuple[str, str]]:
    """The files a gemini message's ``toolCalls`` read or edit."""
    calls = rec.get("toolCalls") if rec.get("type") == "gemini" else None
    if not isinstance(calls, list):
        return []
    out: list[tuple[str, str]] = []
    for call in calls[:256]:
        if isinstance(call, dict):
            out.extend(gemini_call(call.get("name"), call.get("args")))
    return out


def _hook_led(rec: dict[str, Any]) -> bool:
    """Whether Gemini leaves this record out of a resumed session's history: a user
    message whose ``content`` starts with ``<hook_context>`` (Gemini CLI 0.61.0)."""
    if rec.get("type") != "user":
        return False
    return _parts_text(rec.get("content"))[0].lstrip().startswith(HOOK_CONTEXT_OPEN)


def _recover(s: str) -> dict[str, Any] | None:
    """A record appended to an unterminated one on the same line: the first ``{"``
    (not inside a value) from which the rest of the line decodes as one object."""
    j = s.find('{"', 1)
    tries = 0
    while j != -1 and tries < _RECOVER_TRIES:
        k = j - 1
        while k >= 0 and s[k] in " \t\r\n":
            k -= 1
        if k < 0 or s[k] not in ":,[":
            tries += 1
            try:
                obj = _loads(s[j:])
            except (ValueError, RecursionError):
                obj = None
            if isinstance(obj, dict):
                return obj
        j = s.find('{"', j + 1)
    return None


def _lines(f: BinaryIO, limit: int) -> Iterator[tuple[bytes | None, int, bool]]:
    """Physical lines: ``(bytes without the newline or None if over limit, length, terminated)``."""
    while True:
        raw = f.readline(limit + 1)
        if not raw:
            return
        if raw.endswith(b"\n"):
            yield raw[:-1], len(raw), True
            continue
        if len(raw) <= limit:
            yield raw, len(raw), False  # the unterminated last segment
            return
        total = len(raw)
        while True:  # an over-long line: drop its bytes as they stream past
            more = f.readline(1 << 20)
            total += len(more)
            if not more:
                yield None, total, False
                return
            if more.endswith(b"\n"):
                yield None, total, True
                break


def _parse_jsonl(
    f: BinaryIO, *, first_line: int, start_line: int, final: bool, seen: set[str] | None
) -> tuple[ParseResult, Meta]:
    fold = _Fold()
    res = fold.res
    line = first_line - 1
    consumed = 0
    for raw, length, terminated in _lines(f, MAX_LINE_BYTES):
        this = line + 1
        if terminated:
            if raw is None:
                res.oversized += 1
            elif raw:
                fold.feed(raw, this)
        elif raw is None:
            if not final:
                break
            res.oversized += 1
        elif final:
            fold.feed(raw, this)
        elif not fold.feed(raw, this, whole=True):
            break  # may still be being written: leave it for the next read
        consumed += length
        line = this
    fold.finish(start_line, seen)
    res.lines_read = line
    res.end_offset = consumed
    fold.meta.format = "jsonl"
    return res, fold.meta


# --------------------------------------------------------------------------- legacy JSON


class _Damaged(Exception):
    def __init__(self, pos: int, truncated: bool) -> None:
        super().__init__(pos)
        self.pos = pos
        self.truncated = truncated


def _skip(s: str, i: int) -> int:
    return _WS_RE.match(s, i).end()  # type: ignore[union-attr]  # always matches


def _truncated_at(s: str, pos: int, exc: BaseException | None) -> bool:
    """Whether decoding failed only because the text ends early (a file mid-rewrite)."""
    if isinstance(exc, json.JSONDecodeError) and exc.msg.startswith("Unterminated string"):
        return True
    rest = s[pos:].strip()
    if not rest:
        return True
    if rest in ("t", "tr", "tru", "f", "fa", "fal", "fals", "n", "nu", "nul"):
        return True
    m = _NUMBER_PREFIX.fullmatch(rest)
    return m is not None


def _decode_at(s: str, i: int) -> tuple[Any, int]:
    try:
        return _raw_decode(s, i)
    except json.JSONDecodeError as exc:
        raise _Damaged(exc.pos, _truncated_at(s, exc.pos, exc)) from None
    except (ValueError, RecursionError):
        raise _Damaged(i, False) from None


def _expect(s: str, i: int, chars: str) -> int:
    """Position of the next non-space character, which must be one of ``chars``."""
    i = _skip(s, i)
    if i >= len(s):
        raise _Damaged(i, True)
    if s[i] not in chars:
        raise _Damaged(i, False)
    return i


def _walk_legacy(s: str, meta: dict[str, Any], out: list[tuple[int, int, Any]]) -> None:
    """Walk ``{..., "messages": [ … ], ...}``: top-level members into ``meta``, each
    message as (start, end, value) into ``out``. Raises _Damaged where it breaks."""
    i = _expect(s, 0, "{") + 1
    j = _skip(s, i)
    if j < len(s) and s[j] == "}":
        i = j + 1
    else:
        while True:
            i = _expect(s, i, '"')
            key, i = _decode_at(s, i)
            i = _expect(s, i, ":") + 1
            i = _skip(s, i)
            if key == "messages" and i < len(s) and s[i] == "[":
                out.clear()
                i = _skip(s, i + 1)
                if i < len(s) and s[i] == "]":
                    i += 1
                else:
                    while True:
                        i = _skip(s, i)
                        start = i
                        value, i = _decode_at(s, i)
                        out.append((start, i, value))
                        i = _expect(s, i, ",]")
                        i += 1
                        if s[i - 1] == "]":
                            break
                meta[key] = True
            else:
                meta[key], i = _decode_at(s, i)
            i = _expect(s, i, ",}") + 1
            if s[i - 1] == "}":
                break
    if _skip(s, i) < len(s):
        raise _Damaged(i, False)  # extra data after the object


def _parse_json(
    data: bytes, *, first_line: int, start_line: int, final: bool, seen: set[str] | None
) -> tuple[ParseResult, Meta]:
    res = ParseResult(dropped=dict.fromkeys(DROP_REASONS, 0))
    dropped = res.dropped
    meta = Meta(format="json")
    had_nul = b"\x00" in data
    s = (data.replace(b"\x00", b"") if had_nul else data).decode("utf-8", "replace")
    if s.startswith("\ufeff"):
        s = s[1:]
    total_lines = (
        first_line - 1 + data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    )
    top: dict[str, Any] = {}
    elements: list[tuple[int, int, Any]] = []
    damage: _Damaged | None = None
    if not s.strip():
        if had_nul:
            res.malformed += 1
        res.lines_read, res.end_offset = total_lines, len(data)
        return res, meta
    try:
        _walk_legacy(s, top, elements)
    except _Damaged as exc:
        damage = exc
    meta.session_id = text_or_none(top.get("sessionId"))
    meta.project_hash = text_or_none(top.get("projectHash"))
    meta.kind = text_or_none(top.get("kind"))
    res.session_id = meta.session_id
    if damage is not None:
        if not final:
            if damage.truncated:  # being rewritten: read it again once it is whole
                dropped["incomplete"] += 1
                res.lines_read, res.end_offset = first_line - 1, 0
            else:
                res.malformed += 1
                res.lines_read, res.end_offset = total_lines, len(data)
            return res, meta
        res.malformed += 1
        if damage.truncated:
            dropped["truncated"] += 1
    # Line numbers: count newlines incrementally (elements are in file order).
    pos, line = 0, first_line
    units = res.units
    for start, end, value in elements:
        line += s.count("\n", pos, start)
        first = line
        line += s.count("\n", start, end - 1)
        last = line
        pos = end - 1
        res.records += 1
        if not isinstance(value, dict):
            res.malformed += 1
            continue
        role, text, reason = _classify(value)
        mid = text_or_none(value.get("id"))
        if last > start_line:
            res.touched.extend((first, p, k) for p, k in _tool_files(value))
        if role is None:
            dropped[reason or "empty"] += 1
        elif last <= start_line:
            dropped["before_start"] += 1
        elif seen is not None and mid is not None and mid in seen:
            dropped["duplicate_id"] += 1
        else:
            if seen is not None and mid is not None:
                seen.add(mid)
            units.append(Unit(role, text, first, last, mid, text_or_none(value.get("timestamp"))))  # type: ignore[arg-type]
    res.lines_read, res.end_offset = total_lines, len(data)
    return res, meta


# --------------------------------------------------------------------------- entry points


def _parse(
    f: BinaryIO,
    *,
    size: int,
    suffix: str,
    first_line: int,
    start_line: int,
    final: bool,
    seen: set[str] | None,
) -> tuple[ParseResult, Meta]:
    head = f.read(64 * 1024)
    kind = sniff(head, suffix)
    if kind == "json":
        if size > MAX_JSON_BYTES:
            res = ParseResult(dropped=dict.fromkeys(DROP_REASONS, 0), oversized=1)
            res.end_offset = size
            return res, Meta(format="json")
        if len(head) < size:
            f.seek(0)
            head = f.read()
        data = head
        return _parse_json(
            data, first_line=first_line, start_line=start_line, final=final, seen=seen
        )
    f.seek(0)
    return _parse_jsonl(f, first_line=first_line, start_line=start_line, final=final, seen=seen)


def parse_file(
    path: Path,
    *,
    start_offset: int = 0,
    start_line: int = 0,
    final: bool = False,
    seen: set[str] | None = None,
) -> tuple[ParseResult, Meta]:
    """Read the whole of ``path``; units new since the watermark (see the module doc).

    Raises ``ValueError`` for an offset past the end (or negative), ``OSError``
    if the file can't be read or is not a regular file.
    """
    check_watermark(start_offset, start_line)
    with open_regular(path) as f:
        size = end_within(f, path, start_offset)
        f.seek(0)
        return _parse(
            f,
            size=size,
            suffix=Path(path).suffix,
            first_line=1,
            start_line=start_line,
            final=final,
            seen=seen,
        )


def parse_bytes(
    data: bytes, *, first_line: int = 1, final: bool = True, suffix: str = ""
) -> tuple[ParseResult, Meta]:
    """The same reading of bytes in memory; line numbers start at ``first_line``."""
    return _parse(
        io.BytesIO(data),
        size=len(data),
        suffix=suffix,
        first_line=first_line,
        start_line=0,
        final=final,
        seen=None,
    )
