"""Every memory write: new rows, merges, versions, conflict records, deletions.

The writer is policy-free (the distance bands and the classifier live in
:mod:`memloom.core.beliefs`); it is where rows are built and written, so that a
memory is built one way whatever path wrote it. Callers hold the context's lock
and a store transaction around these calls.

Observers: a function ``fn(memory_id, inserted)`` given to :meth:`Writer.observe`
is called inside the write transaction after each insert (``inserted=True``) and
each merge into an existing memory (``inserted=False``). The importer journals
provenance and its ledger this way, so both commit with the memory or not at all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memloom import anchors
from memloom.core.context import CoreContext
from memloom.core.documents import conflict_info
from memloom.hashing import content_hash, new_id
from memloom.models import ConflictInfo
from memloom.store.base import ConflictRow, MemoryRow, SearchFilter, Store

#: Called inside the write transaction: (memory_id, inserted).
Observer = Callable[[str, bool], None]


@dataclass
class Draft:
    """A statement about to be written, with everything a new row takes from it."""

    text: str
    vec: np.ndarray | None
    type: str
    project: str | None
    sensitivity: int
    tags: list[str] = field(default_factory=list)
    source: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    session_id: str | None = None
    expires_at: float | None = None
    #: When it was said (a transcript's timestamp); None: when it is written.
    asserted_at: float | None = None
    #: The code it is about (:mod:`memloom.anchors`). None: not looked for (no project
    #: folder): a new version keeps what its predecessor's still names.
    anchors: list[dict[str, Any]] | None = None


@dataclass
class Neighbour:
    row: MemoryRow
    similarity: float

    @property
    def distance(self) -> float:
        # Rounded as reported: float32 noise must not move a memory across a band edge.
        return round(max(0.0, 1.0 - self.similarity), 6)


def merge_tags(old: Sequence[str], new: Sequence[str]) -> list[str]:
    out = list(old)
    out.extend(t for t in new if t not in out)
    return out


def merge_metadata(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Keep every key the caller sent; the first value of a key wins."""
    merged = dict(old)
    for key, value in new.items():
        merged.setdefault(key, value)
    return merged


def later_expiry(a: float | None, b: float | None) -> float | None:
    """The later of two expiries; no expiry is the latest of all."""
    if a is None or b is None:
        return None
    return max(a, b)


def expire_if_due(store: Store, now: float) -> None:
    """Expire memories whose TTL has passed, writing only when one has (reads stay reads)."""
    if store.has_due(now):
        with store.transaction():
            store.expire_due(now)


