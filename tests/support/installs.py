"""What every agent's hook installer must do after its first install (tests/agents)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def check_reinstall_and_removal(
    agent: Any, env: dict[str, str], path: Path, backup: Path, original: bytes, restored: bytes
) -> None:
    """After ``agent``'s first install into ``path`` (``original`` before it, its backup at
    ``backup``): every hook is there; installing again changes nothing; without recall
    only the session-end hook stays; a new command replaces; the backup stays the first
    file; removing gives back ``restored``, and removing again changes nothing."""
    everything = agent.installed_hooks(env)
    assert everything == dict.fromkeys(everything, True)
    assert {"notify", "session_start", "prompt_recall", "readable"} <= set(everything)
    installed = path.read_bytes()
    assert not agent.install_hooks("/opt/bin/memloom", env=env).changed  # idempotent
    assert path.read_bytes() == installed
    assert agent.install_hooks("/opt/bin/memloom", recall=False, env=env).changed
    # The context hooks are recall (the file-read hook too, where the agent has one).
    recall = {"session_start", "prompt_recall", "read"} & set(everything)
    assert agent.installed_hooks(env) == {**everything, **dict.fromkeys(recall, False)}
    assert agent.install_hooks("/usr/bin/memloom", env=env).changed  # a new command replaces
    assert backup.read_bytes() == original  # the backup is one-time
    assert agent.remove_hooks(env).changed
    assert path.read_bytes() == restored
    assert not agent.remove_hooks(env).changed
