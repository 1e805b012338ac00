"""Codex's memories (feature ``memories``, off by default): ``<home>/memories_v2/``.

One folder for every project, a git repository Codex keeps. Read here, read-only:
``memory_summary.md`` (what Codex shows the model: ``## User Profile``, ``## User
preferences``, ``## General Tips``, and ``## What's in Memory``, an index that is not
read) and the ad-hoc notes the model saves with ``add_ad_hoc_note``
(``extensions/ad_hoc/notes/<YYYY-MM-DDTHH-MM-SS>-<slug>.md``, the note's text alone).
Not read: Codex's SQLite state, ``MEMORY.md`` and ``rollout_summaries/`` (made from
the sessions memloom reads itself), its instructions and workspace files.
(``../shared/reference/agents-native-memory.md``.)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from memloom.agents.base import Discovery
from memloom.agents.codex.home import codex_home
from memloom.agents.native import NativeFolder, NativeNote, list_files, note_items, read_topic

__all__ = ["files", "folders", "read"]

NAME = "codex"
SUMMARY = "memory_summary.md"
NOTES = ("extensions", "ad_hoc", "notes")
#: Sections of the summary that are not memories (its index of the rest).
NOT_READ = ("what's in memory", "what is in memory")


def folders(env: Mapping[str, str] | None = None) -> list[NativeFolder]:
    folder = codex_home(env) / "memories_v2"
    if not folder.is_dir():
        return []
    return [NativeFolder(NAME, folder, None, scope="user", why="memories_v2")]


def files(folder: NativeFolder) -> tuple[list[tuple[Path, os.stat_result]], Discovery]:
    """The summary and the ad-hoc notes, nothing else of the folder."""
    found, out = list_files(folder.path, pattern=SUMMARY, recursive=False)
    notes, more = list_files(folder.path.joinpath(*NOTES))
    for reason, count in more.skipped.items():
        out.skipped[reason] = out.skipped.get(reason, 0) + count
    return found + notes, out


def read(folder: NativeFolder, path: Path, text: str) -> list[NativeNote]:
    if path.name == SUMMARY and path.parent == folder.path:
        lines = text.splitlines()
        if lines and lines[0].strip() == "v1":  # the format's version line
            text = "\n" + "\n".join(lines[1:])
        return note_items(text, skip_sections=NOT_READ)
    return read_topic(text, path)
