"""Stream a Claude Code transcript (``<session-id>.jsonl``) into conversation units.

A *unit* is one human prompt or one assistant reply, as plain text, with the
1-based physical line numbers it came from. Everything machine-made (tool calls
and results, thinking, slash-command markup, hook output, compaction summaries,
sub-agent lines, ...) is dropped and counted by reason in ``ParseResult.dropped``.
The files ``Read``/``Edit``/``MultiEdit``/``Write``/``NotebookEdit`` calls name are
reported in ``ParseResult.touched`` (their line, ``file_path``/``notebook_path``).

Reading rules (see ``shared/reference/claude-code-transcripts.md`` §0, §8):

* Bytes are split on ``b"\\n"`` only. Raw U+2028/U+2029 inside JSON strings are
  legal and ``str.splitlines`` would break there. Each line is decoded as UTF-8
  with ``errors="replace"``. Files are read in 1 MiB blocks, carrying the
  partial last line, so a 2 GB transcript is never loaded at once.
* Corrupt input never aborts the file. Per physical line:

  - ``\\x00`` bytes are removed before decoding. A line that held only NULs
    (and whitespace) counts as **malformed** -- it is the trace of an unclean
    shutdown and is worth reporting. A record that survives NUL removal is kept
    and not counted as malformed.
  - Blank or whitespace-only lines are ignored (not malformed).
  - Several objects on one line (``}{``) are all decoded (``raw_decode`` loop).
  - A segment that does not decode (truncated record, garbage) counts once as
    malformed; decoding then resumes at the next ``{"`` from which the rest of
    the line decodes completely and which is not preceded by ``:``, ``,`` or
    ``[`` (so a nested object of the truncated record is never mistaken for a
    record of its own). This recovers the "truncated splice" shape.
  - A decoded value that is not an object counts as malformed.
  - Recovery is bounded: a start that an earlier failed attempt already decoded
    through is not tried again, and the attempts of one line may scan at most
    :data:`RECOVER_WORK` times its length (hostile lines such as
    ``X{"a":1} {"a":1} … {"trunc`` would otherwise cost quadratic time).
  - A line longer than :data:`MAX_LINE_BYTES` is skipped without being held in
    memory (its bytes are dropped as they stream past) and counted in
    ``oversized``; it still counts as a line for numbering and watermarks.
    An unterminated over-long last segment is left for the next call unless
    ``final``.
  - JSON nesting deeper than Python's recursion limit (``RecursionError``) is
    a corrupt segment like any other.
  - Strings the parser keeps (text, ids, ``cwd``, timestamps) have lone UTF-16
    surrogates (legal in JSON as ``"\\ud800"``, not encodable as UTF-8) replaced
    by U+FFFD and NUL characters removed: SQLite, PostgreSQL, HTTP clients and
    tokenizers all reject them.

* **Watermarks.** ``end_offset`` is the byte offset just past the last consumed
  line and ``lines_read`` the physical line count at that offset -- *including*
  the ``start_line`` lines before ``start_offset`` (for :func:`parse_bytes`:
  ``first_line - 1`` plus the lines consumed). Pass them back as
  ``start_offset``/``start_line`` to resume.
* **Unterminated last segment** (no final ``\\n``). With ``final=False`` it is
  consumed only if it decodes completely into JSON objects (then it counts as a
  line and ``end_offset`` points just past it); otherwise it is left for the
  next call. With ``final=True`` it is always consumed (corrupt -> malformed).
  When a later call resumes at an offset whose preceding byte is not ``\\n``
  (i.e. after such a consumed segment), the bytes up to the next ``\\n`` are the
  *rest of the same physical line*: they keep that line's number and do not
  count again in ``lines_read``. This is exactly the ``}{`` "resume appended to
  an unterminated line" shape.

Filtering rules (reference §5, §6, §7):

* Only ``type`` ``user``/``assistant`` records can produce units (whitelist);
  every other record counts as ``non_conversation_type``.
* Records are deduplicated by ``uuid`` first (the first instance wins; the
  caller's ``seen_uuids`` set is updated, so duplicates across files and resumes
  are skipped too). Then, in this order: ``isSidechain`` -> ``sidechain``,
  ``isMeta`` -> ``meta``, ``isCompactSummary`` or a parent that is a
  ``compact_boundary`` -> ``compact_summary``; user lines holding a
  ``tool_result`` block -> ``tool_result``; assistant lines with model
  ``<synthetic>`` -> ``synthetic`` (takes precedence), ``isApiErrorMessage`` ->
  ``api_error``.
* Text comes only from ``text`` blocks (or a string ``content``). In each text
  block: memloom's own ``<memloom-context>`` blocks (opening tag at the start of
  a line, through ``</memloom-context>`` or the end of the text when the closing
  tag is missing) and ``<system-reminder>…</system-reminder>`` blocks (opening
  tag at the start of a line, closed) are removed; in user text, leading IDE
  blocks ``<ide_…>…</ide_…>`` are removed. Then user blocks are checked:
  interrupt markers are removed, compaction-summary text and command/shell
  markup (``<command-name>``, ``<local-command-stdout>``, ``<bash-input>``,
  ``Caveat: The messages below …`` and friends) are dropped.
* **Slash-command arguments.** A command whose ``<command-args>`` is non-empty
  was typed by the human, so it is kept as a user unit with the text
  ``"/<command-name> <args>"`` (what was typed; the command name gives the args
  their meaning; a missing leading ``/`` as written by 1.0.24 is added). This
  applies to every command: the transcript has no field telling built-in and
  prompt commands apart.
* A record whose text ends up empty is dropped with the most specific reason
  seen (``compact_summary`` > ``command_markup`` > ``interrupt`` > ``empty``).
  Multiple text blocks of one record are joined with a blank line.
* **Assistant replies** are written one content block per line, the lines
  sharing ``message.id`` and ``requestId``. Text of lines with the same
  (``message.id``, ``requestId``) joins (blank-line separated, in file order)
  into the unit created by the first of them, which then spans
  ``start_line..end_line`` -- even across tool lines and other replies in
  between -- until a new *user* unit is emitted; after that the same id starts a
  new unit. A reply that straddles a resume watermark yields two units.
* **Queued prompts** (reference §6.5). ``queue-operation`` records are paired
  FIFO: ``enqueue`` adds an entry, ``dequeue`` takes the oldest (it became a
  ``user`` line), ``remove`` takes the oldest as a *candidate*, ``popAll`` makes
  every pending entry a candidate (or, with nothing pending, its own
  ``content``). A user line containing a pending entry's text also retires that
  entry (delivered without a ``dequeue``). At the end, a candidate whose cleaned
  text appears in no later ``user`` line is recovered as a user unit (line =
  the enqueue line, ``uuid`` None) unless it is markup, an interrupt marker or a
  bare slash command (``/exit``). Recovery is decided within one call: a
  ``remove`` after the watermark cannot see an ``enqueue`` before it.
  ``queue-operation`` records count as ``non_conversation_type`` except
  recovered ``enqueue`` records.

* **Hostile volumes.** At most :data:`MAX_QUEUED` queued prompts are tracked
  (the oldest is forgotten beyond that) and markup is removed with linear-time
  scans, so no input makes parsing slower than linear in practice.

Invariant: every decoded record either contributes to a unit or is counted in
exactly one ``dropped`` reason.
"""

