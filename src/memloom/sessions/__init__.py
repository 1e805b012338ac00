"""Session import, agent-independent: the importer, the ledger and the chunker.

Finding and reading an agent's sessions is the agent adapter's part
(:mod:`memloom.agents`). The names below were this package's before the adapters
existed; they still resolve (on first use) to the Claude Code adapter's modules.
"""

from __future__ import annotations

import importlib
from typing import Any

_MOVED = {
    "Discovery": "memloom.agents.base",
    "SessionFile": "memloom.agents.base",
    "ParseResult": "memloom.agents.base",
    "Unit": "memloom.agents.base",
    "MEMLOOM_CONTEXT_CLOSE": "memloom.agents.base",
    "MEMLOOM_CONTEXT_OPEN": "memloom.agents.base",
    "claude_root": "memloom.agents.claude_code.home",
    "discover": "memloom.agents.claude_code.discover",
    "discover_paths": "memloom.agents.claude_code.discover",
    "is_main_transcript": "memloom.agents.claude_code.discover",
    "session_project": "memloom.agents.claude_code.discover",
    "parse_bytes": "memloom.agents.claude_code.parse",
    "parse_transcript": "memloom.agents.claude_code.parse",
}

__all__ = sorted(_MOVED)


def __getattr__(name: str) -> Any:
    """The moved names, imported when first asked for (PEP 562)."""
    where = _MOVED.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(where), name)
