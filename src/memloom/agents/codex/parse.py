"""Stream a Codex CLI rollout (``rollout-*.jsonl`` or ``.jsonl.zst``) into conversation units.

A rollout is JSON Lines, one record per line, each ``{"timestamp", "type",
"payload"}`` (reference §1.2). A *unit* is one typed user prompt or one assistant
reply, as plain text, with the 1-based physical line it came from. Everything
else is dropped and counted by reason in ``ParseResult.dropped``.

What is kept
------------
* **User text**: ``response_item`` ``message`` with ``role:"user"``, its
  ``input_text`` items -- minus the blocks Codex injects into model-visible user
  messages. An item is injected when, after leading whitespace, it starts with one
  of :data:`INJECTED_BLOCKS`' opening markers (compared ASCII-case-insensitively,
  as Codex's own ``ContextualUserFragmentDefinition.matches_text`` does):
  ``<environment_context>``, ``<user_instructions>``, ``# AGENTS.md instructions
  for ``, ``<turn_aborted>``, ``<skill>``, ``<user_shell_command>``,
  ``<subagent_notification>``, ``<hook_prompt``, ``<codex_internal_context``,
  ``<plugins>``, ``<subagents>``. The markers are matched whole: a typed prompt
  that merely starts with ``#`` (an expanded custom prompt such as
  ``# /butler-exec — …``) is kept. The IDE preamble (``# Context from my IDE
  setup:`` / ``# Files mentioned by the user:``) is removed up to and including
  ``## My request for Codex:``; the typed text after it is kept (without that
  marker the item is all preamble, and dropped). memloom's own
  ``<memloom-context>`` block is removed from all text.
* **Assistant text**: ``response_item`` ``message`` with ``role:"assistant"``,
  its ``output_text`` items.
* ``developer``/``system``-role messages are never kept.

Each message once
-----------------
Codex writes every message twice: the model-visible ``response_item`` and a UI
copy, ``event_msg`` ``user_message``/``agent_message``. The ``response_item`` is
the source. The ``event_msg`` copies are used only when the file has **no**
``response_item`` message at all (hand-made or unusual files, such as the
compaction sample). The rule is per file, not per message or per role: every
real rollout has a ``response_item`` user message by line 2 (the injected
environment context), and Codex writes the ``agent_message`` event a few lines
*before* its ``response_item`` twin, so any finer rule would emit that event as a
fallback whenever a read stops between the two and then the twin again on
resume. When resuming at a watermark, the part of the file before it counts
too. ``response_item`` messages carrying an ``id`` (newer builds) are also
deduplicated by it through ``seen``.

Dropped (reason in ``dropped``)
-------------------------------
``injected`` (a user message holding only injected blocks), ``developer``,
``event_copy`` (the ``event_msg`` twin of a kept message), ``reasoning``,
``tool_call``, ``tool_result``, ``ghost_snapshot``, ``compacted`` (the
``compacted`` summary record and ``compaction`` items: machine-written summaries,
not user text), ``session_meta``, ``turn_context``, ``event`` (any other
``event_msg``), ``empty`` (a message with no text left), ``duplicate_id``,
``other`` (``world_state``, unknown kinds and unknown item types: tolerated,
never an error). Invariant: every decoded record is a unit or one count.

Reading rules
-------------
* Bytes are split on ``b"\\n"`` only and read in 1 MiB blocks; ``.zst`` is read
  through :func:`memloom.agents.codex.stream.open_session`, so offsets and line
  numbers are those of the decompressed content.
* Per physical line: NUL bytes are removed (a line of only NULs is
  **malformed**); blank lines are ignored; several records on one line
  (``}{``) are all decoded; a segment that does not decode counts once as
  malformed and decoding resumes at the next ``{"timestamp"`` from which the
  rest of the line decodes; a value that is not an object is malformed; a line
  longer than :data:`MAX_LINE_BYTES` is skipped unread (``oversized``).
* **Watermarks**: ``end_offset`` is the offset just past the last consumed line,
  ``lines_read`` the physical line count there (including ``start_line``).
  With ``final=False`` an unterminated last segment is consumed only if it
  decodes completely; otherwise it is left for the next call. A resume at an
  offset not preceded by ``\\n`` continues that physical line (same number).
* **cwd**: ``Unit.cwd`` is the turn's working directory (the last
  ``turn_context.payload.cwd`` before the unit, else the ``session_meta`` cwd).
  ``ParseResult.cwd`` is the session's *project*: its first cwd normalised to
  the enclosing git root (:func:`project_root`).
* A legacy rollout (before ``session_meta``: a bare ``{"id", "instructions"}``
  first line, then bare response items) is read the same way.
"""

