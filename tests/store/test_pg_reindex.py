"""The one-time rebuild of an older PostgreSQL database's vector index runs beside the
team: CREATE INDEX CONCURRENTLY by one process, a second server serving meanwhile, a
short swap, recovery from a killed build, and a clean stop when the store closes."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import psycopg
import pytest

from memloom.store import pg_reindex
from memloom.store.base import SearchFilter
from memloom.store.pg_reindex import INDEX_NAME, concurrent_sql, leftovers, temp_name
from memloom.store.pg_vectors import index_sql, search_args, search_sql
from memloom.store.postgres import PostgresStore
from tests.store.test_postgres import _row

pytestmark = pytest.mark.postgres

DIM = 32
#: The float32 graph an older memloom built (a cheap ef_construction keeps the test short).
OLD_INDEX = (
    f"CREATE INDEX {INDEX_NAME} ON memories USING hnsw (embedding vector_cosine_ops) "
    "WITH (m = 16, ef_construction = 32)"
)
WANTED = index_sql(DIM, True) or ""


def _older_database(url: str, n: int, seed: int = 11) -> np.ndarray:
    """``n`` memories under the float32 index an older memloom built, and no
    ``meta.vector_index``: what this memloom must re-index. Returns the vectors."""
    rng = np.random.default_rng(seed)
    vecs = rng.normal(size=(n, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    store = PostgresStore(url)
    with store.transaction():
        store.insert_many([_row(0, "memory 0", vecs[0])])  # types the column
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP INDEX {INDEX_NAME}")  # loading without a graph is quick
    for start in range(1, n, 2000):
        with store.transaction():
            store.insert_many(
                [_row(i, f"memory {i}", vecs[i]) for i in range(start, min(n, start + 2000))]
            )
    store.close()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(OLD_INDEX)
        conn.execute("DELETE FROM meta WHERE key = 'vector_index'")
        # One build process, no parallel workers: a build as long on every machine,
        # and no more than one core taken from whoever else runs.
        conn.execute(f"ALTER DATABASE {conn.info.dbname} SET max_parallel_maintenance_workers = 0")
    return vecs


def _builds(url: str) -> list[tuple[int, str, str]]:
    """``(pid, phase, application_name)`` of each index build running on the database."""
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT p.pid, p.phase, a.application_name FROM pg_stat_progress_create_index p "
            "JOIN pg_stat_activity a ON a.pid = p.pid "
            "WHERE p.datname = current_database() AND p.command = 'CREATE INDEX CONCURRENTLY'"
        ).fetchall()
    return [(int(pid), str(phase), str(app)) for pid, phase, app in rows]


def _wait_for(check: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.01)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def _live_index(url: str) -> tuple[str, bool] | None:
    """The live vector index's definition and whether it is valid."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT pg_get_indexdef(i.indexrelid), i.indisvalid FROM pg_index i "
            "JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = %s",
            (INDEX_NAME,),
        ).fetchone()
    return None if row is None else (str(row[0]), bool(row[1]))


def _meta_index(url: str) -> str | None:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT value FROM meta WHERE key = 'vector_index'").fetchone()
    return None if row is None else str(row[0])


def _leftovers(url: str) -> list[tuple[str, bool]]:
    with psycopg.connect(url, autocommit=True) as conn:
        return leftovers(conn)


def _plan(store: PostgresStore, q: np.ndarray) -> str:
    """The plan of the store's vector search now (no ANALYZE: that would wait for the
    build, which holds the same table lock)."""
    where, params = store._filter_sql(SearchFilter())
    half = store._core.index.search_halfvec
    with store._conn() as conn, conn.transaction():
        conn.execute("SET LOCAL enable_seqscan = off")
        conn.execute("SET LOCAL enable_sort = off")
        rows = conn.execute(
            "EXPLAIN " + search_sql(where, "%s", DIM, half),
            search_args(q, params, 10, DIM, half),
        ).fetchall()
    return "\n".join(r[0] for r in rows)


@contextmanager
def _writer_in_progress(url: str) -> Iterator[psycopg.Connection[Any]]:
    """A transaction holding a writer's lock on ``memories``: a concurrent build waits
    for it before it starts building (phase "waiting for writers before build")."""
    with psycopg.connect(url) as conn:
        conn.execute("LOCK TABLE memories IN ROW EXCLUSIVE MODE")
        try:
            yield conn
        finally:
            conn.rollback()


