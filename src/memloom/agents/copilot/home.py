"""Where GitHub Copilot CLI keeps its files: the one definition of its home folder.

``$COPILOT_HOME`` if set and non-empty, else ``~/.copilot``. The variable is in
GitHub's hooks reference ("If ``COPILOT_HOME`` is set, [the user-level hooks
directory] is ``$COPILOT_HOME/hooks/``") and its MCP docs; that it also moves
``session-state/`` is UNVERIFIED (assumed: one home for everything).

Standard library only (the hook fast path imports it).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = [
    "HOOKS_FILE",
    "LEGACY_DIR",
    "SESSION_DIR",
    "copilot_home",
    "hooks_path",
    "legacy_dir",
    "session_state_dir",
]

#: ``<home>/session-state/<session id>/events.jsonl`` (Copilot CLI ≥ 0.0.3xx, 2025-26).
SESSION_DIR = "session-state"
#: ``<home>/history-session-state/*.json``: the 2025 one-JSON-per-session files.
#: The folder name is UNVERIFIED (reference §5); discovery lists ``*.json`` there.
LEGACY_DIR = "history-session-state"
#: memloom's hooks go into ``<home>/hooks/hooks.json``. Copilot loads every ``*.json``
#: in ``<home>/hooks/`` (docs.github.com hooks reference, "User-level hook files");
#: the file name ``hooks.json`` is memloom's choice (others use it too).
HOOKS_FILE = "hooks.json"


def copilot_home(env: Mapping[str, str] | None = None) -> Path:
    """``$COPILOT_HOME`` if set and non-empty (UNVERIFIED for sessions), else ``~/.copilot``."""
    configured = (os.environ if env is None else env).get("COPILOT_HOME")
    if configured and configured.strip():
        return Path(configured.strip()).expanduser()
    return Path.home() / ".copilot"


def session_state_dir(env: Mapping[str, str] | None = None) -> Path:
    """``<home>/session-state``: one folder per session, holding ``events.jsonl``."""
    return copilot_home(env) / SESSION_DIR


def legacy_dir(env: Mapping[str, str] | None = None) -> Path:
    """``<home>/history-session-state`` (UNVERIFIED name): the legacy one-JSON sessions."""
    return copilot_home(env) / LEGACY_DIR


def hooks_path(env: Mapping[str, str] | None = None) -> Path:
    """``<home>/hooks/hooks.json``: the user-level hook file memloom merges into."""
    return copilot_home(env) / "hooks" / HOOKS_FILE
