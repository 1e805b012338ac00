"""pgvector's index and search SQL (store/pg_vectors.py); the SQL is run against a real
server in tests/store/test_postgres.py."""

from __future__ import annotations

import psycopg

from memloom.store.pg_vectors import (
    HNSW_FLOAT,
    has_halfvec,
    index_sql,
    rerank_pool,
    search_args,
    search_sql,
)


def test_the_index_is_half_precision_up_to_4000_dimensions_where_pgvector_has_it() -> None:
    assert "halfvec(384)" in (index_sql(384, True) or "")
    assert "halfvec(4000)" in (index_sql(4000, True) or "")
    assert index_sql(4001, True) is None  # pgvector indexes no wider vector: exact search
    assert index_sql(384, False) == HNSW_FLOAT  # pgvector < 0.7
    assert index_sql(2000, False) == HNSW_FLOAT
    assert index_sql(2001, False) is None


def test_search_arguments_follow_the_placeholders_of_its_sql() -> None:
    for half, dim in ((True, 384), (False, 384), (True, 5000)):
        sql = search_sql("m.status = %s AND m.project = %s", "%s", dim, half)
        args = search_args("Q", ["active", "p"], 10, dim, half)
        assert sql.count("%s") == len(args)
        assert args[-1] == 10  # the LIMIT k comes last
    # through the half-precision graph: twice k candidates, at least 40, re-scored
    assert search_args("Q", [], 10, 384, True) == ["Q", "Q", 40, "Q", 10]
    assert search_args(None, ["x"], 50, 384, True) == ["x", 100, 50]  # a LATERAL column
    assert search_args("Q", [], 10, 384, False) == ["Q", "Q", 10]
    assert [rerank_pool(k) for k in (1, 20, 21, 100)] == [40, 40, 42, 200]


def test_the_servers_pgvector_has_halfvec(pg_url) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        assert has_halfvec(conn)  # the test server's pgvector is 0.8
