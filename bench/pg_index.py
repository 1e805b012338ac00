"""pgvector's HNSW over float32 vectors vs over their half-precision cast, in one run.

    python bench/pg_index.py [--n 100000] [--queries 200] [--rounds 2]

The choice behind ``store/postgres.py``'s vector index: the same table (memloom-wide
rows: a status, a text and the float32 vector), the same clustered vectors and queries
as ``bench/scale.py``, both indexes built with the store's parameters (m 16,
ef_construction 200), and the two searches the store can run, alternated per ``ef_search``
and round: ``ORDER BY embedding <=> q`` on the float32 graph, and the store's SQL --
the half-precision graph's ``max(2k, 40)`` candidates re-scored exactly from the
float32 column. Reported: p50 per query, top-10 overlap with exact search, index
sizes and build times. Server: as ``bench/postgres.py`` (``MEMLOOM_BENCH_DATABASE_URL``
or a throw-away embedded one with a deployment's settings).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import postgres as pgbench  # noqa: E402
import scale  # noqa: E402
from recall import DIM, make_queries, make_vectors  # noqa: E402

EF = [60, 120, 200, 400, 1000]


def main() -> None:
    from memloom.store.pg_vectors import HNSW_FLOAT, HNSW_HALFVEC, search_args, search_sql

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", default=str(HERE / "results" / "pg_index.json"))
    args = parser.parse_args()
    x = make_vectors(args.n)
    qs = make_queries(x, args.queries)
    exact = [set(np.argsort(-s)[:10].tolist()) for s in qs @ x.T]
    server = pgbench.Server(Path(tempfile.mkdtemp(prefix="memloom-pgi-")))
    report: dict = {"command": "python bench/pg_index.py " + " ".join(sys.argv[1:])}
    try:
        name, url = server.create_database()
        report["server"] = server.describe(url)
        conn = pgbench.pg_connect(url)
        conn.execute(f"SET maintenance_work_mem = '{pgbench.MAINTENANCE_WORK_MEM}'")
        conn.execute("SET max_parallel_maintenance_workers = 1")
        conn.execute(
            f"CREATE TABLE memories (id int PRIMARY KEY, status text DEFAULT 'active', "
            f"text text, embedding vector({DIM}))"
        )
        with conn.cursor().copy(
            "COPY memories (id, text, embedding) FROM STDIN WITH (FORMAT BINARY)"
        ) as copy:
            copy.set_types(["int4", "text", "vector"])
            for i, v in enumerate(x):
                copy.write_row((i, scale.memory_text(i), v))
        builds = {}
        for kind, ddl in (("float32", HNSW_FLOAT), ("halfvec", HNSW_HALFVEC.format(dim=DIM))):
            ddl = ddl.replace("memories_embedding_hnsw", f"memories_{kind}")
            t = time.perf_counter()
            conn.execute(ddl)
            size = conn.execute(f"SELECT pg_relation_size('memories_{kind}')").fetchone()[0]
            builds[kind] = {"build_s": round(time.perf_counter() - t, 1), "bytes": int(size)}
        conn.execute("VACUUM ANALYZE memories")
        conn.execute("SET hnsw.iterative_scan = strict_order")
        where = "m.status = 'active'"
        sql = {
            "float32": search_sql(where, "%s", DIM, False),
            "halfvec": search_sql(where, "%s", DIM, True),
        }

        def timed(kind: str) -> tuple[float, float]:
            lat, overlap = [], []
            for q, gold in zip(qs, exact, strict=True):
                t = time.perf_counter()
                rows = conn.execute(sql[kind], search_args(q, [], 10, DIM, kind == "halfvec"))
                got = {int(r[0]) for r in rows.fetchall()}
                lat.append(time.perf_counter() - t)
                overlap.append(len(got & gold) / 10)
            return float(np.percentile(np.array(lat[10:]) * 1000, 50)), float(np.mean(overlap))

        rows: dict[int, dict[str, list]] = {ef: {"float32": [], "halfvec": []} for ef in EF}
        for _ in range(args.rounds):
            for ef in EF:
                conn.execute(f"SET hnsw.ef_search = {ef}")
                for kind in ("float32", "halfvec"):
                    rows[ef][kind].append(timed(kind))
        report["n"], report["builds"], report["rounds"] = args.n, builds, args.rounds
        report["load_at_end"] = pgbench.loadavg()
        report["sweep"] = [
            {
                "ef_search": ef,
                **{
                    f"{kind}_{what}": round(float(np.median([r[i] for r in rows[ef][kind]])), 4)
                    for kind in ("float32", "halfvec")
                    for i, what in ((0, "p50_ms"), (1, "overlap"))
                },
            }
            for ef in EF
        ]
        conn.close()
        server.drop_database(name)
    finally:
        server.close()
    Path(args.out).write_text(json.dumps(report, indent=2))
    print(markdown(report))


def markdown(report: dict) -> str:
    b = report["builds"]
    out = [
        f"{report['n']:,} memories, {report['rounds']} alternating rounds; index build "
        f"float32 {b['float32']['build_s']} s, {b['float32']['bytes'] / 2**20:.0f} MiB; "
        f"halfvec {b['halfvec']['build_s']} s, {b['halfvec']['bytes'] / 2**20:.0f} MiB; "
        f"load average at the end {report.get('load_at_end')}.",
        "",
        "| ef_search | float32 p50 | overlap | halfvec + re-score p50 | overlap "
        "| halfvec / float32 |",
        "|---|---|---|---|---|---|",
    ]
    for r in report["sweep"]:
        out.append(
            f"| {r['ef_search']} | {r['float32_p50_ms']:.2f} ms | {r['float32_overlap']:.3f} | "
            f"{r['halfvec_p50_ms']:.2f} ms | {r['halfvec_overlap']:.3f} | "
            f"{r['halfvec_p50_ms'] / r['float32_p50_ms']:.2f}× |"
        )
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
