"""The agents' own memory files, followed: one file's notes against what memloom
last read of it, written in one transaction.

:mod:`memloom.sessions.native` reads a file (an agent's ``MEMORY.md``, a topic file, a
note), redacts and embeds its notes, and hands them here as a :class:`FileNotes`. Each
note is matched with the note of the same file memloom read before (same text; the
one memory of a one-memory file; otherwise the list's order, when the texts are
alike), then:

* a new note goes through the distance bands, as any statement does (an exact or near
  duplicate merges, a changed value is the next version, a near one is a conflict);
* an edited note is the next version of its memory -- unless that memory changed in
  memloom since (a newer version, written by the user or anyone else): then the
  note's text is stored beside it and flagged as a conflict, never written over it;
* a note gone (or its file) expires the memory it made, unless another agent's note
  holds the same memory or the memory changed in memloom since; a memory it only
  merged into (one the user saved, or a session gave) stays, losing this agent's tag.

Each memory carries the tag ``native:<agent>`` (what that agent's prompt hooks leave
out: it shows its own memory already) and a provenance row of the file and lines. The
``native_notes`` table keeps, per note, the memory it wrote and its text's hash, and
per file its size and mtime: re-reading unchanged files writes nothing.
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from memloom.agents.markup import native_tag
from memloom.claims import compare
from memloom.core import beliefs
from memloom.core.context import CoreContext
from memloom.core.writes import Draft, Writer
from memloom.hashing import content_hash
from memloom.project import project_key
from memloom.store.base import MemoryRow, NativeRow, ProvenanceRow

__all__ = ["FileNotes", "FileOutcome", "Native", "NoteIn"]

#: How alike two notes of a list must be to count as one note edited (difflib's ratio),
#: when their claims are not the same claim or an update of it.
ALIKE = 0.6
EXCERPT_CHARS = 500
CHANGED_IN_MEMLOOM = "the agent's memory file changed after this memory was changed in memloom"

Action = Literal["added", "merged", "versioned", "conflict", "expired", "kept", "unchanged"]


@dataclass
class NoteIn:
    """One note as it will be written: redacted, typed, embedded."""

    text: str
    kind: str
    start_line: int
    end_line: int
    sensitivity: int = 0
    vec: np.ndarray | None = None
    #: The note's name in its file ("": a list's item, named here).
    key: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class FileNotes:
    """A memory file as read now: its notes, or ``notes=None`` when it is gone."""

    path: str
    agent: str
    folder: str
    project: str | None
    notes: list[NoteIn] | None
    size: int | None = None
    mtime: float | None = None


@dataclass
class FileOutcome:
    """What following one file did, counted by :data:`Action`, and the memories written."""

    counts: dict[str, int] = field(default_factory=dict)
    memory_ids: list[str] = field(default_factory=list)
    conflicts: int = 0

    def add(self, action: Action, memory_id: str | None = None) -> None:
        self.counts[action] = self.counts.get(action, 0) + 1
        if memory_id:
            self.memory_ids.append(memory_id)


class Native:
    """Follows the agents' memory files (see the module's docstring)."""

    def __init__(self, ctx: CoreContext, writer: Writer) -> None:
        self.ctx = ctx
        self.writer = writer

    def rows(self, folders: Sequence[str]) -> list[NativeRow]:
        """What memloom last read of these folders: file rows and note rows."""
        return self.ctx.store.native_rows(folders)

    def apply(self, file: FileNotes) -> FileOutcome:
        """Bring the memories of ``file`` in line with its notes, in one transaction."""
        store = self.ctx.store
        out = FileOutcome()
        with self.ctx.lock, store.transaction():
            now = time.time()
            before = store.native_rows([file.folder], file.path)
            old = [r for r in before if r.key]
            if file.notes is None:
                for row in old:
                    self._retire(row, now, out)
                store.native_delete(file.path)
                return out
            kept: list[NativeRow] = []
            pairs, added, removed = self._match(old, file.notes)
            for row, note in pairs:
                if row.text_hash == content_hash(note.text):
                    out.add("unchanged")
                    kept.append(self._row(file, note, row.key, row.memory_id, row.owned, now))
                else:
                    kept.append(self._edit(file, row, note, now, out))
            keys = {r.key for r in kept}
            for note in added:
                key = note.key or _fresh_key(note.text, keys)
                keys.add(key)
                kept.append(self._row(file, note, key, *self._add(file, note, now, out), now))
            for row in removed:
                self._retire(row, now, out)
            store.native_delete(file.path, [r.key for r in removed])
            marker = NativeRow(
                file.path, "", file.agent, file.folder, file.project, None, None,
                None, None, file.size, file.mtime, False, now,
            )  # fmt: skip
            store.native_put([marker, *kept])
        return out

    # ------------------------------------------------------------ matching

    def _match(
        self, old: list[NativeRow], new: list[NoteIn]
    ) -> tuple[list[tuple[NativeRow, NoteIn]], list[NoteIn], list[NativeRow]]:
        """Pairs (the note memloom read before, the note now), notes new, notes gone."""
        pairs: list[tuple[NativeRow, NoteIn]] = []
        by_hash: dict[str | None, list[NativeRow]] = {}
        for row in old:
            by_hash.setdefault(row.text_hash, []).append(row)
        rest_new: list[NoteIn] = []
        for note in new:
            same = by_hash.get(content_hash(note.text))
            if same:
                pairs.append((same.pop(0), note))
            else:
                rest_new.append(note)
        paired = {id(r) for r, _ in pairs}
        rest_old = [r for r in old if id(r) not in paired]
        if not rest_old or not rest_new:
            return pairs, rest_new, rest_old
        # A file of one memory (a topic file): its note, whatever it says now.
        named = {r.key: r for r in rest_old if not r.key.startswith("~")}
        unpaired: list[NoteIn] = []
        for note in rest_new:
            row = named.pop(note.key, None) if note.key else None
            if row is not None:
                pairs.append((row, note))
                paired.add(id(row))
            else:
                unpaired.append(note)
        rest_old = [r for r in rest_old if id(r) not in paired]
        if not rest_old or not unpaired:
            return pairs, unpaired, rest_old
        # A list: the items edited in place, by order, when alike.
        texts = self._texts([r.memory_id for r in rest_old])
        old_texts = [texts.get(r.memory_id or "", "") for r in rest_old]
        matcher = difflib.SequenceMatcher(
            None, [t.casefold() for t in old_texts], [n.text.casefold() for n in unpaired]
        )
        used_old: set[int] = set()
        used_new: set[int] = set()
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag != "replace":
                continue
            for i, j in zip(range(i1, i2), range(j1, j2), strict=False):
                if _alike(old_texts[i], unpaired[j].text):
                    pairs.append((rest_old[i], unpaired[j]))
                    used_old.add(i)
                    used_new.add(j)
        return (
            pairs,
            [n for j, n in enumerate(unpaired) if j not in used_new],
            [r for i, r in enumerate(rest_old) if i not in used_old],
        )

    def _texts(self, ids: Sequence[str | None]) -> dict[str, str]:
        wanted = [i for i in ids if i]
        return {r.id: beliefs.stated(r) for r in self.ctx.store.get_many(wanted)}

    # ------------------------------------------------------------ writing

    def _draft(self, file: FileNotes, note: NoteIn) -> Draft:
        return Draft(
            text=note.text,
            vec=note.vec,
            type=note.kind,
            # The folder's repository (worktrees, clones: one project); the provenance
            # and native rows keep the folder itself.
            project=project_key(file.project),
            sensitivity=note.sensitivity,
            tags=[native_tag(file.agent)],
            source=file.agent,
            metadata={"native": {"agent": file.agent, "path": file.path, **note.metadata}},
        )

    def _add(self, file: FileNotes, note: NoteIn, now: float, out: FileOutcome) -> tuple[str, bool]:
        """The note through the distance bands: the memory it is now, and whether the
        note made that memory (a merge, or a version of another's, is not its own)."""
        outcome, memory_id, conflicts = beliefs.write_banded(
            self.writer, self._draft(file, note), now, versions_beyond_duplicates=True
        )
        out.conflicts += len(conflicts)
        action: Action = "added"
        if conflicts:
            action = "conflict"
        elif outcome in ("merged", "deduplicated"):
            action = "merged"
        elif outcome == "versioned":
            action = "versioned"
        out.add(action, memory_id)
        self._provenance(file, note, memory_id, now)
        return memory_id, outcome == "stored"

    def _head(self, row: NativeRow) -> MemoryRow | None:
        """The newest version of the memory ``row``'s note wrote (None: forgotten)."""
        store = self.ctx.store
        current = store.get(row.memory_id) if row.memory_id else None
        return store.versions(current.root_id)[0] if current is not None else None

    def _edit(
        self, file: FileNotes, row: NativeRow, note: NoteIn, now: float, out: FileOutcome
    ) -> NativeRow:
        head = self._head(row)
        if head is None or head.status != "active":
            # Forgotten, or retired in memloom: the edited note is a statement anew.
            return self._row(file, note, row.key, *self._add(file, note, now, out), now)
        draft = self._draft(file, note)
        if head.id == row.memory_id:
            new = self.writer.new_version(head, beliefs.version_draft(head, draft), now)
            out.add("versioned", new.id)
        else:
            new = self.writer.add(draft, now)
            self.writer.record_conflict(new, head, None, CHANGED_IN_MEMLOOM, now)
            out.conflicts += 1
            out.add("conflict", new.id)
        self._provenance(file, note, new.id, now)
        # A version of its own memory stays its own; beside a changed one, it made one.
        return self._row(file, note, row.key, new.id, row.owned or head.id != row.memory_id, now)

    def _retire(self, row: NativeRow, now: float, out: FileOutcome) -> None:
        """A note gone: the memory it made expires, unless another note holds it or it
        changed in memloom since; one it merged into loses only this agent's tag."""
        store = self.ctx.store
        head = self._head(row)
        if head is None:
            return
        if head.id != row.memory_id or head.status != "active":
            out.add("kept")
            return
        others = [
            r
            for r in store.native_for_memories([head.id])
            if (r.path, r.key) != (row.path, row.key)
        ]
        if row.owned and not others:
            store.expire_ids([head.id], now)
            out.add("expired", head.id)
            return
        if not any(r.agent == row.agent for r in others):
            tag = native_tag(row.agent)
            store.update(head.id, tags=[t for t in head.tags if t != tag])
        out.add("kept")

    def _provenance(self, file: FileNotes, note: NoteIn, memory_id: str, now: float) -> None:
        excerpt = (
            note.text if len(note.text) <= EXCERPT_CHARS else note.text[: EXCERPT_CHARS - 1] + "…"
        )
        self.ctx.store.add_provenance(
            ProvenanceRow(
                memory_id=memory_id,
                session_id=None,
                path=file.path,
                project=file.project,
                start_line=note.start_line,
                end_line=note.end_line,
                excerpt=excerpt,
                created_at=now,
                agent=file.agent,
            )
        )

    @staticmethod
    def _row(
        file: FileNotes,
        note: NoteIn,
        key: str,
        memory_id: str | None,
        owned: bool,
        now: float,
    ) -> NativeRow:
        return NativeRow(
            path=file.path,
            key=key,
            agent=file.agent,
            folder=file.folder,
            project=file.project,
            memory_id=memory_id,
            text_hash=content_hash(note.text),
            start_line=note.start_line,
            end_line=note.end_line,
            size=None,
            mtime=None,
            owned=owned,
            updated_at=now,
        )


def _alike(old: str, new: str) -> bool:
    """Whether ``new`` is ``old`` edited rather than another note in its place."""
    if not old:
        return False
    if compare(old, new) != "different":
        return True
    return difflib.SequenceMatcher(None, old.casefold(), new.casefold()).ratio() >= ALIKE


def _fresh_key(text: str, taken: set[str]) -> str:
    """A list item's name: ``~`` and its first text's hash (unique in the file)."""
    base = "~" + content_hash(text)[:12]
    key, n = base, 2
    while key in taken:
        key, n = f"{base}-{n}", n + 1
    return key