def test_a_second_server_serves_while_the_old_index_is_rebuilt_concurrently(
    pg_url, caplog, monkeypatch
):
    """While store A builds the new index with CREATE INDEX CONCURRENTLY -- seen in
    pg_stat_progress_create_index, building -- a store B opened on the same database
    opens at once, recalls (through the old index) and writes; A serves too. Then the
    new index is swapped in: valid, the wanted definition, recorded, with B's row in it,
    and both stores' searches go through it."""
    monkeypatch.setattr(pg_reindex, "RECHECK", 0.0)  # B follows the swap on its next search
    n = 4000
    vecs = _older_database(pg_url, n)
    with caplog.at_level(logging.INFO, logger="memloom.store.pg_reindex"):
        started = time.monotonic()
        a = PostgresStore(pg_url, reindex_delay=0.0)
        assert time.monotonic() - started < 5.0  # the open does not wait for the build
        build = _wait_for(
            lambda: [b for b in _builds(pg_url) if b[1].startswith("building index")],
            60.0,
            "the concurrent build to be building",
        )
        ((pid, _, app),) = build
        assert app == "memloom reindex"
        # A transaction with a snapshot taken now: the build cannot finish before it
        # ends (its last phase waits for older snapshots), so it is still running after
        # the requests below, whatever this machine's speed.
        holder = psycopg.connect(pg_url)
        holder.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        holder.execute("SELECT count(*) FROM meta").fetchone()
        try:
            opened = time.monotonic()
            b = PostgresStore(pg_url, reindex_delay=0.0)
            open_seconds = time.monotonic() - opened
            assert open_seconds < 5.0
            assert b._core.index.pending and not b._core.index.search_halfvec
            q = vecs[17] + 0.02 * np.random.default_rng(1).normal(size=DIM).astype(np.float32)
            q /= np.linalg.norm(q)
            assert "Index Scan using memories_embedding_hnsw" in _plan(b, q)  # the old one
            hits = b.vector_search(q, 5, SearchFilter())
            assert hits[0][0] == "m00017"
            assert hits[0][1] == pytest.approx(float(vecs[17] @ q), abs=1e-5)
            new_vec = np.zeros(DIM, dtype=np.float32)
            new_vec[0] = 1.0
            written = time.monotonic()
            with b.transaction():
                b.insert(_row(n, "written during the rebuild", new_vec))
            write_seconds = time.monotonic() - written
            assert b.get(f"m{n:05d}") is not None
            assert a.vector_search(vecs[3], 1, SearchFilter())[0][0] == "m00003"
            still = _builds(pg_url)
            assert [p for p, _, _ in still] == [pid]  # the same build, still running, alone
            phases = (build[0][1], still[0][1])
        finally:
            holder.rollback()
            holder.close()
        assert a.reindex_wait(120.0)
    assert _live_index(pg_url) == (
        f"CREATE INDEX {INDEX_NAME} ON public.memories USING hnsw "
        f"(((embedding)::halfvec({DIM})) halfvec_cosine_ops) WITH (m='16', ef_construction='200')",
        True,
    )
    assert _meta_index(pg_url) == WANTED
    assert _leftovers(pg_url) == []
    assert not a._core.index.pending and a._core.index.search_halfvec
    hits = b.vector_search(new_vec, 1, SearchFilter())  # B follows the swap
    assert hits[0][0] == f"m{n:05d}" and hits[0][1] == pytest.approx(1.0, abs=1e-6)
    assert b._core.index.search_halfvec and not b._core.index.pending
    assert "Index Scan using memories_embedding_hnsw" in _plan(b, vecs[5])
    assert caplog.text.count("rebuilding the vector index of") == 1  # once, by A
    b.close()
    a.close()
    print(
        f"\nB opened in {open_seconds:.2f} s and wrote in {write_seconds:.3f} s while the build "
        f"ran (phase {phases[0]!r}, then {phases[1]!r})"
    )


def test_an_invalid_index_left_by_a_killed_build_is_dropped_and_rebuilt(pg_url, caplog):
    """A concurrent build killed part-way leaves an INVALID index under the temporary
    name; the next open drops it and builds the index again, valid, and swaps it in."""
    vecs = _older_database(pg_url, 300)
    name = temp_name(WANTED)
    with _writer_in_progress(pg_url):  # holds the build before it starts building
        victim = psycopg.connect(pg_url, autocommit=True)
        failure: list[BaseException] = []

        def build() -> None:
            try:
                victim.execute(concurrent_sql(WANTED, name))
            except psycopg.Error as exc:
                failure.append(exc)

        thread = threading.Thread(target=build)
        thread.start()
        (pid, _, _), *_ = _wait_for(lambda: _builds(pg_url), 30.0, "the build to start")
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
        thread.join(30.0)
        victim.close()
    assert failure and not thread.is_alive()
    assert _leftovers(pg_url) == [(name, False)]  # what a killed build leaves behind
    with caplog.at_level(logging.INFO, logger="memloom.store.pg_reindex"):
        store = PostgresStore(pg_url, reindex_delay=0.0)
        assert store.reindex_wait(60.0)
    assert f"dropping the leftover index {name} (valid: False)" in caplog.text
    assert _leftovers(pg_url) == []
    live = _live_index(pg_url)
    assert live is not None and f"halfvec({DIM})" in live[0] and live[1]
    assert _meta_index(pg_url) == WANTED
    assert store.vector_search(vecs[42], 1, SearchFilter())[0][0] == "m00042"
    store.close()


