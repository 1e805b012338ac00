"""Soak: the transcript fuzzing of tests/sessions/test_fuzz.py at a much larger scale.

    python bench/soak_fuzz.py [--cases 20000] [--seed 0 ...] [--import-every 10]
                              [--big-line-mb 200] [--timeout 20]

Every case is one transcript (tests/sessions/fuzzing.py): real fixture lines
with about half of them mutated (truncated, bit-flipped, NUL runs, ``}{``
joins, invalid UTF-8, CRLF, BOMs, deep nesting, wrong JSON types, recovery and
regex bombs, queue floods, lone surrogates), generated records with wrong-typed
fields, or arbitrary bytes -- with valid *keep* lines in between. Each case
goes through parse -> redact -> chunk -> distill (an in-process model and the
offline extractor) -> validate, and every ``--import-every``-th case is also
written to disk and imported with ``Memloom.import_sessions`` (in batches).
Once per run, a single line of ``--big-line-mb`` MB is parsed under tracemalloc.

A *crash* is any exception, a broken invariant (a keep line lost, line counts
or offsets wrong, a string that cannot be encoded or stored) or a case slower
than ``--timeout`` seconds. Seeds make every case reproducible:
``make_case(seed)`` etc. Prints a JSON summary and writes
bench/results/soak_fuzz.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import signal
import sys
import tempfile
import time
import traceback
import tracemalloc
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from tests.sessions.fuzzing import (  # noqa: E402
    Case,
    KeepModel,
    check_parse,
    check_pipeline,
    keep_line,
    make_bytes_case,
    make_case,
    make_record_case,
)

import memloom  # noqa: E402
from memloom.agents.claude_code import parse as parse_mod  # noqa: E402
from memloom.detect import default_detector  # noqa: E402

RESULTS = ROOT / "bench" / "results"
KINDS = ("mutated", "mutated_heavy", "records", "bytes")


class CaseTimeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise CaseTimeout("case took longer than the timeout")


def build(kind: str, seed: int) -> Case:
    if kind == "mutated":
        return make_case(seed)
    if kind == "mutated_heavy":
        return make_case(seed, lines=16, heavy=0.5)
    if kind == "records":
        return make_record_case(seed)
    return make_bytes_case(seed)


def big_line(mb: int, workdir: Path) -> dict[str, Any]:
    """One ``mb`` MB line between two keep lines: parsed with memory bounded by the cap."""
    rng = random.Random(mb)
    (a, ta), (b, tb) = keep_line("big-a", rng), keep_line("big-b", rng)
    path = workdir / "big.jsonl"
    with path.open("wb") as fh:
        fh.write(a + b"\n" + b'{"type":"user","message":{"content":"')
        block = b"0123456789abcdef" * 65536
        for _ in range(mb):
            fh.write(block)
        fh.write(b'"}}\n' + b + b"\n")
    started = time.perf_counter()
    tracemalloc.start()
    try:
        res = parse_mod.parse_transcript(path, final=True)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    elapsed = time.perf_counter() - started
    ok = res.oversized == 1 and [u.text for u in res.units] == [ta, tb]
    path.unlink()
    return {
        "line_mb": mb,
        "parse_s": round(elapsed, 3),
        "parse_peak_mib": round(peak / 2**20, 1),
        "line_cap_mib": parse_mod.MAX_LINE_BYTES // 2**20,
        "oversized_counted": res.oversized,
        "keep_lines_kept": ok,
    }


def import_batch(engine: Any, workdir: Path, batch: list[Case]) -> dict[str, int]:
    paths = []
    folder = workdir / "projects" / f"-batch-{uuid.uuid4().hex[:8]}"
    folder.mkdir(parents=True)
    for case in batch:
        path = folder / f"{uuid.uuid4()}.jsonl"
        path.write_bytes(case.data)
        paths.append(path)
    report = engine.import_sessions(paths, llm=KeepModel(), sessions=None, days=None)
    keep = sum(len(case.keep) for case in batch)  # every keep line must become a memory
    written = report.saved + report.versioned + report.merged
    problems = report.failed + report.skipped.get("unreadable", 0)
    if problems or written < keep:
        raise AssertionError(
            f"import batch: failed {report.failed}, written {written} of {keep} keep lines"
        )
    return {
        "files": len(paths),
        "written": written,
        "malformed": report.malformed,
        "oversized": report.oversized,
        "dropped": report.dropped,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=20_000, help="cases per seed")
    parser.add_argument("--seed", type=int, nargs="+", default=[0], help="start seeds")
    parser.add_argument("--import-every", type=int, default=10, help="0: no importer runs")
    parser.add_argument("--batch", type=int, default=200, help="files per import run")
    parser.add_argument("--big-line-mb", type=int, default=200, help="0: skip")
    parser.add_argument("--timeout", type=int, default=20, help="seconds per case")
    parser.add_argument("--max-examples", type=int, default=20, help="crash examples kept")
    parser.add_argument("--out", type=Path, default=RESULTS / "soak_fuzz.json")
    args = parser.parse_args()

    detector = default_detector()
    signal.signal(signal.SIGALRM, _alarm)
    started = time.perf_counter()
    totals: Counter[str] = Counter()
    by_kind: Counter[str] = Counter()
    mutations: Counter[str] = Counter()
    crashes: list[dict[str, Any]] = []
    crash_count = 0
    slowest = (0.0, "")
    imports: Counter[str] = Counter()

    with tempfile.TemporaryDirectory(prefix="soak-fuzz-") as tmp:
        workdir = Path(tmp)
        engine = memloom.open(home=str(workdir / "home"))
        batch: list[Case] = []

        def import_cases() -> int:
            """Import ``batch``: how many crashes that made (0 or 1)."""
            try:
                imports.update(import_batch(engine, workdir, batch))
                imports["runs"] += 1
            except Exception as exc:
                crashes.append({"import_batch": True, "error": repr(exc)[:500]})
                return 1
            return 0

        try:
            big = big_line(args.big_line_mb, workdir) if args.big_line_mb else None
            if big is not None and not big["keep_lines_kept"]:
                crash_count += 1
                crashes.append({"case": "big_line", "error": "keep lines lost"})
            for start in args.seed:
                for i in range(args.cases):
                    seed = start * 1_000_003 + i
                    kind = KINDS[i % len(KINDS)]
                    case = build(kind, seed)
                    by_kind[kind] += 1
                    mutations.update(case.mutations)
                    t0 = time.perf_counter()
                    signal.alarm(args.timeout)
                    try:
                        if kind == "bytes":
                            res = check_parse(case.data)
                            counts = {
                                "malformed": res.malformed,
                                "oversized": res.oversized,
                                "units": len(res.units),
                                "records": res.records,
                                "lines": res.lines_read,
                            }
                        else:
                            counts = check_pipeline(
                                case.data, keep=case.keep, redact=detector.redact
                            )
                    except BaseException as exc:
                        if isinstance(exc, KeyboardInterrupt):
                            raise
                        crash_count += 1
                        if len(crashes) < args.max_examples:
                            crashes.append(
                                {
                                    "kind": kind,
                                    "seed": seed,
                                    "mutations": case.mutations,
                                    "error": f"{type(exc).__name__}: {exc}"[:500],
                                    "where": traceback.format_exc(limit=3)[-800:],
                                }
                            )
                        continue
                    finally:
                        signal.alarm(0)
                    took = time.perf_counter() - t0
                    if took > slowest[0]:
                        slowest = (took, f"{kind} seed {seed} {case.mutations}")
                    totals.update(counts)
                    totals["keep_lines"] += len(case.keep)
                    if args.import_every and i % args.import_every == 0 and kind != "bytes":
                        batch.append(case)
                        if len(batch) >= args.batch:
                            crash_count += import_cases()
                            batch = []
            if batch:
                crash_count += import_cases()
        finally:
            engine.close()

    cases = sum(by_kind.values())
    summary = {
        "cases": cases,
        "crashes": crash_count,
        "skipped_lines": totals["malformed"] + totals["oversized"],
        "imported": imports["written"],
        "detail": {
            "seeds": args.seed,
            "cases_by_kind": dict(by_kind),
            "mutations_applied": dict(sorted(mutations.items())),
            "malformed_lines": totals["malformed"],
            "oversized_lines": totals["oversized"],
            "records_decoded": totals["records"],
            "units": totals["units"],
            "keep_lines_checked": totals["keep_lines"],
            "distilled_items_in_process": totals["items"],
            "redactions": totals["redactions"],
            "importer": {
                "runs": imports["runs"],
                "files": imports["files"],
                "memories_written": imports["written"],
                "malformed_counted": imports["malformed"],
                "oversized_counted": imports["oversized"],
            },
            "big_line": big,
            "slowest_case_s": round(slowest[0], 3),
            "slowest_case": slowest[1],
            "crash_examples": crashes,
        },
        "elapsed_s": round(time.perf_counter() - started, 1),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "command": "python bench/soak_fuzz.py " + " ".join(sys.argv[1:]),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps({k: summary[k] for k in ("cases", "crashes", "skipped_lines", "imported")}))
    print(f"details in {args.out}", file=sys.stderr)
    return 1 if crash_count else 0


if __name__ == "__main__":
    sys.exit(main())
