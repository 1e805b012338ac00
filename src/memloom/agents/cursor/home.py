"""Where Cursor keeps its files: the one definition of its home folder.

``~/.cursor`` (Cursor documents no variable that moves it): agent transcripts in
``projects/<workspace slug>/agent-transcripts/``, user-level hooks in ``hooks.json``.
The slug is the workspace's absolute path without its leading ``/``, each ``/``
replaced by ``-`` (Cursor's own ``continual-learning`` plugin, cursor/plugins@003a986b).
``env`` may carry ``HOME`` (tests and the e2e suite give a HOME of their own).

Standard library only (the hook fast path imports it).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["TRANSCRIPTS_DIR", "cursor_home", "hooks_path", "projects_dir"]

#: ``<home>/projects/<slug>/agent-transcripts/``: one folder of transcripts per workspace.
TRANSCRIPTS_DIR = "agent-transcripts"


def cursor_home(env: Mapping[str, str] | None = None) -> Path:
    """``$HOME/.cursor`` (``HOME`` from ``env`` when given), else ``~/.cursor``."""
    home = (env or {}).get("HOME") if env is not None else None
    base = Path(home).expanduser() if home else Path(os.path.expanduser("~"))
    return base / ".cursor"


def projects_dir(env: Mapping[str, str] | None = None) -> Path:
    """``<home>/projects``: one folder per workspace (hook payload paths must lie in it)."""
    return cursor_home(env) / "projects"


def hooks_path(env: Mapping[str, str] | None = None) -> Path:
    """``<home>/hooks.json``: the user-level hook file memloom merges into."""
    return cursor_home(env) / "hooks.json"
