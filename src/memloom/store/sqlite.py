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
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from memloom.store import vector_files
from memloom.store.base import (
    UPDATABLE,
    DimensionError,
    MemoryRow,
    SearchFilter,
    StoreError,
)
from memloom.store.dialect import SQLiteDialect
from memloom.store.sql import SQLStore, row_columns
from memloom.store.sqlite_migrations import MIGRATIONS
from memloom.store.vectors import RowMeta, VectorIndex

log = logging.getLogger(__name__)
_CHUNK = 500  # SQLite's default limit on bound parameters is 32766; stay well under it.
#: Meta key set by a delete and cleared when :meth:`SQLiteStore.purge` has finished.
PURGE_PENDING = "purge_pending"


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


def _vec_to_blob(vec: np.ndarray | None) -> bytes | None:
    return None if vec is None else np.asarray(vec, dtype=np.float32).tobytes()


def _blob_to_vec(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype=np.float32)


#: SQLite's SQL: JSON text columns, vectors as float32 blobs.
DIALECT = SQLiteDialect(encode_vector=_vec_to_blob, decode_vector=_blob_to_vec, chunk=_CHUNK)


def _meta(row: MemoryRow) -> RowMeta:
    return RowMeta(row.status, row.project, row.type, row.sensitivity, row.expires_at)


