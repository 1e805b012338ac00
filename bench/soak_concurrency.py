"""Soak: many rounds of N processes × M mixed writes on one store (SQLite and PostgreSQL).

    python bench/soak_concurrency.py [--rounds 5] [--workers 8] [--ops 1000] [--no-postgres]

Each round starts fresh: ``--workers`` processes (tests/support/concurrency.py) store,
update, expire and forget memories — and store a shared set every worker stores
too — while recalling; afterwards every worker's record is checked against the
database. Writes attempted, lost, duplicated, wrong states, errors ("database is
locked" among them) and half-written beliefs seen by recall are summed into
bench/results/soak_concurrency.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.support.concurrency import run_workers  # noqa: E402

RESULTS = ROOT / "bench" / "results"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--ops", type=int, default=1000)
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()
    backends = ["sqlite"] + ([] if args.no_postgres else ["postgres"])
    server = None
    if "postgres" in backends:
        from tests.support.postgres import start_test_server

        server = start_test_server()
    summary: dict[str, dict] = {}
    try:
        for backend in backends:
            totals = {
                "rounds": 0,
                "writes": 0,
                "recalls": 0,
                "lost": 0,
                "duplicated": 0,
                "wrong": 0,
                "errors": 0,
                "locked_errors": 0,
                "torn_reads": 0,
                "seconds": 0.0,
            }
            for r in range(args.rounds):
                with tempfile.TemporaryDirectory(prefix="memloom-soak-") as tmp:
                    if backend == "postgres":
                        assert server is not None
                        name, url = server.create_database()
                    else:
                        name, url = None, str(Path(tmp) / "memloom.db")
                    start = time.perf_counter()
                    res = run_workers(Path(tmp), url, args.ops, args.workers, seed=1000 * (r + 1))
                    took = time.perf_counter() - start
                    if name is not None and server is not None:
                        server.drop_database(name)
                totals["rounds"] += 1
                totals["seconds"] += took
                for key in ("writes", "recalls", "locked_errors"):
                    totals[key] += res[key]
                for key in ("lost", "duplicated", "wrong", "errors", "torn_reads"):
                    totals[key] += len(res[key])
                print(
                    f"{backend} round {r + 1}: {res['writes']} writes, {len(res['lost'])} lost, "
                    f"{len(res['duplicated'])} duplicated, {len(res['errors'])} errors, "
                    f"{len(res['torn_reads'])} torn reads, {took:.1f} s",
                    flush=True,
                )
            summary[backend] = totals
    finally:
        if server is not None:
            server.close()
    doc = {
        "command": " ".join(["python", "bench/soak_concurrency.py", *sys.argv[1:]]),
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "workers": args.workers,
        "ops_per_worker": args.ops,
        "results": summary,
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "soak_concurrency.json").write_text(json.dumps(doc, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    bad = any(
        t[k]
        for t in summary.values()
        for k in ("lost", "duplicated", "wrong", "errors", "torn_reads")
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