from __future__ import annotations

import json
import os
import posixpath
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, Unpack

from memloom.agents.base import MEMLOOM_CONTEXT_OPEN, ParseResult, Unit
from memloom.agents.codex.stream import open_session
from memloom.agents.files import line_segments
from memloom.agents.reading import (
    LineReader,
    Resume,
    Watermark,
    blocks,
    clean_text,
    decode_line,
    read_bytes,
    read_from,
    text_or_none,
)
from memloom.agents.touched import joined, patch_files, shell_reads

__all__ = [
    "DROP_REASONS",
    "IDE_PREAMBLES",
    "IDE_REQUEST_MARKER",
    "INJECTED_BLOCKS",
    "MAX_LINE_BYTES",
    "clean_user_text",
    "parse_bytes",
    "parse_rollout",
    "project_root",
]

#: Opening markers of the blocks Codex puts into model-visible user messages
#: (codex-rs ``contextual_user_message.rs`` and reference §1.3).
INJECTED_BLOCKS = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions for ",
    "<turn_aborted>",
    "<skill>",
    "<user_shell_command>",
    "<subagent_notification>",
    "<hook_prompt",
    "<codex_internal_context",
    "<plugins>",
    "<subagents>",
)
_INJECTED_LOWER = tuple(m.lower() for m in INJECTED_BLOCKS)
_INJECTED_MAXLEN = max(len(m) for m in INJECTED_BLOCKS)
#: Preambles the IDE extensions and the desktop app put before the typed request.
IDE_PREAMBLES = ("# Context from my IDE setup:", "# Files mentioned by the user:")
IDE_REQUEST_MARKER = "## My request for Codex:"

DROP_REASONS = (
    "injected",
    "developer",
    "event_copy",
    "reasoning",
    "tool_call",
    "tool_result",
    "ghost_snapshot",
    "compacted",
    "session_meta",
    "turn_context",
    "event",
    "empty",
    "duplicate_id",
    "other",
)

BLOCK_SIZE = 1 << 20
#: A physical line longer than this is skipped unread (pasted images are base64 in a line).
MAX_LINE_BYTES = 32 << 20
#: Resynchronisation attempts on one corrupt line.
MAX_RECOVER = 8

_TOOL_CALLS = frozenset(
    {
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "web_search_call",
        "tool_search_call",
        "image_generation_call",
        "mcp_tool_call",
    }
)
_COMPACTION = frozenset({"compaction", "context_compaction", "compaction_summary"})
_RECOVER_AT = '{"timestamp"'
_LEGACY_KINDS = frozenset({"message", "reasoning", "ghost_snapshot"}) | _TOOL_CALLS


_SHELL_TOOLS = frozenset({"shell", "shell_command", "exec_command", "local_shell"})


def _arguments(p: dict[str, Any]) -> dict[str, Any]:
    """A tool call's arguments: a ``function_call``'s JSON string, a
    ``local_shell_call``'s ``action``; {} when they do not decode to an object (or are
    a ``custom_tool_call``'s raw ``input``)."""
    raw = p.get("arguments") if p.get("type") != "local_shell_call" else p.get("action")
    if isinstance(raw, str):
        try:
            raw = json.loads(raw[: 1 << 20])
        except (ValueError, RecursionError):
            return {}
    return raw if isinstance(raw, dict) else {}


def _tool_files(p: dict[str, Any], args: dict[str, Any]) -> list[tuple[str, str]]:
    """The files a tool call (its ``args``: :func:`_arguments`) reads (a plain
    ``cat``/``sed -n``/``head``/``nl`` of one file through the shell) or edits
    (``apply_patch``); see :mod:`memloom.agents.touched`."""
    name = p.get("name")
    if p.get("type") == "custom_tool_call":
        return patch_files(p.get("input")) if name == "apply_patch" else []
    if name == "apply_patch":
        return patch_files(args.get("input") or args.get("patch"))
    if name not in _SHELL_TOOLS and p.get("type") != "local_shell_call":
        return []
    command = args.get("command", args.get("cmd"))
    if isinstance(command, list) and command[:1] == ["apply_patch"] and len(command) == 2:
        return patch_files(command[1])  # older builds: the patch as the shell's argument
    if isinstance(command, str) and command.lstrip().startswith("apply_patch"):
        return patch_files(command)
    return shell_reads(command)


