"""Loading the rows that ride along with memories (backups restored, stores migrated).

``memloom import-backup`` and ``memloom migrate`` both end by writing provenance,
conflicts, the import ledger and transcript record ids into a store; this is the
one loader they share. Conflicts already present are skipped, so a load can be
run again; the rest is idempotent by itself (insert-ignore and upserts).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from memloom.store.base import ConflictRow, LedgerRow, ProvenanceRow


@dataclass
class TailCounts:
    """What a load wrote."""

    provenance: int = 0
    conflicts: int = 0
    ledger: int = 0
    records: int = 0


def load_tail(
    store: Any,
    *,
    provenance: Iterable[ProvenanceRow] = (),
    conflicts: Iterable[ConflictRow] = (),
    ledger: Iterable[LedgerRow] = (),
    records: Iterable[tuple[str, Sequence[str]]] = (),
    known_in: Any = None,
) -> TailCounts:
    """Write the rows in one transaction of ``store``. ``records`` are (path, uuids);
    a conflict is skipped when ``known_in`` (default: ``store``) already has its id."""
    counts = TailCounts()
    with store.transaction():
        known = {c.id for c in (store if known_in is None else known_in).all_conflicts()}
        for p in provenance:
            store.add_provenance(p)
            counts.provenance += 1
        for c in conflicts:
            if c.id not in known:
                store.add_conflict(c)
                known.add(c.id)
                counts.conflicts += 1
        for row in ledger:
            store.ledger_put(row)
            counts.ledger += 1
        for path, uuids in records:
            store.records_add(list(uuids), path)
            counts.records += len(uuids)
    return counts
