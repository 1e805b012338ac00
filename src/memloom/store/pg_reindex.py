"""The one-time rebuild of an older database's vector index, without stopping the team.

A database whose HNSW index an older memloom built (``meta.vector_index`` differs from
what this memloom wants) gets the new index once. A plain ``CREATE INDEX`` under the
migration lock blocked every write, and every other server's open, for the whole build
(23 minutes at a million rows). Instead, one process -- whichever takes
:data:`REINDEX_LOCK` first -- builds the new index with ``CREATE INDEX CONCURRENTLY``
under a temporary name on its own autocommit connection, in a background thread, and
then swaps it in with one short transaction (drop the old index, rename the new one,
record ``meta.vector_index``). Every process serves meanwhile; searches keep using the
old index (the SQL follows the live index: :func:`live_halfvec`), so only their speed
may differ until the swap, never their answers.

A build killed part-way leaves an INVALID index behind (``pg_index.indisvalid``): the
next builder drops it and starts again. A valid leftover under the temporary name (its
builder died after the build, before the swap) is the same definition -- the name is a
hash of the statement -- and is swapped in as it is.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import errors, sql

from memloom.store.pg_vectors import has_halfvec, index_sql

log = logging.getLogger(__name__)

#: Advisory lock key of the builder ("memloom" in ASCII, then a purpose byte; the
#: store's write and migration locks are 01 and 02).
REINDEX_LOCK = 0x6D656D6C6F6F6D03
INDEX_NAME = "memories_embedding_hnsw"
#: The builder's ``application_name``: how a re-embed finds it to cancel it.
BUILDER = "memloom reindex"
#: Seconds a store waits after opening before it starts a build: a short CLI command
#: is done by then and never starts a build it would cancel when it exits.
REINDEX_DELAY = 5.0
#: Seconds between looks while another process builds (or after a failed build).
RETRY = 30.0
#: The swap waits at most this long for the table lock, then tries again: a long
#: query in its way must not queue every other query behind the swap.
SWAP_LOCK_TIMEOUT = "2s"
#: Seconds :meth:`Reindexer.stop` waits for the builder to stop.
STOP_TIMEOUT = 10.0
#: Seconds between looks at the live index while a rebuild is pending.
RECHECK = 5.0


def record_index(conn: psycopg.Connection[Any], statement: str | None) -> None:
    """Record which vector index the database has (``""``: none, exact search)."""
    conn.execute(
        "INSERT INTO meta (key, value) VALUES ('vector_index', %s) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (statement or "",),
    )


def wanted_index(conn: psycopg.Connection[Any], halfvec: bool) -> tuple[bool, str | None]:
    """``(needed, statement)``: whether the database's vector index is not the one this
    memloom builds, and the statement of the one it builds (None: exact search)."""
    rows = dict(
        conn.execute(
            "SELECT key, value FROM meta WHERE key IN ('dimension', 'vector_index')"
        ).fetchall()
    )
    if "dimension" not in rows:
        return False, None  # no vector yet: the first one builds it
    statement = index_sql(int(rows["dimension"]), halfvec)
    return rows.get("vector_index") != (statement or ""), statement


def live_halfvec(conn: psycopg.Connection[Any], default: bool) -> bool:
    """Whether the index searches go through now is over the half-precision cast: the
    search's ORDER BY must be the live index's expression for the planner to use it.
    Without an index, ``default``."""
    row = conn.execute(
        "SELECT pg_get_indexdef(c.oid) FROM pg_class c "
        "WHERE c.relname = %s AND c.relkind = 'i' AND pg_table_is_visible(c.oid)",
        (INDEX_NAME,),
    ).fetchone()
    return default if row is None else "halfvec" in str(row[0])


def temp_name(statement: str) -> str:
    """The name the new index is built under: the same statement, the same name."""
    return f"{INDEX_NAME}_{hashlib.sha256(statement.encode()).hexdigest()[:10]}"


def concurrent_sql(statement: str, name: str) -> str:
    """``statement`` (``CREATE INDEX memories_embedding_hnsw ON …``) as a concurrent
    build under ``name``."""
    prefix = f"CREATE INDEX {INDEX_NAME} ON "
    if not statement.startswith(prefix):
        raise ValueError(f"not a vector index statement: {statement!r}")
    return f"CREATE INDEX CONCURRENTLY {name} ON {statement[len(prefix) :]}"


def leftovers(conn: psycopg.Connection[Any]) -> list[tuple[str, bool]]:
    """``(name, valid)`` of every temporary vector index on ``memories``."""
    rows = conn.execute(
        "SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
        "WHERE i.indrelid = 'memories'::regclass AND starts_with(c.relname, %s)",
        (INDEX_NAME + "_",),
    ).fetchall()
    return [(str(name), bool(valid)) for name, valid in rows]


@dataclass
class LiveIndex:
    """One process's view of the database's vector index: what this memloom builds,
    what searches go through now, and the rebuild this process runs, if any."""

    #: pgvector has halfvec: this memloom's index is over the half-precision cast.
    halfvec: bool
    #: The live index is over it: a search's SQL must match the index in place, which
    #: is the old one until the rebuild swaps the new one in.
    search_halfvec: bool
    #: A rebuild is due, in this process or another.
    pending: bool = False
    checked: float = -1e9
    reindexer: Reindexer | None = None

    @classmethod
    def read(cls, conn: psycopg.Connection[Any]) -> LiveIndex:
        halfvec = has_halfvec(conn)
        pending, _ = wanted_index(conn, halfvec)
        return cls(halfvec, live_halfvec(conn, halfvec), pending)

    def start(self, url: str, delay: float) -> None:
        """Start the rebuild in the background if one is due; opening never waits."""
        if self.pending and self.reindexer is None:
            self.reindexer = Reindexer(url, self.halfvec, self.swapped, delay)
            self.reindexer.start()

    def swapped(self, conn: psycopg.Connection[Any]) -> None:
        """The rebuilt index is live: searches take its SQL from now on."""
        self.search_halfvec = live_halfvec(conn, self.halfvec)
        self.pending = False

    def built(self) -> None:
        """The store built this memloom's index itself (first vector, re-embed)."""
        self.search_halfvec = self.halfvec

    def follow(self, conn: psycopg.Connection[Any]) -> None:
        """While a rebuild is pending, look every few seconds whether another process
        has swapped it in, and follow."""
        now = time.monotonic()
        if self.pending and now - self.checked > RECHECK:
            self.checked = now
            pending, _ = wanted_index(conn, self.halfvec)
            self.search_halfvec = live_halfvec(conn, self.halfvec)
            self.pending = pending

    def wait(self, timeout: float) -> bool:
        """Wait for this process's rebuild; True once none is running here."""
        return self.reindexer is None or self.reindexer.done.wait(timeout)

    def stop(self) -> None:
        if self.reindexer is not None:
            self.reindexer.stop()


