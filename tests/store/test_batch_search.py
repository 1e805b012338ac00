"""The write path's batch neighbour search (``vector_search_many``, the SQLite index's
``search_many``) against the one-query search and brute force."""

from __future__ import annotations

import time

import numpy as np
import pytest

from memloom.core.writes import Draft, Writer
from memloom.store.base import SearchFilter
from memloom.store.vectors import RowMeta, VectorIndex
from tests.store.test_vectors import clustered


def near(x: np.ndarray, rows: np.ndarray, noise: float, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    q = x[rows] + noise * rng.standard_normal((len(rows), x.shape[1])).astype(np.float32)
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def index_of(x: np.ndarray, threshold: int, rare_every: int = 0) -> VectorIndex:
    index = VectorIndex(x.shape[1], ann_threshold=threshold)
    metas = [
        RowMeta(
            "stale" if i % 11 == 0 else "active",
            "rare" if rare_every and i % rare_every == 0 else f"p{i % 2}",
            "fact",
            0,
            None,
        )
        for i in range(len(x))
    ]
    index.bulk_load(np.arange(1, len(x) + 1, dtype=np.int64), x, metas)
    return index


def allowed(index: VectorIndex, flt: SearchFilter) -> set[int]:
    """The rowids passing ``flt``, read from the index's base and delta columns."""
    keep: set[int] = set()
    for part in (index.base, index.delta):
        if part is not None and part.n:
            mask = part.mask(flt, slice(0, part.n), None, index._projects)
            keep.update(int(k) for k in part.keys[: part.n][mask])
    return keep


def exact_case(project: str, noise: float, step: int):
    """An index below its graph threshold, a project filter, and queries near rows."""
    x = clustered(3000)
    flt = SearchFilter(project=project, project_mode="exact")
    return index_of(x, threshold=10**9), flt, near(x, np.arange(0, 3000, step), noise)


def test_exact_batches_answer_as_one_query_at_a_time() -> None:
    index, flt, queries = exact_case("p1", 0.05, 7)
    batch = index.search_many(queries, 5, flt)
    assert len(batch) == len(queries)
    for q, got in zip(queries, batch, strict=True):
        one = index.search(q, 5, flt)
        assert [h[0] for h in got] == [h[0] for h in one]
        assert [h[1] for h in got] == pytest.approx([h[1] for h in one], abs=1e-6)


def test_min_similarity_drops_only_the_far_hits() -> None:
    index, flt, queries = exact_case("p0", 0.3, 13)
    full = index.search_many(queries, 5, flt)
    cut = index.search_many(queries, 5, flt, min_similarity=0.8)
    assert any(len(a) > len(b) for a, b in zip(full, cut, strict=True))
    for a, b in zip(full, cut, strict=True):
        assert b == [h for h in a if h[1] >= 0.8]


def test_graph_batches_find_the_near_rows_and_respect_the_filter() -> None:
    x = clustered(6000)
    index = index_of(x, threshold=500)
    flt = SearchFilter(project="p0", project_mode="exact")
    rows = np.arange(2, 6000, 17)
    rows = rows[(rows % 2 == 0) & (rows % 11 != 0)]  # active rows of p0
    queries = near(x, rows, 0.02)
    batch = index.search_many(queries, 5, flt)
    assert index.base is not None and index.base.live  # the graph answered
    keep = allowed(index, flt)
    overlap = []
    for row, q, got in zip(rows, queries, batch, strict=True):
        assert got and got[0][0] == int(row) + 1  # the planted near-duplicate comes first
        assert {h[0] for h in got} <= keep
        sims = x @ q
        exact = [i + 1 for i in np.argsort(-sims) if i + 1 in keep][:5]
        overlap.append(len({h[0] for h in got} & set(exact)) / 5)
        for key, sim in got:  # re-scored from the base's float16 copies
            assert sim == pytest.approx(float(sims[key - 1]), abs=2e-3)
    assert float(np.mean(overlap)) >= 0.95


def test_a_selective_filter_in_a_graph_store_is_answered_exactly() -> None:
    x = clustered(6000)
    index = index_of(x, threshold=500, rare_every=40)
    flt = SearchFilter(project="rare", project_mode="exact")
    queries = near(x, np.arange(0, 6000, 40)[:50], 0.05)
    batch = index.search_many(queries, 5, flt)
    keep = allowed(index, flt)
    for q, got in zip(queries, batch, strict=True):
        sims = x @ q
        exact = [i + 1 for i in np.argsort(-sims) if i + 1 in keep][:5]
        assert [h[0] for h in got] == exact


def test_vector_search_many_answers_as_vector_search_on_both_backends(engine) -> None:
    store = engine.backend
    x = clustered(300, dim=16, seed=3)
    now = time.time()
    with store.transaction():
        for i, v in enumerate(x):
            draft = Draft(f"row {i}", v, "fact", f"p{i % 2}", 0, expires_at=None)
            store.insert(Writer.new_row(draft, now))
    flt = SearchFilter(project="p1", project_mode="exact", alive_at=now, own_only=True)
    queries = near(x, np.arange(1, 300, 9), 0.1)
    batch = store.vector_search_many(queries, 5, flt, min_similarity=0.5)
    for q, got in zip(queries, batch, strict=True):
        one = [h for h in store.vector_search(q, 5, flt) if h[1] >= 0.5]
        assert [h[0] for h in got] == [h[0] for h in one]
        assert [h[1] for h in got] == pytest.approx([h[1] for h in one], abs=1e-5)
    assert store.vector_search_many(queries[:0], 5, flt) == []


def test_a_batch_split_over_the_cores_answers_as_one_thread_does(monkeypatch) -> None:
    """A large batch's graph search runs on the idle cores; each query's answer is the
    one a single-threaded search gives."""
    from usearch.index import Index

    import memloom.store.vectors as vectors

    x = clustered(6000)
    index = index_of(x, threshold=500)
    flt = SearchFilter(project="p1", project_mode="exact")
    rows = np.arange(1, 6000, 2)
    rows = rows[rows % 11 != 0][::10]  # active rows of p1
    queries = near(x, rows, 0.02)
    assert len(queries) >= vectors.THREADED_BATCH
    threads: list[int] = []
    search = Index.search

    def counted(self, *args, **kwargs):
        if len(args[0]) == len(queries):  # the batch's call, not the fold's reach check
            threads.append(kwargs.get("threads", 0))
        return search(self, *args, **kwargs)

    monkeypatch.setattr(Index, "search", counted)
    monkeypatch.setattr(vectors, "idle_cores", lambda: 2)
    split = index.search_many(queries, 5, flt)
    monkeypatch.setattr(vectors, "THREADED_BATCH", 10**9)
    single = index.search_many(queries, 5, flt)
    assert threads == [2, 1]
    assert split == single
    assert [got[0][0] for got in split] == [int(r) + 1 for r in rows]  # planted rows first
