"""Forget at scale: how long ``Memloom.forget`` takes in a large SQLite store.

    python bench/scale.py --sizes 1000000 --fill direct --skip chroma lancedb http embed \\
        flat writes --queries 50 --workdir /work/forget-1m --keep --fill-only
    PYTHONPATH=<checkout>/src python bench/forget.py \\
        --store /work/forget-1m/n1000000/memloom --work /work/forget-1m/run --label NAME

The filled store (``--store``, bench/scale.py's ``--fill direct`` data: "memory number
i" with 384-d clustered vectors, its HNSW graph and vector files saved) is never opened
here: each run copies it to ``--work`` first, so runs of two checkouts start from the
same files. In the copy, ``--tagged`` rows spread over the store are tagged
``forget-bench`` (plain SQL before memloom opens it: tags are not in the vector files).
Then, timed: the open; ``--singles`` forgets of one memory each (ids spread over the
store, none of them tagged), reporting every call, p50, p95 and max; one forget of the
tagged rows by tag; the close. ``/proc/loadavg`` is read before and after each phase:
the machine is shared, a figure taken under load says so. Results go to
``bench/results/forget.json`` under ``--label`` (one entry per checkout).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sqlite3
import statistics
import sys
import time
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from scale import source_state  # noqa: E402

RESULTS = HERE / "results"
TAG = "forget-bench"


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def loadavg() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def source() -> dict[str, Any]:
    """Which memloom is measured (PYTHONPATH picks the checkout) and its commit."""
    import memloom

    return {"memloom_file": memloom.__file__, **source_state()}


def prepare(home: Path, tagged: int, singles: int) -> tuple[list[str], int]:
    """Tag ``tagged`` rows spread over the store; pick ``singles`` other ids to forget
    one at a time. Returns the single ids and the row count."""
    db = sqlite3.connect(home / "memloom.db", isolation_level=None)
    try:
        rowids = [r for (r,) in db.execute("SELECT rowid FROM memories ORDER BY rowid")]
        n = len(rowids)
        picks = np.linspace(0, n - 1, tagged + singles).astype(np.int64)
        chosen = [rowids[int(p)] for p in picks]
        tag_rows, single_rows = chosen[::2][:tagged], chosen[1::2][:singles]
        if len(tag_rows) < tagged:  # fewer singles than tagged rows: fill from the rest
            rest = [r for r in chosen if r not in set(single_rows) and r not in set(tag_rows)]
            tag_rows += rest[: tagged - len(tag_rows)]
        db.execute("BEGIN IMMEDIATE")
        db.executemany(
            "UPDATE memories SET tags = ? WHERE rowid = ?",
            [(json.dumps([TAG]), r) for r in tag_rows],
        )
        db.executemany(
            "INSERT OR IGNORE INTO memory_tags (tag, memory_rowid) VALUES (?, ?)",
            [(TAG, r) for r in tag_rows],
        )
        db.execute("COMMIT")
        marks = ",".join("?" * len(single_rows))
        ids = dict(
            db.execute(f"SELECT rowid, id FROM memories WHERE rowid IN ({marks})", single_rows)
        )
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()
    return [ids[r] for r in single_rows], n


def pct(samples: list[float], q: float) -> float:
    """The q-quantile, nearest rank (p95 of 20 calls is the 19th slowest)."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, int(np.ceil(q * len(ordered))) - 1))]


def run(args: argparse.Namespace) -> dict[str, Any]:
    store, work = Path(args.store), Path(args.work)
    if work.exists():
        shutil.rmtree(work)
    log(f"copying {store} -> {work}")
    t = time.perf_counter()
    shutil.copytree(store, work)
    copy_s = time.perf_counter() - t
    singles, rows = prepare(work, args.tagged, args.singles)
    os.sync()  # no write-back of the copy while forgets are timed
    time.sleep(args.settle)
    os.environ.setdefault("MEMLOOM_LLM", "offline")
    os.environ.pop("MEMLOOM_ANN_THRESHOLD", None)
    import memloom

    out: dict[str, Any] = {"rows": rows, "copy_s": round(copy_s, 1)}
    out["load_before_open"] = loadavg()
    t = time.perf_counter()
    m = memloom.open(home=str(work))
    out["open_s"] = round(time.perf_counter() - t, 3)
    out["load_before_singles"] = loadavg()
    calls: list[float] = []
    for mid in singles:
        t = time.perf_counter()
        removed = m.forget({"ids": [mid]}).removed
        calls.append(time.perf_counter() - t)
        assert removed == 1, (mid, removed)
        log(f"single forget {len(calls)}/{len(singles)}: {calls[-1]:.3f} s")
    out["load_after_singles"] = loadavg()
    out["single"] = {
        "calls": len(calls),
        "seconds": [round(c, 4) for c in calls],
        "p50_s": round(statistics.median(calls), 4),
        "p95_s": round(pct(calls, 0.95), 4),
        "max_s": round(max(calls), 4),
    }
    out["load_before_tag"] = loadavg()
    t = time.perf_counter()
    removed = m.forget({"tags": [TAG]}).removed
    tag_s = time.perf_counter() - t
    out["load_after_tag"] = loadavg()
    out["by_tag"] = {"removed": removed, "seconds": round(tag_s, 3)}
    log(f"forget by tag: {removed} rows in {tag_s:.3f} s")
    t = time.perf_counter()
    m.close()
    out["close_s"] = round(time.perf_counter() - t, 3)
    out["bytes_after"] = dir_bytes(work)
    if not args.keep:
        shutil.rmtree(work)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", required=True, help="a filled memloom home (only copied)")
    parser.add_argument("--work", required=True, help="where the copy is made (replaced)")
    parser.add_argument("--label", required=True, help="this run's name in the results file")
    parser.add_argument("--singles", type=int, default=20)
    parser.add_argument("--tagged", type=int, default=5000)
    parser.add_argument("--settle", type=float, default=10.0, help="seconds after the copy")
    parser.add_argument("--keep", action="store_true", help="keep the copy afterwards")
    parser.add_argument("--out", default=str(RESULTS / "forget.json"))
    args = parser.parse_args()
    result = {
        "label": args.label,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "source": source(),
        "sqlite": sqlite3.sqlite_version,
        "usearch": metadata.version("usearch"),
        "python": platform.python_version(),
        "cores": os.cpu_count(),
        **run(args),
    }
    out = Path(args.out)
    runs = json.loads(out.read_text())["runs"] if out.exists() else []
    runs = [r for r in runs if r.get("label") != args.label] + [result]
    out.write_text(json.dumps({"runs": runs}, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