from __future__ import annotations

import json
import re
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memloom.agents.base import MEMLOOM_CONTEXT_CLOSE, MEMLOOM_CONTEXT_OPEN, ParseResult, Unit
from memloom.agents.files import open_regular
from memloom.agents.reading import (
    LineReader,
    Watermark,
    read_bytes,
    read_file,
    safe_text,
    text_or_none,
    without_memloom,
)
from memloom.agents.touched import EDIT, READ, from_args

__all__ = [
    "COMPACT_SUMMARY_PREFIX",
    "DROP_REASONS",
    "INTERRUPT_MARKERS",
    "MAX_LINE_BYTES",
    "MEMLOOM_CONTEXT_CLOSE",
    "MEMLOOM_CONTEXT_OPEN",
    "ParseResult",
    "Unit",
    "open_regular",
    "parse_bytes",
    "parse_transcript",
]

COMPACT_SUMMARY_PREFIX = (
    "This session is being continued from a previous conversation that ran out of context"
)

#: Longest first: the shorter marker is a prefix of the longer one.
INTERRUPT_MARKERS = (
    "[Request interrupted by user for tool use]",
    "[Request interrupted by user]",
)

#: User text starting with any of these is machine-written markup.
MARKUP_PREFIXES = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<task-notification>",
    "Caveat: The messages below were generated by the user while running local commands",
)
_COMMAND_PREFIXES = ("<command-name>", "<command-message>", "<command-args>")

