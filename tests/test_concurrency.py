"""Eight processes writing one store at once lose nothing and duplicate nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import memloom
from tests.support.concurrency import verify

WORKERS = 8
#: Mixed operations per worker (about 88 % writes). MEMLOOM_STRESS_OPS raises it;
#: bench/soak_concurrency.py runs the long version.
OPS = int(os.environ.get("MEMLOOM_STRESS_OPS", "500"))
ROOT = Path(__file__).resolve().parents[1]


def run_workers(tmp_path: Path, url: str, ops: int = OPS, workers: int = WORKERS) -> dict:
    procs = []
    for w in range(workers):
        out = tmp_path / f"worker{w}.json"
        procs.append(
            (
                out,
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "tests.support.concurrency",
                        str(w),
                        str(ops),
                        str(1000 + w),
                        str(tmp_path / f"home{w}"),
                        url,
                        str(out),
                    ],
                    cwd=ROOT,
                    stderr=subprocess.PIPE,
                    text=True,
                ),
            )
        )
    for _, p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
    reports = [json.loads(out.read_text()) for out, _ in procs]
    with memloom.open(home=str(tmp_path / "check"), database_url=url) as m:
        rows = [(r.id, r.text, r.version, r.status) for r in m.backend.iter_all()]
        if hasattr(m.backend, "db"):
            assert m.backend.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    return verify(reports, rows)


def test_eight_processes_mixed_writes_lose_and_duplicate_nothing(tmp_path, backend):
    start = time.perf_counter()
    result = run_workers(tmp_path, backend)
    elapsed = time.perf_counter() - start
    assert result["errors"] == [], result["errors"][:5]
    assert result["locked_errors"] == 0
    assert (result["lost"], result["duplicated"], result["wrong"]) == ([], [], [])
    assert result["torn_reads"] == []
    assert result["rows"] == result["expected_rows"]
    assert result["writes"] > WORKERS * OPS * 0.8  # really that many writes
    print(f"{result['writes']} writes, {result['recalls']} recalls in {elapsed:.1f} s")
