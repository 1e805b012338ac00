"""Writes and recall on a busy machine: the same workload quiet, then beside CPU hogs.

    python bench/contention.py [--size 20000] [--writes 4000] [--recalls 300] [--hogs 2]

A store of ``--size`` memories is filled once through ``Memloom.store`` (384-d
vectors as JSON lists, batches of 1,000: what an HTTP client sends). Each condition
then runs on its own copy of that store: ``--writes`` more memories through
``Memloom.store`` (store/s) and ``--recalls`` recalls with ``query_embedding``
(p50/p95), plus a bare 3,000 x 384 matrix-vector product (the size of an exact
search) timed the same way. Conditions:

- quiet: nothing else started by this script;
- busy: ``--hogs`` processes each spinning one core (``while True: pass``);
- busy, BLAS at all cores: as busy, with numpy's BLAS pool put back to one thread
  per core for the run (what memloom did before the engine set it to one).

The engine sets BLAS to one thread when it opens (``memloom.engine.BLAS_THREADS``).
The target: busy store/s and recall p50 within 2x of quiet, in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recall import fill_text, make_queries, make_vectors

RESULTS = Path(__file__).parent / "results"
BATCH = 1000


def pct(samples: list[float]) -> dict[str, float]:
    ms = sorted(s * 1000 for s in samples)
    return {
        "p50_ms": round(statistics.median(ms), 3),
        "p95_ms": round(ms[int(0.95 * (len(ms) - 1))], 3),
    }


def store_all(m: Any, x: np.ndarray, first: int) -> float:
    """Store every row of ``x`` (JSON lists, batches of 1,000); seconds taken."""
    t = time.perf_counter()
    for start in range(0, len(x), BATCH):
        entries = [
            {"text": fill_text(first + i), "embedding": x[i].tolist()}
            for i in range(start, min(start + BATCH, len(x)))
        ]
        m.store({"entries": entries})
    return time.perf_counter() - t


@contextmanager
def hogs(count: int):
    """``count`` processes that each keep one core busy, stopped (by pid) on exit."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        time.sleep(1.0)  # let the scheduler see them
        yield [p.pid for p in procs]
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


def workload(base: Path, extra: np.ndarray, first: int, queries: np.ndarray, blas: int | None):
    from threadpoolctl import threadpool_limits

    import memloom

    home = Path(tempfile.mkdtemp(prefix="memloom-contention-"))
    try:
        shutil.copytree(base, home, dirs_exist_ok=True)
        m = memloom.open(home=str(home))
        m.recall({"query_embedding": queries[0].tolist(), "max_results": 10})  # warm
        limit = threadpool_limits(limits=blas, user_api="blas") if blas else nullcontext()
        with limit:
            mat = np.asarray(make_vectors(3000, seed=5))
            q = mat[0]
            mv = []
            for _ in range(200):
                t = time.perf_counter()
                mat @ q
                mv.append(time.perf_counter() - t)
            store_s = store_all(m, extra, first)
            times = []
            for qv in queries:
                t = time.perf_counter()
                m.recall({"query_embedding": qv.tolist(), "max_results": 10})
                times.append(time.perf_counter() - t)
        m.close()
        return {
            "store_per_s": round(len(extra) / store_s, 1),
            "recall": pct(times),
            "matvec_3000x384": pct(mv),
        }
    finally:
        shutil.rmtree(home, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=20_000)
    parser.add_argument("--writes", type=int, default=4_000)
    parser.add_argument("--recalls", type=int, default=300)
    parser.add_argument("--hogs", type=int, default=2)
    parser.add_argument("--out", default=str(RESULTS / "contention.json"))
    args = parser.parse_args()

    import memloom

    x = make_vectors(args.size + args.writes)
    base_x, extra = x[: args.size], x[args.size :]
    queries = make_queries(base_x, args.recalls)
    cores = os.cpu_count() or 1
    base = Path(tempfile.mkdtemp(prefix="memloom-contention-base-"))
    try:
        m = memloom.open(home=str(base))
        fill_s = store_all(m, base_x, 0)
        # A first search builds the store's vector index (a graph from 20,000 rows);
        # closing saves it, so no condition pays for building it.
        m.recall({"query_embedding": queries[0].tolist(), "max_results": 10})
        m.close()
        runs: dict[str, Any] = {}
        runs["quiet"] = workload(base, extra, args.size, queries, None)
        with hogs(args.hogs):
            runs["busy"] = workload(base, extra, args.size, queries, None)
            runs["busy, BLAS at all cores"] = workload(base, extra, args.size, queries, cores)
    finally:
        shutil.rmtree(base, ignore_errors=True)

    quiet, busy = runs["quiet"], runs["busy"]
    store_ratio = quiet["store_per_s"] / busy["store_per_s"]
    recall_ratio = busy["recall"]["p50_ms"] / quiet["recall"]["p50_ms"]
    report = {
        "machine": f"{platform.machine()}, {cores} cores, Python {platform.python_version()}",
        "size": args.size,
        "writes": args.writes,
        "recalls": args.recalls,
        "hogs": args.hogs,
        "fill_store_per_s": round(args.size / fill_s, 1),
        "runs": runs,
        "store_slowdown": round(store_ratio, 2),
        "recall_p50_slowdown": round(recall_ratio, 2),
        "within_2x": store_ratio <= 2.0 and recall_ratio <= 2.0,
    }
    print(
        f"\n{args.size:,} memories, {args.writes:,} writes, {args.recalls} recalls, "
        f"{args.hogs} busy processes on {cores} cores\n"
    )
    print("| condition | store/s | recall p50 ms | recall p95 ms | 3000x384 matvec p50 ms |")
    print("|---|---|---|---|---|")
    for name, r in runs.items():
        print(
            f"| {name} | {r['store_per_s']} | {r['recall']['p50_ms']} | "
            f"{r['recall']['p95_ms']} | {r['matvec_3000x384']['p50_ms']} |"
        )
    print(
        f"\nbusy vs quiet: store {store_ratio:.2f}x slower, recall p50 {recall_ratio:.2f}x; "
        f"within 2x: {'met' if report['within_2x'] else 'NOT met'}"
    )
    out = Path(args.out)
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