def test_closing_the_store_cancels_a_build_in_progress(pg_url, caplog):
    """A store closed while its build runs cancels it at once: no thread left, no build
    left on the server, the old index still live and recorded as before. The next open
    builds it."""
    _older_database(pg_url, 300)
    with _writer_in_progress(pg_url):  # the build cannot get past its first wait
        store = PostgresStore(pg_url, reindex_delay=0.0)
        reindexer = store._core.index.reindexer
        assert reindexer is not None
        _wait_for(lambda: _builds(pg_url), 30.0, "the build to start")
        started = time.monotonic()
        store.close()
        closed_in = time.monotonic() - started
        assert closed_in < 5.0
        assert not reindexer._thread.is_alive()
        assert _builds(pg_url) == []
    live = _live_index(pg_url)
    assert live is not None and "vector_cosine_ops" in live[0] and live[1]  # the old one
    assert _meta_index(pg_url) is None
    # Its INVALID index could not be dropped at once (the writer holds the table): the
    # next build drops it.
    assert _leftovers(pg_url) == [(temp_name(WANTED), False)]
    with caplog.at_level(logging.INFO, logger="memloom.store.pg_reindex"):
        store = PostgresStore(pg_url, reindex_delay=0.0)
        assert store.reindex_wait(60.0)
    assert _meta_index(pg_url) == WANTED and _leftovers(pg_url) == []
    store.close()
    print(f"\nclosed in {closed_in:.2f} s with a build in progress")


def test_a_store_opened_with_a_pending_rebuild_does_not_start_a_second_build(pg_url):
    """Two stores open an older database at once: one builds, the other waits its turn
    (pg_try_advisory_lock) and serves; a forget's purge does not wait for the build
    (its VACUUM would: the same table lock); closing B mid-build leaves the build alone."""
    _older_database(pg_url, 300)
    with _writer_in_progress(pg_url):
        a = PostgresStore(pg_url, reindex_delay=0.0)
        b = PostgresStore(pg_url, reindex_delay=0.0)
        builds = _wait_for(lambda: _builds(pg_url), 30.0, "the build to start")
        waiting = b._core.index.reindexer
        assert waiting is not None
        _wait_for(lambda: waiting._told_waiting, 30.0, "B to find the builder's lock taken")
        assert len(_builds(pg_url)) == 1 == len(builds)
        with b.transaction():
            assert b.delete(["m00009"]) == 1
        purge = threading.Thread(target=b.purge)
        purge.start()
        purge.join(10.0)
        assert not purge.is_alive()  # a plain VACUUM would wait for the build here
        b.close()
        assert [p for p, _, _ in _builds(pg_url)] == [builds[0][0]]
    assert a.reindex_wait(60.0)
    assert _meta_index(pg_url) == WANTED
    a.close()


def test_a_valid_index_left_by_a_builder_that_died_before_the_swap_is_swapped_in(pg_url, caplog):
    """A build that finished but whose process died before the swap left a valid index
    under the temporary name, kept up to date by every write since: it is swapped in as
    it is, not built again."""
    vecs = _older_database(pg_url, 300)
    name = temp_name(WANTED)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(concurrent_sql(WANTED, name))
        (oid,) = conn.execute("SELECT %s::regclass::oid", (name,)).fetchone()
    with caplog.at_level(logging.INFO, logger="memloom.store.pg_reindex"):
        store = PostgresStore(pg_url, reindex_delay=0.0)
        assert store.reindex_wait(60.0)
    assert "rebuilding the vector index of" not in caplog.text  # no second build
    with psycopg.connect(pg_url, autocommit=True) as conn:
        (live,) = conn.execute("SELECT %s::regclass::oid", (INDEX_NAME,)).fetchone()
    assert live == oid and _leftovers(pg_url) == [] and _meta_index(pg_url) == WANTED
    assert store.vector_search(vecs[8], 1, SearchFilter())[0][0] == "m00008"
    store.close()


