"""What Claude Code's SessionEnd hook sends on stdin, checked before anything opens it.

Standard library only: ``memloom hook notify`` runs this on every session end.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from memloom.agents.claude_code.home import projects_dir
from memloom.agents.events import HookEvent
from memloom.agents.files import check_transcript_path

TYPE_CHECKING = False  # typing's, without loading typing (~3 ms): the hooks load this module
if TYPE_CHECKING:
    from typing import Any

__all__ = ["NAME", "parse_hook_payload", "validate_transcript"]

NAME = "claude-code"


def validate_transcript(path_text: Any, projects: Path | None = None) -> Path:
    """The resolved transcript path, or NotificationRefused saying why not: a ``.jsonl``
    regular file inside the Claude Code projects folder (see
    :func:`memloom.agents.files.check_transcript_path`)."""
    return check_transcript_path(
        path_text,
        projects or projects_dir(),
        suffixes=(".jsonl",),
        folder="Claude Code projects folder",
    )


def parse_hook_payload(
    payload: Mapping[str, Any], env: Mapping[str, str] | None = None
) -> HookEvent:
    """``{"transcript_path", "session_id"?, "cwd"?, "reason"?}`` as a checked event."""
    path = validate_transcript(payload.get("transcript_path"), projects_dir(env))
    return HookEvent(
        agent=NAME,
        transcript_path=path,
        session_id=payload.get("session_id"),
        cwd=payload.get("cwd"),
        reason=payload.get("reason"),
    )
