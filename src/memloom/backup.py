"""Backups as JSON lines: ``memloom export`` writes one, ``memloom import-backup`` reads it.

The format keeps everything a store holds, exactly: every version of every
memory with its raw fields (times as Unix seconds, so nothing is rounded),
optionally its vector (float32, base64), provenance, conflicts, the import
ledger and transcript record ids. The first line says what wrote it; the last
line counts what came before, so a truncated file is refused rather than half
restored. Restoring skips rows already present, so it can be re-run.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import IO, Any

import numpy as np

from memloom import anchors
from memloom.errors import BackupError
from memloom.store.base import (
    ConflictRow,
    LedgerRow,
    MemoryRow,
    NativeRow,
    ProvenanceRow,
    StoreError,
)
from memloom.store.copy import load_tail

FORMAT = "memloom-backup"
VERSION = 1
BATCH = 500

_MEMORY_FIELDS = [f.name for f in fields(MemoryRow) if f.name != "embedding"]


@dataclass
class BackupReport:
    memories: int = 0
    provenance: int = 0
    conflicts: int = 0
    ledger: int = 0
    records: int = 0
    #: what was read of the agents' own memory files (``native_notes`` rows)
    native: int = 0
    skipped: int = 0  # rows already in the store (restore only)
    embedded: int = 0  # vectors computed on restore (a backup without them)


def _encode(vec: np.ndarray | None) -> str | None:
    if vec is None:
        return None
    return base64.b64encode(np.asarray(vec, dtype="<f4").tobytes()).decode("ascii")


def _decode(text: str | None) -> np.ndarray | None:
    if text is None:
        return None
    return np.frombuffer(base64.b64decode(text, validate=True), dtype="<f4").astype(np.float32)


def dump(store: Any, out: IO[str], *, embeddings: bool = False, version: str = "") -> BackupReport:
    """Write the whole store (as the store's principal sees it) to ``out``."""
    report = BackupReport()

    def line(doc: dict[str, Any]) -> None:
        out.write(json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n")

    line(
        {
            "format": FORMAT,
            "version": VERSION,
            "memloom": version,
            "embedder": store.get_meta("embedder"),
            "dimension": store.dimension,
            "embeddings": embeddings,
            "created_at": time.time(),
        }
    )
    memory_ids: list[str] = []
    for batch in store.iter_rows(BATCH):
        for row in batch:
            doc = {"kind": "memory", **{k: getattr(row, k) for k in _MEMORY_FIELDS}}
            if embeddings:
                doc["embedding"] = _encode(row.embedding)
            line(doc)
            memory_ids.append(row.id)
            report.memories += 1
    for p in store.all_provenance():
        line({"kind": "provenance", **asdict(p)})
        report.provenance += 1
    for c in sorted(store.all_conflicts(), key=lambda c: (c.created_at, c.id)):
        line({"kind": "conflict", **asdict(c)})
        report.conflicts += 1
    for entry in sorted(store.all_ledger(), key=lambda e: e.path):
        line({"kind": "ledger", **asdict(entry)})
        report.ledger += 1
    by_path: dict[str, list[str]] = {}
    for uuid, path in store.all_records():
        by_path.setdefault(path, []).append(uuid)
    for path in sorted(by_path):
        line({"kind": "records", "path": path, "uuids": sorted(by_path[path])})
        report.records += len(by_path[path])
    for row in store.all_native():
        line({"kind": "native", **asdict(row)})
        report.native += 1
    line({"kind": "end", **_counts(report)})
    return report


def _counts(report: BackupReport) -> dict[str, int]:
    return {
        "memories": report.memories,
        "provenance": report.provenance,
        "conflicts": report.conflicts,
        "ledger": report.ledger,
        "records": report.records,
        "native": report.native,
    }


def _records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with path.open(encoding="utf-8") as fh:
        for number, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                doc = json.loads(raw)
            except ValueError as exc:
                raise BackupError(f"{path}:{number}: not JSON ({exc})") from exc
            if not isinstance(doc, dict):
                raise BackupError(f"{path}:{number}: expected an object")
            yield number, doc


def read_header(path: Path) -> dict[str, Any]:
    for _, doc in _records(path):
        if doc.get("format") != FORMAT:
            raise BackupError(f"{path} is not a memloom backup (no {FORMAT!r} header)")
        if doc.get("version") != VERSION:
            raise BackupError(
                f"{path} is backup format version {doc.get('version')}; this memloom reads "
                f"version {VERSION}"
            )
        return doc
    raise BackupError(f"{path} is empty")


def _build(kind: type, doc: dict[str, Any], where: str) -> Any:
    names = {f.name for f in fields(kind)}
    try:
        return kind(**{k: v for k, v in doc.items() if k in names})
    except TypeError as exc:
        raise BackupError(f"{where}: {exc}") from exc


def _memory(doc: dict[str, Any], where: str) -> MemoryRow:
    try:
        vec = _decode(doc.get("embedding"))
    except (ValueError, TypeError) as exc:
        raise BackupError(f"{where}: bad embedding ({exc})") from exc
    row = _build(MemoryRow, {**doc, "embedding": vec}, where)
    if not isinstance(row.text, str) or not isinstance(row.id, str):
        raise BackupError(f"{where}: a memory needs a string id and text")
    try:
        row.anchors = anchors.checked(row.anchors)
    except ValueError as exc:
        raise BackupError(f"{where}: {exc}") from exc
    return row


def validate(path: Path) -> dict[str, Any]:
    """Read the whole file once: header, every record well-formed, the end line's
    counts matching. Nothing is written until this passes."""
    header = read_header(path)
    seen = BackupReport()
    end: dict[str, Any] | None = None
    records = _records(path)
    next(records)  # the header, checked above
    for number, doc in records:
        where = f"{path}:{number}"
        kind = doc.get("kind")
        if end is not None:
            raise BackupError(f"{where}: data after the end line")
        if kind == "memory":
            _memory(doc, where)
            seen.memories += 1
        elif kind == "provenance":
            _build(ProvenanceRow, doc, where)
            seen.provenance += 1
        elif kind == "conflict":
            _build(ConflictRow, doc, where)
            seen.conflicts += 1
        elif kind == "ledger":
            _build(LedgerRow, doc, where)
            seen.ledger += 1
        elif kind == "records":
            seen.records += len(doc.get("uuids") or [])
        elif kind == "native":
            _build(NativeRow, doc, where)
            seen.native += 1
        elif kind == "end":
            end = doc
        else:
            raise BackupError(f"{where}: unknown record kind {kind!r}")
    if end is None:
        raise BackupError(f"{path} is truncated: it has no end line")
    # A backup made before the agents' own memories were read has no "native" count.
    want = {k: end.get(k, 0 if k == "native" else None) for k in _counts(seen)}
    if want != _counts(seen):
        raise BackupError(
            f"{path} is incomplete: the end line promises {want}, found {_counts(seen)}"
        )
    return header


def restore(
    store: Any,
    path: Path,
    *,
    embed: Callable[[list[str]], np.ndarray | None] | None = None,
    embedder: str | None = None,
) -> BackupReport:
    """Load a backup into ``store``; rows already there are kept and counted as skipped.

    A backup without vectors gets them from ``embed`` (the store's embedder, named
    ``embedder``); one with vectors must come from the store's own embedder.
    """
    header = validate(path)
    current = store.get_meta("embedder")
    source = header.get("embedder")
    if header.get("embeddings") and source and current and source != current:
        raise BackupError(
            f"the backup's vectors come from {source}, this store's from {current}: restore "
            "into a store of that embedder, or export again without --embeddings"
        )
    if header.get("embeddings") and header.get("dimension"):
        dim = int(header["dimension"])
        stamped = current.rsplit("@", 1)[-1] if current and "@" in current else None
        for theirs in (store.dimension, int(stamped) if stamped and stamped.isdigit() else None):
            if theirs is not None and theirs != dim:
                raise BackupError(
                    f"the backup's vectors have {dim} dimensions, this store's have {theirs}"
                )
    report = BackupReport()
    with store.transaction():
        if header.get("embeddings") and source and current is None:
            store.set_meta("embedder", source)
        elif not header.get("embeddings") and embedder and current is None:
            store.set_meta("embedder", embedder)
    pending: list[MemoryRow] = []

    def flush() -> None:
        missing = [r for r in pending if r.embedding is None]
        if missing and embed is not None and not header.get("embeddings"):
            vectors = embed([r.text for r in missing])
            if vectors is not None:
                for row, vec in zip(missing, vectors, strict=True):
                    row.embedding = np.asarray(vec, dtype=np.float32)
                report.embedded += len(missing)
        present = {r.id for r in store.get_many([r.id for r in pending])}
        with store.transaction():
            for row in pending:
                if row.id in present:
                    report.skipped += 1
                else:
                    store.insert(row)
                    report.memories += 1
        pending.clear()

    tail: list[tuple[str, dict[str, Any]]] = []
    for number, doc in _records(path):
        kind = doc.get("kind")
        if kind == "memory":
            pending.append(_memory(doc, f"{path}:{number}"))
            if len(pending) >= BATCH:
                flush()
        elif kind in ("provenance", "conflict", "ledger", "records", "native"):
            tail.append((kind, doc))
    if pending:
        flush()
    _restore_tail(store, tail, report)
    return report


def _restore_tail(
    store: Any, tail: Iterable[tuple[str, dict[str, Any]]], report: BackupReport
) -> None:
    docs = list(tail)

    def of(kind: str, cls: type) -> Iterator[Any]:
        return (_build(cls, doc, kind) for k, doc in docs if k == kind)

    load_tail(
        store,
        report,
        provenance=of("provenance", ProvenanceRow),
        conflicts=of("conflict", ConflictRow),
        # Which folder the owner named with --path is not taken from a file: a backup
        # (anyone's, edited) must never make /context serve a path (docs/security.md).
        ledger=(replace(row, named_root=None) for row in of("ledger", LedgerRow)),
        records=(
            (str(doc.get("path")), [str(u) for u in doc.get("uuids") or []])
            for k, doc in docs
            if k == "records"
        ),
        native=of("native", NativeRow),
    )


def online_copy(store: Any, dest: Path) -> int:
    """A consistent copy of a live SQLite store (SQLite's backup API: other processes
    may keep writing); returns the memories in the copy."""
    import sqlite3

    from memloom.store.sqlite import create_private_file

    if not hasattr(store, "db"):
        raise StoreError(
            "online copies are for SQLite stores; back up PostgreSQL with pg_dump, "
            "or use memloom export"
        )
    if dest.exists():
        raise StoreError(f"{dest} exists; choose a new file")
    create_private_file(dest)
    target = sqlite3.connect(str(dest))
    try:
        store.db.backup(target)
        count = int(target.execute("SELECT COUNT(*) FROM memories").fetchone()[0])
        ok = target.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        target.close()
    if ok != "ok":
        raise StoreError(f"the copy at {dest} failed its integrity check: {ok}")
    return count
