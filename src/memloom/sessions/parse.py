"""Moved to :mod:`memloom.agents.claude_code.parse` (the Claude Code adapter's reader).

Kept so that existing imports (``memloom.engine.memory_context``,
``bench/soak_fuzz.py``) keep working; new code reads sessions through the
adapter: ``memloom.agents.get_agent().read(...)``.
"""

from memloom.agents.claude_code import parse as _moved
from memloom.agents.claude_code.parse import *  # noqa: F403

__all__ = list(_moved.__all__)
