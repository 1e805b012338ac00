"""Many processes writing one store at once: a worker, and the check of what they left.

    python -m tests.support.concurrency WORKER_ID OPS SEED HOME DATABASE_URL OUT.json

Each worker mixes writes (new memories, a shared set every worker stores too,
updates, expiries, forgets) with recalls, and records what the store must hold
for it afterwards, every error it saw, and any recall that showed a belief
half-written (two versions of one memory active at once). ``verify`` compares
those records with the database.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
#: Random directions this wide never come within 0.6 of each other (memloom.claims reads
#: the nearest memory that near for a changed value): unrelated texts stay unrelated.
DIM = 256
SHARED = 20  # texts every worker stores: each must end up stored exactly once


def shared_text(k: int) -> str:
    return f"shared fact {k}: the build cache lives in /var/cache/build-{k}"


def direction(key: str) -> list[float]:
    """A fixed random direction per text: unrelated texts never dedup or conflict."""
    seed = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "little")
    v = np.random.default_rng(seed).normal(size=DIM)
    return (v / np.linalg.norm(v)).tolist()


def own_text(worker: int, item: int, version: int) -> str:
    return f"w{worker} item {item} version {version}"


def run(worker: int, ops: int, seed: int, home: str, url: str) -> dict[str, Any]:
    import memloom

    rng = np.random.default_rng(seed)
    items: dict[int, dict[str, Any]] = {}  # item -> {id, version, status}
    errors: list[str] = []
    torn: list[str] = []
    shared_seen: set[int] = set()
    writes = recalls = 0
    m = memloom.open(home=home, database_url=url)
    try:
        for _ in range(ops):
            roll = rng.random()
            alive = [i for i, s in items.items() if s["status"] == "active"]
            try:
                if roll < 0.45 or not alive:
                    item = len(items)
                    text = own_text(worker, item, 1)
                    res = m.store({"entries": [{"text": text, "embedding": direction(text)}]})
                    items[item] = {"id": res.ids[0], "version": 1, "status": "active"}
                elif roll < 0.55:
                    k = int(rng.integers(SHARED))
                    text = shared_text(k)
                    m.store({"entries": [{"text": text, "embedding": direction(text)}]})
                    shared_seen.add(k)
                elif roll < 0.70:
                    item = int(rng.choice(alive))
                    state = items[item]
                    text = own_text(worker, item, state["version"] + 1)
                    doc = m.update(state["id"], {"text": text})
                    state.update(id=doc.id, version=state["version"] + 1)
                elif roll < 0.80:
                    item = int(rng.choice(alive))
                    m.expire({"ids": [items[item]["id"]]})
                    items[item]["status"] = "expired"
                elif roll < 0.88:
                    item = int(rng.choice(alive))
                    m.forget({"ids": [items[item]["id"]]})
                    items[item]["status"] = "forgotten"
                else:
                    recalls += 1
                    for request in (
                        {
                            "query_embedding": rng.normal(size=DIM).tolist(),
                            "max_results": 50,
                            "touch": False,
                        },
                        {"query": f"w{worker} item", "max_results": 50},
                    ):
                        found = m.recall(request).memories
                        torn.extend(_torn(found))
                    continue
                writes += 1
            except Exception as exc:  # every error is a finding: recorded, not hidden
                errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        m.close()
    return {
        "worker": worker,
        "writes": writes,
        "recalls": recalls,
        "items": {str(k): v for k, v in items.items()},
        "shared": sorted(shared_seen),
        "errors": errors,
        "torn": torn,
    }


def _torn(found: list[Any]) -> list[str]:
    """Two versions of one item in one answer: a belief seen half-written (an update
    writes the new version and retires the old one in one transaction)."""
    versions = Counter(r.text.rsplit(" version ", 1)[0] for r in found if " version " in r.text)
    return sorted(head for head, n in versions.items() if n > 1)


def verify(reports: list[dict[str, Any]], rows: list[tuple[str, str, int, str]]) -> dict[str, Any]:
    """Compare the workers' records with the store's rows (id, text, version, status)."""
    by_text: dict[str, list[tuple[str, int, str]]] = {}
    for mid, text, version, status in rows:
        by_text.setdefault(text, []).append((mid, version, status))
    lost: list[str] = []
    duplicated: list[str] = []
    wrong: list[str] = []
    expected_rows = 0
    for rep in reports:
        w = rep["worker"]
        for item, state in rep["items"].items():
            heads = [own_text(w, int(item), v) for v in range(1, state["version"] + 1)]
            present = [by_text.get(t, []) for t in heads]
            if state["status"] == "forgotten":
                if any(present):
                    wrong.append(f"w{w} item {item} was forgotten but is still stored")
                continue
            expected_rows += len(heads)
            for text, found in zip(heads, present, strict=True):
                if not found:
                    lost.append(text)
                elif len(found) > 1:
                    duplicated.append(text)
            last = present[-1]
            if len(last) == 1:
                want = "active" if state["status"] == "active" else "expired"
                if last[0][2] != want:
                    wrong.append(f"{heads[-1]}: {last[0][2]}, expected {want}")
                if last[0][0] != state["id"]:
                    wrong.append(f"{heads[-1]}: id {last[0][0]}, expected {state['id']}")
            for found in present[:-1]:
                if len(found) == 1 and found[0][2] != "stale":
                    wrong.append(f"an older version is {found[0][2]}, expected stale")
    stored_shared = {k for rep in reports for k in rep["shared"]}
    for k in stored_shared:
        n = len(by_text.get(shared_text(k), []))
        if n != 1:
            (lost if n == 0 else duplicated).append(shared_text(k))
    expected_rows += len(stored_shared)
    return {
        "workers": len(reports),
        "writes": sum(r["writes"] for r in reports),
        "recalls": sum(r["recalls"] for r in reports),
        "rows": len(rows),
        "expected_rows": expected_rows,
        "lost": lost,
        "duplicated": duplicated,
        "wrong": wrong,
        "errors": [e for r in reports for e in r["errors"]],
        "locked_errors": sum("locked" in e for r in reports for e in r["errors"]),
        "torn_reads": [t for r in reports for t in r["torn"]],
    }


def run_workers(
    tmp_path: Path, url: str, ops: int, workers: int, seed: int = 1000
) -> dict[str, Any]:
    """Start ``workers`` processes on one store, wait for them, check what they left."""
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
                        str(seed + w),
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
    import memloom

    with memloom.open(home=str(tmp_path / "check"), database_url=url) as m:
        rows = [(r.id, r.text, r.version, r.status) for r in m.backend.iter_all()]
        if hasattr(m.backend, "db"):
            assert m.backend.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    return verify(reports, rows)


if __name__ == "__main__":
    worker, ops, seed = (int(x) for x in sys.argv[1:4])
    home, url, out = sys.argv[4:7]
    start = time.perf_counter()
    report = run(worker, ops, seed, home, url)
    report["seconds"] = time.perf_counter() - start
    with open(out, "w") as fh:
        json.dump(report, fh)
