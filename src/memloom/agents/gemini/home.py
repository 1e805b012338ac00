"""Where Gemini CLI keeps its files: the one definition of its home folder.

Standard library only (the hook fast path imports it).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["gemini_home", "projects_registry", "settings_path", "tmp_dir"]


def gemini_home(env: Mapping[str, str] | None = None) -> Path:
    """``$GEMINI_CLI_HOME/.gemini`` if set and non-empty, else ``~/.gemini``.

    ``GEMINI_CLI_HOME`` replaces the user's home folder, not the ``.gemini``
    folder itself (reference §2.1, ``homedir()``).
    """
    configured = (os.environ if env is None else env).get("GEMINI_CLI_HOME")
    base = Path(configured).expanduser() if configured else Path.home()
    return base / ".gemini"


def tmp_dir(env: Mapping[str, str] | None = None) -> Path:
    """``<home>/tmp``: one folder per project, sessions under ``<id>/chats/``."""
    return gemini_home(env) / "tmp"


def settings_path(env: Mapping[str, str] | None = None) -> Path:
    """``<home>/settings.json``: the user settings, where memloom's hooks go."""
    return gemini_home(env) / "settings.json"


def projects_registry(env: Mapping[str, str] | None = None) -> Path:
    """``<home>/projects.json``: project root -> tmp folder slug (>= v0.29)."""
    return gemini_home(env) / "projects.json"
