"""Recall latency at scale: memloom vs numpy brute force (the floor) vs ChromaDB.

    python bench/recall.py --sizes 10000 100000 --queries 300
    python bench/recall.py --writes-only --label main --sizes 10000 100000

Every system gets the same precomputed 384-d vectors and the same queries.
memloom is driven through its library contract (``store`` / ``recall`` with
``embedding`` / ``query_embedding``), so the figures include dedup on write,
filtering, scoring and the touch that recall does. Top-10 overlap with exact
search is reported for every system.

``--writes-only`` times just memloom's fill (``Memloom.store``, JSON-list embeddings,
batches of 1,000) and adds it, under ``--label``, to bench/results/writes.json: run
it once per checkout (``PYTHONPATH=that/src``) for a before/after in one file.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import resource
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

DIM = 384
RESULTS = Path(__file__).parent / "results"


def make_vectors(n: int, seed: int = 0) -> np.ndarray:
    """Clustered unit vectors with a low intrinsic dimension, like sentence embeddings.

    Nearest neighbours sit at cosine 0.5-0.8, as distinct sentences do, so the
    dedup band (cosine > 0.85) rarely fires and every vector becomes a memory.
    """
    rng = np.random.default_rng(seed)
    topics = rng.standard_normal((max(50, n // 100), DIM)).astype(np.float32)
    basis = rng.standard_normal((48, DIM)).astype(np.float32) / np.sqrt(48)
    out = np.empty((n, DIM), dtype=np.float32)
    step = 20_000
    for start in range(0, n, step):
        m = min(step, n - start)
        x = topics[rng.integers(0, len(topics), m)] * 0.35
        x += rng.standard_normal((m, 48)).astype(np.float32) @ basis
        x += 0.45 * rng.standard_normal((m, DIM)).astype(np.float32) / np.sqrt(DIM) * 4
        out[start : start + m] = x
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


def make_queries(x: np.ndarray, count: int, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    q = x[rng.integers(0, len(x), count)] + 0.03 * rng.standard_normal((count, DIM)).astype(
        np.float32
    )
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def exact_top(x: np.ndarray, q: np.ndarray, k: int = 10) -> list[int]:
    sims = x @ q
    top = np.argpartition(-sims, k)[:k]
    return top[np.argsort(-sims[top])].tolist()


def percentiles(samples: list[float]) -> dict[str, float]:
    ms = sorted(s * 1000 for s in samples)
    return {
        "p50_ms": round(statistics.median(ms), 3),
        "p95_ms": round(ms[int(0.95 * (len(ms) - 1))], 3),
    }


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench_numpy(x: np.ndarray, queries: np.ndarray) -> dict:
    times = []
    for q in queries:
        t = time.perf_counter()
        exact_top(x, q)
        times.append(time.perf_counter() - t)
    return {"system": "numpy brute force", **percentiles(times), "top10_overlap": 1.0}


#: Words for the fill's texts (64 each, no digits): see ``fill_text``.
_FIRST_WORDS = (
    "amber birch cedar dune ember fjord grove harbor iris jade kelp lagoon maple nectar "
    "onyx pebble quartz reef sable thistle umber violet willow yarrow zephyr acorn basil "
    "clover dahlia elder fennel ginger hazel indigo juniper kale lotus myrtle nutmeg olive "
    "poppy quince rosemary saffron tansy ula vanilla wasabi xylem yucca zinnia alder bramble "
    "cypress dogwood elm fir gorse heather ivy jasmine larch mimosa neem"
)
_FIRST = _FIRST_WORDS.split()
_SECOND_WORDS = (
    "anchor beacon canyon delta estuary foothill glacier headland island jetty knoll ledge "
    "mesa narrows oasis plateau quarry ridge summit tundra upland valley wetland basin bluff "
    "cove dell firth gulch heath inlet karst loch moor nook outcrop pass range shoal spit "
    "strait tarn vale wold atoll bayou cape dune erg fen glen hollow isthmus kame lea marsh "
    "ness orchard prairie rill scree steppe terrace verge"
)
_SECOND = _SECOND_WORDS.split()


def fill_text(i: int) -> str:
    """Memory ``i``'s text: four base-64 digits of ``i``, each spelled twice (a word from
    each list), so any two texts differ in at least two words. "memory number 3" and
    "memory number 4" would be the same sentence with a value changed, which memloom
    now writes as a new version (memloom.claims): the fill would not be N memories."""
    words = []
    for _ in range(4):
        i, digit = divmod(i, 64)
        words += [_FIRST[digit], _SECOND[(digit * 7 + len(words)) % 64]]
    return "memory of " + " ".join(words)


def fill_memloom(m, x: np.ndarray) -> tuple[float, dict[str, int]]:
    """Every row of ``x`` through ``Memloom.store`` (JSON lists, batches of 1,000):
    seconds taken, and which memory each id is."""
    t = time.perf_counter()
    batch = 1000
    id_of: dict[str, int] = {}
    for start in range(0, len(x), batch):
        entries = [
            {"text": fill_text(i), "embedding": x[i].tolist()}
            for i in range(start, min(start + batch, len(x)))
        ]
        res = m.store({"entries": entries})
        for offset, mid in enumerate(res.ids):
            id_of.setdefault(mid, start + offset)
    return time.perf_counter() - t, id_of


def fill_home(home: Path, x: np.ndarray) -> tuple[float, dict[str, int], int]:
    """A new store under ``home`` filled with ``x``: seconds, ids, memories stored."""
    import memloom

    m = memloom.open(home=str(home))
    store_s, id_of = fill_memloom(m, x)
    stored = m.stats().total_memories
    m.close()
    return store_s, id_of, stored


def bench_writes(x: np.ndarray) -> dict:
    """Only the fill: store/s from empty to ``len(x)``."""
    home = Path(tempfile.mkdtemp(prefix="memloom-bench-"))
    try:
        store_s, _, stored = fill_home(home, x)
        return {"n": len(x), "store_per_s": round(len(x) / store_s, 1), "stored": stored}
    finally:
        shutil.rmtree(home, ignore_errors=True)


def code_state() -> dict:
    """Which memloom measured: its source folder and that checkout's commit."""
    import subprocess

    import memloom

    src = Path(memloom.__file__).resolve().parents[1]
    head = subprocess.run(
        ["git", "-C", str(src), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    return {"source": str(src), "commit": head or None}


def bench_memloom(x: np.ndarray, queries: np.ndarray, truth: list[set[int]]) -> dict:
    import memloom

    home = Path(tempfile.mkdtemp(prefix="memloom-bench-"))
    try:
        store_s, id_of, stored = fill_home(home, x)
        size = sum(p.stat().st_size for p in home.iterdir())

        t = time.perf_counter()
        m = memloom.open(home=str(home))
        m.recall({"query_embedding": queries[0].tolist(), "max_results": 10})
        cold_s = time.perf_counter() - t

        times, overlap = [], []
        for q, want in zip(queries, truth, strict=True):
            t = time.perf_counter()
            res = m.recall({"query_embedding": q.tolist(), "max_results": 10})
            times.append(time.perf_counter() - t)
            got = {id_of.get(mem.id, -1) for mem in res.memories}
            overlap.append(len(got & want) / 10)
        m.close()
        return {
            "system": "memloom (SQLite)",
            **percentiles(times),
            "top10_overlap": round(float(np.mean(overlap)), 4),
            "store_per_s": round(len(x) / store_s, 1),
            "stored": stored,
            "bytes_per_memory": round(size / max(stored, 1)),
            "open_and_first_recall_s": round(cold_s, 3),
        }
    finally:
        shutil.rmtree(home, ignore_errors=True)


def bench_chroma(x: np.ndarray, queries: np.ndarray, truth: list[set[int]]) -> dict | None:
    try:
        import chromadb
    except ImportError:
        return None
    home = Path(tempfile.mkdtemp(prefix="chroma-bench-"))
    try:
        client = chromadb.PersistentClient(path=str(home))
        col = client.create_collection("bench", metadata={"hnsw:space": "cosine"})
        t = time.perf_counter()
        batch = 5000
        for start in range(0, len(x), batch):
            end = min(start + batch, len(x))
            col.add(
                ids=[str(i) for i in range(start, end)],
                embeddings=x[start:end],
                documents=[fill_text(i) for i in range(start, end)],
            )
        store_s = time.perf_counter() - t
        times, overlap = [], []
        for q, want in zip(queries, truth, strict=True):
            t = time.perf_counter()
            res = col.query(query_embeddings=[q], n_results=10)
            times.append(time.perf_counter() - t)
            overlap.append(len({int(i) for i in res["ids"][0]} & want) / 10)
        size = sum(p.stat().st_size for p in home.rglob("*") if p.is_file())
        return {
            "system": f"ChromaDB {chromadb.__version__} (embedded)",
            **percentiles(times),
            "top10_overlap": round(float(np.mean(overlap)), 4),
            "store_per_s": round(len(x) / store_s, 1),
            "stored": len(x),
            "bytes_per_memory": round(size / len(x)),
        }
    finally:
        shutil.rmtree(home, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--skip-chroma", action="store_true")
    parser.add_argument("--writes-only", action="store_true", help="time memloom's fill only")
    parser.add_argument("--label", default="this checkout", help="--writes-only: the run's name")
    args = parser.parse_args()
    if args.writes_only:
        main_writes(args)
        return

    report = {
        "machine": f"{platform.machine()}, {platform.processor() or 'cpu'}, Python "
        f"{platform.python_version()}",
        "runs": [],
    }
    for n in args.sizes:
        x = make_vectors(n)
        queries = make_queries(x, args.queries)
        truth = [set(exact_top(x, q)) for q in queries]
        rows = [bench_numpy(x, queries), bench_memloom(x, queries, truth)]
        gc.collect()
        if not args.skip_chroma:
            chroma = bench_chroma(x, queries, truth)
            if chroma:
                rows.append(chroma)
        floor = rows[0]["p50_ms"]
        for row in rows:
            row["vs_numpy_p50"] = round(row["p50_ms"] / floor, 2)
        report["runs"].append({"n": n, "results": rows})
        print(f"\n## {n:,} memories")
        print("| system | p50 ms | p95 ms | top-10 overlap with exact | store/s | bytes/memory |")
        print("|---|---|---|---|---|---|")
        for r in rows:
            print(
                f"| {r['system']} | {r['p50_ms']} | {r['p95_ms']} | {r['top10_overlap']} | "
                f"{r.get('store_per_s', '')} | {r.get('bytes_per_memory', '')} |"
            )
    report["peak_rss_mb"] = round(rss_mb())
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "recall.json").write_text(json.dumps(report, indent=2))
    print(f"\npeak RSS {report['peak_rss_mb']} MB; JSON in {RESULTS / 'recall.json'}")


def main_writes(args: argparse.Namespace) -> None:
    out = RESULTS / "writes.json"
    doc = json.loads(out.read_text()) if out.exists() else {"runs": []}
    doc["machine"] = (
        f"{platform.machine()}, {platform.processor() or 'cpu'}, Python {platform.python_version()}"
    )
    doc["runs"] = [r for r in doc["runs"] if r["label"] != args.label]
    run = {"label": args.label, **code_state(), "sizes": []}
    for n in args.sizes:
        row = bench_writes(make_vectors(n))
        run["sizes"].append(row)
        print(f"{args.label}: {n:,} memories, Memloom.store {row['store_per_s']}/s", flush=True)
        gc.collect()
    doc["runs"].append(run)
    RESULTS.mkdir(exist_ok=True)
    out.write_text(json.dumps(doc, indent=2))


if __name__ == "__main__":
    main()
