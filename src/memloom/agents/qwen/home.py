"""Where Qwen Code keeps its files: the one definition of its home and runtime folders.

Qwen Code 0.24.4 (its bundled ``docs/configuration/settings.md``): ``QWEN_HOME``
replaces ``~/.qwen`` (settings, credentials, memory); ``QWEN_RUNTIME_DIR`` replaces
the folder of runtime output (conversations, logs), which defaults to the home.
Either may be relative (to the working directory) or start with ``~``; an empty
value is unset. Sessions are ``<runtime>/projects/<cwd slug>/chats/<id>.jsonl``.

Standard library only (the hook fast path imports it).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["projects_dir", "qwen_home", "runtime_dir", "settings_path"]


def _folder(env: Mapping[str, str] | None, name: str) -> Path | None:
    value = (os.environ if env is None else env).get(name)
    return Path(value).expanduser().absolute() if value else None


def qwen_home(env: Mapping[str, str] | None = None) -> Path:
    """``$QWEN_HOME`` if set and non-empty, else ``~/.qwen``."""
    return _folder(env, "QWEN_HOME") or Path.home() / ".qwen"


def runtime_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$QWEN_RUNTIME_DIR`` if set and non-empty, else the home: where sessions go."""
    return _folder(env, "QWEN_RUNTIME_DIR") or qwen_home(env)


def projects_dir(env: Mapping[str, str] | None = None) -> Path:
    """``<runtime>/projects``: one folder per working directory, sessions in its ``chats/``."""
    return runtime_dir(env) / "projects"


def settings_path(env: Mapping[str, str] | None = None) -> Path:
    """``<home>/settings.json``: the user settings, where memloom's hooks go."""
    return qwen_home(env) / "settings.json"
