"""What a hook brings in: the one record the hook fast path needs, kept apart from
:mod:`memloom.agents.base` so that path loads only it (connecting's
:class:`~memloom.agents.base.HooksChange` lives there: the hooks never need it).

Standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from memloom.values import FrozenValue

TYPE_CHECKING = False  # typing's, without loading typing (~3 ms): the hooks load this module
if TYPE_CHECKING:
    from typing import Any

__all__ = ["HookEvent", "hook_event"]


class HookEvent(FrozenValue):
    """A capture hook's payload, checked: the session file to queue and what came with it.

    ``session_id``, ``cwd`` and ``reason`` are passed through as the agent sent them.
    (A plain class: the hooks load this module, see :mod:`memloom.values`.)
    """

    FIELDS = ("agent", "transcript_path", "session_id", "cwd", "reason")

    def __init__(
        self,
        agent: str,
        transcript_path: Path,
        session_id: Any = None,
        cwd: Any = None,
        reason: Any = None,
    ) -> None:
        self.agent = agent
        self.transcript_path = transcript_path
        self.session_id = session_id
        self.cwd = cwd
        self.reason = reason


def hook_event(agent: str, path: Path, payload: Mapping[str, Any]) -> HookEvent:
    """The event of a Claude-shaped payload whose ``transcript_path`` checked out as
    ``path``: ``reason`` is SessionEnd's ``reason``, else the ``hook_event_name`` (so the
    queue can tell a turn's end from a session's)."""
    reason = payload.get("reason")
    return HookEvent(
        agent=agent,
        transcript_path=path,
        session_id=payload.get("session_id"),
        cwd=payload.get("cwd"),
        reason=reason if reason is not None else payload.get("hook_event_name"),
    )
