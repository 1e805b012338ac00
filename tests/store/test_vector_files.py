"""The SQLite store's vector files: opened memory-mapped, never trusted over the database.

Real store files, a real killed process; every answer is checked against brute force
over the vectors the test wrote.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from memloom.hashing import content_hash, new_id
from memloom.store.base import MemoryRow, SearchFilter
from memloom.store.sqlite import SQLiteStore
from memloom.store.vectors import MERGE_MIN

THRESHOLD = 300
DIM = 16


def clustered(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((max(4, n // 40), DIM))
    x = centers[rng.integers(0, len(centers), n)] + 0.3 * rng.standard_normal((n, DIM))
    x = x.astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def row(text: str, vec: np.ndarray, project: str | None = None) -> MemoryRow:
    now = time.time()
    mid = new_id()
    return MemoryRow(
        id=mid, root_id=mid, version=1, status="active", type="fact", text=text,
        original_text=None, content_hash=content_hash(text), embedding=vec, source=None,
        tags=[], metadata={}, project=project, sensitivity=0, session_id=None,
        created_at=now, asserted_at=now, last_referenced=now,
    )  # fmt: skip


def fill(path: Path, x: np.ndarray, start: int = 0) -> list[str]:
    """Rows "m<i>" with vector x[i]; project "p<i % 3>". Searches once (the graph is
    built) and closes (the files are written)."""
    store = SQLiteStore(path, ann_threshold=THRESHOLD)
    rows = [row(f"m{start + i}", v, f"p{(start + i) % 3}") for i, v in enumerate(x)]
    with store.transaction():
        for r in rows:
            store.insert(r)
    store.vector_search(x[0], 5, SearchFilter())
    store.close()
    return [r.id for r in rows]


def texts(store: SQLiteStore, q: np.ndarray, flt: SearchFilter | None = None) -> list[str]:
    hits = store.vector_search(q, 10, flt or SearchFilter())
    return [store.get(h[0]).text for h in hits]


def brute(x: np.ndarray, q: np.ndarray, keep: np.ndarray | None = None) -> list[str]:
    sims = x @ q
    if keep is not None:
        sims = np.where(keep, sims, -np.inf)
    return [f"m{i}" for i in np.argsort(-sims)[:10] if keep is None or keep[i]]


#: What a small int8 graph (built on several threads, so not the same graph twice)
#: finds of the exact top 10 over these few queries, with room for a near miss or two:
#: the tests check which files answer, the benchmarks how well.
GRAPH_OVERLAP = 0.95


def overlap(store: SQLiteStore, x: np.ndarray, keep: np.ndarray | None = None, **flt) -> float:
    got = []
    for q in x[::37]:
        want = brute(x, q, keep)
        got.append(len(set(want) & set(texts(store, q, SearchFilter(**flt)))) / len(want))
    return float(np.mean(got))


@pytest.fixture
def db_path(tmp_path):
    return tmp_path / "home" / "memloom.db"


def files_of(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + ".vectors")


def test_a_reopened_store_views_its_files_and_answers_as_before(db_path):
    x = clustered(1200, seed=1)
    fill(db_path, x)
    assert (files_of(db_path) / "current.json").exists()
    assert not db_path.with_name("memloom.db.hnsw").exists()
    store = SQLiteStore(db_path, ann_threshold=THRESHOLD)
    try:
        index = store._index
        assert index._ann_view and index.delta.n == 0 and len(index) == len(x)
        assert overlap(store, x) >= GRAPH_OVERLAP
        keep = np.arange(len(x)) % 3 == 1
        # A selective filter is answered exactly over the float16 copies: only a near
        # tie at the tenth place may differ from float32 brute force.
        assert overlap(store, x, keep, project="p1", project_mode="exact") >= 0.98
    finally:
        store.close()


@pytest.mark.parametrize("damage", ["deleted", "truncated graph", "another store's"])
def test_missing_damaged_or_foreign_files_are_rebuilt_from_the_database(db_path, damage):
    x = clustered(900, seed=2)
    fill(db_path, x)
    folder = files_of(db_path)
    if damage == "deleted":
        shutil.rmtree(folder)
    elif damage == "truncated graph":
        (graph,) = folder.glob("*/graph.usearch")
        graph.write_bytes(graph.read_bytes()[:1000])
    else:
        other = db_path.parent.parent / "other" / "memloom.db"
        fill(other, clustered(900, seed=3))  # same size and dimension, other vectors
        shutil.rmtree(folder)
        shutil.copytree(files_of(other), folder)
    store = SQLiteStore(db_path, ann_threshold=THRESHOLD)
    try:
        assert not store._index._ann_view  # the files were not used
        assert overlap(store, x) >= GRAPH_OVERLAP
    finally:
        store.close()
    again = SQLiteStore(db_path, ann_threshold=THRESHOLD)
    try:
        assert again._index._ann_view  # the close wrote good files
        assert overlap(again, x) >= GRAPH_OVERLAP
    finally:
        again.close()


KILLED_WRITER = """
import os, signal, sys, time
import numpy as np
sys.path.insert(0, {src!r})
from memloom.store import vector_files
from memloom.store.sqlite import SQLiteStore
from memloom.store.base import SearchFilter
from tests.store.test_vector_files import THRESHOLD, clustered, row