def cancel_rebuilds(conn: psycopg.Connection[Any]) -> None:
    """Before a re-embed retypes the column (in its transaction): cancel a build in
    progress in any process -- it would wait for the re-embed's snapshot while the
    re-embed waits for its table lock -- and drop the temporary indexes, whose old
    width would refuse the new vectors. The builder finds the new index in place."""
    conn.execute(
        "SELECT pg_cancel_backend(pid) FROM pg_stat_activity "
        "WHERE datname = current_database() AND application_name = %s "
        "AND pid <> pg_backend_pid()",
        (BUILDER,),
    )
    for name, _ in leftovers(conn):
        conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(name)))


class Reindexer:
    """The rebuild as a background thread of the store that opened the database.

    ``on_swap(conn)`` runs (on that thread) once the new index is live, so the store's
    searches follow it at once. :meth:`stop` cancels a build in progress: a store
    closed meanwhile neither waits for it nor leaves a thread behind.
    """

    def __init__(
        self,
        url: str,
        halfvec: bool,
        on_swap: Callable[[psycopg.Connection[Any]], None],
        delay: float = REINDEX_DELAY,
    ) -> None:
        self.url = url
        self.halfvec = halfvec
        self.on_swap = on_swap
        self.delay = delay
        self.done = threading.Event()
        self._stop = threading.Event()
        self._conn: psycopg.Connection[Any] | None = None
        self._told_waiting = False
        self._thread = threading.Thread(target=self._run, name="memloom-pg-reindex", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """Stop the builder: cancel its statement (again, until it notices, so a cancel
        that lands between two statements is not lost) and join its thread."""
        self._stop.set()
        deadline = time.monotonic() + timeout
        while self._thread.is_alive() and time.monotonic() < deadline:
            conn = self._conn
            if conn is not None and not conn.closed:
                try:
                    conn.cancel_safe(timeout=2.0)
                except psycopg.Error as exc:
                    log.debug("cancelling the vector index build: %s", exc)
            self._thread.join(0.2)
        if self._thread.is_alive():
            log.warning("the vector index build did not stop within %.0f s", timeout)

    # ------------------------------------------------------------ the thread

    def _run(self) -> None:
        if self._stop.wait(self.delay):
            return
        while not self._stop.is_set():
            try:
                with psycopg.connect(
                    self.url,
                    autocommit=True,
                    connect_timeout=10,
                    application_name=BUILDER,
                ) as conn:
                    self._conn = conn
                    try:
                        if self._attempt(conn):
                            return
                    finally:
                        self._conn = None
            except psycopg.Error as exc:
                if self._stop.is_set():
                    log.info("vector index build stopped: the store was closed")
                    return
                log.warning(
                    "vector index build failed (%s); trying again in %.0f s",
                    str(exc).strip(),
                    RETRY,
                )
            if self._stop.wait(RETRY):
                return

    def _attempt(self, conn: psycopg.Connection[Any]) -> bool:
        """One try at the build: False when another process holds the builder's lock."""
        (locked,) = conn.execute("SELECT pg_try_advisory_lock(%s)", (REINDEX_LOCK,)).fetchone()
        if not locked:
            if not self._told_waiting:
                log.info(
                    "another memloom process is rebuilding the vector index; serving meanwhile"
                )
                self._told_waiting = True
            needed, _ = wanted_index(conn, self.halfvec)
            if not needed:  # the other process swapped it in: follow it now
                self.on_swap(conn)
                self.done.set()
            return not needed
        try:
            self._build(conn)
        except BaseException:
            if self._stop.is_set():
                self._drop_invalid(conn)
            raise
        conn.execute("SELECT pg_advisory_unlock(%s)", (REINDEX_LOCK,))
        return True

    def _build(self, conn: psycopg.Connection[Any]) -> None:
        needed, statement = wanted_index(conn, self.halfvec)
        swapped = False
        while True:
            name = None if statement is None or not needed else temp_name(statement)
            for old, valid in leftovers(conn):
                if old != name or not valid:  # a killed build's, or another definition's
                    log.info("dropping the leftover index %s (valid: %s)", old, valid)
                    conn.execute(
                        sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(sql.Identifier(old))
                    )
            if not needed:
                break
            if statement is not None and name is not None and (name, True) not in leftovers(conn):
                if self._stop.is_set():
                    return
                log.warning(
                    "rebuilding the vector index of %s for this memloom, in the background "
                    "(CREATE INDEX CONCURRENTLY): reads and writes go on, searches use the "
                    "old index until the new one is swapped in",
                    conn.info.dbname,
                )
                started = time.monotonic()
                conn.execute(concurrent_sql(statement, name))
                log.info("vector index built in %.1f s", time.monotonic() - started)
            swapped, needed, statement = self._swap(conn, statement, name)
        self.on_swap(conn)
        self.done.set()
        if swapped:
            # A forget during the build could not VACUUM memories (the build held the
            # lock VACUUM needs): reclaim its dead rows now.
            conn.execute("VACUUM memories")

    def _swap(
        self, conn: psycopg.Connection[Any], statement: str | None, name: str | None
    ) -> tuple[bool, bool, str | None]:
        """Drop the old index and rename the new one in one short transaction:
        ``(swapped, needed, statement)``. Under the table lock the wanted index is read
        again: a re-embed meanwhile changes it, and :meth:`_build` starts over."""
        while True:
            try:
                with conn.transaction():
                    conn.execute(f"SET LOCAL lock_timeout = '{SWAP_LOCK_TIMEOUT}'")
                    conn.execute("LOCK TABLE memories IN ACCESS EXCLUSIVE MODE")
                    needed, now = wanted_index(conn, self.halfvec)
                    if not needed or now != statement:
                        if name is not None:
                            conn.execute(
                                sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(name))
                            )
                        return False, needed, now
                    conn.execute(f"DROP INDEX IF EXISTS {INDEX_NAME}")
                    if name is not None:
                        conn.execute(
                            sql.SQL("ALTER INDEX {} RENAME TO {}").format(
                                sql.Identifier(name), sql.Identifier(INDEX_NAME)
                            )
                        )
                    record_index(conn, statement)
                log.info("the new vector index of %s is live", conn.info.dbname)
                return True, False, statement
            except errors.LockNotAvailable:
                if self._stop.wait(1.0):
                    raise

    def _drop_invalid(self, conn: psycopg.Connection[Any]) -> None:
        """After a cancelled build: drop its INVALID index now (it costs every write an
        index update until dropped); if the table lock does not come quickly, the next
        build drops it."""
        try:
            conn.execute("SET lock_timeout = '1s'")
            for old, valid in leftovers(conn):
                if not valid:
                    conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(old)))
        except psycopg.Error as exc:
            log.warning("the cancelled build's index stays until the next build: %s", exc)