DROP_REASONS = (
    "sidechain",
    "meta",
    "tool_result",
    "command_markup",
    "interrupt",
    "compact_summary",
    "synthetic",
    "api_error",
    "non_conversation_type",
    "empty",
    "duplicate_uuid",
)

BLOCK_SIZE = 1 << 20
#: A physical line longer than this is skipped (counted in ``oversized``) without
#: being held in memory. Real lines reach a few MiB (pasted screenshots are
#: base64 inside the line); 32 MiB bounds the memory one line can take.
MAX_LINE_BYTES = 32 << 20
#: Recovery attempts on one corrupt line may scan at most this many times its length.
RECOVER_WORK = 4
#: Queued prompts tracked at once (real queues hold a handful).
MAX_QUEUED = 64

_SYSREM_OPEN_RE = re.compile(r"^[ \t]*<system-reminder>", re.M)
_SYSREM_CLOSE = "</system-reminder>"
_IDE_RE = re.compile(r"\A(?:\s*<(ide_[\w-]*)\b[^>]*>.*?</\1>)+", re.S)
_BARE_SLASH_RE = re.compile(r"/[A-Za-z][\w:.-]*")
_WS = " \t\r\n"
_WS_RE = re.compile(r"[ \t\r\n]*")


# --------------------------------------------------------------------------- text


def _strip_system_reminders(text: str) -> str:
    """Remove ``<system-reminder>…</system-reminder>`` blocks opening at a line start.

    Same result as ``re.sub(r"^[ \t]*<system-reminder>.*?</system-reminder>", "", text,
    flags=re.S | re.M)`` in linear time: that pattern rescans to the end of the text
    for every unclosed opening tag (a 360 KB message took 45 s).
    """
    out: list[str] = []
    pos = 0
    while True:
        m = _SYSREM_OPEN_RE.search(text, pos)
        if m is None:
            break
        close = text.find(_SYSREM_CLOSE, m.end())
        if close < 0:
            break  # no later opening tag has a closing one either
        out.append(text[pos : m.start()])
        pos = close + len(_SYSREM_CLOSE)
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def _between(text: str, open_tag: str, close_tag: str) -> str | None:
    """What ``re.search(open_tag + "(.*?)" + close_tag, text, re.S)`` captures, in linear time."""
    start = text.find(open_tag)
    if start < 0:
        return None
    start += len(open_tag)
    end = text.find(close_tag, start)
    return None if end < 0 else text[start:end]


def _clean(text: str, *, user: bool) -> str:
    text = without_memloom(safe_text(text))
    if "<system-reminder>" in text:
        text = _strip_system_reminders(text)
    if user and "<ide_" in text:
        text = _IDE_RE.sub("", text, count=1)
    return text.strip()


def _command_text(text: str) -> str:
    """``"/name args"`` for a command with non-empty ``<command-args>``, else ``""``."""
    args = _between(text, "<command-args>", "</command-args>")
    if args is None:
        return ""
    args = args.strip()
    if not args:
        return ""
    name = (_between(text, "<command-name>", "</command-name>") or "").strip()
    if name and not name.startswith("/"):
        name = "/" + name
    return f"{name} {args}" if name else args


