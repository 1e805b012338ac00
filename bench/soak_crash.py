"""Crash soak: SIGKILL ``memloom import sessions`` and ``memloom capture run-once`` at
random and at chosen dangerous points, resume, and compare with an uninterrupted run.

    python bench/soak_crash.py [--trials 30] [--worker-trials 10] [--seed 0]

Each trial starts from an empty ``MEMLOOM_HOME`` over the same Claude Code folder
(copies of the real fixture transcripts plus two long sessions stitched from
their records, see ``tests/support/crash.py``), kills the run once or twice
(every kill of a trial may land in the previous kill's resumed run), then runs
to completion. The final memories (text, type, tags, status, version chains,
access counts), conflicts, provenance rows, ledger rows and transcript record
ids must equal those of an uninterrupted run; the SQLite files must pass
``PRAGMA integrity_check``, ``foreign_key_check`` and the FTS index check; for
the worker, every queued session must end with exactly one job, done.

Kill points (cycled through so that each gets its share): ``time`` (a seeded
random moment of the run), ``commit`` (right after the N-th committed store
transaction: between any two of them), ``precommit`` (inside it, before
COMMIT), ``request`` (while the n-th distill / embedding / classify / judge
request is in flight: between an LLM answer and the writes that follow it), and
for the worker ``claim`` (a job just claimed) and ``prefinish`` (imported, not yet
marked done). Results land in bench/results/soak_crash.json.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
sys.path.insert(0, str(REPO))

from tests.support.crash import CrashLab, Trial  # noqa: E402

IMPORT_KINDS = ["time", "commit", "request", "precommit", "time", "request"]
WORKER_KINDS = ["time", "claim", "commit", "prefinish", "request", "precommit"]


def run_trials(lab: CrashLab, mode: str, count: int, seed: int, max_kills: int) -> list[Trial]:
    kinds = IMPORT_KINDS if mode == "import" else WORKER_KINDS
    trials = []
    for i in range(count):
        trial_seed = seed * 10_000 + (0 if mode == "import" else 5_000) + i
        rng = random.Random(trial_seed)
        kills = 1 if max_kills <= 1 or rng.random() < 0.7 else rng.randint(2, max_kills)
        plans = [lab.plan(mode, rng, kinds[i % len(kinds)])]
        plans += [lab.plan(mode, rng) for _ in range(kills - 1)]
        trial = lab.trial(mode, trial_seed, plans=plans)
        trials.append(trial)
        verdict = "ok" if trial.consistent else "INCONSISTENT"
        print(
            f"{mode:<6} {i + 1:>3}/{count}  {trial.plan:<44} landed {trial.kills_landed}/"
            f"{len(plans)}  {trial.elapsed:5.1f}s  {verdict}",
            flush=True,
        )
        if not trial.consistent:
            for line in [*trial.integrity, *trial.queue, *trial.errors, *trial.details][:12]:
                print(f"        {line[:300]}", flush=True)
    return trials


def summarize(trials: list[Trial]) -> dict[str, Any]:
    kinds: Counter[str] = Counter()
    for t in trials:
        for part in t.plan.split(" then "):
            kinds[part.split(":")[0].split("#")[0]] += 1
    return {
        "trials": len(trials),
        "kills_planned": sum(len(t.plan.split(" then ")) for t in trials),
        "kills_landed": sum(t.kills_landed for t in trials),
        "inconsistencies": sum(not t.consistent for t in trials),
        "integrity_failures": sum(bool(t.integrity) for t in trials),
        "duplicates": sum(t.duplicates for t in trials),
        "missing": sum(t.missing for t in trials),
        "mismatched": sum(t.mismatched for t in trials),
        "queue_problems": sum(bool(t.queue) for t in trials),
        "failed_resumes": sum(bool(t.errors) for t in trials),
        "kill_points": dict(sorted(kinds.items())),
        "mean_trial_s": round(sum(t.elapsed for t in trials) / max(1, len(trials)), 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trials", type=int, default=30, help="importer kill trials")
    parser.add_argument("--worker-trials", type=int, default=10, help="capture worker trials")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-kills", type=int, default=2, help="kills per trial, at most")
    parser.add_argument("--latency", type=float, default=0.01, help="model latency, seconds")
    parser.add_argument("--out", type=Path, default=RESULTS / "soak_crash.json")
    parser.add_argument("--workdir", type=Path, help="keep the homes here (default: a temp dir)")
    args = parser.parse_args()

    started = time.perf_counter()
    with contextlib.ExitStack() as stack:
        if args.workdir:  # kept: the homes of inconsistent trials stay there for a look
            args.workdir.mkdir(parents=True, exist_ok=True)
            tmp = tempfile.mkdtemp(prefix="soak-crash-", dir=args.workdir)
        else:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="soak-crash-"))
        with CrashLab(Path(tmp), latency=args.latency, seed=args.seed) as lab:
            refs = {}
            trials: dict[str, list[Trial]] = {}
            for mode, count in (("import", args.trials), ("worker", args.worker_trials)):
                if not count:
                    continue
                ref = lab.reference(mode)
                refs[mode] = {
                    "elapsed_s": round(ref.elapsed, 2),
                    "requests": dict(ref.requests),
                    "commits": ref.commits,
                    "memories": sum(ref.snapshot.tables["memories"].values()),
                    "provenance": sum(ref.snapshot.tables["provenance"].values()),
                    "conflicts": sum(ref.snapshot.tables["conflicts"].values()),
                    "ledger": sum(ref.snapshot.tables["ledger"].values()),
                }
                print(f"reference {mode}: {refs[mode]}", flush=True)
                trials[mode] = run_trials(lab, mode, count, args.seed, args.max_kills)
            sessions = len(lab.sessions)
    everything = [t for ts in trials.values() for t in ts]
    doc = {
        **summarize(everything),
        "by_mode": {mode: summarize(ts) for mode, ts in trials.items()},
        "reference": refs,
        "setup": {
            "sessions": sessions,
            "seed": args.seed,
            "max_kills": args.max_kills,
            "latency_s": args.latency,
            "command": " ".join(["python", "bench/soak_crash.py", *sys.argv[1:]]),
        },
        "elapsed_s": round(time.perf_counter() - started, 1),
        "failures": [t.as_dict() for t in everything if not t.consistent],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=2) + "\n")
    brief = {k: doc[k] for k in ("trials", "inconsistencies", "integrity_failures")}
    brief |= {k: doc[k] for k in ("duplicates", "missing", "mismatched", "kills_landed")}
    print(json.dumps(brief))
    print(f"wrote {args.out} in {doc['elapsed_s']}s")
    return 1 if doc["inconsistencies"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