def _workdir(args: dict[str, Any], cwd: str | None) -> str | None:
    """The folder a tool call ran in: its ``workdir`` (``working_directory``), read from
    the turn's folder when relative; the turn's folder when it names none."""
    given = args.get("workdir", args.get("working_directory"))
    if not isinstance(given, str) or not given:
        return cwd
    return posixpath.normpath(posixpath.join(cwd or "", given))


def _legacy_item(kind: str) -> bool:
    """A pre-``session_meta`` rollout's line: a bare response item, no envelope."""
    return kind in _LEGACY_KINDS or kind.endswith("_output")


_decoder = json.JSONDecoder()
_raw_decode = _decoder.raw_decode
_WS = " \t\r\n"


# --------------------------------------------------------------------------- text


def is_injected(text: str) -> bool:
    """Whether one ``input_text`` item is a block Codex injected (not typed)."""
    head = text.lstrip()[:_INJECTED_MAXLEN].lower()
    return head.startswith(_INJECTED_LOWER)


def clean_user_text(text: str) -> tuple[str, bool]:
    """One user text item as typed: (text, whether something injected was removed).

    ``("", True)`` for an injected block; the IDE preamble is cut off; memloom's
    own context block is removed.
    """
    if is_injected(text):
        return "", True
    injected = False
    stripped = text.lstrip()
    if stripped.startswith(IDE_PREAMBLES):
        at = stripped.find(IDE_REQUEST_MARKER)
        if at < 0:
            return "", True
        text = stripped[at + len(IDE_REQUEST_MARKER) :]
        injected = True
    cleaned = clean_text(text)
    return cleaned, injected or (not cleaned and MEMLOOM_CONTEXT_OPEN in text)


# --------------------------------------------------------------------------- project


def _home_dirs() -> frozenset[str]:
    out = {os.path.abspath(os.sep)}
    home = os.path.expanduser("~")
    if home and home != "~":
        out.add(os.path.normpath(home))
    return frozenset(out)


@lru_cache(maxsize=4096)
def project_root(cwd: str) -> str:
    """The project a working directory belongs to: the enclosing git root, else ``cwd``.

    Walks up from ``cwd`` looking for ``.git`` (a folder, or a file in worktrees
    and submodules) -- only when ``cwd`` is an existing folder on this machine;
    a cwd from another machine is kept as it is. A ``.git`` in the filesystem
    root or the home folder itself (a dotfiles repository) does not count: it
    would merge every project under it.
    """
    if not cwd or not os.path.isabs(cwd):
        return cwd
    start = os.path.normpath(cwd)
    try:
        if not os.path.isdir(start):
            return cwd
    except (OSError, ValueError):
        return cwd
    stop = _home_dirs()
    cur = start
    while cur not in stop:
        if os.path.lexists(os.path.join(cur, ".git")):
            return cur
        parent = os.path.dirname(cur)
        if parent == cur:
            break
        cur = parent
    return cwd


def _project(cwd: str | None) -> str | None:
    return project_root(cwd) if cwd else None


# --------------------------------------------------------------------------- decoding


def _resync(s: str, i: int, failures: int) -> tuple[list[Any], int]:
    """After a corrupt record at ``i``: resynchronise at the next record start from which
    the rest of the line decodes (at most :data:`MAX_RECOVER` tries); the line ends there."""
    n = len(s)
    j = s.find(_RECOVER_AT, i + 1)
    for _ in range(MAX_RECOVER):
        if j == -1:
            break
        chain = _chain(s, j, n)
        if chain is not None:
            return chain, n
        j = s.find(_RECOVER_AT, j + 1)
    return [], n


def _chain(s: str, i: int, n: int) -> list[Any] | None:
    """The objects from ``i`` to the end of ``s``, or None unless all of it decodes."""
    out: list[Any] = []
    while True:
        while i < n and s[i] in _WS:
            i += 1
        if i >= n:
            return out
        try:
            obj, i = _raw_decode(s, i)
        except (ValueError, RecursionError):
            return None
        out.append(obj)


# --------------------------------------------------------------------------- parser


