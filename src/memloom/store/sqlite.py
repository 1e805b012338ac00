"""The embedded store: one SQLite file (WAL), FTS5 for keywords, vectors in memory.

Every write bumps a store-wide sequence number and stamps the rows it touches,
so another process sharing the file (the daemon, an MCP server, the CLI) can
bring its in-memory vector index up to date by reading only what changed.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from memloom.store.base import (
    UPDATABLE,
    ConflictRow,
    DimensionError,
    LedgerRow,
    ListPage,
    MemoryRow,
    ProvenanceRow,
    SearchFilter,
    StoreError,
)
from memloom.store.sqlite_migrations import MIGRATIONS
from memloom.store.vectors import RowMeta, VectorIndex

_COLUMNS = (
    "rowid, id, root_id, version, status, type, text, original_text, content_hash, "
    "embedding, source, tags, metadata, project, sensitivity, session_id, created_at, "
    "asserted_at, last_referenced, access_count, expires_at, expired_at, superseded_by, "
    "decay_level, pinned"
)
# Rows as the engine reads them: vectors stay in the index, not in every fetch.
_ROW_COLUMNS = _COLUMNS.replace("embedding,", "NULL AS embedding,")
log = logging.getLogger(__name__)
_CHUNK = 500  # SQLite's default limit on bound parameters is 32766; stay well under it.


def _chunks(items: Sequence[Any], size: int = _CHUNK) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _statements(script: str) -> Iterator[str]:
    """A migration script's statements, one at a time (triggers kept whole)."""
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                yield buffer
            buffer = ""
    if buffer.strip():
        raise StoreError(f"incomplete statement in a migration: {buffer.strip()[:80]}")


def _qualified(column: str) -> str:
    column = column.strip()
    return column if column.startswith("NULL") else "m." + column


def _vec_to_blob(vec: np.ndarray | None) -> bytes | None:
    return None if vec is None else np.asarray(vec, dtype=np.float32).tobytes()


def _row(r: sqlite3.Row | tuple[Any, ...]) -> tuple[int, MemoryRow]:
    emb = r[9]
    return r[0], MemoryRow(
        id=r[1],
        root_id=r[2],
        version=r[3],
        status=r[4],
        type=r[5],
        text=r[6],
        original_text=r[7],
        content_hash=r[8],
        embedding=None if emb is None else np.frombuffer(emb, dtype=np.float32),
        source=r[10],
        tags=json.loads(r[11]),
        metadata=json.loads(r[12]),
        project=r[13],
        sensitivity=r[14],
        session_id=r[15],
        created_at=r[16],
        asserted_at=r[17],
        last_referenced=r[18],
        access_count=r[19],
        expires_at=r[20],
        expired_at=r[21],
        superseded_by=r[22],
        decay_level=r[23],
        pinned=bool(r[24]),
    )


def _meta(row: MemoryRow) -> RowMeta:
    return RowMeta(row.status, row.project, row.type, row.sensitivity, row.expires_at)


