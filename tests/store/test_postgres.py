"""The PostgreSQL store on a real server: parity with SQLite, owners, concurrency, migrate."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import memloom
from memloom.errors import NotFoundError, ReadOnlyError, StoreError
from memloom.store.base import MemoryRow, Principal, SearchFilter
from memloom.store.postgres import PostgresStore
from memloom.store.postgres_migrations import MIGRATIONS
from memloom.store.sqlite import SQLiteStore
from tests.support.rows import fact_row

FIXTURE = Path(__file__).parents[1] / "fixtures" / "transcripts"


def _texts(limit: int = 300) -> list[str]:
    """Real text: prose and tool output from the fixture transcripts."""
    out: list[str] = []
    for path in sorted(FIXTURE.rglob("*.jsonl")):
        for line in path.read_text(errors="replace").splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            content = (rec.get("message") or {}).get("content") if isinstance(rec, dict) else None
            if isinstance(content, str) and len(content) > 20:
                out.append(content[:3000])
            elif isinstance(content, list):
                for block in content:
                    if not isinstance(block, dict):
                        continue
                    text = block.get("text") or block.get("content")  # prose, tool output
                    if isinstance(text, str) and len(text) > 20:
                        out.append(text[:3000])
            if len(out) >= limit:
                return out
    return out


def _row(i: int, text: str, vec: np.ndarray, **fields) -> MemoryRow:
    return fact_row(f"m{i:05d}", text, vec, content_hash=f"h{i}", **fields)


@pytest.fixture
def both(tmp_path, pg_url):
    sqlite, pg = SQLiteStore(tmp_path / "m.db"), PostgresStore(pg_url)
    yield sqlite, pg
    sqlite.close()
    pg.close()


def _fill(stores, texts, dim=16, seed=7):
    rng = np.random.default_rng(seed)
    vecs = rng.normal(size=(len(texts), dim)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    for store in stores:
        with store.transaction():
            for i, (t, v) in enumerate(zip(texts, vecs, strict=True)):
                store.insert(
                    _row(i, t, v, project="a" if i % 3 else "b", tags=["x"] if i % 5 == 0 else [])
                )
    return vecs


def test_keyword_scores_match_sqlite_fts5_bm25(both):
    sqlite, pg = both
    texts = _texts()
    assert len(texts) >= 200
    _fill(both, texts)
    queries = [
        ["test", "failing"],
        ["database", "migration", "schema"],
        ["npm", "install"],
        ["error", "the"],
        ["running", "runs", "run"],  # one stem, three phrases
        ["README"],
    ]
    compared = 0
    for terms in queries:
        for flt in (SearchFilter(), SearchFilter(project="a", project_mode="exact")):
            want = sqlite.keyword_search(terms, 20, flt)
            got = pg.keyword_search(terms, 20, flt)
            assert [i for i, _ in got] == [i for i, _ in want] or {i for i, _ in got} == {
                i for i, _ in want
            }, terms
            got_scores = dict(got)
            for mid, score in want:
                assert got_scores[mid] == pytest.approx(score, rel=1e-9), (terms, mid)
                compared += 1
    assert compared > 50
    stems = ["test", "file", "run", "zzzznothing"]
    assert pg.document_frequencies(stems) == sqlite.document_frequencies(stems)


def test_keyword_statistics_follow_updates_and_deletes(both):
    sqlite, pg = both
    texts = _texts(60)
    _fill(both, texts)
    for store in both:
        with store.transaction():
            store.update("m00001", text="a rewritten memory about pgvector indexes")
            store.delete(["m00002", "m00003"])
    for terms in (["pgvector"], ["memory", "the"], ["test"]):
        want = dict(sqlite.keyword_search(terms, 50, SearchFilter()))
        got = dict(pg.keyword_search(terms, 50, SearchFilter()))
        assert got.keys() == want.keys()
        for mid, score in want.items():
            assert got[mid] == pytest.approx(score, rel=1e-9)


def test_vector_scores_and_filters_match_sqlite(both):
    sqlite, pg = both
    texts = [f"memory number {i}" for i in range(400)]
    vecs = _fill(both, texts)
    rng = np.random.default_rng(1)
    for flt in (
        SearchFilter(),
        SearchFilter(project="b", project_mode="exact"),
        SearchFilter(tags=frozenset({"x"})),
    ):
        for _ in range(5):
            q = rng.normal(size=16).astype(np.float32)
            q /= np.linalg.norm(q)
            want = sqlite.vector_search(q, 10, flt)
            got = pg.vector_search(q, 10, flt)
            assert [i for i, _ in got] == [i for i, _ in want]
            for (_, a), (_, b) in zip(got, want, strict=True):
                assert a == pytest.approx(b, abs=1e-5)
    emb = pg.embeddings_for(["m00007"])
    assert np.allclose(emb["m00007"], vecs[7], atol=1e-6)


def test_schema_is_migrated_once_and_a_newer_schema_is_refused(pg_url):
    stores = []
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            stores.append(PostgresStore(pg_url))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert {s.schema_version for s in stores} == {len(MIGRATIONS)}
    with stores[0]._conn() as conn:
        conn.execute("UPDATE memloom_schema SET version = 99")
    for s in stores:
        s.close()
    with pytest.raises(StoreError, match="newer memloom"):
        PostgresStore(pg_url)


def test_owners_see_their_own_and_shared_rows_only(pg_url):
    root = PostgresStore(pg_url)
    alice = root.scoped(Principal("alice", frozenset({"team"})))
    bob = root.scoped(Principal("bob"))
    team = root.scoped(Principal("team"))
    v = np.ones(4, dtype=np.float32) / 2
    for store, i, text in (
        (alice, 1, "alice secret plan"),
        (bob, 2, "bob secret plan"),
        (team, 3, "team secret plan"),
    ):
        with store.transaction():
            store.insert(_row(i, text, v))
    assert {r.text for r in alice.iter_all()} == {"alice secret plan", "team secret plan"}
    assert {r.text for r in bob.iter_all()} == {"bob secret plan"}
    assert len(list(root.iter_all())) == 3  # unscoped: the whole store
    assert bob.get("m00001") is None and bob.get_many(["m00001", "m00003"]) == []
    assert {i for i, _ in alice.vector_search(v, 10, SearchFilter())} == {"m00001", "m00003"}
    assert [i for i, _ in bob.keyword_search(["secret"], 10, SearchFilter())] == ["m00002"]
    assert bob.resolve_prefix("m0000") == ["m00002"]
    assert bob.count() == 1 and bob.stats()["total_memories"] == 1
    # the write path's dedup search sees only rows the caller could merge into
    assert [i for i, _ in alice.vector_search(v, 10, SearchFilter(own_only=True))] == ["m00001"]
    assert alice.find_by_hash("h3", None) is None and team.find_by_hash("h3", None) is not None
    # a shared scope is read-only; another owner's rows are simply not there
    with pytest.raises(ReadOnlyError, match="team"), alice.transaction():
        alice.update("m00003", text="alice rewrites the team plan")
    with alice.transaction():
        assert alice.delete(["m00002"]) == 0
        assert alice.expire_ids(["m00002"], time.time()) == 0
        alice.update("m00002", text="alice was here")
    assert root.get("m00002").text == "bob secret plan"
    assert alice.select_ids(["m00001", "m00002", "m00003"], [], None) == ["m00001"]
    root.close()


@pytest.mark.security
def test_keyword_statistics_count_only_the_rows_a_principal_may_read(tmp_path, pg_url):
    """The side channel of issue 33: owner A's writes moved owner B's BM25 scores
    (documents per word, corpus size and length are BM25 inputs), so B could watch
    which words A's memories hold. A principal's statistics are those of a store that
    holds only the rows it may read; the unscoped store's stay the whole table's."""
    texts = _texts(90)
    rng = np.random.default_rng(5)
    vecs = rng.normal(size=(len(texts), 8)).astype(np.float32)
    root = PostgresStore(pg_url)
    alice = root.scoped(Principal("alice", frozenset({"team"})))
    bob = root.scoped(Principal("bob"))
    team = root.scoped(Principal("team"))
    readable = SQLiteStore(tmp_path / "alice.db")  # alice's and the team's rows alone
    everything = SQLiteStore(tmp_path / "all.db")
    owners = [alice, team, bob]
    for i, (text, vec) in enumerate(zip(texts, vecs, strict=True)):
        writer = owners[i % 3]
        targets = [writer, everything] + ([readable] if writer is not bob else [])
        for store in targets:
            with store.transaction():
                store.insert(_row(i, text, vec))
    queries = [["test", "failing"], ["error", "the"], ["database", "migration"], ["file"]]
    stems = ["test", "file", "error", "the", "zzzznothing"]

    def scores(store):
        return [store.keyword_search(q, 30, SearchFilter()) for q in queries]

    def assert_same(got, want):
        for g, w in zip(got, want, strict=True):
            assert dict(g).keys() == dict(w).keys()
            for mid, score in w:
                assert dict(g)[mid] == pytest.approx(score, rel=1e-9)

    assert alice.document_frequencies(stems) == readable.document_frequencies(stems)
    assert_same(scores(alice), scores(readable))
    assert root.document_frequencies(stems) == everything.document_frequencies(stems)
    assert_same(scores(root), scores(everything))  # the unscoped store: unchanged
    before = scores(alice), alice.document_frequencies(stems)
    # bob adds rows full of alice's query words, rewrites one, forgets some: nothing moves
    flood = [f"test failing error the database migration file {i}" for i in range(40)]
    with bob.transaction():
        for j, text in enumerate(flood):
            bob.insert(_row(1000 + j, text, vecs[0]))
        bob.update("m00002", text="the file test error, rewritten")
    assert (scores(alice), alice.document_frequencies(stems)) == before
    with bob.transaction():
        assert bob.delete([f"m{1000 + j:05d}" for j in range(0, 40, 2)]) == 20
    assert (scores(alice), alice.document_frequencies(stems)) == before
    # the team scope alice reads does move her statistics, as its rows are hers to read
    with team.transaction():
        team.insert(_row(2000, "failing test in the team repository", vecs[1]))
    with readable.transaction():
        readable.insert(_row(2000, "failing test in the team repository", vecs[1]))
    assert alice.document_frequencies(stems) == readable.document_frequencies(stems)
    assert_same(scores(alice), scores(readable))
    # and bob's own statistics count his rows only
    bobs = SQLiteStore(tmp_path / "bob.db")
    with bobs.transaction():
        for row in bob.iter_all():
            bobs.insert(row)
    assert bob.document_frequencies(stems) == bobs.document_frequencies(stems)
    assert_same(scores(bob), scores(bobs))
    for store in (readable, everything, bobs, root):
        store.close()


def test_two_servers_storing_the_same_text_at_once_make_one_memory(pg_url, tmp_path):
    """Separate engines (own pools, own connections) racing on identical writes."""
    engines = [memloom.open(home=str(tmp_path / f"h{i}"), database_url=pg_url) for i in range(4)]
    barrier = threading.Barrier(len(engines))
    results: list[str] = []
    errors: list[BaseException] = []

    def write(m: memloom.Memloom) -> None:
        try:
            barrier.wait()
            for n in range(25):
                text = f"the staging database is at db{n}.staging.internal"
                one_hot = [1.0 if j == n else 0.0 for j in range(25)]  # unrelated to the others
                res = m.store({"entries": [{"text": text, "embedding": one_hot}]})
                results.extend(res.ids)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(m,)) for m in engines]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert engines[0].backend.count() == 25
    assert len(set(results)) == 25  # every writer got the one memory's id back
    for m in engines:
        m.close()


def test_tokens_are_hashed_listed_and_revoked(pg_url):
    store = PostgresStore(pg_url)
    row, secret = store.token_create("alice", ["team", "alice"], name="laptop")
    assert secret.startswith("mlt_") and row.shared == ["team"]
    with store._conn() as conn:
        stored = conn.execute("SELECT token_hash FROM api_tokens").fetchone()[0]
    assert secret not in stored and len(stored) == 64
    assert store.has_tokens()
    assert store.token_principal(secret) == Principal("alice", frozenset({"team"}))
    assert store.token_principal(secret + "x") is None
    assert [t.id for t in store.token_list()] == [row.id]
    store.token_revoke(row.id)
    assert store.token_principal(secret) is None and not store.has_tokens()
    with pytest.raises(NotFoundError):
        store.token_revoke("nope")
    store.close()


def test_migrate_copies_a_sqlite_store_and_can_run_again(tmp_path, pg_url):
    from memloom.store.base import LedgerRow, ProvenanceRow
    from memloom.store.migrate import migrate

    home = tmp_path / "home"
    with memloom.open(home=str(home)) as m:
        first = m.store({"entries": [{"text": "deploys run on Fridays", "embedding": [1, 0]}]})
        near = {"text": "deploys never run on Fridays during a freeze", "embedding": [0.77, 0.64]}
        m.store({"entries": [near]})
        given = [{"path": "deploy/schedule.yml", "symbols": ["DEPLOY_DAY"]}]
        m.update(first.ids[0], {"text": "deploys run on Thursdays", "anchors": given})
        with m.backend.transaction():
            m.backend.add_provenance(
                ProvenanceRow(first.ids[0], "s1", "/x/s1.jsonl", "api", 3, 9, "excerpt")
            )
            m.backend.ledger_put(
                LedgerRow("/x/s1.jsonl", "s1", "api", 10, 1.0, 10, 2, "abc", "complete", 1)
            )
            m.backend.records_add(["u1", "u2"], "/x/s1.jsonl")
        want_recall = [
            r.id for r in m.recall({"query_embedding": [1, 0.1], "touch": False}).memories
        ]
        before = {d.id: d for d in m.export()}
        assert [a.path for d in before.values() for a in d.anchors] == ["deploy/schedule.yml"]
    source = SQLiteStore(home / "memloom.db")
    target = PostgresStore(pg_url, principal=Principal("alice"))
    report = migrate(source, target)
    assert (report.memories, report.conflicts, report.provenance) == (3, 1, 1)
    assert (report.ledger, report.records, report.target_total) == (1, 2, 3)
    again = migrate(source, target)
    assert (again.memories, again.skipped, again.target_total) == (0, 3, 3)
    source.close()
    target.close()
    with memloom.open(home=str(tmp_path / "other"), database_url=pg_url) as m:
        after = {d.id: d for d in m.export()}
        assert after.keys() == before.keys()
        for mid, doc in before.items():
            assert after[mid].model_dump(exclude={"provenance"}) == doc.model_dump(
                exclude={"provenance"}
            )
        recalled = m.recall({"query_embedding": [1, 0.1], "touch": False}).memories
        assert [r.id for r in recalled] == want_recall
        assert m.conflicts("pending", 10, 0).total == 1
        assert m.backend.ledger_get_many(["/x/s1.jsonl"]) == {}  # the ledger is alice's
    alice = PostgresStore(pg_url, principal=Principal("alice"))
    assert alice.ledger_get_many(["/x/s1.jsonl"])["/x/s1.jsonl"].hash == "abc"
    assert alice.records_seen(["u1", "u3"], "/other") == {"u1"}
    alice.close()


@pytest.mark.slow
def test_hybrid_recall_ranks_alike_on_both_backends(tmp_path, pg_url):
    """The engine over each store, same memories, same real model: same answers."""
    texts = [t for t in _texts(400) if len(t) < 1500][:120]
    engines = [
        memloom.open(home=str(tmp_path / "a")),
        memloom.open(home=str(tmp_path / "b"), database_url=pg_url),
    ]
    engines[1].embedder = engines[0].embedder  # one model in memory is enough
    try:
        for m in engines:
            m.store({"entries": [{"text": t} for t in texts]})
        assert engines[0].backend.count() == engines[1].backend.count() > 80
        for query in (
            "how do I run the tests",
            "npm install error",
            "which file configures the database",
            "README",
        ):
            request = {"query": query, "max_results": 10, "recency_weight": 0, "touch": False}
            want, got = (m.recall(request).memories for m in engines)
            assert [r.text for r in got] == [r.text for r in want], query
            for a, b in zip(got, want, strict=True):
                assert a.relevance == pytest.approx(b.relevance, abs=2e-5)
    finally:
        for m in engines:
            m.close()


def test_a_schema_1_database_is_upgraded_in_place(pg_url):
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:  # what memloom 1 left behind
        conn.execute(MIGRATIONS[0])
        conn.execute("CREATE TABLE memloom_schema (version INTEGER NOT NULL)")
        conn.execute("INSERT INTO memloom_schema VALUES (1)")
        terms = ['{"alpha": 1}', '{"alpha": 2, "beta": 1}', '{"beta": 1}']
        for i, owner in enumerate(["alice", "alice", "bob"]):
            conn.execute(
                "INSERT INTO memories (id, owner, root_id, text, content_hash, created_at, "
                "asserted_at, last_referenced, term_counts, doc_len) "
                "VALUES (%s, %s, %s, 't', 'h', 0, 0, 0, %s, %s)",
                (f"m{i}", owner, f"m{i}", terms[i], 2 + i),
            )
        for key in ("/home/a/.claude/projects/-x/1.jsonl", "codex:019a"):
            conn.execute(
                'INSERT INTO ledger (owner, path, size, mtime, "offset", lines, hash, status, '
                "updated_at) VALUES ('alice', %s, 1, 1, 1, 1, 'h', 'complete', 1)",
                (key,),
            )
    store = PostgresStore(pg_url)
    assert store.schema_version == len(MIGRATIONS) == 10
    assert store.native_rows(["/nowhere"]) == []  # migration 7's table is there
    assert store.count() == 3
    alice = store.scoped(Principal("alice"))
    assert alice.count() == 2
    # Keyword statistics per owner are counted from the rows there (migration 6).
    assert alice.document_frequencies(["alpha", "beta"]) == ({"alpha": 2, "beta": 1}, 2)
    bob = store.scoped(Principal("bob"))
    assert bob.document_frequencies(["alpha", "beta"]) == ({"beta": 1}, 1)
    # Ledger rows written before agents were recorded are named by their key (migration 4).
    rows = alice.ledger_get_many(["/home/a/.claude/projects/-x/1.jsonl", "codex:019a"])
    assert sorted(r.agent for r in rows.values()) == ["claude-code", "codex"]
    # No older row was named with --path (migration 8).
    assert {r.named_root for r in rows.values()} == {None}
    # Memories written before anchors have none (migration 9).
    assert {tuple(r.anchors) for r in store.get_many(["m0", "m1", "m2"])} == {()}
    store.close()


def test_the_hnsw_search_widens_as_the_store_grows(pg_url):
    from memloom.store.pg_vectors import ef_search_for

    assert [ef_search_for(n) for n in (1, 199_999, 200_000, 999_999, 5_000_000)] == [
        120,
        120,
        400,
        800,
        800,
    ]
    store = PostgresStore(pg_url)
    with store.transaction():
        store.insert(_row(1, "one memory", np.ones(4, dtype=np.float32)))
    with store._conn() as conn:
        store._core.ef_checked = -1e9
        store._core.ef_search = 999  # what a store of a million would have chosen
        store._core.ef_applied.clear()
        with conn.transaction():
            conn.execute("UPDATE owner_counts SET memories = 1000000")
        store._tune_search(conn)
        assert conn.execute("SHOW hnsw.ef_search").fetchone()[0] == "800"
    assert store.vector_search(np.ones(4, dtype=np.float32), 5, SearchFilter())[0][0] == "m00001"
    store.close()


def _index_definition(url: str) -> str | None:
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'memories_embedding_hnsw'"
        ).fetchone()
    return None if row is None else row[0]


def _plan(store: PostgresStore, q: np.ndarray, k: int) -> str:
    from memloom.store.pg_vectors import search_args, search_sql

    where, params = store._filter_sql(SearchFilter())
    with store._conn() as conn:
        # A tiny table, where scanning it all is cheapest: ask whether the index serves
        # the search's ordering (no sort of every row).
        conn.execute("ANALYZE memories")
        conn.execute("SET enable_seqscan = off")
        conn.execute("SET enable_sort = off")
        rows = conn.execute(
            "EXPLAIN " + search_sql(where, "%s", len(q), store._core.index.search_halfvec),
            search_args(q, params, k, len(q), store._core.index.search_halfvec),
        ).fetchall()
        conn.execute("RESET enable_seqscan")
        conn.execute("RESET enable_sort")
    return "\n".join(r[0] for r in rows)


def test_the_vector_index_is_half_precision_and_searches_rescore_exactly(pg_url):
    """The HNSW graph is over the half-precision cast, the search's SQL is one the index
    serves, and the similarities returned are the float32 ones (the exact re-score)."""
    store = PostgresStore(pg_url)
    rng = np.random.default_rng(3)
    vecs = rng.normal(size=(200, 24)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    with store.transaction():
        store.insert_many([_row(i, f"memory {i}", v) for i, v in enumerate(vecs)])
    assert "halfvec(24)" in (_index_definition(pg_url) or "")
    assert store.get_meta("vector_index") == (
        "CREATE INDEX memories_embedding_hnsw ON memories USING hnsw "
        "((embedding::halfvec(24)) halfvec_cosine_ops) WITH (m = 16, ef_construction = 200)"
    )
    q = vecs[17] + 0.05 * rng.normal(size=24).astype(np.float32)
    q /= np.linalg.norm(q)
    assert "Index Scan using memories_embedding_hnsw" in _plan(store, q, 10)
    hits = store.vector_search(q, 10, SearchFilter())
    exact = np.argsort(-(vecs @ q))[:10]
    assert [h[0] for h in hits] == [f"m{i:05d}" for i in exact]
    # float32 similarities (a half-precision score would be off by ~1e-3)
    assert [h[1] for h in hits] == pytest.approx([float(vecs[i] @ q) for i in exact], abs=1e-6)
    batch = store.vector_search_many(np.stack([q, vecs[3]]), 10, SearchFilter())
    assert [h[0] for h in batch[0]] == [h[0] for h in hits]
    assert [h[1] for h in batch[0]] == pytest.approx([h[1] for h in hits], abs=1e-6)
    assert batch[1][0][0] == "m00003" and batch[1][0][1] == pytest.approx(1.0, abs=1e-6)
    store.close()


def test_a_store_with_the_old_float_index_gets_the_half_precision_one_once(pg_url, caplog):
    import psycopg

    store = PostgresStore(pg_url)
    vecs = np.eye(8, dtype=np.float32)
    with store.transaction():
        store.insert_many([_row(i, f"memory {i}", v) for i, v in enumerate(vecs)])
    store.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:  # as an older memloom left it
        conn.execute("DROP INDEX memories_embedding_hnsw")
        conn.execute(
            "CREATE INDEX memories_embedding_hnsw ON memories "
            "USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 128)"
        )
        conn.execute("DELETE FROM meta WHERE key = 'vector_index'")
    with caplog.at_level("WARNING", logger="memloom.store.pg_reindex"):
        store = PostgresStore(pg_url, reindex_delay=0.0)  # rebuilt in the background
        assert store.reindex_wait(60.0)
    assert "rebuilding the vector index" in caplog.text
    assert "halfvec(8)" in (_index_definition(pg_url) or "")
    assert store.vector_search(vecs[5], 1, SearchFilter())[0][0] == "m00005"
    store.close()
    caplog.clear()
    with caplog.at_level("INFO", logger="memloom.store.pg_reindex"):
        store = PostgresStore(pg_url, reindex_delay=0.0)  # the next open leaves it as it is
    assert store._core.index.reindexer is None
    store.close()
    assert "rebuilding" not in caplog.text


def test_vectors_wider_than_the_float_graph_allows_are_still_indexed(pg_url):
    """pgvector's float32 HNSW stops at 2,000 dimensions; the half-precision one at 4,000
    (a 3,072-dimension embedding model is searched through the graph)."""
    store = PostgresStore(pg_url)
    rng = np.random.default_rng(5)
    vecs = rng.normal(size=(30, 3072)).astype(np.float32)
    with store.transaction():
        store.insert_many([_row(i, f"memory {i}", v) for i, v in enumerate(vecs)])
    assert "halfvec(3072)" in (_index_definition(pg_url) or "")
    assert "Index Scan using memories_embedding_hnsw" in _plan(store, vecs[4], 5)
    assert store.vector_search(vecs[4], 3, SearchFilter())[0][0] == "m00004"
    store.close()