def _classify_user_text(raw: str, flags: set[str]) -> str:
    """Clean one user text block; return the text to keep ('' if none).

    Adds ``interrupt``/``compact_summary``/``command_markup`` to ``flags`` when
    such content was removed.
    """
    s = _clean(raw, user=True)
    if not s:
        return ""
    for marker in INTERRUPT_MARKERS:
        if s.startswith(marker):
            flags.add("interrupt")
            s = s[len(marker) :].strip()
            break
    if not s:
        return ""
    if s.startswith(COMPACT_SUMMARY_PREFIX):
        flags.add("compact_summary")
        return ""
    if s.startswith(MARKUP_PREFIXES):
        if s.startswith(_COMMAND_PREFIXES):
            kept = _command_text(s)
            if kept:
                return kept
        flags.add("command_markup")
        return ""
    return s


def _content_texts(content: Any) -> tuple[list[str], bool]:
    """Text of a ``message.content``: (texts, has_tool_result)."""
    if isinstance(content, str):
        return [content], False
    texts: list[str] = []
    has_tool_result = False
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                t = block.get("text")
                if isinstance(t, str):
                    texts.append(t)
            elif kind == "tool_result":
                has_tool_result = True
    return texts, has_tool_result


# --------------------------------------------------------------------------- decoding

_decoder = json.JSONDecoder()
_raw_decode = _decoder.raw_decode


def _skip_ws(s: str, i: int, n: int) -> int:
    return _WS_RE.match(s, i).end()  # type: ignore[union-attr]  # always matches


def _chain(s: str, i: int, n: int, starts: set[int]) -> tuple[list[Any] | None, int]:
    """Decode objects from ``i`` to the end of ``s``: (objects or None unless all of it
    decodes, how far decoding got). Every object start tried is added to ``starts``."""
    out: list[Any] = []
    while True:
        i = _skip_ws(s, i, n)
        if i >= n:
            return out, n
        starts.add(i)
        try:
            obj, i = _raw_decode(s, i)
        except json.JSONDecodeError as exc:
            return None, max(exc.pos, i)
        except (ValueError, RecursionError):
            return None, n
        out.append(obj)


def _recover(s: str, i: int, n: int) -> list[Any]:
    """After a failure at ``i``: the objects from the first plausible record start.

    Bounded: a start already decoded through by a failed attempt fails the same
    way and is skipped, and all attempts together scan at most ``RECOVER_WORK``
    times the line.
    """
    budget = RECOVER_WORK * n + 4096
    starts: set[int] = set()
    j = s.find('{"', i + 1)
    while j != -1 and budget > 0:
        if j not in starts:
            k = j - 1
            while k >= 0 and s[k] in _WS:
                k -= 1
            if k < 0 or s[k] not in ":,[":
                chain, reached = _chain(s, j, n, starts)
                if chain is not None:
                    return chain
                budget -= reached - j + 1
        j = s.find('{"', j + 1)
    return []


def _resync(s: str, i: int, failures: int) -> tuple[list[Any], int]:
    """After a corrupt record at ``i``: what :func:`_recover` finds; the line ends there."""
    return _recover(s, i, len(s)), len(s)


# --------------------------------------------------------------------------- parser


@dataclass
class _Queued:
    text: str
    line: int
    timestamp: str | None
    cleaned: str = ""

    def __post_init__(self) -> None:
        self.cleaned = _cleaned(self.text)


