"""What per-owner keyword statistics cost on PostgreSQL (issue 33, team mode).

    python bench/team_stats.py --rows 50000 --owners 4 --queries 300 --writes 500

A fresh database on the throw-away test server (tests/support/postgres.py: its
no-durability settings, so write figures are an upper bound) is filled with real
text (the fixture transcripts' lines, cycled with a number) through
``PostgresStore.insert_many``, spread over ``--owners`` owners. Then, each p50/p95
in milliseconds:

* ``keyword_search`` (BM25 in SQL: the statistics lookup plus the scoring query) of
  two- and three-word queries, unscoped (the global statistics) and scoped to one
  owner reading one team scope (the per-owner statistics);
* ``document_frequencies`` alone, both ways (the part this change touches);
* single-row write transactions (``insert`` then commit: the statistics flush is
  paid per transaction), which now also upsert the owner's term counts.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.postgres import start_test_server  # noqa: E402
from tests.support.rows import fact_row  # noqa: E402

from memloom.store.base import MemoryRow, Principal, SearchFilter  # noqa: E402
from memloom.store.postgres import PostgresStore  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "transcripts"


def texts(limit: int) -> list[str]:
    lines: list[str] = []
    for path in sorted(FIXTURES.rglob("*.jsonl")):
        for raw in path.read_text(errors="replace").splitlines():
            try:
                content = (json.loads(raw).get("message") or {}).get("content")
            except (ValueError, AttributeError):
                continue
            if isinstance(content, str) and 20 < len(content) < 2000:
                lines.append(content)
    return [f"{lines[i % len(lines)]} (note {i})" for i in range(limit)]


def row(i: int, text: str, vec: np.ndarray) -> MemoryRow:
    return fact_row(f"b{i:08d}", text, vec, content_hash=f"h{i}")


def timed(fn, n: int) -> dict[str, float]:
    laps = []
    for i in range(n):
        start = time.perf_counter()
        fn(i)
        laps.append((time.perf_counter() - start) * 1000)
    laps.sort()
    return {
        "p50_ms": round(statistics.median(laps), 3),
        "p95_ms": round(laps[int(0.95 * (len(laps) - 1))], 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--owners", type=int, default=4)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--writes", type=int, default=500)
    args = parser.parse_args()
    server = start_test_server()
    name, url = server.create_database()
    try:
        root = PostgresStore(url)
        owners = [f"owner{k}" for k in range(args.owners)]
        views = [root.scoped(Principal(o)) for o in owners]
        corpus = texts(args.rows)
        rng = np.random.default_rng(1)
        vecs = rng.normal(size=(1, 8)).astype(np.float32)
        start = time.perf_counter()
        for k, view in enumerate(views):
            mine = [row(i, corpus[i], vecs[0]) for i in range(k, args.rows, args.owners)]
            for at in range(0, len(mine), 2000):
                with view.transaction():
                    view.insert_many(mine[at : at + 2000])
        fill_s = time.perf_counter() - start
        words = sorted({w for t in corpus[:2000] for w in t.lower().split() if w.isalpha()})
        queries = [
            [words[(7 * i) % len(words)], words[(13 * i + 5) % len(words)]]
            + ([words[(29 * i + 3) % len(words)]] if i % 2 else [])
            for i in range(args.queries)
        ]
        reader = root.scoped(Principal(owners[0], frozenset({owners[1]})))
        flt = SearchFilter()
        out: dict = {"rows": args.rows, "owners": args.owners, "fill_s": round(fill_s, 1)}
        for label, store in (("unscoped", root), ("scoped", reader)):
            store.keyword_search(queries[0], 20, flt)  # warm
            out[f"keyword_search_{label}"] = timed(
                lambda i, s=store: s.keyword_search(queries[i], 20, flt), args.queries
            )
            out[f"document_frequencies_{label}"] = timed(
                lambda i, s=store: s.document_frequencies(queries[i]), args.queries
            )
        writer = views[2 % args.owners]

        def write(i: int) -> None:
            with writer.transaction():
                writer.insert(row(10_000_000 + i, corpus[i % len(corpus)], vecs[0]))

        out["single_row_write"] = timed(write, args.writes)
        root.close()
        print(json.dumps(out, indent=2))
    finally:
        server.drop_database(name)


if __name__ == "__main__":
    main()