class Writer:
    """Builds and writes memory rows over the context's store, telling its observers."""

    def __init__(self, ctx: CoreContext, observers: Sequence[Observer] = ()) -> None:
        self.ctx = ctx
        self.observers: list[Observer] = list(observers)

    @property
    def store(self) -> Store:
        return self.ctx.store

    def observe(self, fn: Observer) -> None:
        """Call ``fn(memory_id, inserted)`` inside the transaction of every insert and merge."""
        self.observers.append(fn)

    def observing(self, fn: Observer) -> Writer:
        """A writer over the same store whose writes ``fn`` also observes (this one's
        observers stay as they are: one import's journal sees only its own writes)."""
        return Writer(self.ctx, [*self.observers, fn])

    def _notify(self, memory_id: str, inserted: bool) -> None:
        for fn in self.observers:
            fn(memory_id, inserted)

    # -------------------------------------------------------- rows

    @staticmethod
    def new_row(draft: Draft, now: float, root: MemoryRow | None = None) -> MemoryRow:
        """A new active row for ``draft``: version 1, or the next version after ``root``."""
        memory_id = new_id()
        return MemoryRow(
            id=memory_id,
            root_id=root.root_id if root else memory_id,
            version=(root.version + 1) if root else 1,
            status="active",
            type=draft.type,
            text=draft.text,
            original_text=None,
            content_hash=content_hash(draft.text),
            embedding=draft.vec,
            source=draft.source,
            tags=list(draft.tags),
            metadata=dict(draft.metadata),
            project=draft.project,
            sensitivity=draft.sensitivity,
            session_id=draft.session_id,
            created_at=now,
            asserted_at=draft.asserted_at or now,
            last_referenced=now,
            expires_at=draft.expires_at,
            anchors=list(draft.anchors or []),
        )

    def insert(self, row: MemoryRow) -> MemoryRow:
        self.store.insert(row)
        self._notify(row.id, True)
        return row

    def add(self, draft: Draft, now: float) -> MemoryRow:
        """A new belief, as stated."""
        return self.insert(self.new_row(draft, now))

    def new_version(self, target: MemoryRow, draft: Draft, now: float) -> MemoryRow:
        """The next version of ``target``'s belief; ``target`` turns stale and points to it.
        The version keeps the belief's pin and its access count."""
        head = self.store.versions(target.root_id)[0]
        row = self.new_row(draft, now, root=head)
        if draft.anchors is None:
            row.anchors = anchors.carry(target.anchors, draft.text)
        row.pinned = target.pinned
        row.access_count = target.access_count
        self.insert(row)
        self.store.update(target.id, status="stale", superseded_by=row.id)
        return row

    def merge_into(self, existing: MemoryRow, draft: Draft, now: float) -> None:
        """Fold a duplicate into the belief it repeats, losing nothing it carried."""
        meta = merge_metadata(existing.metadata, draft.metadata)
        source = draft.source
        if source and existing.source and source != existing.source:
            sources = list(meta.get("also_sources", []))
            if source not in sources:
                sources.append(source)
            meta["also_sources"] = sources
        self.store.update(
            existing.id,
            tags=merge_tags(existing.tags, draft.tags),
            metadata=meta,
            source=existing.source or source,
            sensitivity=max(existing.sensitivity, draft.sensitivity),
            expires_at=later_expiry(existing.expires_at, draft.expires_at),
            last_referenced=now,
            access_count=existing.access_count + 1,
            **(
                {"anchors": anchors.merge(existing.anchors, draft.anchors)} if draft.anchors else {}
            ),
        )
        self._notify(existing.id, False)

    def active(self, memory_id: str) -> MemoryRow | None:
        """The row as it is now, if still active (LLM calls ran outside the transaction)."""
        row = self.store.get(memory_id)
        return row if row is not None and row.status == "active" else None

    # -------------------------------------------------------- lookups and records

    def neighbours(
        self, vec: np.ndarray | None, project: str | None, now: float, k: int = 5
    ) -> list[Neighbour]:
        """The nearest active memories the caller may change, in the same project."""
        return self.neighbours_many([vec], [project], now, k)[0]

    def neighbours_many(
        self,
        vecs: Sequence[np.ndarray | None],
        projects: Sequence[str | None],
        now: float,
        k: int = 5,
        min_similarity: float = -1.0,
        nearest_similarity: float | None = None,
        reach: Sequence[bool] | None = None,
    ) -> list[list[Neighbour]]:
        """:meth:`neighbours` for a batch: one search per project, one read of the rows.
        Neighbours less similar than ``min_similarity`` are left out, except for a query
        ``reach`` marks (all, without it) that has none so near: its neighbours down to
        ``nearest_similarity`` are kept, nearest first (rows are read for what is kept).
        A write reads only the nearest of those, but a batch needs the next ones too,
        for when a batch-mate has made the nearest a stale version."""
        groups: dict[tuple[str | None, bool], list[tuple[int, np.ndarray]]] = {}
        for i, (vec, project) in enumerate(zip(vecs, projects, strict=True)):
            if vec is not None:
                far = nearest_similarity is not None and (reach is None or reach[i])
                groups.setdefault((project, far), []).append((i, vec))
        hits: dict[int, list[tuple[str, float]]] = {}
        for (project, far), given in groups.items():
            flt = SearchFilter(project=project, project_mode="exact", alive_at=now, own_only=True)
            queries = np.stack([v for _, v in given])
            floor = min_similarity
            if far and nearest_similarity is not None:
                floor = min(floor, nearest_similarity)
            found = self.store.vector_search_many(queries, k, flt, floor)
            for i, near in zip((i for i, _ in given), found, strict=True):
                kept = [h for h in near if h[1] >= min_similarity]
                hits[i] = kept or near
        wanted = list(dict.fromkeys(m for found in hits.values() for m, _ in found))
        rows = {r.id: r for r in self.store.get_many(wanted)} if wanted else {}
        return [
            [Neighbour(rows[m], s) for m, s in hits.get(i, []) if m in rows]
            for i in range(len(vecs))
        ]

    def record_conflict(
        self, new: MemoryRow, existing: MemoryRow, distance: float | None, reason: str, now: float
    ) -> ConflictInfo:
        """A pending conflict between two active memories (both stay active)."""
        conflict = ConflictRow(
            id=new_id(),
            new_id=new.id,
            existing_id=existing.id,
            distance=distance,
            reason=reason,
            status="pending",
            resolution=None,
            created_at=now,
        )
        self.store.add_conflict(conflict)
        return conflict_info(conflict.id, new, existing, distance)

    def flag_conflict(
        self, new: MemoryRow, existing: MemoryRow, distance: float | None, reason: str, now: float
    ) -> ConflictInfo | None:
        """:meth:`record_conflict`, unless a conflict between these two beliefs was already
        resolved as both true (``keep_both``): then nothing, so a settled pair is not
        flagged again by a new version of either or by the same words said again
        (:meth:`Store.kept_both <memloom.store.base.Store.kept_both>`)."""
        if self.store.kept_both(new, existing):
            return None
        return self.record_conflict(new, existing, distance, reason, now)

    def delete_chains(self, memory_ids: Sequence[str]) -> int:
        """Delete memories with every version of their beliefs."""
        roots = {r.root_id for r in self.store.get_many(memory_ids)}
        chain_ids = {v.id for root in roots for v in self.store.versions(root)}
        return self.store.delete(sorted(chain_ids | set(memory_ids)))
