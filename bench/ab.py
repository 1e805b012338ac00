"""Two commits side by side: the same benchmarks, alternating, in one run.

    python bench/ab.py --before REV [--after REV] [--rounds 2] [--only recall import hooks]

Checks a change for slowdowns (e.g. a redesign that must not cost speed). Each
commit is checked out into its own temporary worktree. Then each benchmark
script runs there with that tree's ``src`` first on ``PYTHONPATH``, in this
interpreter. Within a round the order of the two sides alternates, so a
machine that gets busier part-way through does not favour either side. For
each metric the report keeps the median over rounds for each side, and the
ratio after / before. For latencies below 1 the after side is faster; for
throughputs above 1 it is.

Writes ``bench/results/ab.json``, rendered into docs/benchmarks.md by ``python -m bench report``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
TRANSCRIPTS = REPO.parent / "shared" / "fixtures" / "transcripts"

Metrics = dict[str, float]


def recall_metrics(doc: dict[str, Any]) -> Metrics:
    out: Metrics = {}
    for run in doc["runs"]:
        for r in run["results"]:
            if r["system"].startswith("memloom"):
                n = f"{run['n'] // 1000}k"
                out[f"recall p50 ms @{n}"] = r["p50_ms"]
                out[f"recall p95 ms @{n}"] = r["p95_ms"]
                out[f"store /s @{n}"] = r["store_per_s"]
    return out


def import_metrics(doc: dict[str, Any]) -> Metrics:
    return {
        "import pipeline MB/s": doc["pipeline_mb_s"],
        "import dry run MB/s": doc["dry_run_mb_s"],
        "re-check of 1,000 sessions s": doc["recheck_s"],
    }


def hooks_metrics(doc: dict[str, Any]) -> Metrics:
    out: Metrics = {}
    for name, r in doc.items():
        if name.startswith("python -c"):
            continue
        out[f"{name} p50 ms"] = r["p50_ms"]
        out[f"{name} p95 ms"] = r["p95_ms"]
    return out


#: name -> (script arguments, result file, metric extractor)
BENCHES: dict[str, tuple[list[str], str, Callable[[dict[str, Any]], Metrics]]] = {
    "recall": (["--sizes", "10000", "100000", "--skip-chroma"], "recall.json", recall_metrics),
    "import": (["--repeat", "3"], "import.json", import_metrics),
    "hooks": (["--runs", "40"], "hooks.json", hooks_metrics),
}
HIGHER_IS_BETTER = ("/s", "MB/s")


def checkout(rev: str, where: Path) -> str:
    subprocess.run(
        ["git", "-C", str(REPO), "worktree", "add", "-q", "--detach", str(where), rev],
        check=True,
    )
    return subprocess.run(
        ["git", "-C", str(where), "rev-parse", "--short", "HEAD"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def run_bench(tree: Path, name: str, recall_sizes: list[str] | None = None) -> Metrics:
    args, result, extract = BENCHES[name]
    if name == "recall" and recall_sizes:
        args = ["--sizes", *recall_sizes, "--skip-chroma"]
    if name == "import" and TRANSCRIPTS.is_dir():
        args = [*args, "--transcripts", str(TRANSCRIPTS)]
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    subprocess.run(
        [sys.executable, str(tree / "bench" / f"{name}.py"), *args],
        cwd=tree,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return extract(json.loads((tree / "bench" / "results" / result).read_text()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--before", required=True, help="the commit to compare against")
    parser.add_argument("--after", default="HEAD")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--only", nargs="+", choices=sorted(BENCHES), default=sorted(BENCHES))
    parser.add_argument(
        "--recall-sizes", nargs="+", default=None, help="store sizes for recall (10000 100000)"
    )
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="memloom-ab-"))
    trees = {"before": work / "before", "after": work / "after"}
    commits = {side: checkout(getattr(args, side), tree) for side, tree in trees.items()}
    samples: dict[str, dict[str, list[Metrics]]] = {
        n: {"before": [], "after": []} for n in args.only
    }
    load_start = os.getloadavg()
    started = time.time()
    try:
        for rnd in range(args.rounds):
            order = ["before", "after"] if rnd % 2 == 0 else ["after", "before"]
            for name in args.only:
                for side in order:
                    t = time.perf_counter()
                    samples[name][side].append(run_bench(trees[side], name, args.recall_sizes))
                    print(
                        f"round {rnd + 1} {name:7s} {side:6s} {time.perf_counter() - t:6.1f} s",
                        flush=True,
                    )
    finally:
        for tree in trees.values():
            subprocess.run(
                ["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)], check=False
            )
        shutil.rmtree(work, ignore_errors=True)

    rows = []
    for name in args.only:
        for metric in samples[name]["before"][0]:
            before = statistics.median(m[metric] for m in samples[name]["before"])
            after = statistics.median(m[metric] for m in samples[name]["after"])
            rows.append(
                {
                    "bench": name,
                    "metric": metric,
                    "before": before,
                    "after": after,
                    "ratio": round(after / before, 3) if before else None,
                    "higher_is_better": any(unit in metric for unit in HIGHER_IS_BETTER),
                    "rounds": args.rounds,
                }
            )
    doc = {
        "before": commits["before"],
        "after": commits["after"],
        "rounds": args.rounds,
        "seconds": round(time.time() - started),
        "load_average_start": [round(x, 2) for x in load_start],
        "load_average_end": [round(x, 2) for x in os.getloadavg()],
        "rows": rows,
    }
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / "ab.json"
    if out.exists():  # keep the rows of benchmarks not re-run in this comparison
        old = json.loads(out.read_text())
        if (old.get("before"), old.get("after")) == (doc["before"], doc["after"]):
            fresh = {(r["bench"], r["metric"]) for r in rows}
            kept = [r for r in old["rows"] if (r["bench"], r["metric"]) not in fresh]
            for r in kept:
                r.setdefault("rounds", old.get("rounds"))
            doc["rows"] = kept + rows
    out.write_text(json.dumps(doc, indent=2))
    for r in rows:
        print(f"{r['bench']:7s} {r['metric']:38s} {r['before']:10.3f} {r['after']:10.3f}", end=" ")
        print(r["ratio"])


if __name__ == "__main__":
    main()
