"""Coding agents memloom reads and hooks into: one adapter each, found by name.

``get_agent("claude-code")`` returns the adapter (:class:`memloom.agents.base.Agent`);
adapters load on first use. The importer, ledger, chunker and capture shells use
adapters only through this registry and the protocol, never an agent's modules.

Standard library only: the hook fast path imports this package.
"""

from __future__ import annotations

import importlib
import os

TYPE_CHECKING = False  # typing's, without loading typing (~3 ms): the hooks load this module
if TYPE_CHECKING:
    from memloom.agents.base import Agent

__all__ = [
    "ADAPTERS",
    "DEFAULT_AGENT",
    "Agent",
    "agent_for_file",
    "agent_for_source",
    "agent_names",
    "found_agents",
    "get_agent",
    "session_container",
]

DEFAULT_AGENT = "claude-code"

#: name -> "module:Class" of its adapter (imported when first asked for). A new
#: adapter is one line here.
ADAPTERS: dict[str, str] = {
    "claude-code": "memloom.agents.claude_code:ClaudeCode",
    "codex": "memloom.agents.codex:Codex",
    "gemini": "memloom.agents.gemini:GeminiCli",
    "copilot": "memloom.agents.copilot:CopilotCLI",
    "aider": "memloom.agents.aider:Aider",
    "cursor": "memloom.agents.cursor:Cursor",
    "qwen": "memloom.agents.qwen:QwenCode",
    "opencode": "memloom.agents.opencode:OpenCode",
}
#: Other names users type for an agent (its product name): ``qwen-code`` is ``qwen``.
ALIASES: dict[str, str] = {"qwen-code": "qwen"}
_loaded: dict[str, Agent] = {}  # by "module:Class"


def agent_names() -> tuple[str, ...]:
    """Every agent memloom has an adapter for."""
    return tuple(ADAPTERS)


def get_agent(name: str = DEFAULT_AGENT) -> Agent:
    """The adapter for ``name``; ``KeyError`` naming the known agents for any other name."""
    try:
        where = ADAPTERS[ALIASES.get(name, name)]
    except KeyError:
        raise KeyError(f"unknown agent {name!r} (known: {', '.join(ADAPTERS)})") from None
    agent = _loaded.get(where)
    if agent is None:
        module, _, attr = where.partition(":")
        agent = _loaded[where] = getattr(importlib.import_module(module), attr)()
    return agent


def agent_for_source(source: str | None) -> Agent:
    """The adapter whose memories carry ``source`` (``Agent.name``, e.g. ``copilot-cli``,
    which is not always its registry name); the default agent for an unknown one."""
    for name in ADAPTERS:
        agent = get_agent(name)
        if agent.name == source:
            return agent
    return get_agent()


def found_agents() -> tuple[str, ...]:
    """The agents whose home exists on this machine (what a default import covers)."""
    return tuple(name for name in ADAPTERS if get_agent(name).found())


def agent_for_file(path: str | os.PathLike[str]) -> str | None:
    """The agent whose session file ``path`` is, by its content; None if no adapter
    recognises it (or it cannot be read)."""
    import stat
    from pathlib import Path

    where = Path(path)
    try:  # only regular files are sniffed: opening a FIFO would block the import
        if not stat.S_ISREG(os.stat(session_container(where)).st_mode):
            return None
    except OSError:
        return None
    return next((name for name in ADAPTERS if get_agent(name).recognises(where)), None)


def session_container(path: str | os.PathLike[str]) -> str:
    """The file a session path is in: ``path`` itself, or for one session of a database
    (``<store>#<session id>``, OpenCode) the store file."""
    text = os.fspath(path)
    if not os.path.exists(text):
        store, sep, sid = text.rpartition("#")
        if sep and sid and "/" not in sid and os.path.isfile(store):
            return store
    return text


def __getattr__(name: str) -> object:
    """``Agent`` (the protocol) loads on first use: the hook fast path never needs it."""
    if name == "Agent":
        from memloom.agents.base import Agent

        return Agent
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
