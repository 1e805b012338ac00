"""HTTP API throughput and latency: store and recall through ``memloom serve`` at 10k memories.

    python bench/api.py [--memories 10000] [--requests 2000] [--concurrency 1 4]

Starts a real ``memloom serve`` on a free 127.0.0.1 port, fills it with
precomputed 384-d vectors through ``/v1/memory/store``, then drives it from a
loopback load generator (asyncio + httpx, bounded request counts). The same
recall run in-process shows what HTTP adds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recall import fill_text, make_queries, make_vectors

RESULTS = Path(__file__).resolve().parent / "results"


def start(home: Path) -> tuple[subprocess.Popen[bytes], str]:
    env = {**os.environ, "MEMLOOM_HOME": str(home), "MEMLOOM_LLM": "offline"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "memloom.cli", "serve", "--port", "0"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    record = home / "daemon.json"
    for _ in range(600):
        if record.exists():
            try:
                url = json.loads(record.read_text())["url"]
                httpx.get(url + "/health", timeout=2).raise_for_status()
                # The daemon serves its owner only: the token it made on its first start.
                AUTH["Authorization"] = "Bearer " + (home / "api-token").read_text().strip()
                return proc, url
            except (ValueError, httpx.HTTPError):
                pass
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError("memloom serve did not start")


#: The daemon's bearer token header, filled in by ``start``.
AUTH: dict[str, str] = {}


def pct(samples: list[float]) -> dict[str, float]:
    ms = sorted(s * 1000 for s in samples)
    return {
        "p50_ms": round(statistics.median(ms), 2),
        "p95_ms": round(ms[int(0.95 * (len(ms) - 1))], 2),
    }


async def drive(url: str, bodies: list[dict], path: str, concurrency: int) -> dict:
    latencies: list[float] = []
    errors = 0
    queue: asyncio.Queue[dict] = asyncio.Queue()
    for body in bodies:
        queue.put_nowait(body)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits, headers=AUTH) as client:

        async def worker() -> None:
            nonlocal errors
            while True:
                try:
                    body = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                t = time.perf_counter()
                res = await client.post(path, json=body)
                latencies.append(time.perf_counter() - t)
                if res.status_code >= 300:
                    errors += 1

        start_t = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - start_t
    return {
        "requests": len(bodies),
        "concurrency": concurrency,
        "req_per_s": round(len(bodies) / elapsed, 1),
        "errors": errors,
        **pct(latencies),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4])
    args = parser.parse_args()

    vectors = make_vectors(args.memories + args.requests * 2, seed=3)
    seed, fresh = vectors[: args.memories], vectors[args.memories :]
    queries = make_queries(seed, args.requests)
    home = Path(tempfile.mkdtemp(prefix="memloom-api-bench-"))
    proc, url = start(home)
    results: dict = {"memories": args.memories, "store": [], "recall": [], "recall_text": []}
    try:
        with httpx.Client(base_url=url, timeout=120, headers=AUTH) as client:
            for s in range(0, len(seed), 500):
                entries = [
                    {"text": fill_text(i), "embedding": seed[i].tolist()}
                    for i in range(s, min(s + 500, len(seed)))
                ]
                client.post("/v1/memory/store", json={"entries": entries}).raise_for_status()
        recall_bodies = [{"query_embedding": q.tolist(), "max_results": 10} for q in queries]
        text_bodies = [
            {"query": f"what do we know about the {fill_text(i)} and its settings?"}
            for i in range(min(500, args.requests))
        ]
        offset = 0
        for c in args.concurrency:
            results["recall"].append(asyncio.run(drive(url, recall_bodies, "/v1/memory/recall", c)))
            results["recall_text"].append(
                asyncio.run(drive(url, text_bodies, "/v1/memory/recall", c))
            )
            n = min(args.requests // 2, len(fresh) - offset)
            store_bodies = [
                {
                    "entries": [
                        {
                            "text": fill_text(args.memories + offset + i),
                            "embedding": fresh[offset + i].tolist(),
                        }
                    ]
                }
                for i in range(n)
            ]
            offset += n
            results["store"].append(asyncio.run(drive(url, store_bodies, "/v1/memory/store", c)))
    finally:
        proc.terminate()
        proc.wait(timeout=60)

    # The same recalls in-process, on the same store, for the HTTP overhead.
    import memloom

    with memloom.open(home=str(home)) as m:
        times = []
        for q in queries[:500]:
            t = time.perf_counter()
            m.recall({"query_embedding": q.tolist(), "max_results": 10})
            times.append(time.perf_counter() - t)
        results["recall_in_process"] = pct(times)
    shutil.rmtree(home, ignore_errors=True)

    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "api.json").write_text(json.dumps(results, indent=2))
    print(f"## HTTP API at {args.memories:,} memories\n")
    print("| request | concurrency | req/s | p50 ms | p95 ms | errors |")
    print("|---|---|---|---|---|---|")
    for name in ("recall", "recall_text", "store"):
        for r in results[name]:
            print(
                f"| {name} | {r['concurrency']} | {r['req_per_s']} | {r['p50_ms']} | "
                f"{r['p95_ms']} | {r['errors']} |"
            )
    ip = results["recall_in_process"]
    print(f"\nrecall in-process on the same store: p50 {ip['p50_ms']} ms, p95 {ip['p95_ms']} ms")
    _ = np  # vectors come from numpy via bench/recall.py


if __name__ == "__main__":
    main()