class _Parser(LineReader):
    recover = staticmethod(_resync)
    bytes_first = True

    def __init__(
        self,
        seen: set[str] | None,
        *,
        has_items: bool = False,
    ) -> None:
        self.seen: set[str] = seen if seen is not None else set()
        self.res = ParseResult(dropped=dict.fromkeys(DROP_REASONS, 0))
        self.dropped = self.res.dropped
        self.units = self.res.units
        #: the file has response_item messages (so event_msg messages are their twins)
        self.has_items = has_items
        self.copies: list[Unit] = []  # event_msg messages: kept only if has_items stays False
        self.meta_seen = False
        self.session_cwd: str | None = None
        self.turn_cwd: str | None = None
        self.first_cwd: str | None = None
        #: a resumed read: the session's first folder (tool paths only, never a unit's)
        self.started_in: str | None = None

    def _cwd(self, value: Any) -> None:
        cwd = text_or_none(value)
        if cwd:
            self.turn_cwd = cwd
            if self.first_cwd is None:
                self.first_cwd = cwd

    def record(self, o: dict[str, Any], line: int) -> None:
        self.res.records += 1
        kind = o.get("type")
        payload = o.get("payload")
        if not isinstance(payload, dict):
            payload = None
        ts = text_or_none(o.get("timestamp"))
        if kind == "response_item" and payload is not None:
            self.item(payload, line, ts)
        elif kind == "event_msg" and payload is not None:
            self.event(payload, line, ts)
        elif kind == "turn_context":
            self.dropped["turn_context"] += 1
            if payload is not None:
                self._cwd(payload.get("cwd"))
        elif kind == "session_meta":
            self.dropped["session_meta"] += 1
            if payload is not None:
                self.meta(payload)
        elif kind == "compacted":
            self.dropped["compacted"] += 1
        elif payload is None and isinstance(kind, str) and _legacy_item(kind):
            self.item(o, line, ts)  # legacy: a bare response item
        elif kind is None and "id" in o and "instructions" in o and not self.meta_seen:
            self.dropped["session_meta"] += 1  # legacy first line
            self.meta(o)
        else:
            self.dropped["other"] += 1

    def meta(self, p: dict[str, Any]) -> None:
        if self.meta_seen:
            return  # the first session_meta is canonical
        self.meta_seen = True
        res = self.res
        res.session_id = text_or_none(p.get("id")) or text_or_none(p.get("session_id"))
        res.version = text_or_none(p.get("cli_version"))
        cwd = text_or_none(p.get("cwd"))
        if cwd:
            self.session_cwd = cwd
            self.first_cwd = cwd
            if self.turn_cwd is None:
                self.turn_cwd = cwd

    def item(self, p: dict[str, Any], line: int, ts: str | None) -> None:
        ptype = p.get("type")
        if ptype == "message":
            self.message(p, line, ts)
        elif ptype == "reasoning":
            self.dropped["reasoning"] += 1
        elif ptype in _TOOL_CALLS:
            self.dropped["tool_call"] += 1
            args = _arguments(p)
            found = joined(
                _workdir(args, self._unit_cwd() or self.started_in), _tool_files(p, args)
            )
            self.res.touched.extend((line, path, kind) for path, kind in found)
        elif isinstance(ptype, str) and ptype.endswith("_output"):
            self.dropped["tool_result"] += 1
        elif ptype == "ghost_snapshot":
            self.dropped["ghost_snapshot"] += 1
        elif ptype in _COMPACTION:
            self.dropped["compacted"] += 1
        else:
            self.dropped["other"] += 1

    def message(self, p: dict[str, Any], line: int, ts: str | None) -> None:
        role = p.get("role")
        if role not in ("user", "assistant"):
            self.dropped["developer" if role in ("developer", "system") else "other"] += 1
            return
        self.has_items = True
        mid = text_or_none(p.get("id"))
        if mid:
            if mid in self.seen:
                self.dropped["duplicate_id"] += 1
                return
            self.seen.add(mid)
        content = p.get("content")
        if isinstance(content, str):
            content = [{"type": "input_text" if role == "user" else "output_text", "text": content}]
        kept: list[str] = []
        injected = False
        for c in content if isinstance(content, list) else ():
            if not isinstance(c, dict):
                continue
            text = c.get("text")
            if not isinstance(text, str):
                continue
            ctype = c.get("type")
            if role == "user":
                if ctype not in ("input_text", "text"):
                    continue
                t, inj = clean_user_text(text)
                injected = injected or inj
            else:
                if ctype not in ("output_text", "text"):
                    continue
                t = clean_text(text)
            if t:
                kept.append(t)
        if not kept:
            self.dropped["injected" if injected else "empty"] += 1
            return
        cwd = self._unit_cwd()
        self.units.append(
            Unit(role, "\n\n".join(kept), line, line, mid, ts, cwd=cwd, project=_project(cwd))
        )

    def _unit_cwd(self) -> str | None:
        return self.turn_cwd or self.session_cwd

    def event(self, p: dict[str, Any], line: int, ts: str | None) -> None:
        etype = p.get("type")
        role: Literal["user", "assistant"]
        if etype == "user_message":
            role = "user"
        elif etype == "agent_message":
            role = "assistant"
        else:
            self.dropped["event"] += 1
            return
        text = p.get("message")
        if not isinstance(text, str):
            self.dropped["empty"] += 1
            return
        if role == "user":
            t, injected = clean_user_text(text)
        else:
            t, injected = clean_text(text), False
        if not t:
            self.dropped["injected" if injected else "empty"] += 1
            return
        cwd = self._unit_cwd()
        self.copies.append(Unit(role, t, line, line, None, ts, cwd=cwd, project=_project(cwd)))

    def finish(self) -> ParseResult:
        res = self.res
        if self.copies:
            if self.has_items:
                self.dropped["event_copy"] += len(self.copies)
            else:
                self.units.extend(self.copies)
                self.units.sort(key=lambda u: u.start_line)
        if res.cwd is None and self.first_cwd:
            res.cwd = project_root(self.first_cwd)
        return res


