"""What Gemini CLI's hooks send on stdin, checked before anything opens the session file.

Every event carries the base input ``{session_id, transcript_path, cwd,
hook_event_name, timestamp}`` (``SessionEnd`` adds ``reason``, ``BeforeAgent`` /
``AfterAgent`` add ``prompt`` …; reference §2.4). ``transcript_path`` is the chat
recording: it must resolve inside ``<home>/tmp/`` to a main session file,
``tmp/<project-id>/chats/session-*.jsonl`` (``.json`` before v0.39). A
sub-agent's recording (``chats/<parentSessionId>/…``) is refused: discovery skips
those as sidecars.

Standard library only: ``memloom hook notify --agent gemini`` runs this every turn.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from memloom.agents.events import HookEvent, hook_event
from memloom.agents.files import check_transcript_path
from memloom.agents.gemini.home import tmp_dir
from memloom.errors import NotificationRefused

TYPE_CHECKING = False  # typing's, without loading typing (~3 ms): the hooks load this module
if TYPE_CHECKING:
    from typing import Any

__all__ = ["AGENT", "parse_hook_payload", "validate_transcript"]

#: The registry name (``get_agent(AGENT)``) the queued event names.
AGENT = "gemini"
_SESSION_NAME_RE = re.compile(r"^session-.+\.jsonl?$")


def validate_transcript(path_text: Any, tmp: Path | None = None) -> Path:
    """The resolved session path, or NotificationRefused saying why not."""
    base = tmp or tmp_dir()
    path = check_transcript_path(
        path_text, base, suffixes=(".jsonl", ".json"), folder="Gemini CLI tmp folder"
    )
    rel = path.relative_to(base.resolve()).parts
    if len(rel) == 4 and rel[1] == "chats":
        raise NotificationRefused(f"a sub-agent session, not imported on its own: {path}")
    if len(rel) != 3 or rel[1] != "chats" or not _SESSION_NAME_RE.match(rel[2]):
        raise NotificationRefused(
            f"not a Gemini CLI session file (tmp/<project>/chats/session-*.jsonl): {path}"
        )
    return path


def parse_hook_payload(
    payload: Mapping[str, Any], env: Mapping[str, str] | None = None
) -> HookEvent:
    """The base payload as a checked event. ``reason`` is SessionEnd's ``reason``, else the
    ``hook_event_name`` (so the queue can tell a turn from a session end)."""
    path = validate_transcript(payload.get("transcript_path"), tmp_dir(env))
    return hook_event(AGENT, path, payload)
