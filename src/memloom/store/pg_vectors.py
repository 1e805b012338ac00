"""pgvector: the vector index memloom builds and the searches it runs over it.

One concept apart from the rest of the PostgreSQL store: which HNSW index a store of
``dim``-dimensional vectors gets (half precision where pgvector has it), how wide its
searches go as the store grows, and the SQL of a top-``k`` search whose graph
candidates are re-scored exactly -- shared by recall, the write path's batch search
and ``bench/``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: pgvector's HNSW index takes at most this many dimensions: over the half-precision
#: cast (pgvector 0.7+), and over the float32 column (older pgvector). Above it, search
#: is exact.
HALFVEC_MAX_DIM = 4000
HNSW_MAX_DIM = 2000
#: The vector index: HNSW over the embeddings cast to half precision -- half the pages
#: of a float32 graph, so more of it stays in shared buffers -- built with a wider
#: ef_construction than pgvector's default 64, so a narrower search finds the same
#: share of the exact top 10 (bench/postgres.py; docs/benchmarks.md). The graph's
#: candidates are re-scored exactly from the float32 column (:func:`search_sql`).
HNSW_HALFVEC = (
    "CREATE INDEX memories_embedding_hnsw ON memories USING hnsw "
    "((embedding::halfvec({dim})) halfvec_cosine_ops) WITH (m = 16, ef_construction = 200)"
)
#: The same graph over float32 vectors, for pgvector < 0.7 (no halfvec).
HNSW_FLOAT = (
    "CREATE INDEX memories_embedding_hnsw ON memories "
    "USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 200)"
)
#: Candidates the HNSW graph explores per query (pgvector's default is 40), by store
#: size: a bigger graph needs a wider search to keep finding >= 98 % of the exact
#: top 10 (bench/postgres.py's sweep of the half-precision graph: 0.982 at 100k with
#: 120, 0.984 at 1M with 800 -- 400 finds only 0.957 there).
EF_SEARCH = 120
EF_SEARCH_STEPS = ((200_000, 120), (500_000, 400), (None, 800))
#: A search takes at least this many graph candidates (and twice the rows asked for)
#: to re-score exactly: half precision orders the near ones a little differently.
RERANK_MIN = 40
#: The write path's neighbour search (duplicates and conflicts, cosine >= 0.65): a
#: duplicate is near by definition, so it needs far less breadth than recall's top 10.
WRITE_EF_SEARCH = 64
#: Seconds between re-reads of the store size that picks the search width.
EF_RECHECK = 60.0


def _over_halfvec(dim: int, halfvec: bool) -> bool:
    """Whether the index (and so the search) goes over the half-precision cast."""
    return halfvec and dim <= HALFVEC_MAX_DIM


def index_sql(dim: int, halfvec: bool) -> str | None:
    """The vector index for ``dim``-dimensional embeddings, or None (exact search)."""
    if _over_halfvec(dim, halfvec):
        return HNSW_HALFVEC.format(dim=int(dim))
    return HNSW_FLOAT if dim <= HNSW_MAX_DIM else None


def rerank_pool(k: int) -> int:
    return max(2 * k, RERANK_MIN)


def search_sql(where: str, query: str, dim: int, halfvec: bool) -> str:
    """The top-``k`` vector search over ``memories m`` rows passing ``where``, for the
    query vector expression ``query`` (a ``%s`` or a column of a ``LATERAL`` join).

    Through the half-precision graph, a pool of candidates is re-scored exactly from
    the float32 column. Its parameters: :func:`search_args`. Rows are
    ``(id, similarity)``, best first.
    """
    if _over_halfvec(dim, halfvec):
        half = f"halfvec({int(dim)})"
        return (
            f"SELECT c.id, 1 - (c.embedding <=> {query}) AS sim FROM ("
            "SELECT m.id, m.embedding FROM memories m "
            f"WHERE m.embedding IS NOT NULL AND {where} "
            f"ORDER BY m.embedding::{half} <=> ({query})::{half} LIMIT %s) c "
            f"ORDER BY c.embedding <=> {query} LIMIT %s"
        )
    return (
        f"SELECT m.id, 1 - (m.embedding <=> {query}) AS sim FROM memories m "
        f"WHERE m.embedding IS NOT NULL AND {where} "
        f"ORDER BY m.embedding <=> {query} LIMIT %s"
    )


def search_args(query: Any, params: Sequence[Any], k: int, dim: int, halfvec: bool) -> list[Any]:
    """:func:`search_sql`'s parameters, in order: ``query`` is the vector where the SQL
    has ``%s`` for it, None where it names a column; ``params`` the filter's."""
    q = [] if query is None else [query]
    if _over_halfvec(dim, halfvec):
        return [*q, *params, *q, rerank_pool(k), *q, k]
    return [*q, *params, *q, k]


def has_halfvec(conn: Any) -> bool:
    """Whether the database's pgvector has the half-precision type (0.7+);
    ``conn`` is a psycopg connection."""
    row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    if row is None:
        return False
    parts = [int(p) if p.isdigit() else 0 for p in str(row[0]).split(".")[:2]]
    return tuple(parts) >= (0, 7)


def ef_search_for(n: int) -> int:
    for limit, ef in EF_SEARCH_STEPS:
        if limit is None or n < limit:
            return ef
    return EF_SEARCH
