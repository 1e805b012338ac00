"""Moved to :mod:`memloom.agents.claude_code.parse` (the Claude Code adapter's reader).

Kept so that existing imports (``memloom.engine.memory_context``) keep working;
new code reads sessions through ``memloom.agents.get_agent(...).read``.
"""

from memloom.agents.base import MEMLOOM_CONTEXT_CLOSE, MEMLOOM_CONTEXT_OPEN, ParseResult, Unit
from memloom.agents.claude_code.parse import parse_bytes, parse_transcript
from memloom.agents.files import open_regular

__all__ = [
    "MEMLOOM_CONTEXT_CLOSE",
    "MEMLOOM_CONTEXT_OPEN",
    "ParseResult",
    "Unit",
    "open_regular",
    "parse_bytes",
    "parse_transcript",
]