class _Parser(LineReader):
    recover = staticmethod(_resync)

    def __init__(self, seen_uuids: set[str] | None) -> None:
        self.seen: set[str] = seen_uuids if seen_uuids is not None else set()
        self.res = ParseResult(dropped=dict.fromkeys(DROP_REASONS, 0))
        self.dropped = self.res.dropped
        self.units = self.res.units
        self.open_replies: dict[tuple[str, str | None], Unit] = {}
        self.compact_uuids: set[str] = set()
        self.pending: deque[_Queued] = deque()
        self.candidates: list[_Queued] = []
        self.user_texts: list[tuple[int, str]] | None = None  # tracked once an enqueue is seen

    # -- records
    def record(self, o: dict[str, Any], line: int) -> None:
        res = self.res
        res.records += 1
        if res.session_id is None:
            res.session_id = text_or_none(o.get("sessionId"))
        if res.cwd is None:
            res.cwd = text_or_none(o.get("cwd"))
        if res.version is None:
            res.version = text_or_none(o.get("version"))
        kind = o.get("type")
        if kind == "user":
            self.user(o, line)
        elif kind == "assistant":
            self.assistant(o, line)
        else:
            self.dropped["non_conversation_type"] += 1
            if kind == "system" and o.get("subtype") == "compact_boundary":
                u = o.get("uuid")
                if isinstance(u, str):
                    self.compact_uuids.add(u)
            elif kind == "queue-operation":
                self.queue(o, line)

    def _common_drop(self, o: dict[str, Any]) -> str | None:
        uuid = o.get("uuid")
        if isinstance(uuid, str):
            if uuid in self.seen:
                return "duplicate_uuid"
            self.seen.add(uuid)
        if o.get("isSidechain") is True:
            return "sidechain"
        return None

    def user(self, o: dict[str, Any], line: int) -> None:
        reason = self._common_drop(o)
        if reason:
            self.dropped[reason] += 1
            return
        msg = o.get("message")
        content = msg.get("content") if isinstance(msg, dict) else None
        texts, has_tool_result = _content_texts(content)
        if self.user_texts is not None:
            joined = "\n".join(texts)
            self.user_texts.append((line, joined))
            if self.pending and joined:
                self.pending = deque(q for q in self.pending if q.cleaned not in joined)
        if o.get("isMeta") is True:
            reason = "meta"
        elif (
            o.get("isCompactSummary") is True
            or text_or_none(o.get("parentUuid")) in self.compact_uuids
        ):
            reason = "compact_summary"
        elif has_tool_result:
            reason = "tool_result"
        if reason:
            self.dropped[reason] += 1
            return
        flags: set[str] = set()
        kept = [t for t in (_classify_user_text(raw, flags) for raw in texts) if t]
        if not kept:
            for reason in ("compact_summary", "command_markup", "interrupt"):
                if reason in flags:
                    break
            else:
                reason = "empty"
            self.dropped[reason] += 1
            return
        self.open_replies.clear()
        uuid, ts = text_or_none(o.get("uuid")), text_or_none(o.get("timestamp"))
        self.units.append(Unit("user", "\n\n".join(kept), line, line, uuid, ts))

    def assistant(self, o: dict[str, Any], line: int) -> None:
        reason = self._common_drop(o)
        msg = o.get("message")
        if not isinstance(msg, dict):
            msg = {}
        if reason is None:
            self.res.touched.extend((line, p, k) for p, k in _tool_files(msg.get("content")))
        if reason is None:
            if o.get("isMeta") is True:
                reason = "meta"
            elif msg.get("model") == "<synthetic>":
                reason = "synthetic"
            elif o.get("isApiErrorMessage") is True:
                reason = "api_error"
        if reason:
            self.dropped[reason] += 1
            return
        texts, _ = _content_texts(msg.get("content"))
        kept = [t for t in (_clean(raw, user=False) for raw in texts) if t]
        if not kept:
            self.dropped["empty"] += 1
            return
        text = "\n\n".join(kept)
        mid = msg.get("id")
        key = (mid, text_or_none(o.get("requestId"))) if isinstance(mid, str) and mid else None
        unit = self.open_replies.get(key) if key else None
        if unit is not None:
            unit.text += "\n\n" + text
            unit.end_line = max(unit.end_line, line)
            return
        unit = Unit(
            "assistant",
            text,
            line,
            line,
            text_or_none(o.get("uuid")),
            text_or_none(o.get("timestamp")),
        )
        self.units.append(unit)
        if key:
            self.open_replies[key] = unit

    def queue(self, o: dict[str, Any], line: int) -> None:
        op = o.get("operation")
        ts = text_or_none(o.get("timestamp"))
        if op == "enqueue":
            texts, _ = _content_texts(o.get("content"))
            if len(self.pending) >= MAX_QUEUED:
                self.pending.popleft()
            self.pending.append(_Queued("\n\n".join(texts), line, ts))
            if self.user_texts is None:
                self.user_texts = []
        elif op == "dequeue":
            if self.pending:
                self.pending.popleft()
        elif op == "remove":
            if self.pending:
                q = self.pending.popleft()
                if len(self.candidates) < MAX_QUEUED:
                    self.candidates.append(q)
        elif op == "popAll":
            if self.pending:
                self.candidates.extend(list(self.pending)[: MAX_QUEUED - len(self.candidates)])
                self.pending.clear()
            else:
                texts, _ = _content_texts(o.get("content"))
                if texts and len(self.candidates) < MAX_QUEUED:
                    self.candidates.append(_Queued("\n\n".join(texts), line, ts))
                    if self.user_texts is None:
                        self.user_texts = []

    def finish(self) -> ParseResult:
        later = self.user_texts or []
        for q in self.candidates:
            flags: set[str] = set()
            text = _classify_user_text(q.text, flags)
            if not text or _BARE_SLASH_RE.fullmatch(text):
                continue
            if any(ln > q.line and text in t for ln, t in later):
                continue
            self.units.append(Unit("user", text, q.line, q.line, None, q.timestamp))
            self.dropped["non_conversation_type"] -= 1
        if self.candidates:
            self.units.sort(key=lambda u: u.start_line)
        return self.res


