"""The team store: PostgreSQL with pgvector, behind the same protocol as SQLite.

Nothing lives only in this process: vectors are searched by pgvector's HNSW
index, keyword scores are BM25 computed in SQL from FTS5-identical terms (so
both backends rank alike), and every write transaction first takes one
advisory lock — the write path's "is this text already stored?" check and its
insert are atomic across every ``memloom serve`` sharing the database.

A store opened for a :class:`~memloom.store.base.Principal` (see
:meth:`PostgresStore.scoped`) reads its owner's rows and its shared team
scopes, and writes, changes and deletes only its owner's rows.
"""

from __future__ import annotations

import logging
import math
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memloom.store.base import (
    LOCAL_OWNER,
    UPDATABLE,
    DimensionError,
    MemoryRow,
    NotFoundError,
    Principal,
    ReadOnlyError,
    SearchFilter,
    StoreError,
    TokenRow,
    UnavailableError,
)
from memloom.store.dialect import PostgresDialect
from memloom.store.fts_terms import DocTerms, analyse, analyse_many, query_stems
from memloom.store.pg_stats import PendingStats, keyword_stats
from memloom.store.pg_vectors import (
    EF_RECHECK,
    EF_SEARCH,
    WRITE_EF_SEARCH,
    ef_search_for,
    index_sql,
    search_args,
    search_sql,
)
from memloom.store.postgres_migrations import MIGRATIONS
from memloom.store.sql import SQLStore
from memloom.store.tokens import hash_token, new_token

try:
    import psycopg
    from pgvector.psycopg import register_vector
    from psycopg.types.json import Jsonb
    from psycopg_pool import ConnectionPool, PoolTimeout
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise StoreError(
        "PostgreSQL support needs its client libraries: pip install 'memloom[postgres]'"
    ) from exc

# After the client libraries: it needs psycopg too.
from memloom.store.pg_reindex import REINDEX_DELAY, LiveIndex, cancel_rebuilds, record_index

log = logging.getLogger(__name__)

#: Advisory lock keys ("memloom" in ASCII, then a purpose byte).
WRITE_LOCK = 0x6D656D6C6F6F6D01
MIGRATE_LOCK = 0x6D656D6C6F6F6D02
#: Seconds between updates of a token's ``last_used_at``.
TOKEN_USE_RESOLUTION = 60.0
# FTS5's BM25 constants (fts5_aux.c), so scores match the SQLite store's.
BM25_K1 = 1.2
BM25_B = 0.75


def _array(value: Any) -> np.ndarray:
    """A vector read from the database (pgvector's ``Vector`` or a sequence)."""
    if hasattr(value, "to_numpy"):
        value = value.to_numpy()
    return np.asarray(value, dtype=np.float32)


def _vec(vec: np.ndarray | None) -> np.ndarray | None:
    return None if vec is None else np.asarray(vec, dtype=np.float32)


#: PostgreSQL's SQL: jsonb and text[] columns, pgvector vectors.
DIALECT = PostgresDialect(encode_json=Jsonb, encode_vector=_vec, decode_vector=_array)


def _tsquery(stems: Sequence[str]) -> str:
    return " | ".join("'" + s.replace("\\", "\\\\").replace("'", "''") + "'" for s in stems)


@dataclass
class _Core:
    """What every scoped view of one database shares."""

    url: str
    pool: ConnectionPool
    #: The vector index searches go through, and its one-time rebuild (pg_reindex).
    index: LiveIndex
    local: threading.local = field(default_factory=threading.local)
    dimension: int | None = None
    #: The HNSW search width for the store's size, and what each connection has.
    ef_search: int = EF_SEARCH
    ef_checked: float = -1e9
    ef_applied: dict[int, tuple[int, int]] = field(default_factory=dict)


