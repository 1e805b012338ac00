"""The long reliability runs, one command: concurrency, crash safety, fuzzing.

    python bench/soak.py                 # the figures in docs/reliability.md (about 30 min)
    python bench/soak.py --quick         # a few minutes: the same checks, fewer rounds
    python bench/soak.py crash fuzz      # only some of them

Each part is its own script (``bench/soak_<part>.py -h``) writing
``bench/results/soak_<part>.json``; this runs them in turn and fails if any fails.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: Arguments per part: the documented full run, and a quick one.
PARTS: dict[str, dict[str, list[str]]] = {
    "concurrency": {
        "full": ["--rounds", "4", "--ops", "1000"],
        "quick": ["--rounds", "1", "--ops", "300"],
    },
    "crash": {
        "full": ["--trials", "60", "--worker-trials", "20", "--seed", "0"],
        "quick": ["--trials", "6", "--worker-trials", "3", "--seed", "0"],
    },
    "fuzz": {
        "full": ["--cases", "20000", "--seed", "0", "1", "2", "--big-line-mb", "200"],
        "quick": ["--cases", "1000", "--seed", "0"],
    },
}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("parts", nargs="*", metavar="PART", help=f"any of {', '.join(PARTS)}")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    unknown = sorted(set(args.parts) - set(PARTS))
    if unknown:
        parser.error(f"unknown part {', '.join(unknown)}; choose from {', '.join(PARTS)}")
    failed = []
    for part in args.parts or list(PARTS):
        cmd = [
            sys.executable,
            str(HERE / f"soak_{part}.py"),
            *PARTS[part]["quick" if args.quick else "full"],
        ]
        print(f"== {part}: {' '.join(cmd[1:])}", flush=True)
        start = time.perf_counter()
        if subprocess.run(cmd).returncode != 0:
            failed.append(part)
        print(f"   {part} took {time.perf_counter() - start:.0f} s", flush=True)
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
