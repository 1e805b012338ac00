"""Eight processes writing one store at once lose nothing and duplicate nothing."""

from __future__ import annotations

import os
import time

from tests.support.concurrency import run_workers

WORKERS = 8
#: Mixed operations per worker (about 88 % writes). MEMLOOM_STRESS_OPS raises it;
#: bench/soak_concurrency.py runs the long version.
OPS = int(os.environ.get("MEMLOOM_STRESS_OPS", "500"))


def test_eight_processes_mixed_writes_lose_and_duplicate_nothing(tmp_path, backend):
    start = time.perf_counter()
    result = run_workers(tmp_path, backend, OPS, WORKERS)
    elapsed = time.perf_counter() - start
    assert result["errors"] == [], result["errors"][:5]
    assert result["locked_errors"] == 0
    assert (result["lost"], result["duplicated"], result["wrong"]) == ([], [], [])
    assert result["torn_reads"] == []
    assert result["rows"] == result["expected_rows"]
    assert result["writes"] > WORKERS * OPS * 0.8  # really that many writes
    print(f"{result['writes']} writes, {result['recalls']} recalls in {elapsed:.1f} s")
