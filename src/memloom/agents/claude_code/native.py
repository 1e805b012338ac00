"""Claude Code's auto memory: ``<config dir>/projects/<project key>/memory/``.

The model keeps one memory per file, with YAML frontmatter (``name``, ``description``
and its type, which the CLI files under ``metadata.type``) and a body with **Why:**
and **How to apply:** lines; ``MEMORY.md`` is the index Claude Code shows every
session, one ``- [Title](file.md) — hook`` line per file. The project key is the git
root with every character but letters and digits made ``-``. ``autoMemoryDirectory``
(user or local settings, not the checked-in project settings) and
``CLAUDE_COWORK_MEMORY_PATH_OVERRIDE`` move the folder; one set in the user settings
serves every project, as Claude Code shows it in every project.
(``../shared/reference/agents-native-memory.md``.)
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from memloom.agents.claude_code.discover import session_project
from memloom.agents.claude_code.home import projects_dir, settings_path
from memloom.agents.native import (
    NativeFolder,
    NativeNote,
    project_for_key,
    read_index,
    read_topic,
    recent_files,
    subfolders,
)

NAME = "claude-code"
INDEX = "MEMORY.md"
#: Sessions read for a project folder's working directory (newest first).
_SESSIONS_READ = 5


def folders(env: Mapping[str, str] | None = None) -> list[NativeFolder]:
    """Every auto-memory folder on this machine, with the project each belongs to."""
    environ = os.environ if env is None else env
    out: list[NativeFolder] = []
    override = environ.get("CLAUDE_COWORK_MEMORY_PATH_OVERRIDE")
    if override:
        out.append(_global(Path(override).expanduser(), "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE"))
    moved = _setting(settings_path(env))
    if moved:
        out.append(_global(moved, "autoMemoryDirectory (user settings)"))
    for key_dir in subfolders(projects_dir(env)):
        sessions = recent_files(key_dir, "*.jsonl", _SESSIONS_READ)
        cwds = map(session_project, sessions)  # read lazily: the first that fits ends it
        project, how = project_for_key(key_dir.name, cwds)
        if project is not None:
            local = _setting(Path(project) / ".claude" / "settings.local.json")
            if local is not None:
                out.append(NativeFolder(NAME, local, project, why="autoMemoryDirectory (local)"))
        memory = key_dir / "memory"
        if memory.is_dir():
            skip = "project_unknown" if project is None else None
            out.append(NativeFolder(NAME, memory, project, skip=skip, why=how))
    return _unique(out)


def read(folder: NativeFolder, path: Path, text: str) -> list[NativeNote]:
    """One file's notes: the topic file's one memory; the index's lines that are not
    pointers to a topic file (a note written straight into ``MEMORY.md``)."""
    if path.name == INDEX and path.parent == folder.path:
        return read_index(text)
    return read_topic(text, path)


def _global(path: Path, why: str) -> NativeFolder:
    return NativeFolder(NAME, path, None, scope="user", why=why)


def _setting(settings: Path) -> Path | None:
    """``autoMemoryDirectory`` of a settings file (``~/`` expanded), if set."""
    try:
        with open(settings, "rb") as fh:
            data = json.loads(fh.read(1 << 20))
    except (OSError, ValueError):
        return None
    value = data.get("autoMemoryDirectory") if isinstance(data, dict) else None
    if not isinstance(value, str) or not value.strip():
        return None
    moved = Path(value.strip()).expanduser()
    return moved if moved.is_absolute() else None


def _unique(found: list[NativeFolder]) -> list[NativeFolder]:
    """One entry per folder (the first: an override before the default)."""
    seen: set[str] = set()
    out = []
    for f in found:
        real = os.path.realpath(f.path)
        if real not in seen:
            seen.add(real)
            out.append(f)
    return out


__all__ = ["folders", "read"]
