"""Gemini CLI's project memory: ``<home>/tmp/<project short name>/memory/``.

The model keeps project context by editing Markdown with its own file tools:
``MEMORY.md`` (concise entries; a legacy ``GEMINI.md`` in that folder when it is
missing) and sibling ``*.md`` notes, no frontmatter. The short name is the basename
of the working directory a session started in, registered in ``<home>/projects.json``
(root -> short name) with a ``.project_root`` marker in the folder: that root, not
the bare name, is the memory's project. Not read: the user's own ``GEMINI.md``
instruction files, and ``.inbox/`` (proposed patches nobody accepted yet).
(``../shared/reference/agents-native-memory.md``.)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from memloom.agents.gemini.home import projects_registry, tmp_dir
from memloom.agents.gemini.project import marker_root, registry_roots
from memloom.agents.native import NativeFolder, NativeNote, note_items, subfolders

__all__ = ["folders", "read"]

NAME = "gemini-cli"
INDEX = "MEMORY.md"
LEGACY = "GEMINI.md"


def folders(env: Mapping[str, str] | None = None) -> list[NativeFolder]:
    """Every project's memory folder, tied to the project root Gemini registered."""
    slugs = registry_roots(projects_registry(env))
    out = []
    for short in subfolders(tmp_dir(env)):
        memory = short / "memory"
        if not memory.is_dir():
            continue
        root, how = slugs.get(short.name), "projects.json"
        if root is None:
            root, how = marker_root(short), ".project_root"
        if root is None or not os.path.isabs(root):
            out.append(NativeFolder(NAME, memory, None, skip="project_unknown"))
            continue
        out.append(NativeFolder(NAME, memory, os.path.normpath(root), why=how))
    return out


def read(folder: NativeFolder, path: Path, text: str) -> list[NativeNote]:
    """Every entry of the index or of a note; a legacy ``GEMINI.md`` only where there
    is no ``MEMORY.md`` (Gemini loads it only then)."""
    if path.name == LEGACY and path.parent == folder.path and (folder.path / INDEX).exists():
        return []
    return note_items(text)
