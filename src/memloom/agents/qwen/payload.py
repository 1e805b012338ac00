"""What Qwen Code's hooks send on stdin, checked before anything opens the session file.

Every event carries ``{session_id, transcript_path, cwd, hook_event_name, timestamp,
permission_mode}`` (Qwen Code 0.24.4, tests/e2e); ``Stop`` adds
``last_assistant_message`` and ``stop_hook_active``, ``UserPromptSubmit`` ``prompt``
(``""`` on a tool call's continuation) and ``submitted_prompt``. ``transcript_path``
must resolve inside ``<runtime>/projects/`` to ``<slug>/chats/<name>.jsonl``.

Standard library only: ``memloom hook notify --agent qwen`` runs this every turn.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from memloom.agents.events import HookEvent, hook_event
from memloom.agents.files import check_transcript_path
from memloom.agents.qwen.home import projects_dir
from memloom.errors import NotificationRefused

TYPE_CHECKING = False  # typing's, without loading typing (~3 ms): the hooks load this module
if TYPE_CHECKING:
    from typing import Any

__all__ = ["AGENT", "parse_hook_payload", "validate_transcript"]

#: The registry name (``get_agent(AGENT)``) the queued event names.
AGENT = "qwen"


def validate_transcript(path_text: Any, projects: Path | None = None) -> Path:
    """The resolved session path, or NotificationRefused saying why not."""
    base = projects or projects_dir()
    path = check_transcript_path(
        path_text, base, suffixes=(".jsonl",), folder="Qwen Code projects folder"
    )
    rel = path.relative_to(base.resolve()).parts
    if len(rel) != 3 or rel[1] != "chats":
        raise NotificationRefused(
            f"not a Qwen Code session file (projects/<project>/chats/<id>.jsonl): {path}"
        )
    return path


def parse_hook_payload(
    payload: Mapping[str, Any], env: Mapping[str, str] | None = None
) -> HookEvent:
    """The payload as a checked event; ``reason`` is the ``hook_event_name`` (``Stop``
    every turn: Qwen fires no SessionEnd headless)."""
    path = validate_transcript(payload.get("transcript_path"), projects_dir(env))
    return hook_event(AGENT, path, payload)
