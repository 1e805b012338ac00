"""What Copilot CLI's hooks send on stdin, checked before anything opens it; what they print.

``sessionEnd`` (docs.github.com hooks reference) sends ``{sessionId, timestamp, cwd,
reason}`` (camelCase event names) or ``{hook_event_name, session_id, timestamp, cwd,
reason}`` (PascalCase, VS Code-compatible); neither names the transcript. The
session file is therefore found from the id: ``<home>/session-state/<id>/events.jsonl``,
else the legacy ``<home>/history-session-state/<id>.json``. A ``transcriptPath`` /
``transcript_path`` (sent by ``agentStop``, ``preCompact`` and maybe by later
``sessionEnd`` versions: UNVERIFIED) is used when present. Either way the path must
resolve inside the Copilot home's session folders
(:func:`memloom.agents.files.check_transcript_path`).

Seen from Copilot CLI 1.0.102 (tests/e2e): every payload is camelCase;
``sessionStart`` ``{sessionId, timestamp, cwd, source, initialPrompt}``,
``userPromptSubmitted`` ``{sessionId, timestamp, cwd, prompt}``, ``agentStop`` adds
``transcriptPath``, ``sessionEnd`` ``{sessionId, timestamp, cwd, reason}`` (no path:
the file is found from the id, as above). sessionEnd fires before Copilot writes
``session.shutdown``, so the queued session is read once the worker gets to it.

Output of ``sessionStart``, ``userPromptSubmitted`` and ``postToolUse``:
``{"additionalContext": "<text>"}`` at the top level of stdout is injected; plain text
and ``hookSpecificOutput`` are ignored.

**Reads** (1.0.102, tests/fixtures/hooks/reads/copilot-*): ``postToolUse`` runs after a
successful tool call only and sends ``{sessionId, timestamp, cwd, toolName: "view",
toolArgs: {path}, toolResult: {resultType: "success", textResultForLlm}}``; the path
is absolute or relative to ``cwd``, and ``view`` of a folder lists it. The PascalCase
``PostToolUse`` of a plugin's hook file names the same call the Claude way:
``{hook_event_name, session_id, timestamp, cwd, tool_name: "Read", tool_input: {path},
tool_result: {result_type, text_result_for_llm}}``. ``toolArgs`` may come as a JSON
string (GitHub's hooks reference): it is parsed. :func:`read_path` reads both.

Standard library only: ``memloom hook … --agent copilot`` runs this.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

from memloom.agents.copilot.home import legacy_dir, session_state_dir
from memloom.agents.events import HookEvent
from memloom.agents.files import check_transcript_path
from memloom.errors import NotificationRefused

TYPE_CHECKING = False  # typing's, without loading typing (~3 ms): the hooks load this module
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "NAME",
    "READ_TOOLS",
    "parse_hook_payload",
    "read_path",
    "recall_output",
    "session_id_of_payload",
]

#: The registry name (``memloom.agents.get_agent("copilot")``) the capture queue keys on.
NAME = "copilot"
#: A Copilot session id is a UUID; accept any plain file name, never a path.
_SAFE_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
#: Copilot's file-viewing tool: ``view`` (camelCase events), ``Read`` (PascalCase ones).
READ_TOOLS = ("view", "Read")


def _first(payload: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        value = payload.get(key)
        if value is not None:
            return value
    return None


def session_id_of_payload(payload: Mapping[str, Any]) -> Any:
    """``sessionId`` (camelCase events) or ``session_id`` (PascalCase events), as sent."""
    return _first(payload, "sessionId", "session_id")


def _from_id(session_id: Any, env: Mapping[str, str] | None) -> Path:
    if not isinstance(session_id, str) or not session_id.strip():
        raise NotificationRefused("the payload names neither transcriptPath nor sessionId")
    sid = session_id.strip()
    if not _SAFE_ID_RE.match(sid) or ".." in sid:
        raise NotificationRefused(f"sessionId is not a plain session id: {sid[:80]!r}")
    state = session_state_dir(env)
    events = state / sid / "events.jsonl"
    legacy = legacy_dir(env) / f"{sid}.json"
    if not events.exists() and legacy.exists():
        return check_transcript_path(
            str(legacy), legacy_dir(env), suffixes=(".json",), folder="Copilot session history"
        )
    return check_transcript_path(
        str(events), state, suffixes=(".jsonl",), folder="Copilot session-state folder"
    )


def _from_path(path_text: Any, env: Mapping[str, str] | None) -> Path:
    if isinstance(path_text, str) and path_text.strip().endswith(".json"):
        return check_transcript_path(
            path_text, legacy_dir(env), suffixes=(".json",), folder="Copilot session history"
        )
    return check_transcript_path(
        path_text,
        session_state_dir(env),
        suffixes=(".jsonl",),
        folder="Copilot session-state folder",
    )


def parse_hook_payload(
    payload: Mapping[str, Any], env: Mapping[str, str] | None = None
) -> HookEvent:
    """A ``sessionEnd`` (or any Copilot hook) payload as a checked event, or NotificationRefused."""
    path_text = _first(payload, "transcriptPath", "transcript_path")
    session_id = session_id_of_payload(payload)
    path = _from_path(path_text, env) if path_text is not None else _from_id(session_id, env)
    return HookEvent(
        agent=NAME,
        transcript_path=path,
        session_id=session_id,
        cwd=payload.get("cwd"),
        reason=_first(payload, "reason", "stopReason", "stop_reason"),
    )


def recall_output(context: str) -> str:
    """What the sessionStart and userPromptSubmitted hooks print so Copilot adds
    ``context`` ("" -> nothing)."""
    if not context.strip():
        return ""
    return json.dumps({"additionalContext": context}, ensure_ascii=False)


def read_path(payload: Mapping[str, Any]) -> str | None:
    """The file a ``postToolUse`` of Copilot's ``view`` opened (absolute, or relative
    to ``cwd``); None for another tool, a failed call or arguments without a path."""
    tool = _first(payload, "toolName", "tool_name")
    if tool not in READ_TOOLS:
        return None
    result = _first(payload, "toolResult", "tool_result")
    if isinstance(result, dict):
        status = _first(result, "resultType", "result_type")
        if status is not None and status != "success":
            return None
    args = _first(payload, "toolArgs", "tool_input")
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return None
    path = args.get("path") if isinstance(args, dict) else None
    return path if isinstance(path, str) and path.strip() else None