def create_private_file(path: Path) -> None:
    """Create ``path`` readable by its owner only (memories may hold PII)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
    os.close(fd)
    os.chmod(path, 0o600)


class SQLiteStore:
    """:class:`memloom.store.base.Store` on one SQLite file."""

    def __init__(self, path: str | os.PathLike[str], *, ann_threshold: int | None = None):
        self.path = Path(path)
        if str(path) != ":memory:":
            create_private_file(self.path)
        try:
            self.db = sqlite3.connect(
                str(self.path), isolation_level=None, check_same_thread=False, timeout=30.0
            )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open {self.path}: {exc}") from exc
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("PRAGMA foreign_keys=ON")
        self.db.execute("PRAGMA busy_timeout=30000")
        # Freed pages are zeroed, so forgotten text does not linger in the file.
        self.db.execute("PRAGMA secure_delete=ON")
        self._lock = threading.RLock()
        self._in_tx = 0
        self._tx_seq: int | None = None
        self._migrate()
        self._ann_threshold = ann_threshold
        self._index: VectorIndex | None = None
        self._seen_seq = -1
        self._load_index()

    # ------------------------------------------------------------ plumbing

    def _migrate(self) -> None:
        if self._user_version() == len(MIGRATIONS):
            return
        # Several processes may open a new store at once: decide under the write lock.
        self.db.execute("BEGIN IMMEDIATE")
        try:
            current = self._user_version()
            if current > len(MIGRATIONS):
                raise StoreError(
                    f"{self.path} was written by a newer memloom (schema {current}, "
                    f"this version knows {len(MIGRATIONS)}); upgrade memloom"
                )
            for number, script in enumerate(MIGRATIONS[current:], start=current + 1):
                for statement in _statements(script):
                    self.db.execute(statement)
                self.db.execute(f"PRAGMA user_version = {number}")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def _user_version(self) -> int:
        return int(self.db.execute("PRAGMA user_version").fetchone()[0])

    @property
    def schema_version(self) -> int:
        return int(self.db.execute("PRAGMA user_version").fetchone()[0])

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """A write transaction; nested calls join the outer one."""
        with self._lock:
            if self._in_tx:
                self._in_tx += 1
                try:
                    yield
                finally:
                    self._in_tx -= 1
                return
            self.db.execute("BEGIN IMMEDIATE")
            self._in_tx = 1
            try:
                # Hold the write lock, then catch up with other writers before deciding.
                self._refresh()
                yield
            except BaseException:
                self._in_tx = 0
                self._tx_seq = None
                self.db.execute("ROLLBACK")
                # Rows added to the index inside the rolled-back transaction must go.
                self._load_index()
                raise
            else:
                self._in_tx = 0
                tx_seq, self._tx_seq = self._tx_seq, None
                self.db.execute("COMMIT")
                if tx_seq is not None:
                    self._seen_seq = tx_seq

    def _seq(self) -> int:
        """The sequence number stamped on this transaction's changes."""
        if self._tx_seq is None:
            value = self.db.execute(
                "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'seq' "
                "RETURNING value"
            ).fetchone()[0]
            self._tx_seq = int(value)
        return self._tx_seq

    def _require_tx(self) -> None:
        if not self._in_tx:
            raise StoreError("write outside a transaction")

    def close(self) -> None:
        with self._lock:
            if self._index is not None and str(self.path) != ":memory:":
                try:
                    self._index.save_ann(self._ann_path, self._seen_seq)
                except OSError as exc:  # only a cache: the next open rebuilds it
                    log.warning("could not save the vector index to %s: %s", self._ann_path, exc)
            self.db.close()

    # ------------------------------------------------------------ meta

    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    # ------------------------------------------------------------ vector index

    @property
    def _ann_path(self) -> Path:
        return self.path.with_name(self.path.name + ".hnsw")

    @property
    def dimension(self) -> int | None:
        value = self.get_meta("dimension")
        return None if value is None else int(value)

    def _load_index(self) -> None:
        with self._lock:
            dim = self.dimension
            if dim is None:
                self._index = None
                self._seen_seq = int(self.get_meta("seq") or 0)
                return
            index = VectorIndex(dim, self._ann_threshold)
            seq = int(self.get_meta("seq") or 0)
            rows = self.db.execute(
                "SELECT rowid, embedding, status, project, type, sensitivity, expires_at "
                "FROM memories WHERE embedding IS NOT NULL ORDER BY rowid"
            ).fetchall()
            if rows:
                rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
                vectors = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
                vectors = vectors.reshape(len(rows), dim)
                metas = [RowMeta(r[2], r[3], r[4], r[5], r[6]) for r in rows]
                saved_seq = (
                    index.load_ann(self._ann_path) if len(rows) >= index.ann_threshold else None
                )
                index.bulk_load(rowids, vectors, metas)
                if saved_seq is not None:
                    deleted = [
                        r[0]
                        for r in self.db.execute(
                            "SELECT rowid FROM tombstones WHERE seq > ?", (saved_seq,)
                        )
                    ]
                    index.reconcile_ann(deleted)
            self._index = index
            self._seen_seq = seq

    def _refresh(self) -> None:
        """Apply other connections' committed changes to the in-memory index."""
        seq = int(self.get_meta("seq") or 0)
        if seq == self._seen_seq:
            return
        if self._index is None:
            if self.dimension is not None:
                self._load_index()
            else:
                self._seen_seq = seq
            return
        for (rowid,) in self.db.execute(
            "SELECT rowid FROM tombstones WHERE seq > ?", (self._seen_seq,)
        ):
            self._index.remove(rowid)
        for r in self.db.execute(
            "SELECT rowid, embedding, status, project, type, sensitivity, expires_at "
            "FROM memories WHERE seq > ?",
            (self._seen_seq,),
        ):
            vec = None
            if r[1] is not None and r[0] not in self._index.pos:
                vec = np.frombuffer(r[1], dtype=np.float32)
            self._index.upsert(r[0], vec, RowMeta(r[2], r[3], r[4], r[5], r[6]))
        self._seen_seq = seq

    def _index_row(self, rowid: int, row: MemoryRow) -> None:
        if row.embedding is None:
            return
        if self._index is None:
            self._index = VectorIndex(len(row.embedding), self._ann_threshold)
        self._index.upsert(rowid, row.embedding, _meta(row))

    def save_index(self) -> None:
        """Persist the HNSW graph so the next process need not rebuild it."""
        with self._lock:
            if self._index is not None:
                self._index.save_ann(self._ann_path, self._seen_seq)

    def replace_embeddings(self, vectors: dict[str, np.ndarray | None], dim: int) -> None:
        """Swap every vector at once (``memloom reembed``); the index is rebuilt after."""
        self._require_tx()
        seq = self._seq()
        self.set_meta("dimension", str(dim))
        self.db.executemany(
            "UPDATE memories SET embedding = ?, seq = ? WHERE id = ?",
            [(_vec_to_blob(v), seq, mid) for mid, v in vectors.items()],
        )
        self._index = None
        self._ann_path.unlink(missing_ok=True)
        self._ann_path.with_suffix(".json").unlink(missing_ok=True)

    def reload_index(self) -> None:
        self._load_index()

    # ------------------------------------------------------------ memories

    def insert(self, row: MemoryRow) -> None:
        self._require_tx()
        if row.embedding is not None:
            dim = self.dimension
            if dim is None:
                self.set_meta("dimension", str(len(row.embedding)))
            elif dim != len(row.embedding):
                raise DimensionError(
                    f"embedding has {len(row.embedding)} dimensions; this store uses {dim}"
                )
        seq = self._seq()
        cur = self.db.execute(
            "INSERT INTO memories (id, root_id, version, status, type, text, original_text, "
            "content_hash, embedding, source, tags, metadata, project, sensitivity, session_id, "
            "created_at, asserted_at, last_referenced, access_count, expires_at, expired_at, "
            "superseded_by, decay_level, pinned, seq) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                row.id,
                row.root_id,
                row.version,
                row.status,
                row.type,
                row.text,
                row.original_text,
                row.content_hash,
                _vec_to_blob(row.embedding),
                row.source,
                json.dumps(row.tags),
                json.dumps(row.metadata),
                row.project,
                row.sensitivity,
                row.session_id,
                row.created_at,
                row.asserted_at,
                row.last_referenced,
                row.access_count,
                row.expires_at,
                row.expired_at,
                row.superseded_by,
                row.decay_level,
                int(row.pinned),
                seq,
            ),
        )
        rowid = cur.lastrowid
        assert rowid is not None
        if row.tags:
            self.db.executemany(
                "INSERT OR IGNORE INTO memory_tags (tag, memory_rowid) VALUES (?, ?)",
                [(t, rowid) for t in row.tags],
            )
        self._index_row(rowid, row)

    def update(self, memory_id: str, **fields: Any) -> None:
        self._require_tx()
        unknown = set(fields) - UPDATABLE
        if unknown:
            raise StoreError(f"cannot update {sorted(unknown)}")
        if not fields:
            return
        values: dict[str, Any] = dict(fields)
        if "tags" in values:
            values["tags"] = json.dumps(values["tags"])
        if "metadata" in values:
            values["metadata"] = json.dumps(values["metadata"])
        if "pinned" in values:
            values["pinned"] = int(values["pinned"])
        values["seq"] = self._seq()
        assignments = ", ".join(f"{k} = ?" for k in values)
        cur = self.db.execute(
            f"UPDATE memories SET {assignments} WHERE id = ? RETURNING rowid",
            [*values.values(), memory_id],
        )
        found = cur.fetchone()
        if found is None:
            return
        rowid = found[0]
        if "tags" in fields:
            self.db.execute("DELETE FROM memory_tags WHERE memory_rowid = ?", (rowid,))
            self.db.executemany(
                "INSERT OR IGNORE INTO memory_tags (tag, memory_rowid) VALUES (?, ?)",
                [(t, rowid) for t in fields["tags"]],
            )
        if self._index is not None and rowid in self._index.pos:
            r = self.db.execute(
                "SELECT status, project, type, sensitivity, expires_at FROM memories "
                "WHERE rowid = ?",
                (rowid,),
            ).fetchone()
            self._index.upsert(rowid, None, RowMeta(*r))

    def get(self, memory_id: str) -> MemoryRow | None:
        r = self.db.execute(f"SELECT {_ROW_COLUMNS} FROM memories WHERE id = ?", (memory_id,))
        found = r.fetchone()
        return None if found is None else _row(found)[1]

    def get_many(self, memory_ids: Sequence[str]) -> list[MemoryRow]:
        """Rows in the order of ``memory_ids`` (missing ids are skipped)."""
        by_id: dict[str, MemoryRow] = {}
        for chunk in _chunks(list(memory_ids)):
            marks = ",".join("?" * len(chunk))
            for r in self.db.execute(
                f"SELECT {_ROW_COLUMNS} FROM memories WHERE id IN ({marks})", list(chunk)
            ):
                row = _row(r)[1]
                by_id[row.id] = row
        return [by_id[i] for i in memory_ids if i in by_id]

    def _rows_by_rowid(self, rowids: Sequence[int]) -> dict[int, MemoryRow]:
        out: dict[int, MemoryRow] = {}
        for chunk in _chunks(list(rowids)):
            marks = ",".join("?" * len(chunk))
            for r in self.db.execute(
                f"SELECT {_ROW_COLUMNS} FROM memories WHERE rowid IN ({marks})", list(chunk)
            ):
                rowid, row = _row(r)
                out[rowid] = row
        return out

    def resolve_prefix(self, prefix: str) -> list[str]:
        escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = self.db.execute(
            "SELECT id FROM memories WHERE id LIKE ? ESCAPE '\\' LIMIT 5", (escaped + "%",)
        )
        return [r[0] for r in rows]

    def versions(self, root_id: str) -> list[MemoryRow]:
        rows = self.db.execute(
            f"SELECT {_ROW_COLUMNS} FROM memories WHERE root_id = ? ORDER BY version DESC",
            (root_id,),
        )
        return [_row(r)[1] for r in rows]

    def find_by_hash(self, content_hash: str, project: str | None) -> MemoryRow | None:
        r = self.db.execute(
            f"SELECT {_ROW_COLUMNS} FROM memories INDEXED BY memories_hash "
            "WHERE content_hash = ? AND status = 'active' "
            "AND project IS ? ORDER BY created_at LIMIT 1",
            (content_hash, project),
        ).fetchone()
        return None if r is None else _row(r)[1]

    def touch(self, memory_ids: Sequence[str], at: float) -> None:
        # Not stamped with a sequence number: recency is not an index column.
        for chunk in _chunks(list(memory_ids)):
            marks = ",".join("?" * len(chunk))
            self.db.execute(
                f"UPDATE memories SET last_referenced = ?, access_count = access_count + 1 "
                f"WHERE id IN ({marks})",
                [at, *chunk],
            )

    def _status_change(self, sql: str, params: Sequence[Any]) -> int:
        seq = self._seq()
        rows = self.db.execute(sql.replace(":seq", str(seq)), params).fetchall()
        if self._index is not None:
            for rowid, status, project, typ, sens, expires in rows:
                self._index.upsert(rowid, None, RowMeta(status, project, typ, sens, expires))
        return len(rows)

    def expire_ids(self, memory_ids: Sequence[str], at: float) -> int:
        self._require_tx()
        total = 0
        for chunk in _chunks(list(memory_ids)):
            marks = ",".join("?" * len(chunk))
            total += self._status_change(
                f"UPDATE memories SET status = 'expired', expired_at = ?, seq = :seq "
                f"WHERE status = 'active' AND id IN ({marks}) "
                "RETURNING rowid, status, project, type, sensitivity, expires_at",
                [at, *chunk],
            )
        return total

    def expire_due(self, now: float) -> int:
        """Mark rows whose TTL has passed as expired (at their expiry time)."""
        self._require_tx()
        due = self.db.execute(
            "SELECT 1 FROM memories INDEXED BY memories_ttl WHERE status = 'active' "
            "AND expires_at IS NOT NULL "
            "AND expires_at <= ? LIMIT 1",
            (now,),
        ).fetchone()
        if due is None:
            return 0
        return self._status_change(
            "UPDATE memories INDEXED BY memories_ttl SET status = 'expired', "
            "expired_at = expires_at, seq = :seq "
            "WHERE status = 'active' AND expires_at IS NOT NULL AND expires_at <= ? "
            "RETURNING rowid, status, project, type, sensitivity, expires_at",
            [now],
        )

    def has_due(self, now: float) -> bool:
        return (
            self.db.execute(
                "SELECT 1 FROM memories INDEXED BY memories_ttl WHERE status = 'active' "
                "AND expires_at IS NOT NULL "
                "AND expires_at <= ? LIMIT 1",
                (now,),
            ).fetchone()
            is not None
        )

    def delete(self, memory_ids: Sequence[str]) -> int:
        self._require_tx()
        seq = self._seq()
        total = 0
        for chunk in _chunks(list(memory_ids)):
            marks = ",".join("?" * len(chunk))
            rowids = [
                r[0]
                for r in self.db.execute(
                    f"DELETE FROM memories WHERE id IN ({marks}) RETURNING rowid", list(chunk)
                )
            ]
            self.db.execute(f"DELETE FROM provenance WHERE memory_id IN ({marks})", list(chunk))
            self.db.execute(
                f"DELETE FROM conflicts WHERE new_id IN ({marks}) OR existing_id IN ({marks})",
                [*chunk, *chunk],
            )
            self.db.executemany(
                "INSERT OR REPLACE INTO tombstones (rowid, seq) VALUES (?, ?)",
                [(r, seq) for r in rowids],
            )
            if self._index is not None:
                for r in rowids:
                    self._index.remove(r)
            total += len(rowids)
        return total

    def purge(self) -> None:
        """After a forget: leave no trace of deleted text in the files. The keyword
        index is rewritten without the deleted rows' terms (its old segments freed and,
        with secure_delete, zeroed), then the WAL is checkpointed and truncated."""
        with self._lock:
            self.db.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")
            busy, _, _ = self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            if busy:
                log.info("WAL checkpoint deferred: another connection is reading")

    def select_ids(
        self, ids: Sequence[str], tags: Sequence[str], before: float | None
    ) -> list[str]:
        """Ids matching every given criterion (forget's selection)."""
        where: list[str] = []
        params: list[Any] = []
        if ids:
            where.append(f"id IN ({','.join('?' * len(ids))})")
            params.extend(ids)
        if tags:
            where.append(
                "rowid IN (SELECT memory_rowid FROM memory_tags WHERE tag IN "
                f"({','.join('?' * len(tags))}))"
            )
            params.extend(tags)
        if before is not None:
            where.append("created_at < ?")
            params.append(before)
        if not where:
            return []
        rows = self.db.execute(f"SELECT id FROM memories WHERE {' AND '.join(where)}", params)
        return [r[0] for r in rows]

    def _filter_sql(self, flt: SearchFilter, alias: str = "m") -> tuple[str, list[Any]]:
        where = [f"{alias}.status IN ({','.join('?' * len(flt.statuses))})"]
        params: list[Any] = sorted(flt.statuses)
        if flt.project_mode == "exact":
            where.append(f"{alias}.project IS ?")
            params.append(flt.project)
        elif flt.project_mode == "scoped":
            where.append(f"({alias}.project IS ? OR {alias}.project IS NULL)")
            params.append(flt.project)
        if flt.types is not None:
            where.append(f"{alias}.type IN ({','.join('?' * len(flt.types))})")
            params.extend(sorted(flt.types))
        if flt.tags is not None:
            where.append(
                f"{alias}.rowid IN (SELECT memory_rowid FROM memory_tags WHERE tag IN "
                f"({','.join('?' * len(flt.tags))}))"
            )
            params.extend(sorted(flt.tags))
        if flt.max_sensitivity is not None:
            where.append(f"{alias}.sensitivity <= ?")
            params.append(flt.max_sensitivity)
        if flt.alive_at is not None:
            where.append(f"({alias}.expires_at IS NULL OR {alias}.expires_at > ?)")
            params.append(flt.alive_at)
        return " AND ".join(where), params

    def list(
        self,
        flt: SearchFilter,
        *,
        source: str | None,
        min_sensitivity: int | None,
        order: str,
        limit: int,
        cursor: str | None,
    ) -> ListPage:
        """Keyset pagination: a page costs the same at row 100 and at row 100,000."""
        where, params = self._filter_sql(flt)
        if source is not None:
            where += " AND m.source = ?"
            params.append(source)
        if min_sensitivity is not None:
            where += " AND m.sensitivity >= ?"
            params.append(min_sensitivity)
        key = {"recent": "last_referenced", "accessed": "access_count", "created": "created_at"}[
            order
        ]
        total = self.db.execute(f"SELECT COUNT(*) FROM memories m WHERE {where}", params)
        total_count = total.fetchone()[0]
        page_where, page_params = where, list(params)
        if cursor:
            try:
                last_key, last_rowid = json.loads(cursor)
            except (ValueError, TypeError) as exc:
                raise StoreError("invalid cursor") from exc
            page_where += f" AND (m.{key} < ? OR (m.{key} = ? AND m.rowid < ?))"
            page_params += [last_key, last_key, last_rowid]
        rows = self.db.execute(
            f"SELECT {', '.join(_qualified(c) for c in _ROW_COLUMNS.split(','))}, m.{key} "
            f"FROM memories m WHERE {page_where} ORDER BY m.{key} DESC, m.rowid DESC LIMIT ?",
            [*page_params, limit + 1],
        ).fetchall()
        more = len(rows) > limit
        rows = rows[:limit]
        next_cursor = json.dumps([rows[-1][-1], rows[-1][0]]) if more and rows else None
        return ListPage([_row(r)[1] for r in rows], total_count, next_cursor)

    def iter_all(self) -> Iterator[MemoryRow]:
        cur = self.db.execute(f"SELECT {_ROW_COLUMNS} FROM memories ORDER BY rowid")
        for r in cur:
            yield _row(r)[1]

    def count(self, status: str | None = None) -> int:
        if status is None:
            return int(self.db.execute("SELECT COUNT(*) FROM memories").fetchone()[0])
        return int(
            self.db.execute("SELECT COUNT(*) FROM memories WHERE status = ?", (status,)).fetchone()[
                0
            ]
        )

    def stats(self) -> dict[str, Any]:
        def grouped(column: str, where: str = "") -> dict[str, int]:
            rows = self.db.execute(
                f"SELECT {column}, COUNT(*) FROM memories {where} GROUP BY {column}"
            )
            return {str(k): int(v) for k, v in rows if k is not None}

        by_status = grouped("status")
        span = self.db.execute("SELECT MIN(created_at), MAX(created_at) FROM memories").fetchone()
        pending = self.db.execute(
            "SELECT COUNT(*) FROM conflicts WHERE status = 'pending'"
        ).fetchone()[0]
        return {
            "total_memories": sum(by_status.values()),
            "by_status": by_status,
            "by_decay_level": grouped("decay_level"),
            "by_source": grouped("source", "WHERE source IS NOT NULL AND source != ''"),
            "by_type": grouped("type", "WHERE status = 'active'"),
            "by_project": grouped("project", "WHERE status = 'active'"),
            "conflicts_pending": int(pending),
            "oldest": span[0],
            "newest": span[1],
        }

    def decay_candidates(self, older_than: float, level: int, limit: int) -> list[MemoryRow]:
        rows = self.db.execute(
            f"SELECT {_ROW_COLUMNS} FROM memories WHERE status = 'active' AND pinned = 0 "
            "AND decay_level = ? AND last_referenced < ? ORDER BY last_referenced LIMIT ?",
            (level, older_than, limit),
        )
        return [_row(r)[1] for r in rows]

    # ------------------------------------------------------------ search

    def _fresh(self) -> None:
        with self._lock:
            if not self._in_tx:
                self._refresh()

    def vector_search(
        self, query: np.ndarray, k: int, flt: SearchFilter
    ) -> list[tuple[str, float]]:
        self._fresh()
        if self._index is None:
            return []
        if len(query) != self._index.dim:
            raise DimensionError(
                f"query embedding has {len(query)} dimensions; this store uses {self._index.dim}"
            )
        allowed = None
        if flt.tags is not None:
            marks = ",".join("?" * len(flt.tags))
            allowed = np.fromiter(
                (
                    r[0]
                    for r in self.db.execute(
                        f"SELECT memory_rowid FROM memory_tags WHERE tag IN ({marks})",
                        sorted(flt.tags),
                    )
                ),
                dtype=np.int64,
            )
        hits = self._index.search(query, k, flt, allowed)
        if not hits:
            return []
        ids = dict(
            self.db.execute(
                f"SELECT rowid, id FROM memories WHERE rowid IN ({','.join('?' * len(hits))})",
                [h[0] for h in hits],
            ).fetchall()
        )
        return [(ids[r], s) for r, s in hits if r in ids]

    def keyword_search(
        self, terms: Sequence[str], k: int, flt: SearchFilter
    ) -> list[tuple[str, float]]:
        """BM25 over FTS5; returns (id, score) with higher scores better."""
        if not terms:
            return []
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        where, params = self._filter_sql(flt)
        rows = self.db.execute(
            "SELECT m.id, -bm25(memories_fts) AS score FROM memories_fts "
            "JOIN memories m ON m.rowid = memories_fts.rowid "
            f"WHERE memories_fts MATCH ? AND {where} ORDER BY bm25(memories_fts) LIMIT ?",
            [match, *params, k],
        )
        return [(r[0], float(r[1])) for r in rows]

    def document_frequencies(self, stems: Sequence[str]) -> tuple[dict[str, int], int]:
        if not stems:
            return {}, 0
        marks = ",".join("?" * len(stems))
        rows = self.db.execute(
            f"SELECT term, doc FROM memories_vocab WHERE term IN ({marks})", list(stems)
        )
        total = self.db.execute("SELECT COUNT(*) FROM memories").fetchone()[0]
        return {r[0]: int(r[1]) for r in rows}, int(total)

    def embeddings_for(self, memory_ids: Sequence[str]) -> dict[str, np.ndarray]:
        self._fresh()
        out: dict[str, np.ndarray] = {}
        for chunk in _chunks(list(memory_ids)):
            marks = ",".join("?" * len(chunk))
            for rowid, mid, blob in self.db.execute(
                f"SELECT rowid, id, embedding FROM memories WHERE id IN ({marks})", list(chunk)
            ):
                vec = self._index.vector(rowid) if self._index is not None else None
                if vec is None and blob is not None:
                    vec = np.frombuffer(blob, dtype=np.float32)
                if vec is not None:
                    out[mid] = vec
        return out

    # ------------------------------------------------------------ conflicts

    def add_conflict(self, row: ConflictRow) -> None:
        self._require_tx()
        self.db.execute(
            "INSERT INTO conflicts (id, new_id, existing_id, distance, reason, status, "
            "resolution, detail, created_at, resolved_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                row.id,
                row.new_id,
                row.existing_id,
                row.distance,
                row.reason,
                row.status,
                row.resolution,
                json.dumps(row.detail),
                row.created_at,
                row.resolved_at,
            ),
        )

    def update_conflict(self, conflict_id: str, **fields: Any) -> None:
        self._require_tx()
        allowed = {"status", "resolution", "detail", "resolved_at", "reason"}
        if set(fields) - allowed:
            raise StoreError(f"cannot update conflict fields {sorted(set(fields) - allowed)}")
        if "detail" in fields:
            fields["detail"] = json.dumps(fields["detail"])
        assignments = ", ".join(f"{k} = ?" for k in fields)
        self.db.execute(
            f"UPDATE conflicts SET {assignments} WHERE id = ?", [*fields.values(), conflict_id]
        )

    @staticmethod
    def _conflict(r: tuple[Any, ...]) -> ConflictRow:
        return ConflictRow(
            id=r[0],
            new_id=r[1],
            existing_id=r[2],
            distance=r[3],
            reason=r[4],
            status=r[5],
            resolution=r[6],
            detail=json.loads(r[7]),
            created_at=r[8],
            resolved_at=r[9],
        )

    def get_conflict(self, conflict_id: str) -> ConflictRow | None:
        r = self.db.execute(
            "SELECT id, new_id, existing_id, distance, reason, status, resolution, detail, "
            "created_at, resolved_at FROM conflicts WHERE id = ?",
            (conflict_id,),
        ).fetchone()
        return None if r is None else self._conflict(r)

    def list_conflicts(
        self, status: str | None, limit: int, offset: int
    ) -> tuple[list[ConflictRow], int]:
        where, params = ("WHERE status = ?", [status]) if status else ("", [])
        total = self.db.execute(f"SELECT COUNT(*) FROM conflicts {where}", params).fetchone()[0]
        rows = self.db.execute(
            "SELECT id, new_id, existing_id, distance, reason, status, resolution, detail, "
            f"created_at, resolved_at FROM conflicts {where} "
            "ORDER BY created_at DESC, id LIMIT ? OFFSET ?",
            [*params, limit, offset],
        )
        return [self._conflict(r) for r in rows], int(total)

    # ------------------------------------------------------------ provenance

    def add_provenance(self, row: ProvenanceRow) -> None:
        self._require_tx()
        self.db.execute(
            "INSERT OR IGNORE INTO provenance (memory_id, session_id, path, project, start_line, "
            "end_line, excerpt, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                row.memory_id,
                row.session_id,
                row.path,
                row.project,
                row.start_line,
                row.end_line,
                row.excerpt,
                row.created_at or time.time(),
            ),
        )

    def provenance(self, memory_ids: Sequence[str]) -> list[ProvenanceRow]:
        out: list[ProvenanceRow] = []
        for chunk in _chunks(list(memory_ids)):
            marks = ",".join("?" * len(chunk))
            for r in self.db.execute(
                "SELECT memory_id, session_id, path, project, start_line, end_line, excerpt, "
                f"created_at FROM provenance WHERE memory_id IN ({marks}) ORDER BY id",
                list(chunk),
            ):
                out.append(ProvenanceRow(*r))
        return out

    # ------------------------------------------------------------ session import

    _LEDGER = (
        "path, session_id, project, size, mtime, offset, lines, hash, status, memories, "
        "last_error, updated_at"
    )

    def ledger_get_many(self, paths: Sequence[str]) -> dict[str, LedgerRow]:
        out: dict[str, LedgerRow] = {}
        for chunk in _chunks(list(paths)):
            marks = ",".join("?" * len(chunk))
            for r in self.db.execute(
                f"SELECT {self._LEDGER} FROM ledger WHERE path IN ({marks})", list(chunk)
            ):
                out[r[0]] = LedgerRow(*r)
        return out

    def ledger_put(self, row: LedgerRow) -> None:
        self._require_tx()
        self.db.execute(
            f"INSERT OR REPLACE INTO ledger ({self._LEDGER}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                row.path,
                row.session_id,
                row.project,
                row.size,
                row.mtime,
                row.offset,
                row.lines,
                row.hash,
                row.status,
                row.memories,
                row.last_error,
                row.updated_at or time.time(),
            ),
        )

    def ledger_stats(self) -> dict[str, Any]:
        r = self.db.execute(
            "SELECT COUNT(*), SUM(status = 'complete'), SUM(status = 'partial'), "
            "SUM(memories), MAX(updated_at) FROM ledger"
        ).fetchone()
        return {
            "sessions": int(r[0] or 0),
            "complete": int(r[1] or 0),
            "partial": int(r[2] or 0),
            "memories": int(r[3] or 0),
            "last_import": r[4],
        }

    def records_seen(self, uuids: Sequence[str], exclude_path: str) -> set[str]:
        seen: set[str] = set()
        for chunk in _chunks(list(uuids)):
            marks = ",".join("?" * len(chunk))
            for (u,) in self.db.execute(
                f"SELECT uuid FROM transcript_records WHERE uuid IN ({marks}) AND path != ?",
                [*chunk, exclude_path],
            ):
                seen.add(u)
        return seen

    def records_add(self, uuids: Sequence[str], path: str) -> None:
        self._require_tx()
        self.db.executemany(
            "INSERT OR IGNORE INTO transcript_records (uuid, path) VALUES (?, ?)",
            [(u, path) for u in uuids],
        )

    def ledger_recent(self, limit: int = 10) -> list[LedgerRow]:
        rows = self.db.execute(
            f"SELECT {self._LEDGER} FROM ledger ORDER BY updated_at DESC LIMIT ?", (limit,)
        )
        return [LedgerRow(*r) for r in rows]

    def saved_per_day(self, since: float) -> list[tuple[str, str, int]]:
        """(local day, type, count) of memories created since ``since``."""
        rows = self.db.execute(
            "SELECT date(created_at, 'unixepoch', 'localtime') AS day, type, COUNT(*) "
            "FROM memories WHERE created_at >= ? GROUP BY day, type ORDER BY day",
            (since,),
        )
        return [(r[0], r[1], int(r[2])) for r in rows]

    def session_neighbours(self, memory_ids: Sequence[str]) -> dict[str, list[str]]:
        """For each memory with a session, the memories stored just before and after it
        in that session (active ones only): its place in the conversation."""
        out: dict[str, list[str]] = {}
        for chunk in _chunks(list(memory_ids), 200):
            marks = ",".join("?" * len(chunk))
            rows = self.db.execute(
                f"""
                SELECT m.id,
                    (SELECT p.id FROM memories p INDEXED BY memories_session
                     WHERE p.session_id = m.session_id AND p.rowid < m.rowid
                       AND p.status = 'active' ORDER BY p.rowid DESC LIMIT 1),
                    (SELECT n.id FROM memories n INDEXED BY memories_session
                     WHERE n.session_id = m.session_id AND n.rowid > m.rowid
                       AND n.status = 'active' ORDER BY n.rowid LIMIT 1)
                FROM memories m WHERE m.id IN ({marks}) AND m.session_id IS NOT NULL
                """,
                list(chunk),
            )
            for mid, prev, nxt in rows:
                out[mid] = [x for x in (prev, nxt) if x is not None]
        return out

    # ------------------------------------------------------------ export (memloom migrate)

    def iter_rows(self, batch: int = 1000) -> Iterator[list[MemoryRow]]:
        """Every row with its embedding, in insertion order, a batch at a time."""
        last = 0
        while True:
            rows = self.db.execute(
                f"SELECT {_COLUMNS} FROM memories WHERE rowid > ? ORDER BY rowid LIMIT ?",
                (last, batch),
            ).fetchall()
            if not rows:
                return
            last = rows[-1][0]
            yield [_row(r)[1] for r in rows]

    def all_conflicts(self) -> list[ConflictRow]:
        rows = self.db.execute(
            "SELECT id, new_id, existing_id, distance, reason, status, resolution, detail, "
            "created_at, resolved_at FROM conflicts ORDER BY created_at"
        )
        return [self._conflict(r) for r in rows]

    def all_provenance(self) -> list[ProvenanceRow]:
        rows = self.db.execute(
            "SELECT memory_id, session_id, path, project, start_line, end_line, excerpt, "
            "created_at FROM provenance ORDER BY id"
        )
        return [ProvenanceRow(*r) for r in rows]

    def all_ledger(self) -> list[LedgerRow]:
        return [LedgerRow(*r) for r in self.db.execute(f"SELECT {self._LEDGER} FROM ledger")]

    def all_records(self) -> list[tuple[str, str]]:
        return [(r[0], r[1]) for r in self.db.execute("SELECT uuid, path FROM transcript_records")]
