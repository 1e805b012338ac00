"""Qwen Code's managed auto memory: a user folder and one folder per project.

``<base>/memories/`` (the user's: Qwen Code shows it in every project) and
``<base>/projects/<project key>/memory/`` (the project's; the base is
``QWEN_CODE_MEMORY_BASE_DIR``, else ``QWEN_RUNTIME_DIR``, else ``~/.qwen``; the key
is the git root with every character but letters and digits made ``-``, as Claude
Code's). Each has a
``MEMORY.md`` index of ``- [Title](path.md) — hook`` lines; each memory is a file with
frontmatter ``name``, ``description`` and a top-level ``type``, possibly in a folder
named after its type (``feedback/pnpm.md``). The model and a background extraction
sub-agent write them. (``../shared/reference/agents-native-memory.md``.)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from memloom.agents import native as shared
from memloom.agents.native import NativeFolder, NativeNote
from memloom.agents.qwen.discover import session_project
from memloom.agents.qwen.home import runtime_dir

__all__ = ["folders", "read"]

NAME = "qwen"
INDEX = "MEMORY.md"
_SESSIONS_READ = 5


def memory_base(env: Mapping[str, str] | None = None) -> Path:
    """Where Qwen Code keeps its memory (0.24.4, ``getMemoryBaseDir``):
    ``QWEN_CODE_MEMORY_BASE_DIR``, else its runtime folder (``QWEN_RUNTIME_DIR``, else
    its home)."""
    configured = (os.environ if env is None else env).get("QWEN_CODE_MEMORY_BASE_DIR")
    return Path(configured).expanduser().absolute() if configured else runtime_dir(env)


def folders(env: Mapping[str, str] | None = None) -> list[NativeFolder]:
    """The user folder, then every project folder, with the project each belongs to."""
    home = memory_base(env)
    out = [NativeFolder(NAME, home / "memories", None, scope="user", why="user memory")]
    runtime = runtime_dir(env) / "projects"
    for key_dir in shared.subfolders(home / "projects"):
        memory = key_dir / "memory"
        if not memory.is_dir():
            continue
        sessions = shared.recent_files(runtime / key_dir.name / "chats", "*.jsonl", _SESSIONS_READ)
        cwds = map(session_project, sessions)  # read lazily: the first that fits ends it
        project, how = shared.project_for_key(key_dir.name, cwds)
        skip = "project_unknown" if project is None else None
        out.append(NativeFolder(NAME, memory, project, skip=skip, why=how))
    return [f for f in out if f.path.is_dir()]


def read(folder: NativeFolder, path: Path, text: str) -> list[NativeNote]:
    """The index's own notes, or a memory file's one note."""
    if path.name == INDEX and path.parent == folder.path:
        return shared.read_index(text)
    return shared.read_topic(text, path)
