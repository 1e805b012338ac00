"""Loading the rows that ride along with memories (backups restored, stores migrated).

``memloom import-backup`` and ``memloom migrate`` both end by writing provenance,
conflicts, the import ledger, transcript record ids and what was read of the agents'
own memory files (``native_notes``) into a store; this is the
one loader they share. Conflicts already present are skipped, so a load can be
run again; the rest is idempotent by itself (insert-ignore and upserts).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from memloom.store.base import ConflictRow, LedgerRow, NativeRow, ProvenanceRow


class Counts(Protocol):
    """The report a load adds to (a backup's, a migration's)."""

    provenance: int
    conflicts: int
    ledger: int
    records: int
    native: int


def load_tail(
    store: Any,
    report: Counts,
    *,
    provenance: Iterable[ProvenanceRow] = (),
    conflicts: Iterable[ConflictRow] = (),
    ledger: Iterable[LedgerRow] = (),
    records: Iterable[tuple[str, Sequence[str]]] = (),
    native: Iterable[NativeRow] = (),
    known_in: Any = None,
) -> None:
    """Write the rows in one transaction of ``store``, counting them in ``report``.
    ``records`` are (path, uuids); a conflict is skipped when ``known_in`` (default:
    ``store``) already has its id."""
    with store.transaction():
        known = {c.id for c in (store if known_in is None else known_in).all_conflicts()}
        for p in provenance:
            store.add_provenance(p)
            report.provenance += 1
        for c in conflicts:
            if c.id not in known:
                store.add_conflict(c)
                known.add(c.id)
                report.conflicts += 1
        for row in ledger:
            store.ledger_put(row)
            report.ledger += 1
        for path, uuids in records:
            store.records_add(list(uuids), path)
            report.records += len(uuids)
        rows = list(native)
        store.native_put(rows)
        report.native += len(rows)
