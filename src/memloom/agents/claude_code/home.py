"""Where Claude Code keeps its files: the one definition of its home folder.

Standard library only (the hook fast path imports it).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["claude_root", "projects_dir", "settings_path"]


def claude_root(env: Mapping[str, str] | None = None) -> Path:
    """``$CLAUDE_CONFIG_DIR`` if set and non-empty, else ``~/.claude``."""
    configured = (os.environ if env is None else env).get("CLAUDE_CONFIG_DIR")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".claude"


def projects_dir(env: Mapping[str, str] | None = None) -> Path:
    """``<home>/projects``: the transcripts, one folder per project."""
    return claude_root(env) / "projects"


def settings_path(env: Mapping[str, str] | None = None) -> Path:
    """``<home>/settings.json``: where memloom's hooks go."""
    return claude_root(env) / "settings.json"
