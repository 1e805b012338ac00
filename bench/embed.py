"""Benchmark the local embedder: cold load, throughput, query latency, peak RSS.

    python bench/embed.py [--sentences 1000] [--queries 200] [--threads N]

Prints a Markdown table and writes bench/results/embed.json. Cold load is
measured in fresh subprocesses (import + construct + first embed call, which
creates the ONNX session), since that is what every CLI start pays.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results" / "embed.json"

_COLD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
import memloom.embed as e
t1 = time.perf_counter()
emb = e.LocalEmbedder(threads=int(sys.argv[1]) if len(sys.argv) > 1 else None)
t2 = time.perf_counter()
emb.embed(["The database uses PostgreSQL and migrations run with alembic."])
t3 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "construct_s": t2 - t1, "first_embed_s": t3 - t2,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

_SUBJECTS = [
    "The API server",
    "Our CI pipeline",
    "The database migration",
    "The auth middleware",
    "This repository",
    "The frontend build",
    "The nightly job",
    "The payment service",
    "The test suite",
    "The deploy script",
    "The cache layer",
    "The search index",
    "The user asked that the agent",
    "The team decided that the backend",
]
_VERBS = [
    "uses",
    "must not touch",
    "depends on",
    "is configured through",
    "was migrated to",
    "fails intermittently with",
    "should always be run with",
    "stores its state in",
    "retries three times against",
    "is documented in",
    "replaced",
    "is pinned to",
]
_OBJECTS = [
    "PostgreSQL 16",
    "the Redis instance on port 6379",
    "pytest with the -x flag",
    "environment variables from .env.local",
    "the staging Kubernetes cluster",
    "a SQLite file under ~/.cache",
    "the legacy REST endpoints",
    "ruff and mypy in strict mode",
    "feature flags stored in LaunchDarkly",
    "the S3 bucket for uploads",
    "Python 3.11",
    "the OpenTelemetry collector",
    "pnpm instead of npm",
    "a JWT signed with RS256",
]
_TAILS = [
    "because the old approach leaked connections",
    "so run it before every commit",
    "unless the change only touches documentation",
    "and the timeout is thirty seconds",
    "which broke the release last week",
    "according to the architecture decision record",
    "when the worker pool is saturated",
    "after the team review on Monday",
    "otherwise the integration tests hang",
    "and nobody should change it without asking",
]


def realistic_sentences(n: int, seed: int = 0) -> list[str]:
    """Memory-like facts of 10-30 words, deterministic for a given seed."""
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        target = rng.randint(10, 30)
        words = f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)}".split()
        while len(words) < target:
            words += rng.choice(_TAILS).split()
        out.append(" ".join(words[:target]).rstrip(",") + ".")
    return out


def cold_load(runs: int, threads: int | None) -> dict[str, float]:
    samples = []
    for _ in range(runs):
        cmd = [sys.executable, "-c", _COLD, *([str(threads)] if threads else [])]
        res = subprocess.run(cmd, capture_output=True, text=True, check=True)
        samples.append(json.loads(res.stdout))
    return {k: statistics.median(s[k] for s in samples) for k in samples[0]}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    idx = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[idx]


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, default=1000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--cold-runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None, help="intra-op threads (default: cores)")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args()

    import onnxruntime

    from memloom.embed import LocalEmbedder

    cold = cold_load(args.cold_runs, args.threads)

    emb = LocalEmbedder(threads=args.threads)
    sentences = realistic_sentences(args.sentences)
    emb.embed(sentences[:64])  # warm-up: session, allocator arenas
    runs = []
    for _ in range(3):
        t = time.perf_counter()
        emb.embed(sentences)
        runs.append(time.perf_counter() - t)
    batch_s = statistics.median(runs)

    queries = realistic_sentences(args.queries, seed=1)
    lat_ms = []
    for q in queries:
        t = time.perf_counter()
        emb.embed_query(q)
        lat_ms.append((time.perf_counter() - t) * 1000)

    words = [len(s.split()) for s in sentences]
    result = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": "python bench/embed.py" + (f" --threads {args.threads}" if args.threads else ""),
        "embedder": emb.fingerprint,
        "machine": {
            "cpu": cpu_model(),
            "cores": os.cpu_count(),
            "threads": emb.threads,
            "python": platform.python_version(),
            "onnxruntime": onnxruntime.__version__,
        },
        "cold": {
            "runs": args.cold_runs,
            "import_ms": round(cold["import_s"] * 1000, 1),
            "construct_ms": round(cold["construct_s"] * 1000, 2),
            "first_embed_ms": round(cold["first_embed_s"] * 1000, 1),
            "peak_rss_mb": round(cold["peak_rss_mb"], 1),
        },
        "throughput": {
            "sentences": len(sentences),
            "words_min_mean_max": [min(words), round(statistics.mean(words), 1), max(words)],
            "seconds": round(batch_s, 3),
            "sentences_per_s": round(len(sentences) / batch_s, 1),
        },
        "query_latency_ms": {
            "n": len(lat_ms),
            "p50": round(percentile(lat_ms, 50), 2),
            "p95": round(percentile(lat_ms, 95), 2),
        },
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }

    c, tp, ql = result["cold"], result["throughput"], result["query_latency_ms"]
    rows = [
        ("import memloom.embed", f"{c['import_ms']} ms"),
        ("LocalEmbedder() construct", f"{c['construct_ms']} ms"),
        ("cold first embed (session + 1 sentence)", f"{c['first_embed_ms']} ms"),
        ("peak RSS after first embed (fresh process)", f"{c['peak_rss_mb']} MB"),
        (
            f"throughput, batch of {tp['sentences']} (10-30 words)",
            f"{tp['sentences_per_s']} sent/s",
        ),
        ("single-query latency p50", f"{ql['p50']} ms"),
        ("single-query latency p95", f"{ql['p95']} ms"),
        ("peak RSS, benchmark process", f"{result['peak_rss_mb']} MB"),
    ]
    m = result["machine"]
    print(
        f"{emb.fingerprint} on {m['cpu']}, {m['cores']} cores, {m['threads']} threads, "
        f"onnxruntime {m['onnxruntime']}\n"
    )
    print("| metric | value |\n| --- | --- |")
    for k, v in rows:
        print(f"| {k} | {v} |")

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
