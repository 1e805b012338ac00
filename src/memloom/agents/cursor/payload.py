"""What Cursor's hooks send on stdin, checked before anything opens it; what they print.

Every hook gets ``{conversation_id, generation_id, model, hook_event_name,
cursor_version, workspace_roots[], user_email, transcript_path}`` (``transcript_path``
is null when the user turned transcripts off) and the environment variables
``CURSOR_PROJECT_DIR`` and ``CURSOR_TRANSCRIPT_PATH`` (cursor.com/docs/agent/hooks, as
quoted by MemPalace/mempalace@78631f65 ``mempalace/hooks/cursor/STDIN_SHAPE.md``).
``sessionStart`` adds ``session_id`` (the same as ``conversation_id``), ``stop`` adds
``status`` and ``loop_count``; ``sessionEnd`` a ``reason``.

The session to queue is the file the payload names (else ``$CURSOR_TRANSCRIPT_PATH``):
the transcript is the source of truth, never Cursor's ``state.vscdb``. It must be a
``.jsonl`` or ``.txt`` regular file inside ``~/.cursor/projects``
(:func:`memloom.agents.files.check_transcript_path`). The project is the first
workspace root (else ``$CURSOR_PROJECT_DIR``): user-level hooks run in ``~/.cursor``,
so the process's own directory says nothing.

Output: ``sessionStart`` takes ``{"additional_context": "…"}`` (added to the
conversation's initial system context), and so does ``postToolUse`` (added after the
tool's result).

**Reads.** After Cursor's ``Read`` tool, ``postToolUse`` sends the common fields and
``{tool_name: "Read", tool_input: {file_path}, tool_output, tool_use_id, duration}``
(``tool_output`` a JSON string such as ``{"content_length": …}``); it fires after a
successful call only, a failed one fires ``postToolUseFailure``. That shape is from
payloads that public tools captured from live Cursor sessions (3.7.27, 3.12.29;
e.g. ``tool_input: {"file_path": "/…/1937.txt"}``) and the docs' event list, not from
a Cursor run here: Cursor is closed source and could not be run. :func:`read_path`
takes ``tool_input.file_path`` (``tool_input`` as an object or a JSON string).

``beforeSubmitPrompt`` can only allow or block (``{"continue", "user_message"}``):
Cursor has no way for a hook to add context to a prompt, so memloom installs no
prompt hook.

Standard library only: ``memloom hook … --agent cursor`` runs this.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from memloom.agents.cursor.home import projects_dir
from memloom.agents.events import HookEvent
from memloom.agents.files import check_transcript_path
from memloom.errors import NotificationRefused

TYPE_CHECKING = False  # typing's, without loading typing (~3 ms): the hooks load this module
if TYPE_CHECKING:
    from typing import Any

__all__ = ["NAME", "parse_hook_payload", "read_path", "session_start_output", "workspace_of"]

#: The registry name (``memloom.agents.get_agent("cursor")``) the capture queue keys on.
NAME = "cursor"


def workspace_of(payload: Mapping[str, Any], env: Mapping[str, str] | None = None) -> Any:
    """The workspace the hook ran for: ``workspace_roots[0]``, else ``$CURSOR_PROJECT_DIR``
    (None when neither is a non-empty string)."""
    roots = payload.get("workspace_roots")
    first = roots[0] if isinstance(roots, list) and roots else None
    if isinstance(first, str) and first.strip():
        return first
    configured = (os.environ if env is None else env).get("CURSOR_PROJECT_DIR")
    return configured if configured and configured.strip() else None


def parse_hook_payload(
    payload: Mapping[str, Any], env: Mapping[str, str] | None = None
) -> HookEvent:
    """A ``stop`` / ``sessionEnd`` payload as a checked event, or NotificationRefused."""
    path_text = payload.get("transcript_path")
    if path_text is None:
        path_text = (os.environ if env is None else env).get("CURSOR_TRANSCRIPT_PATH")
    if path_text is None:
        raise NotificationRefused(
            "transcript_path is null: Cursor writes no transcript for this conversation "
            "(transcripts turned off in its settings?)"
        )
    path = check_transcript_path(
        path_text,
        projects_dir(env),
        suffixes=(".jsonl", ".txt"),
        folder="Cursor projects folder",
    )
    session = payload.get("conversation_id") or payload.get("session_id")
    return HookEvent(
        agent=NAME,
        transcript_path=path,
        session_id=session,
        cwd=workspace_of(payload, env),
        reason=payload.get("reason") or payload.get("status"),
    )


def read_path(payload: Mapping[str, Any]) -> str | None:
    """The file a ``postToolUse`` of Cursor's ``Read`` tool opened (absolute, or relative
    to the workspace); None for another tool or input without a ``file_path``."""
    if payload.get("tool_name") != "Read":
        return None
    tool_input = payload.get("tool_input")
    if isinstance(tool_input, str):
        try:
            tool_input = json.loads(tool_input)
        except ValueError:
            return None
    path = tool_input.get("file_path") if isinstance(tool_input, dict) else None
    return path if isinstance(path, str) and path.strip() else None


def session_start_output(context: str) -> str:
    """What the sessionStart hook prints so Cursor adds ``context`` ("" -> nothing)."""
    if not context.strip():
        return ""
    return json.dumps({"additional_context": context}, ensure_ascii=False)
