"""What a hook brings in: the one record the hook fast path needs, kept apart from
:mod:`memloom.agents.base` so that path loads only it (connecting's
:class:`~memloom.agents.base.HooksChange` lives there: the hooks never need it).

Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["HookEvent"]


@dataclass(frozen=True)
class HookEvent:
    """A capture hook's payload, checked: the session file to queue and what came with it.

    ``session_id``, ``cwd`` and ``reason`` are passed through as the agent sent them.
    """

    agent: str
    transcript_path: Path
    session_id: Any = None
    cwd: Any = None
    reason: Any = None
