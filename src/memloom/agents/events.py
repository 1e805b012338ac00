"""What a hook brings in and what connecting does: the two records the hook fast
path needs, kept apart from :mod:`memloom.agents.base` so that path loads only them.

Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["HookEvent", "HooksChange"]


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


@dataclass
class HooksChange:
    """What installing or removing memloom's hooks did to the agent's settings file."""

    settings_path: Path
    backup_path: Path | None
    changed: bool
    events: list[str]
