"""What the HNSW graph costs a write, and what it buys recall.

    python bench/graph_build.py [--size 100000] [--configs 48:128 48:64 32:128 32:64]

memloom's graph is usearch, int8, inner product (``store/vectors.py``). Every memory a
store holds past the graph threshold is inserted into it once (the fold), on all cores,
so the insertion rate is a ceiling on the write rate of a fill. For each
``connectivity:expansion_add`` pair this builds the graph over ``make_vectors`` (as
bench/recall.py and bench/scale.py) and reports the insertion rate and, at several
search breadths, the top-10 overlap with exact search after re-scoring 40 candidates in
float32 (as recall does) and the p50 latency of one query's graph search. Writes
bench/results/graph_build.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recall import DIM, exact_top, make_queries, make_vectors

RESULTS = Path(__file__).parent / "results"
BREADTHS = (32, 64, 128)
CANDIDATES = 40


def measure(x: np.ndarray, q: np.ndarray, truth: np.ndarray, m: int, ef_add: int) -> dict:
    from usearch.index import Index

    ann = Index(ndim=DIM, metric="ip", dtype="i8", connectivity=m, expansion_add=ef_add)
    keys = np.arange(len(x), dtype=np.int64)
    t = time.perf_counter()
    ann.add(keys, x)
    build_s = time.perf_counter() - t
    rows = []
    for breadth in BREADTHS:
        ann.expansion_search = breadth
        times, overlap = [], []
        for i, v in enumerate(q):
            t = time.perf_counter()
            found = np.asarray(ann.search(v, CANDIDATES, threads=1).keys, dtype=np.int64)
            times.append(time.perf_counter() - t)
            top = found[np.argsort(-(x[found] @ v))[:10]]
            overlap.append(len(set(top.tolist()) & set(truth[i].tolist())) / 10)
        rows.append(
            {
                "breadth": breadth,
                "top10_overlap": round(float(np.mean(overlap)), 4),
                "search_p50_ms": round(statistics.median(times) * 1000, 3),
            }
        )
    return {
        "connectivity": m,
        "expansion_add": ef_add,
        "build_s": round(build_s, 2),
        "inserts_per_s": round(len(x) / build_s, 1),
        "searches": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--configs", nargs="+", default=["48:128", "48:64", "32:128", "32:64"])
    parser.add_argument("--out", default=str(RESULTS / "graph_build.json"))
    args = parser.parse_args()
    x = make_vectors(args.size)
    q = make_queries(x, args.queries)
    truth = np.array([exact_top(x, v) for v in q])
    runs = []
    for config in args.configs:
        m, ef_add = (int(v) for v in config.split(":"))
        runs.append(measure(x, q, truth, m, ef_add))
        r = runs[-1]
        cells = ", ".join(
            f"breadth {s['breadth']}: {s['top10_overlap']} in {s['search_p50_ms']} ms"
            for s in r["searches"]
        )
        print(f"M {m}, expansion_add {ef_add}: {r['inserts_per_s']:,.0f} inserts/s; {cells}")
    doc = {
        "size": args.size,
        "queries": args.queries,
        "candidates": CANDIDATES,
        "command": " ".join(["python bench/graph_build.py", *sys.argv[1:]]),
        "taken": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {platform.python_version()}",
        "runs": runs,
    }
    Path(args.out).write_text(json.dumps(doc, indent=2) + "\n")


if __name__ == "__main__":
    main()
