"""The in-memory vector index: exact search is the reference; HNSW must agree with it."""

from __future__ import annotations

import numpy as np
import pytest

from memloom.store.base import SearchFilter
from memloom.store.vectors import RowMeta, VectorIndex, add_reachable


def clustered(n: int, dim: int = 32, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((max(4, n // 50), dim))
    x = centers[rng.integers(0, len(centers), n)] + 0.3 * rng.standard_normal((n, dim))
    x = x.astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def filled(n: int, threshold: int, **meta) -> tuple[VectorIndex, np.ndarray]:
    x = clustered(n)
    index = VectorIndex(x.shape[1], ann_threshold=threshold)
    metas = [
        RowMeta(
            meta.get("status", "active"),
            "p" + str(i % 3) if meta.get("projects") else None,
            "fact",
            i % 4,
            None,
        )
        for i in range(n)
    ]
    index.bulk_load(np.arange(1, n + 1, dtype=np.int64), x, metas)
    return index, x


def brute(x: np.ndarray, q: np.ndarray, k: int, keep: np.ndarray | None = None) -> list[int]:
    sims = x @ q
    if keep is not None:
        sims = np.where(keep, sims, -np.inf)
    return [int(i) + 1 for i in np.argsort(-sims)[:k]]


def test_exact_search_matches_brute_force():
    index, x = filled(2000, threshold=10**9)
    q = x[17]
    hits = index.search(q, 10, SearchFilter())
    assert [h[0] for h in hits] == brute(x, q, 10)
    assert hits[0][1] == pytest.approx(1.0, abs=1e-5)


def test_filters_are_exact_not_approximate():
    index, x = filled(3000, threshold=500, projects=True)
    q = x[5]
    flt = SearchFilter(project="p1", project_mode="exact", max_sensitivity=1)
    keep = np.array([(i % 3 == 1) and (i % 4 <= 1) for i in range(len(x))])
    got = [h[0] for h in index.search(q, 10, flt)]
    assert got == brute(x, q, 10, keep)


def test_hnsw_agrees_with_exact_search():
    index, x = filled(5000, threshold=1000)
    rng = np.random.default_rng(1)
    overlap = []
    for i in rng.integers(0, len(x), 50):
        q = x[i] + 0.05 * rng.standard_normal(x.shape[1]).astype(np.float32)
        q /= np.linalg.norm(q)
        ann = {h[0] for h in index.search(q, 10, SearchFilter())}
        overlap.append(len(ann & set(brute(x, q, 10))) / 10)
    assert index._ann is not None
    assert np.mean(overlap) >= 0.98


def test_removed_and_expired_rows_are_never_returned():
    index, x = filled(1500, threshold=1000)
    q = x[0]
    top = [h[0] for h in index.search(q, 3, SearchFilter())]
    index.remove(top[0])
    index.upsert(top[1], None, RowMeta("expired", None, "fact", 0, None))
    again = [h[0] for h in index.search(q, 3, SearchFilter())]
    assert top[0] not in again and top[1] not in again
    assert top[2] in again


def test_ttl_filter_uses_the_time_given():
    index = VectorIndex(2, ann_threshold=10**9)
    index.upsert(
        1, np.array([1.0, 0.0], dtype=np.float32), RowMeta("active", None, "fact", 0, 100.0)
    )
    index.upsert(
        2, np.array([0.8, 0.6], dtype=np.float32), RowMeta("active", None, "fact", 0, None)
    )
    q = np.array([1.0, 0.0], dtype=np.float32)
    assert [h[0] for h in index.search(q, 5, SearchFilter(alive_at=50.0))] == [1, 2]
    assert [h[0] for h in index.search(q, 5, SearchFilter(alive_at=150.0))] == [2]


def saved_and_reopened(tmp_path, n: int = 3000, threshold: int = 1000):
    index, x = filled(n, threshold=threshold, projects=True)
    index.search(x[0], 5, SearchFilter())  # builds the graph: every row is in the base
    folder = tmp_path / "store.vectors"
    index.save_ann(folder, seq=7)
    fresh = VectorIndex(x.shape[1], ann_threshold=threshold)
    assert fresh.load_ann(folder) == 7
    return index, fresh, x, folder


def test_saved_files_are_opened_as_views_and_answer_like_the_built_index(tmp_path):
    index, fresh, x, _ = saved_and_reopened(tmp_path)
    # Nothing was loaded into memory: a read-only graph view, memory-mapped columns.
    assert fresh._ann_view and isinstance(fresh.base.vecs, np.memmap)
    assert fresh.delta.n == 0 and len(fresh) == len(index) == len(x)
    rng = np.random.default_rng(3)
    for i in rng.integers(0, len(x), 20):
        for flt in (SearchFilter(), SearchFilter(project="p2", project_mode="exact")):
            got, want = fresh.search(x[i], 10, flt), index.search(x[i], 10, flt)
            assert [h[0] for h in got] == [h[0] for h in want]
            assert [h[1] for h in got] == pytest.approx([h[1] for h in want])


def test_rows_written_after_the_save_are_found_and_removed_ones_never(tmp_path):
    _, fresh, x, _ = saved_and_reopened(tmp_path)
    extra = clustered(1, seed=9)[0]
    fresh.upsert(9999, extra, RowMeta("active", None, "fact", 0, None))  # into the delta
    top = [h[0] for h in fresh.search(x[0], 3, SearchFilter())]
    fresh.remove(top[0])  # a base row: masked, though the read-only graph still has it
    fresh.upsert(top[1], None, RowMeta("expired", None, "fact", 0, None))
    assert fresh.search(extra, 1, SearchFilter())[0][0] == 9999
    again = [h[0] for h in fresh.search(x[0], 3, SearchFilter())]
    assert top[0] not in again and top[1] not in again and top[2] in again
    assert top[0] not in fresh and 9999 in fresh and len(fresh) == len(x)


def test_a_growing_delta_is_folded_into_the_graph_and_saved_again(tmp_path):
    from memloom.store.vectors import MERGE_MIN

    _, fresh, x, folder = saved_and_reopened(tmp_path)
    more = clustered(MERGE_MIN, seed=11)
    keys = np.arange(10_001, 10_001 + MERGE_MIN, dtype=np.int64)
    fresh.bulk_load(keys, more, [RowMeta("active", None, "fact", 0, None)] * MERGE_MIN)
    fresh.remove(5)
    hits = fresh.search(more[7], 10, SearchFilter())  # folds the delta in first
    assert fresh.delta.n == 0 and not fresh._ann_view and fresh.base.n == len(x) + MERGE_MIN
    assert hits[0][0] == 10_008
    both = np.vstack([x, more])
    keep = np.ones(len(both), dtype=bool)
    keep[4] = False  # rowid 5
    overlap = []
    for q in both[::97]:
        exact = set(brute(both, q, 10, keep))
        exact = {r if r <= len(x) else 10_000 + (r - len(x)) for r in exact}
        overlap.append(len(exact & {h[0] for h in fresh.search(q, 10, SearchFilter())}) / 10)
    assert np.mean(overlap) >= 0.98
    fresh.save_ann(folder, seq=8)
    again = VectorIndex(x.shape[1], ann_threshold=1000)
    assert again.load_ann(folder) == 8
    assert len(again) == len(x) + MERGE_MIN - 1 and 5 not in again and 10_008 in again
    assert [h[0] for h in again.search(more[7], 3, SearchFilter())] == [
        h[0] for h in fresh.search(more[7], 3, SearchFilter())
    ]
    assert len(list(folder.iterdir())) == 2  # current.json and one generation


def test_a_reused_rowid_gets_its_new_vector(tmp_path):
    _, fresh, x, _ = saved_and_reopened(tmp_path)
    last = len(x)  # SQLite hands the largest rowid out again once its row is deleted
    fresh.remove(last)
    fresh.upsert(last, x[0], RowMeta("active", None, "fact", 0, None))
    assert fresh.search(x[0], 2, SearchFilter())[0][1] == pytest.approx(1.0, abs=1e-3)
    assert {h[0] for h in fresh.search(x[0], 2, SearchFilter())} == {1, last}
    fresh.build_ann()  # folded in: the old graph entry is replaced, the key found once
    assert {h[0] for h in fresh.search(x[0], 2, SearchFilter())} == {1, last}
    assert fresh.search(x[last - 1], 1, SearchFilter())[0][0] != last


def test_unchanged_files_are_not_rewritten(tmp_path):
    _, fresh, x, folder = saved_and_reopened(tmp_path)
    before = sorted(p.name for p in folder.iterdir())
    fresh.upsert(4242, x[3], RowMeta("active", None, "fact", 0, None))
    fresh.save_ann(folder, seq=9)  # one delta row: replayed by the next open, not saved
    assert sorted(p.name for p in folder.iterdir()) == before


def test_vector_library_and_embedding_runtime_load_together():
    """usearch 2.26 crashed the interpreter when onnxruntime was imported after it."""
    import subprocess
    import sys

    code = "import usearch.index, onnxruntime; print('ok')"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr


def test_restored_graph_searches_as_broadly_as_a_built_one(tmp_path, monkeypatch):
    """usearch restores a graph with its default breadth (64); recall must not drop."""
    import memloom.store.vectors as vectors
    from memloom.store.vectors import CONNECTIVITY, expansion_for

    monkeypatch.setattr(vectors, "expansion_for", lambda n, connectivity=CONNECTIVITY: 100)
    _, fresh, x, _ = saved_and_reopened(tmp_path)
    assert fresh._ann.expansion_search != 100
    assert fresh._ann.connectivity == CONNECTIVITY
    fresh.search(x[1], 5, SearchFilter())
    assert fresh._ann.expansion_search == 100
    # The breadth follows the size, and a graph an older memloom built with 32 links a
    # node searches as widely as that memloom did.
    assert expansion_for(1_000) <= expansion_for(1_000_000) <= expansion_for(10**7)
    assert expansion_for(1_000_000, connectivity=32) == 384
    assert expansion_for(100_000, connectivity=32) == 128


def test_a_viewed_graph_is_folded_into_even_when_its_files_were_replaced(tmp_path):
    """Another process wrote newer files and removed the generation this one views."""
    import shutil

    from memloom.store.vectors import MERGE_MIN

    _, fresh, x, folder = saved_and_reopened(tmp_path)
    shutil.rmtree(folder)
    more = clustered(MERGE_MIN, seed=12)
    keys = np.arange(20_001, 20_001 + MERGE_MIN, dtype=np.int64)
    fresh.bulk_load(keys, more, [RowMeta("active", None, "fact", 0, None)] * MERGE_MIN)
    assert fresh.search(more[3], 1, SearchFilter())[0][0] == 20_004
    assert fresh.delta.n == 0 and not fresh._ann_view and len(fresh._ann) == len(x) + MERGE_MIN


def test_every_graph_node_can_be_found_by_its_own_vector():
    """usearch's concurrent add strands a few nodes no search reaches (about 4 in
    6,000 of these clustered rows per build); add_reachable must leave none."""
    from usearch.index import Index

    x = clustered(6000)
    keys = np.arange(1, len(x) + 1, dtype=np.int64)
    for _ in range(3):
        ann = Index(ndim=x.shape[1], metric="ip", dtype="i8", connectivity=32, expansion_add=128)
        add_reachable(ann, keys[:3000], x[:3000])  # a build, then a fold into it
        add_reachable(ann, keys[3000:], x[3000:])
        assert len(ann) == len(x)
        ann.expansion_search = 2000  # wider than any search memloom runs
        found = np.asarray(ann.search(x, 3).keys).reshape(len(x), -1)
        stranded = keys[~(found == keys[:, None]).any(axis=1)]
        assert stranded.size == 0, f"nodes no search reaches: {stranded.tolist()}"


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_a_batch_of_queries_gets_each_query_s_exact_top_k(monkeypatch, dtype):
    """``top_many`` (one product per block, for a batch of writes) answers as ``top`` does
    for each query, across row blocks and query blocks, float16 rows included."""
    import memloom.store.vectors as vectors

    monkeypatch.setattr(vectors, "ROW_BLOCK", 97)
    monkeypatch.setattr(vectors, "QUERY_BLOCK", 7)
    index, _ = filled(600, threshold=10**9)
    rows = index.delta.take(index.delta.live_positions(), dtype)
    queries = clustered(30, seed=4)
    idx = np.flatnonzero(np.arange(rows.n) % 3 != 1)  # a filter's positions
    got = rows.top_many(queries, 5, idx)
    assert len(got) == len(queries)
    for q, hits in zip(queries, got, strict=True):
        want = rows.top(q, 5, idx)
        assert [r for r, _ in hits] == [r for r, _ in want]
        assert np.allclose([s for _, s in hits], [s for _, s in want], atol=1e-5)
    few = rows.top_many(queries, 5, idx[:3])[0]
    assert [r for r, _ in few] == [r for r, _ in rows.top(queries[0], 5, idx[:3])]
    assert len(few) == 3
    assert rows.top_many(queries, 5, idx[:0]) == [[] for _ in queries]