def create_private_file(path: Path) -> None:
    """Create ``path`` readable by its owner only (memories may hold PII)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
    os.close(fd)
    os.chmod(path, 0o600)


class SQLiteStore(SQLStore):
    """:class:`memloom.store.base.Store` on one SQLite file."""

    dialect = DIALECT

    def __init__(self, path: str | os.PathLike[str], *, ann_threshold: int | None = None):
        self.path = Path(path)
        if str(path) != ":memory:":
            try:
                create_private_file(self.path)
            except OSError as exc:  # a data folder that cannot be made or written
                raise StoreError(
                    f"cannot create the store {self.path}: {exc.strerror or exc} "
                    "(set MEMLOOM_HOME or --home to a folder you can write)"
                ) from exc
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
        #: Rows this transaction inserted, added to the index in one go (see _index_row).
        self._unindexed: dict[int, MemoryRow] = {}
        self._seen_seq = -1
        self._load_index()
        if self.get_meta(PURGE_PENDING) is not None:
            self.purge()  # a forget whose purge did not finish (a killed process)

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
                self._unindexed.clear()
                # SQLite may have rolled back already (SQLITE_FULL, SQLITE_IOERR): a
                # second ROLLBACK would fail and hide the error that caused it.
                if self.db.in_transaction:
                    self.db.execute("ROLLBACK")
                # Rows added to the index inside the rolled-back transaction must go.
                self._load_index()
                raise
            else:
                self._in_tx = 0
                tx_seq, self._tx_seq = self._tx_seq, None
                try:
                    self.db.execute("COMMIT")
                except BaseException:
                    # A COMMIT that failed (a full disk) leaves the transaction open:
                    # roll it back, or every later BEGIN fails on this connection.
                    self._unindexed.clear()
                    if self.db.in_transaction:
                        self.db.execute("ROLLBACK")
                    self._load_index()
                    raise
                self._index_pending()
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

    def _require_tx(self) -> sqlite3.Connection:
        if not self._in_tx:
            raise StoreError("write outside a transaction")
        return self.db

    @contextmanager
    def _conn(self) -> Iterator[sqlite3.Connection]:
        """One connection serves every statement (SQLite serialises writers itself)."""
        yield self.db

    def close(self) -> None:
        with self._lock:
            self._save_vectors()
            self.db.close()

    # ------------------------------------------------------------ meta

    # ------------------------------------------------------------ vector index

    @property
    def _vectors_path(self) -> Path:
        """The vector index's files (store/vector_files.py)."""
        return self.path.with_name(self.path.name + ".vectors")

    @property
    def _legacy_graph_path(self) -> Path:
        """The graph file of memloom before the vector files (with a ``.json`` beside)."""
        return self.path.with_name(self.path.name + ".hnsw")

    @property
    def dimension(self) -> int | None:
        value = self.get_meta("dimension")
        return None if value is None else int(value)

    def _load_index(self) -> None:
        with self._lock:
            dim = self.dimension
            seq = int(self.get_meta("seq") or 0)
            if dim is None:
                self._index = None
                self._seen_seq = seq
                return
            if self._open_vector_files(dim, seq):
                return
            index = VectorIndex(dim, self._ann_threshold)
            rows = self.db.execute(
                "SELECT rowid, embedding, status, project, type, sensitivity, expires_at "
                "FROM memories WHERE embedding IS NOT NULL ORDER BY rowid"
            ).fetchall()
            if rows:
                rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
                vectors = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
                vectors = vectors.reshape(len(rows), dim)
                metas = [RowMeta(r[2], r[3], r[4], r[5], r[6]) for r in rows]
                del rows
                index.bulk_load(rowids, vectors, metas)
                if len(index) >= index.ann_threshold and self._legacy_graph_path.exists():
                    # A graph an older memloom saved: adopted, not rebuilt (it is checked
                    # row by row against the database), then saved as vector files.
                    index.adopt_graph(self._legacy_graph_path)
            self._index = index
            self._seen_seq = seq

    def _open_vector_files(self, dim: int, seq: int) -> bool:
        """Open the saved vector files (memory-mapped) and replay what changed after
        them; False if there are none that belong to this database."""
        if str(self.path) == ":memory:":
            return False
        index = VectorIndex(dim, self._ann_threshold)
        saved = index.load_ann(self._vectors_path)
        if saved is None:
            return False
        if saved > seq:
            log.warning("ignoring vector files newer than %s (another store's?)", self.path)
            return False
        self._index, self._seen_seq = index, saved
        self._refresh()
        if index.matches(self._embeddings_by_rowid):
            self._erase_opened(index)
            return True
        log.warning("ignoring vector files that do not match %s; rebuilding", self.path)
        self._index = None
        return False

    def _erase_opened(self, index: VectorIndex) -> None:
        """Erase from the opened files what they may still hold of deleted rows: rows
        deleted after they were written (replayed just now: a process killed before
        its purge, or one that wrote them without having seen a delete), and, once,
        whatever a generation written by an older memloom kept (vector_files.scrub)."""
        gen = index.generation
        try:
            if gen is not None and not vector_files.scrubbed(gen):
                vector_files.scrub(gen)
            index.erase_deleted(self._vectors_path)
        except (OSError, ValueError) as exc:  # read-only files, an unknown layout
            log.warning("could not erase deleted vectors in %s: %s", self._vectors_path, exc)

    def _embeddings_by_rowid(self, rowids: list[int]) -> dict[int, np.ndarray]:
        marks = ",".join("?" * len(rowids))
        return {
            r[0]: np.frombuffer(r[1], dtype=np.float32)
            for r in self.db.execute(
                f"SELECT rowid, embedding FROM memories WHERE rowid IN ({marks}) "
                "AND embedding IS NOT NULL",
                rowids,
            )
        }

    def _save_vectors(self) -> None:
        if self._index is None or str(self.path) == ":memory:":
            return
        try:
            self._index.save_ann(self._vectors_path, self._seen_seq)
        except (OSError, ValueError) as exc:  # only a cache: the next open rebuilds it
            # (ValueError: a graph file whose layout vector_files cannot scrub)
            log.warning("could not save the vector index to %s: %s", self._vectors_path, exc)
            return
        if self._index.ann_saved:
            self._legacy_graph_path.unlink(missing_ok=True)
            self._legacy_graph_path.with_suffix(".json").unlink(missing_ok=True)

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
            if r[1] is not None and r[0] not in self._index:
                vec = np.frombuffer(r[1], dtype=np.float32)
            self._index.upsert(r[0], vec, RowMeta(r[2], r[3], r[4], r[5], r[6]))
        self._seen_seq = seq

    def _index_row(self, rowid: int, row: MemoryRow) -> None:
        """Note an inserted row for the index. Rows join it together, when the
        transaction ends or before anything reads or changes the index: a batch of
        writes adds to the HNSW graph in one call, not one call per row."""
        if row.embedding is None:
            return
        if self._index is None:
            self._index = VectorIndex(len(row.embedding), self._ann_threshold)
        self._unindexed[rowid] = row

    def _index_pending(self) -> None:
        if not self._unindexed or self._index is None:
            self._unindexed.clear()
            return
        rows, self._unindexed = self._unindexed, {}
        self._index.bulk_load(
            np.fromiter(rows, dtype=np.int64, count=len(rows)),
            np.stack([np.asarray(r.embedding, dtype=np.float32) for r in rows.values()]),
            [_meta(r) for r in rows.values()],
        )

    def save_index(self) -> None:
        """Persist the vector index so the next process opens it instead of rebuilding."""
        with self._lock:
            self._save_vectors()

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
        self._unindexed.clear()
        vector_files.remove(self._vectors_path)
        self._legacy_graph_path.unlink(missing_ok=True)
        self._legacy_graph_path.with_suffix(".json").unlink(missing_ok=True)

    def reload_index(self) -> None:
        self._load_index()

    # ------------------------------------------------------------ memories

    def insert(self, row: MemoryRow) -> None:
        self._require_tx()
        if row.embedding is not None:
            # The index is built at the stored dimension: no query per insert.
            dim = self._index.dim if self._index is not None else self.dimension
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
            "superseded_by, decay_level, pinned, seq, anchors) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                json.dumps(row.anchors),
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
        for name in ("metadata", "anchors"):
            if name in values:
                values[name] = json.dumps(values[name])
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
        if rowid in self._unindexed:
            self._index_pending()
        if "tags" in fields:
            self.db.execute("DELETE FROM memory_tags WHERE memory_rowid = ?", (rowid,))
            self.db.executemany(
                "INSERT OR IGNORE INTO memory_tags (tag, memory_rowid) VALUES (?, ?)",
                [(t, rowid) for t in fields["tags"]],
            )
        if self._index is not None and rowid in self._index:
            r = self.db.execute(
                "SELECT status, project, type, sensitivity, expires_at FROM memories "
                "WHERE rowid = ?",
                (rowid,),
            ).fetchone()
            self._index.upsert(rowid, None, RowMeta(*r))

    def touch(self, memory_ids: Sequence[str], at: float) -> None:
        # Not stamped with a sequence number: recency is not an index column.
        for chunk in DIALECT.chunks(list(memory_ids)):
            marks = ",".join("?" * len(chunk))
            self.db.execute(
                f"UPDATE memories SET last_referenced = ?, access_count = access_count + 1 "
                f"WHERE id IN ({marks})",
                [at, *chunk],
            )

    def _status_change(self, sql: str, params: Sequence[Any]) -> int:
        self._index_pending()
        seq = self._seq()
        rows = self.db.execute(sql.replace(":seq", str(seq)), params).fetchall()
        if self._index is not None:
            for rowid, status, project, typ, sens, expires in rows:
                self._index.upsert(rowid, None, RowMeta(status, project, typ, sens, expires))
        return len(rows)

    def project_labels(self) -> list[str]:
        rows = self._fetch("SELECT DISTINCT project FROM memories WHERE project IS NOT NULL")
        return [r[0] for r in rows]

    def rename_project(self, old: str, new: str) -> int:
        # Through the status path: the vector index's project column follows the rows.
        self._require_tx()
        return self._status_change(
            "UPDATE memories SET project = ?, seq = :seq WHERE project = ? "
            "RETURNING rowid, status, project, type, sensitivity, expires_at",
            [new, old],
        )

    def expire_ids(self, memory_ids: Sequence[str], at: float) -> int:
        self._require_tx()
        total = 0
        for chunk in DIALECT.chunks(list(memory_ids)):
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
        if not self.has_due(now):
            return 0
        return self._status_change(
            "UPDATE memories INDEXED BY memories_ttl SET status = 'expired', "
            "expired_at = expires_at, seq = :seq "
            "WHERE status = 'active' AND expires_at IS NOT NULL AND expires_at <= ? "
            "RETURNING rowid, status, project, type, sensitivity, expires_at",
            [now],
        )

    def delete(self, memory_ids: Sequence[str]) -> int:
        self._require_tx()
        self._index_pending()
        seq = self._seq()
        total = 0
        for chunk in DIALECT.chunks(list(memory_ids)):
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
            if rowids:
                self.set_meta(PURGE_PENDING, str(seq))
            if self._index is not None:
                for r in rowids:
                    self._index.remove(r)
            total += len(rowids)
        return total

    def purge(self) -> None:
        """After a forget: leave no trace of deleted rows in the files (docs/reliability.md,
        "What a forget erases, and when"). The database zeroes freed space itself
        (secure_delete); here the keyword index is rewritten without the deleted terms
        (FTS5 ``optimize``: SQLite before 3.42 has no secure-delete for FTS5), the
        deleted rows' vectors are zeroed in place in the vector files, and the WAL is
        checkpointed and truncated. The ``purge_pending`` mark, set in the deleting
        transaction, is cleared only when all of it is done: a process killed before
        then purges again when the store is next opened."""
        with self._lock:
            self.db.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")
            if self._index is not None and str(self.path) != ":memory:":
                if self._legacy_graph_path.exists():
                    self._save_vectors()  # an older memloom's graph file: replaced
                self._index.erase_deleted(self._vectors_path)
            busy, _, _ = self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            if busy:
                log.info("WAL checkpoint deferred: another connection is reading")
                return
            self.db.execute(f"DELETE FROM meta WHERE key = '{PURGE_PENDING}'")

    def iter_all(self) -> Iterator[MemoryRow]:
        cur = self.db.execute(f"SELECT {row_columns()} FROM memories m ORDER BY m.rowid")
        for r in cur:
            yield self.decode_row(r)

    def count(self, status: str | None = None) -> int:
        if status is None:
            return int(self.db.execute("SELECT COUNT(*) FROM memories").fetchone()[0])
        return int(
            self.db.execute("SELECT COUNT(*) FROM memories WHERE status = ?", (status,)).fetchone()[
                0
            ]
        )

    # ------------------------------------------------------------ search

    def _fresh(self) -> None:
        with self._lock:
            if not self._in_tx:
                self._refresh()
            self._index_pending()

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
        if flt.tags is not None or flt.exclude_tags is not None:
            allowed = (self._tagged(flt.tags), self._tagged(flt.exclude_tags))
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

    def _tagged(self, tags: frozenset[str] | None) -> np.ndarray | None:
        """The rowids of the rows carrying any of ``tags`` (None for None)."""
        if tags is None:
            return None
        marks = ",".join("?" * len(tags))
        found = self.db.execute(
            f"SELECT memory_rowid FROM memory_tags WHERE tag IN ({marks})", sorted(tags)
        )
        return np.fromiter((r[0] for r in found), dtype=np.int64)

    def vector_search_many(
        self, queries: np.ndarray, k: int, flt: SearchFilter, min_similarity: float = -1.0
    ) -> list[list[tuple[str, float]]]:
        """:meth:`vector_search` for each row of ``queries``, answered together."""
        if flt.tags is not None or flt.exclude_tags is not None:
            return [
                [h for h in self.vector_search(q, k, flt) if h[1] >= min_similarity]
                for q in queries
            ]
        self._fresh()
        if self._index is None or len(queries) == 0:
            return [[] for _ in queries]
        if np.shape(queries)[1] != self._index.dim:
            raise DimensionError(
                f"query embedding has {np.shape(queries)[1]} dimensions; "
                f"this store uses {self._index.dim}"
            )
        found = self._index.search_many(queries, k, flt, min_similarity)
        rowids = sorted({r for hits in found for r, _ in hits})
        ids: dict[int, str] = {}
        for chunk in DIALECT.chunks(rowids):
            marks = ",".join("?" * len(chunk))
            ids.update(
                self.db.execute(f"SELECT rowid, id FROM memories WHERE rowid IN ({marks})", chunk)
            )
        return [[(ids[r], s) for r, s in hits if r in ids] for hits in found]

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
        for chunk in DIALECT.chunks(list(memory_ids)):
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

    # ------------------------------------------------------------ provenance

    # ------------------------------------------------------------ session import

    def records_add(self, uuids: Sequence[str], path: str) -> None:
        self._require_tx()
        self.db.executemany(
            "INSERT OR IGNORE INTO transcript_records (uuid, path) VALUES (?, ?)",
            [(u, path) for u in uuids],
        )

    # ------------------------------------------------------------ export (memloom migrate)