# --------------------------------------------------------------------------- driver


def _meta_cwd(f: Any, end: int) -> str | None:
    """The ``cwd`` of the rollout's first line (its ``session_meta``), for a resumed
    read: where a tool call's relative path was read from when no ``turn_context``
    after the watermark says."""
    for seg, _, terminated in line_segments(blocks(f, BLOCK_SIZE, end), MAX_LINE_BYTES):
        if seg is None or not terminated:
            return None
        values, _ = decode_line(seg, _resync, bytes_first=True)
        o = values[0] if values and isinstance(values[0], dict) else {}
        meta = o.get("payload") if o.get("type") == "session_meta" else None
        return text_or_none(meta.get("cwd")) if isinstance(meta, dict) else None
    return None


def _has_items_before(f: Any, end: int) -> bool:
    """Whether the first ``end`` bytes hold a response_item user/assistant message.

    Decides, when resuming, whether event_msg messages after the watermark are
    twins. Reads from the start and stops at the first one (line 2 in real files).
    """
    for seg, _, terminated in line_segments(blocks(f, BLOCK_SIZE, end), MAX_LINE_BYTES):
        if seg is None or not terminated or b'"response_item"' not in seg or b'"role"' not in seg:
            continue
        values, _ = decode_line(seg, _resync, bytes_first=True)
        for o in values:
            p = o.get("payload") if isinstance(o, dict) else None
            if (
                isinstance(p, dict)
                and p.get("type") == "message"
                and p.get("role") in ("user", "assistant")
            ):
                return True
    return False


def parse_bytes(
    data: bytes, *, first_line: int = 1, seen: set[str] | None = None, final: bool = True
) -> ParseResult:
    """Parse rollout bytes already in memory (context windows, cited lines, tests).

    ``first_line`` is the physical line number of the first line of ``data``;
    ``end_offset`` is relative to the start of ``data``.
    """
    return read_bytes(_Parser(seen), data, limit=MAX_LINE_BYTES, first_line=first_line, final=final)


def parse_rollout(path: Path, **resume: Unpack[Resume]) -> ParseResult:
    """Stream ``path`` (plain or ``.zst``) from a watermark (:class:`.reading.Watermark`).

    Raises ``ValueError`` if ``start_offset`` is beyond the end of the content and
    ``OSError`` if the file cannot be read, is not a regular file or is corrupt zstd.
    """
    at = Watermark(**resume)
    has_items = False
    started_in = None
    if at.start_offset > 0:
        with open_session(path) as f:
            has_items = _has_items_before(f, at.start_offset)
        with open_session(path) as f:
            started_in = _meta_cwd(f, at.start_offset)
    p = _Parser(at.seen, has_items=has_items)
    p.started_in = started_in
    with open_session(path) as f:  # a stream: no size to check (sized=False)
        return read_from(p, f, path, at, block_size=BLOCK_SIZE, limit=MAX_LINE_BYTES, sized=False)
