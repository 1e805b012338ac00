"""``memloom connect`` / ``disconnect``: memloom's hooks in an agent's settings, and out.

The agent's adapter does the settings merge (Claude Code:
:mod:`memloom.agents.claude_code.hooks` -- keeps every other key and hook,
one-time backup, idempotent, refuses a file it cannot parse, atomic replace).
This module knows only how the hooks should start memloom.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

from memloom.agents import DEFAULT_AGENT, get_agent
from memloom.agents.base import HooksChange

__all__ = [
    "ConnectResult",
    "claude_root",
    "connect",
    "disconnect",
    "installed_hooks",
    "memloom_command",
    "settings_path",
]

#: What connect and disconnect return (the adapter's :class:`HooksChange`).
ConnectResult = HooksChange


def claude_root(env: Any = None) -> Path:
    """Claude Code's home (``$CLAUDE_CONFIG_DIR`` else ``~/.claude``)."""
    return get_agent("claude-code").home(env)


def settings_path(env: Any = None, *, agent: str = DEFAULT_AGENT) -> Path:
    return get_agent(agent).settings_path(env)


def memloom_command(home: Path | None = None) -> str:
    """How an agent should start memloom: this install's executable, by absolute path."""
    exe = shutil.which("memloom")
    argv0 = Path(sys.argv[0])
    if argv0.name == "memloom" and argv0.exists():
        exe = str(argv0.resolve())
    parts = [exe] if exe else [sys.executable, "-m", "memloom._entry"]
    if home is not None:
        parts += ["--home", str(home)]
    return " ".join(shlex.quote(p) for p in parts)


def connect(
    command: str, *, recall: bool = True, env: Any = None, agent: str = DEFAULT_AGENT
) -> ConnectResult:
    compile_package()
    return get_agent(agent).install_hooks(command, recall=recall, env=env)


def compile_package() -> bool:
    """Write memloom's bytecode now, so that every hook process loads it instead of
    compiling memloom's modules again (~20 ms a hook). pip writes it at install time,
    but an editable install, or an environment with ``PYTHONDONTWRITEBYTECODE`` set (as
    many container images have), never does. False where it could not be written (a
    read-only install): the hooks then still work, only slower."""
    import compileall

    import memloom

    return bool(compileall.compile_dir(Path(memloom.__file__).parent, quiet=2, workers=1))


def disconnect(env: Any = None, *, agent: str = DEFAULT_AGENT) -> ConnectResult:
    return get_agent(agent).remove_hooks(env)


def installed_hooks(env: Any = None, *, agent: str = DEFAULT_AGENT) -> dict[str, bool]:
    """Which of memloom's hooks the agent's settings hold (False when unreadable)."""
    return get_agent(agent).installed_hooks(env)
