"""``memloom migrate``: copy a SQLite store into PostgreSQL, embeddings included.

Memories keep their ids, versions, times and vectors (nothing is re-embedded);
conflicts, provenance, the import ledger and the transcript records come along,
so a later ``memloom import sessions`` against the new store skips what the old
one already had. A copy that stops part-way can be run again: rows already in
the target are left as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memloom.store.base import StoreError
from memloom.store.copy import load_tail
from memloom.store.postgres import PostgresStore
from memloom.store.sqlite import SQLiteStore

BATCH = 500


@dataclass
class MigrationReport:
    memories: int = 0
    skipped: int = 0
    conflicts: int = 0
    provenance: int = 0
    ledger: int = 0
    records: int = 0
    native: int = 0
    target_total: int = 0


def migrate(
    source: SQLiteStore,
    target: PostgresStore,
    progress: Callable[[int, int], Any] | None = None,
) -> MigrationReport:
    """Copy everything from ``source`` into ``target`` (rows owned by ``target.owner``)."""
    report = MigrationReport()
    _check_embedder(source, target)
    everyone = target.scoped(None)  # ids already copied, under whichever owner
    total = source.count()
    done = 0
    for batch in source.iter_rows(BATCH):
        present = {r.id for r in everyone.get_many([r.id for r in batch])}
        fresh = [r for r in batch if r.id not in present]
        if fresh:
            with target.transaction():
                target.insert_many(fresh)
        report.memories += len(fresh)
        report.skipped += len(batch) - len(fresh)
        done += len(batch)
        if progress is not None:
            progress(done, total)
    by_path: dict[str, list[str]] = {}
    for uuid, path in source.all_records():
        by_path.setdefault(path, []).append(uuid)
    load_tail(
        target,
        report,
        conflicts=source.all_conflicts(),
        provenance=source.all_provenance(),
        ledger=source.all_ledger(),
        records=by_path.items(),
        native=source.all_native(),
        known_in=everyone,
    )
    report.target_total = everyone.count()
    return report


def _check_embedder(source: SQLiteStore, target: PostgresStore) -> None:
    """Vectors are copied as they are, so both stores must speak the same embedder."""
    src, dst = source.get_meta("embedder"), target.get_meta("embedder")
    src_dim, dst_dim = source.dimension, target.dimension
    if dst is not None and src is not None and src != dst:
        raise StoreError(
            f"the target store's vectors come from {dst}, the source's from {src}: "
            "re-embed one of them first (memloom reembed)"
        )
    if src_dim is not None and dst_dim is not None and src_dim != dst_dim:
        raise StoreError(
            f"the target store holds {dst_dim}-dimensional vectors, the source {src_dim}"
        )
    if src is not None and dst is None:
        with target.transaction():
            target.set_meta("embedder", src)