#: Claude Code's file tools: the argument naming the file, and what the call does.
_FILE_TOOLS = {
    "Read": ("file_path", READ),
    "Edit": ("file_path", EDIT),
    "MultiEdit": ("file_path", EDIT),
    "Write": ("file_path", EDIT),
    "NotebookEdit": ("notebook_path", EDIT),
}


def _tool_files(content: Any) -> list[tuple[str, str]]:
    """The files the ``tool_use`` blocks of an assistant record read or edit."""
    if not isinstance(content, list):
        return []
    out: list[tuple[str, str]] = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_use":
            tool = _FILE_TOOLS.get(block.get("name"))  # type: ignore[arg-type]
            if tool is not None:
                out.extend(from_args(block.get("input"), (tool[0],), tool[1]))
    return out


def _cleaned(text: str) -> str:
    return _clean(text, user=True) or text


# --------------------------------------------------------------------------- entry points


def parse_bytes(
    data: bytes,
    *,
    first_line: int = 1,
    seen_uuids: set[str] | None = None,
    final: bool = True,
) -> ParseResult:
    """Parse transcript bytes already in memory (tests, the importer).

    ``first_line`` is the physical line number of the first line of ``data``.
    ``end_offset`` is relative to the start of ``data``.
    """
    return read_bytes(
        _Parser(seen_uuids), data, limit=MAX_LINE_BYTES, first_line=first_line, final=final
    )


def parse_transcript(
    path: Path,
    *,
    start_offset: int = 0,
    start_line: int = 0,
    seen_uuids: set[str] | None = None,
    final: bool = False,
) -> ParseResult:
    """Stream ``path`` from ``start_offset`` (a watermark: byte offset and line count).

    ``final=False`` (the default) is for files that may still grow: an
    unterminated last segment is consumed only if it decodes completely.

    Raises ``ValueError`` if ``start_offset`` is beyond the end of the file (it
    was truncated or replaced: start over from 0), ``OSError`` if it can't be read
    or is not a regular file (a FIFO, device or folder is never read: opening is
    non-blocking, so a FIFO put in a transcript's place cannot hang the caller).
    """
    at = Watermark(start_offset, start_line, seen_uuids, final)
    return read_file(_Parser(seen_uuids), path, at, block_size=BLOCK_SIZE, limit=MAX_LINE_BYTES)