store = SQLiteStore({path!r}, ann_threshold=THRESHOLD)
x = clustered({extra}, seed=5)
with store.transaction():
    for i, v in enumerate(x):
        store.insert(row(f"m{{{start} + i}}", v, f"p{{({start} + i) % 3}}"))
    store.delete({gone!r})
    store.expire_ids({expired!r}, time.time())
store.vector_search(x[0], 5, SearchFilter())
if {mid_save!r}:
    real_save = np.save
    def save(path, arr):
        if str(path).endswith("status.npy"):
            os.kill(os.getpid(), signal.SIGKILL)  # killed half-way through the new files
        real_save(path, arr)
    vector_files.np.save = save
    store.close()
os.kill(os.getpid(), signal.SIGKILL)  # killed with the files never updated
"""


@pytest.mark.parametrize("mid_save", [False, True])
def test_a_killed_writer_leaves_files_the_next_open_catches_up_with(db_path, mid_save):
    x = clustered(900, seed=4)
    ids = fill(db_path, x)
    extra = MERGE_MIN + 10 if mid_save else 40  # enough to make the close rewrite the files
    code = KILLED_WRITER.format(
        src=str(Path(__file__).resolve().parents[2] / "src"),
        path=str(db_path),
        extra=extra,
        start=len(x),
        gone=ids[:25],
        expired=ids[25:30],
        mid_save=mid_save,
    )
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=root, capture_output=True, timeout=300
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()[-2000:]
    if mid_save:
        assert list(files_of(db_path).glob("*.tmp"))  # the half-written generation
    everything = np.vstack([x, clustered(extra, seed=5)])
    keep = np.ones(len(everything), dtype=bool)
    keep[:30] = False
    store = SQLiteStore(db_path, ann_threshold=THRESHOLD)
    try:
        assert store._index._ann_view  # the last complete files, then the replay
        assert store._index.delta.live == extra
        assert overlap(store, everything, keep) >= GRAPH_OVERLAP
        for q in x[:30]:
            assert not {f"m{i}" for i in range(30)} & set(texts(store, q))
        expired = SearchFilter(statuses=frozenset({"expired"}))
        assert sorted(texts(store, x[27], expired)) == sorted(f"m{i}" for i in range(25, 30))
    finally:
        store.close()


def test_a_graph_saved_by_an_older_memloom_is_adopted_not_rebuilt(db_path):
    from usearch.index import Index

    x = clustered(700, seed=6)
    store = SQLiteStore(db_path, ann_threshold=THRESHOLD)
    with store.transaction():
        for i, v in enumerate(x):
            store.insert(row(f"m{i}", v))
    store.close()
    assert not files_of(db_path).exists()  # never searched: no graph yet
    old = Index(ndim=DIM, metric="ip", dtype="i8", connectivity=32, expansion_add=128)
    old.add(np.arange(1, len(x) + 1), x)
    old.add(999_999, x[0])  # a row deleted since: must not come back
    legacy = db_path.with_name("memloom.db.hnsw")
    old.save(str(legacy))
    legacy.with_suffix(".json").write_text('{"seq": 1, "dim": 16}')
    store = SQLiteStore(db_path, ann_threshold=THRESHOLD)
    try:
        assert len(store._index._ann) == len(x)  # the old graph, reconciled
        assert not store._index._ann.contains(999_999)
        assert overlap(store, x) >= GRAPH_OVERLAP
    finally:
        store.close()
    assert not legacy.exists() and not legacy.with_suffix(".json").exists()
    assert (files_of(db_path) / "current.json").exists()


def test_vector_files_are_private(db_path):
    fill(db_path, clustered(400, seed=7))
    folder = files_of(db_path)
    assert os.stat(folder).st_mode & 0o777 == 0o700
    for p in folder.rglob("*"):
        assert os.stat(p).st_mode & 0o777 == (0o700 if p.is_dir() else 0o600), p


def test_leftovers_of_killed_or_racing_writers_are_swept_after_an_hour(db_path):
    x = clustered(600, seed=8)
    fill(db_path, x)
    folder = files_of(db_path)
    old_gen, old_tmp, fresh_tmp = folder / ("0" * 32), folder / "dead.tmp", folder / "live.tmp"
    for d in (old_gen, old_tmp, fresh_tmp):
        d.mkdir()
        (d / "graph.usearch").write_bytes(b"partial")
    two_hours_ago = time.time() - 7200
    for d in (old_gen, old_tmp):
        os.utime(d, (two_hours_ago, two_hours_ago))
    store = SQLiteStore(db_path, ann_threshold=THRESHOLD)
    try:
        with store.transaction():  # enough new rows that the close writes new files
            for i, v in enumerate(clustered(MERGE_MIN, seed=9)):
                store.insert(row(f"late {i}", v))
    finally:
        store.close()
    left = {p.name for p in folder.iterdir()}
    assert old_gen.name not in left and old_tmp.name not in left
    assert fresh_tmp.name in left  # perhaps a writer still at work
    assert len([p for p in folder.iterdir() if p.is_dir() and not p.name.endswith(".tmp")]) == 1


def test_a_purge_after_a_forget_zeroes_the_deleted_vectors_in_place(db_path):
    from usearch.index import Index

    x = clustered(800, seed=10)
    ids = fill(db_path, x)
    store = SQLiteStore(db_path, ann_threshold=THRESHOLD)
    try:
        rowids = [r for r, in store.db.execute("SELECT rowid FROM memories WHERE id IN (?, ?)",
                                                ids[3:5])]  # fmt: skip
        folder = files_of(db_path)
        (gen,) = [p for p in folder.iterdir() if p.is_dir()]
        graph_before = Index.restore(str(gen / "graph.usearch"))
        int8 = [graph_before.get(r, dtype=np.int8).tobytes() for r in rowids]
        graph_bytes = (gen / "graph.usearch").read_bytes()
        assert all(v in graph_bytes for v in int8)  # the test can fail
        with store.transaction():
            store.delete(ids[3:5])
        store.purge()
        (same,) = [p for p in folder.iterdir() if p.is_dir()]
        assert same == gen  # erased in place: no file was rewritten
        keys = np.load(gen / "keys.npy")
        saved = np.load(gen / "vectors.npy")
        gone = np.isin(keys, rowids)
        assert gone.sum() == 2 and not saved[gone].any()
        assert saved[~gone].any(axis=1).all()  # only those rows
        for v in x[3:5]:
            assert np.abs(saved.astype(np.float32) - v).max(axis=1).min() > 1e-2
        graph_bytes = (gen / "graph.usearch").read_bytes()
        assert not any(v in graph_bytes for v in int8)
        assert not {"m3", "m4"} & set(texts(store, x[3]))
        assert store.get_meta("purge_pending") is None
    finally:
        store.close()
    reopened = SQLiteStore(db_path, ann_threshold=THRESHOLD)
    try:  # the zeroed rows are not answers, the others still are
        assert not {"m3", "m4"} & set(texts(reopened, x[3]))
        assert "m7" in texts(reopened, x[7])
    finally:
        reopened.close()


def test_the_graph_layout_finds_every_key_s_int8_row_in_usearch_s_file(tmp_path):
    """vector_files reads usearch's own file layout to zero a key's vector in place: each
    node's key and the matrix row it owns must be exactly where usearch put them."""
    from usearch.index import Index

    from memloom.store import vector_files

    x = clustered(3000, seed=12)  # enough nodes that some sit above level 0
    keys = np.arange(10, 10 + len(x), dtype=np.int64)
    graph = Index(ndim=DIM, metric="ip", dtype="i8", connectivity=48, expansion_add=128)
    graph.add(keys, x)
    graph.remove(keys[:5])  # freed slots keep their vectors in the file
    graph.save(str(tmp_path / "g.usearch"))
    assert graph.max_level > 0
    layout = vector_files.graph_layout(tmp_path / "g.usearch")
    matrix = np.fromfile(tmp_path / "g.usearch", dtype=np.int8, count=8 + layout.rows * DIM)
    matrix = matrix[layout.matrix_offset :].reshape(layout.rows, DIM)
    assert sorted(layout.slot_keys[layout.slot_keys != vector_files.FREE_KEY]) == list(keys[5:])
    assert int((layout.slot_keys == vector_files.FREE_KEY).sum()) == 5
    for key in keys[5::97]:
        (slot,) = layout.slots_of(np.array([key]))
        assert (matrix[slot] == graph.get(int(key), dtype=np.int8)).all()
    assert not layout.slots_of(keys[:5]).size
