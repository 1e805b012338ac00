"""Coding agents memloom reads and hooks into: one adapter each, found by name.

``get_agent("claude-code")`` returns the adapter (:class:`memloom.agents.base.Agent`);
adapters load on first use. The importer, ledger, chunker and capture shells use
adapters only through this registry and the protocol, never an agent's modules.

Standard library only: the hook fast path imports this package.
"""

from __future__ import annotations

import importlib

from memloom.agents.base import Agent

__all__ = ["ADAPTERS", "DEFAULT_AGENT", "Agent", "agent_names", "get_agent"]

DEFAULT_AGENT = "claude-code"

#: name -> "module:Class" of its adapter (imported when first asked for). A new
#: adapter is one line here.
ADAPTERS: dict[str, str] = {
    "claude-code": "memloom.agents.claude_code:ClaudeCode",
    "gemini": "memloom.agents.gemini:GeminiCli",
}
_loaded: dict[str, Agent] = {}  # by "module:Class"


def agent_names() -> tuple[str, ...]:
    """Every agent memloom has an adapter for."""
    return tuple(ADAPTERS)


def get_agent(name: str = DEFAULT_AGENT) -> Agent:
    """The adapter for ``name``; ``KeyError`` naming the known agents for any other name."""
    try:
        where = ADAPTERS[name]
    except KeyError:
        raise KeyError(f"unknown agent {name!r} (known: {', '.join(ADAPTERS)})") from None
    agent = _loaded.get(where)
    if agent is None:
        module, _, attr = where.partition(":")
        agent = _loaded[where] = getattr(importlib.import_module(module), attr)()
    return agent