def test_a_second_memloom_serve_started_during_the_rebuild_serves_requests(tmp_path, pg_url):
    """Two real ``memloom serve`` processes: the first finds an older database and
    rebuilds its index in the background; the second, started while that build runs,
    answers a recall and a store over HTTP, and so does the first. Then the new index is
    live and holds the memory stored during the build."""
    from tests.server.conftest import db_env, start_daemon, stop

    vecs = _older_database(pg_url, 4000)
    first = start_daemon(tmp_path / "s1" / "home", tmp_path / "s1" / "claude", env=db_env(pg_url))
    second = None
    try:
        ((pid, phase, app),) = _wait_for(
            lambda: [b for b in _builds(pg_url) if b[1].startswith("building index")],
            60.0,  # the daemon's build starts REINDEX_DELAY after it opened the store
            "the first server's build to be building",
        )
        assert app == "memloom reindex"
        holder = psycopg.connect(pg_url)  # keeps the build from finishing (see above)
        holder.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        holder.execute("SELECT count(*) FROM meta").fetchone()
        try:
            started = time.monotonic()
            second = start_daemon(
                tmp_path / "s2" / "home", tmp_path / "s2" / "claude", env=db_env(pg_url)
            )
            up_in = time.monotonic() - started
            fresh = np.zeros(DIM, dtype=np.float32)
            fresh[1] = 1.0
            with second.client() as api:
                recalled = api.post(
                    "/v1/memory/recall",
                    json={"query_embedding": vecs[21].tolist(), "max_results": 3},
                )
                assert recalled.status_code == 200, recalled.text
                assert recalled.json()["memories"][0]["id"] == "m00021"
                stored = api.post(
                    "/v1/memory/store",
                    json={
                        "entries": [
                            {"text": "stored during the rebuild", "embedding": fresh.tolist()}
                        ]
                    },
                )
                assert stored.status_code == 200, stored.text
                (new_id,) = stored.json()["ids"]
            with first.client() as api:
                recalled = api.post(
                    "/v1/memory/recall",
                    json={"query_embedding": vecs[7].tolist(), "max_results": 1},
                )
                assert recalled.status_code == 200, recalled.text
                assert recalled.json()["memories"][0]["id"] == "m00007"
            still = _builds(pg_url)
            assert [p for p, _, _ in still] == [pid]  # the first server's build, running
        finally:
            holder.rollback()
            holder.close()
        _wait_for(lambda: _meta_index(pg_url) == WANTED, 120.0, "the swap")
        live = _live_index(pg_url)
        assert live is not None and f"halfvec({DIM})" in live[0] and live[1]
        assert _leftovers(pg_url) == []
        with second.client() as api:
            recalled = api.post(
                "/v1/memory/recall", json={"query_embedding": fresh.tolist(), "max_results": 1}
            )
            assert recalled.json()["memories"][0]["id"] == new_id
        assert first.log.count("rebuilding the vector index of") == 1
        assert "rebuilding the vector index of" not in second.log
        print(
            f"\nsecond server up in {up_in:.1f} s and served a recall and a store while the "
            f"first one's build ran (phase {phase!r}, then {still[0][1]!r})"
        )
    finally:
        for daemon in (first, second):
            if daemon is not None:
                stop(daemon)


def test_a_reembed_during_the_rebuild_cancels_it_and_its_index_stands(pg_url, monkeypatch):
    """``memloom reembed`` while another process rebuilds: the re-embed cancels the
    build (else each would wait for the other) and drops its index (of the old width,
    it would refuse the new vectors); the builder, trying again, finds the re-embed's
    index is the one it wants and stops, leaving nothing behind."""
    monkeypatch.setattr(pg_reindex, "RETRY", 0.5)
    _older_database(pg_url, 300)
    rng = np.random.default_rng(4)
    wider = rng.normal(size=(300, 48)).astype(np.float32)
    wider /= np.linalg.norm(wider, axis=1, keepdims=True)
    failure: list[BaseException] = []
    with _writer_in_progress(pg_url):
        a = PostgresStore(pg_url, reindex_delay=0.0)
        _wait_for(lambda: _builds(pg_url), 30.0, "the build to start")
        b = PostgresStore(pg_url, reindex_delay=60.0)

        def reembed() -> None:
            try:
                with b.transaction():
                    b.replace_embeddings({f"m{i:05d}": v for i, v in enumerate(wider)}, 48)
            except Exception as exc:
                failure.append(exc)

        thread = threading.Thread(target=reembed)
        thread.start()
        _wait_for(lambda: not _builds(pg_url), 30.0, "the re-embed to cancel the build")
        assert thread.is_alive()  # waiting for the writer, as any DDL would
    thread.join(60.0)
    assert not thread.is_alive() and failure == []
    assert a.reindex_wait(60.0)
    wanted = index_sql(48, True)
    assert _meta_index(pg_url) == wanted and _leftovers(pg_url) == []
    live = _live_index(pg_url)
    assert live is not None and "halfvec(48)" in live[0] and live[1]
    assert a.vector_search(wider[12], 1, SearchFilter())[0][0] == "m00012"
    b.close()
    a.close()
