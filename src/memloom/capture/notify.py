"""Accepting a finished session: check the hook's payload, queue it, never block.

The payload is the agent's (``agent.parse_hook_payload`` checks it: the path
policy lives with the adapter, in :mod:`memloom.agents.files`); this module only
queues what passed and logs what did not.
"""

from __future__ import annotations

from pathlib import Path

from memloom.agents import DEFAULT_AGENT, get_agent
from memloom.agents.files import MAX_NAME_BYTES, MAX_PATH_CHARS
from memloom.capture.queues import open_queue
from memloom.errors import NotificationRefused

TYPE_CHECKING = False  # typing's, without loading typing (~3 ms): the hooks load this module
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "MAX_NAME_BYTES",
    "MAX_PATH_CHARS",
    "NotificationRefused",
    "accept_notification",
    "claude_projects",
]


def claude_projects(env: Any = None) -> Path:
    """The Claude Code projects folder (hook and HTTP paths must lie inside it)."""
    return get_agent("claude-code").transcripts_root(env)


def accept_notification(
    home: Path, payload: dict[str, Any], *, agent: str = DEFAULT_AGENT
) -> dict[str, Any]:
    """Queue the session; raises NotificationRefused (and logs it) for a bad path."""
    queue = open_queue(home)
    try:
        try:
            try:
                adapter = get_agent(agent)
            except KeyError as exc:  # an agent memloom has no adapter for
                raise NotificationRefused(str(exc.args[0])) from None
            event = adapter.parse_hook_payload(payload)
        except NotificationRefused as exc:
            queue.log("hook_refused", str(exc))
            raise
        path = event.transcript_path
        job = queue.enqueue(
            str(path), session_id=event.session_id, cwd=event.cwd, reason=event.reason
        )
        queue.log("hook_notify", str(path))
        # What the session was shown is kept past its end: a session resumed later
        # (claude --continue, codex resume) still holds that context in its history.
        return {"queued": True, "job": job, "transcript_path": str(path)}
    finally:
        queue.close()
