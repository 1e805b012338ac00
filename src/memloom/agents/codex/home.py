"""Where Codex CLI keeps its files: the one definition of its home folder.

Standard library only (the hook fast path imports it).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = [
    "ARCHIVED_DIR",
    "SESSIONS_DIR",
    "archived_dir",
    "codex_home",
    "config_path",
    "hooks_path",
    "sessions_dir",
]

SESSIONS_DIR = "sessions"
ARCHIVED_DIR = "archived_sessions"


def codex_home(env: Mapping[str, str] | None = None) -> Path:
    """``$CODEX_HOME`` if set and non-empty, else ``~/.codex`` (reference §1.1: no XDG)."""
    configured = (os.environ if env is None else env).get("CODEX_HOME")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".codex"


def sessions_dir(env: Mapping[str, str] | None = None) -> Path:
    """``<home>/sessions``: live rollouts, filed by local date ``YYYY/MM/DD``."""
    return codex_home(env) / SESSIONS_DIR


def archived_dir(env: Mapping[str, str] | None = None) -> Path:
    """``<home>/archived_sessions``: rollouts Codex moved out of ``sessions/`` (flat)."""
    return codex_home(env) / ARCHIVED_DIR


def hooks_path(env: Mapping[str, str] | None = None) -> Path:
    """``<home>/hooks.json``: the user layer's hooks file, where memloom's hooks go."""
    return codex_home(env) / "hooks.json"


def config_path(env: Mapping[str, str] | None = None) -> Path:
    """``<home>/config.toml``: where the hooks feature flag lives."""
    return codex_home(env) / "config.toml"
