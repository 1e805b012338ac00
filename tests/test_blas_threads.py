"""The engine sets numpy's BLAS pool to one thread when it opens (threadpoolctl),
whatever the environment says: small products stay fast on a busy machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys

_PROBE = """
import json, sys
from threadpoolctl import threadpool_info
import numpy  # loads the BLAS library
before = [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]
import memloom
m = memloom.open(home=sys.argv[1])
after = [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]
m.close()
print(json.dumps({"before": before, "after": after}))
"""


def test_opening_the_engine_limits_blas_to_one_thread(tmp_path) -> None:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "2"}
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["before"] and all(n == 2 for n in seen["before"])
    assert seen["after"] == [1] * len(seen["before"])