class PostgresStore(SQLStore):
    """:class:`memloom.store.base.Store` and :class:`memloom.store.base.TeamStore` on a
    PostgreSQL database with pgvector."""

    dialect = DIALECT

    def __init__(
        self,
        url: str,
        *,
        principal: Principal | None = None,
        default_owner: str = LOCAL_OWNER,
        pool_size: int = 8,
        reindex_delay: float = REINDEX_DELAY,
        _core: _Core | None = None,
    ) -> None:
        self.principal = principal
        self.owner = principal.owner if principal else default_owner
        self._default_owner = default_owner
        #: Views made by :meth:`scoped` borrow the pool; only its opener closes it.
        self._owns_pool = _core is None
        if _core is not None:
            self._core = _core
            return
        try:
            with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
                self.migrate_schema(conn)
                index = LiveIndex.read(conn)
        except psycopg.Error as exc:
            raise StoreError(f"cannot open the PostgreSQL store: {exc}".strip()) from exc
        pool = ConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            kwargs={"autocommit": True},
            configure=self._configure,
            open=False,
            name="memloom",
        )
        try:
            pool.open(wait=True, timeout=30)
        except Exception as exc:
            pool.close()
            raise StoreError(f"cannot open a connection pool to PostgreSQL: {exc}") from exc
        self._core = _Core(url=url, pool=pool, index=index)
        self._core.dimension = self._read_dimension()
        index.start(url, reindex_delay)  # an older database's index: rebuilt once, meanwhile

    # ------------------------------------------------------------ plumbing

    @staticmethod
    def _configure(conn: psycopg.Connection[Any]) -> None:
        register_vector(conn)
        conn.execute(f"SET hnsw.ef_search = {EF_SEARCH}")
        try:
            # Filtered searches keep walking the graph until k rows pass (pgvector 0.8+).
            conn.execute("SET hnsw.iterative_scan = strict_order")
        except psycopg.Error:
            log.info("pgvector < 0.8: filtered vector searches may return fewer rows")

    @staticmethod
    def migrate_schema(conn: psycopg.Connection[Any]) -> None:
        """Bring the database's schema up to date (under an advisory lock: several
        servers and capture queues may open it at once). An older database's vector
        index is rebuilt later, off this lock (store/pg_reindex.py)."""
        conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATE_LOCK,))
        try:
            conn.execute("CREATE TABLE IF NOT EXISTS memloom_schema (version INTEGER NOT NULL)")
            row = conn.execute("SELECT version FROM memloom_schema").fetchone()
            current = 0 if row is None else int(row[0])
            if current > len(MIGRATIONS):
                raise StoreError(
                    f"the database was written by a newer memloom (schema {current}, this "
                    f"version knows {len(MIGRATIONS)}); upgrade memloom"
                )
            for number, script in enumerate(MIGRATIONS[current:], start=current + 1):
                with conn.transaction():
                    conn.execute(script)
                    conn.execute("DELETE FROM memloom_schema")
                    conn.execute("INSERT INTO memloom_schema (version) VALUES (%s)", (number,))
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATE_LOCK,))

    def reindex_wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for this process's rebuild of an older
        database's vector index; True once none runs here."""
        return self._core.index.wait(timeout)

    @property
    def schema_version(self) -> int:
        with self._conn() as conn:
            row = conn.execute("SELECT version FROM memloom_schema").fetchone()
        return 0 if row is None else int(row[0])

    def scoped(self, principal: Principal | None) -> PostgresStore:
        """A view of the same database acting for ``principal`` (shares the pool)."""
        return PostgresStore(
            self._core.url,
            principal=principal,
            default_owner=self._default_owner,
            _core=self._core,
        )

    @contextmanager
    def _conn(self) -> Iterator[psycopg.Connection[Any]]:
        """This thread's transaction connection, or a pooled one for a single statement."""
        conn = getattr(self._core.local, "conn", None)
        if conn is not None:
            yield conn
            return
        with self._pooled() as pooled:
            yield pooled

    @contextmanager
    def _pooled(self) -> Iterator[psycopg.Connection[Any]]:
        try:
            with self._core.pool.connection() as pooled:
                yield pooled
        except (psycopg.OperationalError, PoolTimeout) as exc:
            raise UnavailableError(f"PostgreSQL: {exc}".strip()) from exc

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """A write transaction; nested calls join the outer one. Writers take turns."""
        local = self._core.local
        if getattr(local, "conn", None) is not None:
            local.depth += 1
            try:
                yield
            finally:
                local.depth -= 1
            return
        with self._pooled() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            local.conn, local.depth, local.pending = conn, 1, PendingStats()
            dimension = self._core.dimension
            try:
                yield
                local.pending.flush(conn)
            except BaseException:
                self._core.dimension = dimension  # a rolled-back first insert sets none
                raise
            finally:
                local.conn = local.pending = None

    def _require_tx(self) -> psycopg.Connection[Any]:
        conn = getattr(self._core.local, "conn", None)
        if conn is None:
            raise StoreError("write outside a transaction")
        return conn

    def close(self) -> None:
        if self._owns_pool:
            self._core.index.stop()  # cancels a build in progress
            self._core.pool.close()

    # ------------------------------------------------------------ owners

    def _readable_sql(self, alias: str) -> tuple[list[str], list[Any]]:
        if self.principal is None:
            return [], []
        return [f"{alias}.owner = ANY(%s)"], [sorted(self.principal.readable)]

    def _owned_sql(self, alias: str) -> tuple[list[str], list[Any]]:
        if self.principal is None:
            return [], []
        return [f"{alias}.owner = %s"], [self.owner]

    def _mine_sql(self, alias: str) -> tuple[list[str], list[Any]]:
        return [f"{alias}.owner = %s"], [self.owner]

    def _owner_insert(self) -> tuple[list[str], list[Any]]:
        return ["owner"], [self.owner]

    def _readable_owners(self) -> list[str] | None:
        """The owners whose rows the principal reads; None: every owner's."""
        return None if self.principal is None else sorted(self.principal.readable)

    def _readable(self, alias: str = "m") -> tuple[str, list[Any]]:
        conditions, params = self._readable_sql(alias)
        return " AND ".join(conditions) or "TRUE", params

    def _owned(self, alias: str = "m") -> tuple[str, list[Any]]:
        conditions, params = self._owned_sql(alias)
        return " AND ".join(conditions) or "TRUE", params

    def _check_writable(self, conn: psycopg.Connection[Any], memory_ids: Sequence[str]) -> None:
        """Refuse (403) to change a row the principal may only read."""
        if self.principal is None or not memory_ids:
            return
        row = conn.execute(
            "SELECT id, owner FROM memories WHERE id = ANY(%s) AND owner <> %s "
            "AND owner = ANY(%s) LIMIT 1",
            (list(memory_ids), self.owner, sorted(self.principal.readable)),
        ).fetchone()
        if row is not None:
            raise ReadOnlyError(
                f"memory {row[0]} belongs to the shared scope {row[1]!r}: read-only here"
            )

    # ------------------------------------------------------------ meta

    def _read_dimension(self) -> int | None:
        value = self.get_meta("dimension")
        return None if value is None else int(value)

    @property
    def dimension(self) -> int | None:
        if self._core.dimension is None:
            self._core.dimension = self._read_dimension()
        return self._core.dimension

    def _set_dimension(self, conn: psycopg.Connection[Any], dim: int) -> None:
        """Type the vector column and build its HNSW index (first vector, or reembed)."""
        conn.execute("DROP INDEX IF EXISTS memories_embedding_hnsw")
        conn.execute(f"ALTER TABLE memories ALTER COLUMN embedding TYPE vector({int(dim)})")
        statement = index_sql(dim, self._core.index.halfvec)
        if statement is None:
            log.warning("vectors of %d dimensions: pgvector cannot index them; exact search", dim)
        else:
            conn.execute(statement)
        record_index(conn, statement)
        self.set_meta("dimension", str(dim))
        self._core.dimension = dim
        self._core.index.built()

    def _check_dimension(self, conn: psycopg.Connection[Any], vec: np.ndarray) -> None:
        dim = self.dimension
        if dim is None:
            # Another server may have set it since we looked: read again under the lock.
            current = conn.execute("SELECT value FROM meta WHERE key = 'dimension'").fetchone()
            dim = None if current is None else int(current[0])
            if dim is None:
                self._set_dimension(conn, len(vec))
                return
            self._core.dimension = dim
        if dim != len(vec):
            current = conn.execute("SELECT value FROM meta WHERE key = 'dimension'").fetchone()
            dim = self._core.dimension = None if current is None else int(current[0])
        if dim is not None and dim != len(vec):
            raise DimensionError(f"embedding has {len(vec)} dimensions; this store uses {dim}")

    # ------------------------------------------------------------ keyword statistics

    def _count_terms(self, docs: Sequence[tuple[str, dict[str, int], int]], sign: int) -> None:
        """Add (sign=1) or remove (sign=-1) ``(owner, term counts, length)`` documents
        from the BM25 statistics, written once when the transaction ends."""
        self._core.local.pending.count_terms(docs, sign)

    def _count_rows(self, owner: str, delta: int) -> None:
        self._core.local.pending.count_rows(owner, delta)

    # ------------------------------------------------------------ memories

    def insert(self, row: MemoryRow) -> None:
        self.insert_many([row])

    def insert_many(
        self, rows: Sequence[MemoryRow], terms: Sequence[DocTerms] | None = None
    ) -> None:
        """Insert rows in one round of statements (``memloom migrate`` copies in bulk)."""
        conn = self._require_tx()
        if not rows:
            return
        for row in rows:
            if row.embedding is not None:
                self._check_dimension(conn, row.embedding)
        docs = list(terms) if terms is not None else analyse_many([r.text for r in rows])
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO memories (id, owner, root_id, version, status, type, text, "
                "original_text, content_hash, embedding, source, tags, metadata, project, "
                "sensitivity, session_id, created_at, asserted_at, last_referenced, "
                "access_count, expires_at, expired_at, superseded_by, decay_level, pinned, "
                "anchors, terms, term_counts, doc_len) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, "
                "%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
                "array_to_tsvector(%s::text[]), %s, %s)",
                [
                    (
                        r.id,
                        self.owner,
                        r.root_id,
                        r.version,
                        r.status,
                        r.type,
                        r.text,
                        r.original_text,
                        r.content_hash,
                        _vec(r.embedding),
                        r.source,
                        list(r.tags),
                        Jsonb(r.metadata),
                        r.project,
                        r.sensitivity,
                        r.session_id,
                        r.created_at,
                        r.asserted_at,
                        r.last_referenced,
                        r.access_count,
                        r.expires_at,
                        r.expired_at,
                        r.superseded_by,
                        r.decay_level,
                        bool(r.pinned),
                        Jsonb(r.anchors),
                        sorted(d.counts),
                        Jsonb(d.counts),
                        d.length,
                    )
                    for r, d in zip(rows, docs, strict=True)
                ],
            )
        self._count_terms([(self.owner, d.counts, d.length) for d in docs], 1)
        self._count_rows(self.owner, len(rows))

    def update(self, memory_id: str, **fields: Any) -> None:
        conn = self._require_tx()
        unknown = set(fields) - UPDATABLE
        if unknown:
            raise StoreError(f"cannot update {sorted(unknown)}")
        if not fields:
            return
        self._check_writable(conn, [memory_id])
        where, params = self._owned("memories")
        old = None
        if "text" in fields:
            old = conn.execute(
                f"SELECT term_counts, doc_len, owner FROM memories WHERE id = %s AND {where} "
                "FOR UPDATE",
                [memory_id, *params],
            ).fetchone()
            if old is None:
                return
        values: dict[str, Any] = dict(fields)
        if "tags" in values:
            values["tags"] = list(values["tags"])
        for name in ("metadata", "anchors"):
            if name in values:
                values[name] = Jsonb(values[name])
        if "pinned" in values:
            values["pinned"] = bool(values["pinned"])
        assignments = [f"{k} = %s" for k in values]
        doc = None
        if "text" in fields:
            doc = analyse(fields["text"])
            assignments += [
                "terms = array_to_tsvector(%s::text[])",
                "term_counts = %s",
                "doc_len = %s",
            ]
            values.update(_terms=sorted(doc.counts), _counts=Jsonb(doc.counts), _len=doc.length)
        found = conn.execute(
            f"UPDATE memories SET {', '.join(assignments)} WHERE id = %s AND {where} RETURNING id",
            [*values.values(), memory_id, *params],
        ).fetchone()
        if found is not None and doc is not None and old is not None:
            self._count_terms([(old[2], dict(old[0]), int(old[1]))], -1)
            self._count_terms([(old[2], doc.counts, doc.length)], 1)

    def touch(self, memory_ids: Sequence[str], at: float) -> None:
        """Recency bookkeeping after a recall: a HOT update (no index covers these
        columns) that does not wait for its WAL flush — losing the last few touches
        in a crash costs nothing, waiting for the disk on every recall would."""
        if not memory_ids:
            return
        where, params = self._readable("memories")
        with self._conn() as conn, conn.transaction():
            conn.execute("SET LOCAL synchronous_commit = off")
            conn.execute(
                "UPDATE memories SET last_referenced = %s, access_count = access_count + 1 "
                f"WHERE id = ANY(%s) AND {where}",
                [at, sorted(memory_ids), *params],
            )

    def project_labels(self) -> list[str]:
        # This owner's only: another machine's folders mean nothing here.
        conditions, params = self._mine_sql("memories")
        rows = self._fetch(
            "SELECT DISTINCT project FROM memories WHERE project IS NOT NULL AND "
            + " AND ".join(conditions),
            params,
        )
        return [r[0] for r in rows]

    def rename_project(self, old: str, new: str) -> int:
        conn = self._require_tx()
        conditions, params = self._mine_sql("memories")
        cur = conn.execute(
            "UPDATE memories SET project = %s WHERE project = %s AND " + " AND ".join(conditions),
            [new, old, *params],
        )
        return cur.rowcount

    def expire_ids(self, memory_ids: Sequence[str], at: float) -> int:
        conn = self._require_tx()
        self._check_writable(conn, memory_ids)
        where, params = self._owned("memories")
        cur = conn.execute(
            "UPDATE memories SET status = 'expired', expired_at = %s "
            f"WHERE status = 'active' AND id = ANY(%s) AND {where}",
            [at, list(memory_ids), *params],
        )
        return cur.rowcount

    def expire_due(self, now: float) -> int:
        """Mark rows whose TTL has passed as expired (at their expiry time), any owner's:
        a TTL is the row's own instruction."""
        conn = self._require_tx()
        cur = conn.execute(
            "UPDATE memories SET status = 'expired', expired_at = expires_at "
            "WHERE status = 'active' AND expires_at IS NOT NULL AND expires_at <= %s",
            (now,),
        )
        return cur.rowcount

    def delete(self, memory_ids: Sequence[str]) -> int:
        conn = self._require_tx()
        if not memory_ids:
            return 0
        self._check_writable(conn, memory_ids)
        where, params = self._owned("memories")
        gone = conn.execute(
            f"DELETE FROM memories WHERE id = ANY(%s) AND {where} "
            "RETURNING id, term_counts, doc_len, owner",
            [list(memory_ids), *params],
        ).fetchall()
        ids = [r[0] for r in gone]
        if ids:
            conn.execute("DELETE FROM provenance WHERE memory_id = ANY(%s)", (ids,))
            conn.execute(
                "DELETE FROM conflicts WHERE new_id = ANY(%s) OR existing_id = ANY(%s)",
                (ids, ids),
            )
            self._count_terms([(r[3], dict(r[1]), int(r[2])) for r in gone], -1)
            for r in gone:
                self._count_rows(r[3], -1)
        return len(ids)

    def purge(self) -> None:
        """After a forget: VACUUM, so the deleted rows' space is reclaimed for reuse
        (PostgreSQL keeps dead rows until then). Not a secure erase of the disk. While
        the vector index is rebuilt, VACUUM would wait for the whole build (the same
        table lock): it skips ``memories`` then, and the builder vacuums it after."""
        skip = " (SKIP_LOCKED)" if self._core.index.pending else ""
        with self._pooled() as conn:
            for table in ("memories", "provenance", "conflicts"):
                conn.execute(f"VACUUM{skip if table == 'memories' else ''} {table}")

    def iter_all(self, batch: int = 1000, with_embeddings: bool = False) -> Iterator[MemoryRow]:
        """Every readable row in insertion order, fetched in batches (keyset, no cursor)."""
        for rows in self._row_batches(batch, embedding=with_embeddings):
            yield from rows

    def count(self, status: str | None = None) -> int:
        with self._conn() as conn:
            if status is None:  # kept per owner by every write: no scan of the table
                owners = "" if self.principal is None else "WHERE owner = ANY(%s)"
                params = [] if self.principal is None else [sorted(self.principal.readable)]
                row = conn.execute(f"SELECT SUM(memories) FROM owner_counts {owners}", params)
                total = int(row.fetchone()[0] or 0)
                pending = getattr(self._core.local, "pending", None)
                if pending is not None:  # this transaction's writes, not yet flushed
                    readable = None if self.principal is None else self.principal.readable
                    total += sum(
                        d for o, d in pending.owners.items() if readable is None or o in readable
                    )
                return total
            where, params = self._readable()
            row = conn.execute(
                f"SELECT COUNT(*) FROM memories m WHERE {where} AND m.status = %s",
                [*params, status],
            )
            return int(row.fetchone()[0])

    def vector_search_many(
        self, queries: np.ndarray, k: int, flt: SearchFilter, min_similarity: float = -1.0
    ) -> list[list[tuple[str, float]]]:
        """The write path's neighbour search: every query of a batch in one statement
        (a ``LATERAL`` HNSW scan per vector), at the narrow ``WRITE_EF_SEARCH``."""
        qs = [_vec(q) for q in queries]
        if not qs or k <= 0:
            return [[] for _ in qs]
        dim = self.dimension
        if dim is not None and len(qs[0]) != dim:
            dim = self._core.dimension = self._read_dimension()
        if dim is None:
            return [[] for _ in qs]
        if len(qs[0]) != dim:
            raise DimensionError(
                f"query embedding has {len(qs[0])} dimensions; this store uses {dim}"
            )
        where, params = self._filter_sql(flt)
        out: list[list[tuple[str, float]]] = [[] for _ in qs]
        half = self._core.index.search_halfvec  # the live index's expression
        with self._conn() as conn, conn.transaction():
            # Local to this block (a transaction, or a savepoint of the caller's), and
            # put back after: the recall path's breadth is not this one's.
            (previous,) = conn.execute("SELECT current_setting('hnsw.ef_search')").fetchone()
            conn.execute(
                "SELECT set_config('hnsw.ef_search', %s, true)",
                [str(max(WRITE_EF_SEARCH, k))],
            )
            rows = conn.execute(
                "SELECT q.ord, n.id, n.sim FROM unnest(%s::vector[]) "
                "WITH ORDINALITY AS q(v, ord) CROSS JOIN LATERAL ("
                f"{search_sql(where, 'q.v', dim, half)}) n "
                "WHERE n.sim >= %s ORDER BY q.ord, n.sim DESC",
                [qs, *search_args(None, params, k, dim, half), min_similarity],
            ).fetchall()
            conn.execute("SELECT set_config('hnsw.ef_search', %s, true)", [previous])
        for ord_, memory_id, sim in rows:
            out[int(ord_) - 1].append((memory_id, float(sim)))
        return out

    # ------------------------------------------------------------ search

    def vector_search(
        self, query: np.ndarray, k: int, flt: SearchFilter
    ) -> list[tuple[str, float]]:
        dim = self.dimension
        if dim is not None and len(query) != dim:
            dim = self._core.dimension = self._read_dimension()  # re-embedded by another server?
        if dim is None or k <= 0:
            return []
        if len(query) != dim:
            raise DimensionError(
                f"query embedding has {len(query)} dimensions; this store uses {dim}"
            )
        where, params = self._filter_sql(flt)
        q = _vec(query)
        with self._conn() as conn:
            self._tune_search(conn)
            half = self._core.index.search_halfvec  # the live index's expression
            rows = conn.execute(
                search_sql(where, "%s", dim, half), search_args(q, params, k, dim, half)
            ).fetchall()
        return [(r[0], float(r[1])) for r in rows]

    def _tune_search(self, conn: psycopg.Connection[Any]) -> None:
        """Widen the HNSW search as the store grows (checked once a minute), and follow
        a rebuilt vector index once it is swapped in."""
        core = self._core
        core.index.follow(conn)
        now = time.monotonic()
        if now - core.ef_checked > EF_RECHECK:
            total = conn.execute("SELECT COALESCE(SUM(memories), 0) FROM owner_counts")
            core.ef_search = ef_search_for(int(total.fetchone()[0]))
            core.ef_checked = now
        # Keyed by the connection and its server process, so a recycled object id
        # with a new session is set again.
        state = (conn.info.backend_pid, core.ef_search)
        if core.ef_applied.get(id(conn)) != state:
            conn.execute(f"SET hnsw.ef_search = {int(core.ef_search)}")
            # Inside a transaction the SET is undone by a rollback: remember it only
            # when it was made outside one.
            if conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
                core.ef_applied[id(conn)] = state

    def keyword_search(
        self, terms: Sequence[str], k: int, flt: SearchFilter
    ) -> list[tuple[str, float]]:
        """BM25 exactly as FTS5 computes it; (id, score), higher is better."""
        stems = query_stems(terms)
        if not stems:
            return []
        distinct = sorted(set(stems))
        with self._conn() as conn:
            df, n_docs, n_tokens = keyword_stats(conn, self._readable_owners(), distinct)
            if n_docs <= 0:
                return []
            idf = []
            for s in stems:
                hits = int(df.get(s, 0))
                value = math.log((n_docs - hits + 0.5) / (hits + 0.5))
                idf.append(value if value > 0 else 1e-6)
            avgdl = n_tokens / n_docs if n_tokens > 0 else 1.0
            where, params = self._filter_sql(flt)
            rows = conn.execute(
                "SELECT m.id, SUM(q.idf * (tf.v * %s) "
                "/ (tf.v + %s * (1 - %s + %s * m.doc_len / %s))) AS score FROM memories m "
                "CROSS JOIN unnest(%s::text[], %s::float8[]) AS q(term, idf) "
                "CROSS JOIN LATERAL (SELECT (m.term_counts ->> q.term)::float8 AS v) tf "
                f"WHERE m.terms @@ %s::tsquery AND tf.v IS NOT NULL AND {where} "
                "GROUP BY m.id ORDER BY score DESC, m.id LIMIT %s",
                [
                    BM25_K1 + 1,
                    BM25_K1,
                    BM25_B,
                    BM25_B,
                    avgdl,
                    stems,
                    idf,
                    _tsquery(distinct),
                    *params,
                    k,
                ],
            ).fetchall()
        return [(r[0], float(r[1])) for r in rows]

    def document_frequencies(self, stems: Sequence[str]) -> tuple[dict[str, int], int]:
        if not stems:
            return {}, 0
        with self._conn() as conn:
            df, n_docs, _ = keyword_stats(conn, self._readable_owners(), stems)
        return df, n_docs

    def embeddings_for(self, memory_ids: Sequence[str]) -> dict[str, np.ndarray]:
        if not memory_ids:
            return {}
        where, params = self._readable()
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT m.id, m.embedding FROM memories m WHERE m.id = ANY(%s) "
                f"AND m.embedding IS NOT NULL AND {where}",
                [list(memory_ids), *params],
            ).fetchall()
        return {r[0]: _array(r[1]) for r in rows}

    def replace_embeddings(self, vectors: dict[str, np.ndarray | None], dim: int) -> None:
        """Swap every vector at once (``memloom reembed``); the index is rebuilt after."""
        conn = self._require_tx()
        if self.principal is not None:
            raise StoreError(
                "re-embedding rewrites every owner's vectors: run it without MEMLOOM_OWNER"
            )
        cancel_rebuilds(conn)  # an older database's rebuild, if one runs: this replaces it
        conn.execute("DROP INDEX IF EXISTS memories_embedding_hnsw")
        conn.execute("ALTER TABLE memories ALTER COLUMN embedding TYPE vector USING NULL")
        conn.execute(f"ALTER TABLE memories ALTER COLUMN embedding TYPE vector({int(dim)})")
        with conn.cursor() as cur:
            cur.executemany(
                "UPDATE memories SET embedding = %s WHERE id = %s",
                [(_vec(v), mid) for mid, v in vectors.items()],
            )
        self._set_dimension(conn, dim)

    def reload_index(self) -> None:
        """Nothing to reload: the index lives in the database."""
        self._core.dimension = self._read_dimension()

    def save_index(self) -> None:
        """Nothing to save: PostgreSQL persists the HNSW graph itself."""

    # ------------------------------------------------------------ conflicts

    # ------------------------------------------------------------ provenance

    # ------------------------------------------------------------ session import

    def records_add(self, uuids: Sequence[str], path: str) -> None:
        conn = self._require_tx()
        if not uuids:
            return
        conn.execute(
            "INSERT INTO transcript_records (owner, uuid, path) "
            "SELECT %s, u, %s FROM unnest(%s::text[]) u ON CONFLICT DO NOTHING",
            (self.owner, path, list(uuids)),
        )

    # ------------------------------------------------------------ API tokens

    def token_create(
        self, owner: str, shared: Sequence[str] = (), name: str | None = None
    ) -> tuple[TokenRow, str]:
        """A new token for ``owner``; the secret is returned once and stored hashed."""
        secret = new_token()
        row = TokenRow(
            id=uuid.uuid4().hex[:12],
            name=name,
            owner=owner,
            shared=sorted(set(shared) - {owner}),
            created_at=time.time(),
        )
        with self.transaction():
            self._require_tx().execute(
                "INSERT INTO api_tokens (id, name, owner, shared, token_hash, created_at) "
                "VALUES (%s, %s, %s, %s, %s, %s)",
                (row.id, row.name, row.owner, row.shared, hash_token(secret), row.created_at),
            )
        return row, secret

    def token_list(self) -> list[TokenRow]:
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT id, name, owner, shared, created_at, last_used_at, revoked_at "
                "FROM api_tokens ORDER BY created_at"
            ).fetchall()
        return [TokenRow(r[0], r[1], r[2], list(r[3]), r[4], r[5], r[6]) for r in rows]

    def token_revoke(self, token_id: str) -> TokenRow:
        with self.transaction():
            r = (
                self._require_tx()
                .execute(
                    "UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, %s) WHERE id = %s "
                    "RETURNING id, name, owner, shared, created_at, last_used_at, revoked_at",
                    (time.time(), token_id),
                )
                .fetchone()
            )
        if r is None:
            raise NotFoundError(f"no token {token_id}")
        return TokenRow(r[0], r[1], r[2], list(r[3]), r[4], r[5], r[6])

    def token_principal(self, secret: str) -> Principal | None:
        """Who a presented token acts for; None for an unknown or revoked token."""
        now = time.time()
        with self._conn() as conn:
            r = conn.execute(
                "SELECT id, owner, shared, last_used_at FROM api_tokens "
                "WHERE token_hash = %s AND revoked_at IS NULL",
                (hash_token(secret),),
            ).fetchone()
            if r is None:
                return None
            if r[3] is None or r[3] < now - TOKEN_USE_RESOLUTION:
                # Coarse on purpose: one write a minute per token, not one per request.
                conn.execute("UPDATE api_tokens SET last_used_at = %s WHERE id = %s", (now, r[0]))
        return Principal(r[1], frozenset(r[2]))

    def has_tokens(self) -> bool:
        with self._conn() as conn:
            row = conn.execute("SELECT 1 FROM api_tokens WHERE revoked_at IS NULL LIMIT 1")
            return row.fetchone() is not None

    # ------------------------------------------------------------ export (backups, migrate)
