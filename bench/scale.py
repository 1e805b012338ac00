"""memloom at scale: recall latency, recall quality, write throughput, disk and memory.

    python bench/scale.py --sizes 10000 100000 1000000 --queries 300 \\
        [--skip chroma lancedb http] [--fill store|direct ...]

At each size N every system gets the same precomputed 384-d vectors (``make_vectors``
from bench/recall.py: clustered, low intrinsic dimension, like sentence embeddings)
and the same queries, and is measured on:

* recall latency p50/p95 of a top-10 query, after a cold first query (reported apart)
  and a short warm-up, and the top-10 overlap with exact search;
* store throughput (memories/s): memloom through ``Memloom.store`` in batches of 1,000
  (write-time dedup and conflict detection included), or with ``--fill direct`` rows
  written straight through the SQLite store (no dedup); at 10k also with the local
  embedding model embedding the texts; ChromaDB ``add``; LanceDB ``add`` (+ index);
* bytes on disk per memory after close, and peak RSS.

Systems: memloom in-process, memloom over HTTP (a real ``memloom serve``), numpy brute
force (the floor), ChromaDB embedded (cosine, defaults) and LanceDB (IVF_HNSW_SQ index
at N >= 100k, defaults, plus its flat search). Each system's fill and query phases run
in their own child process (``--worker SYSTEM --phase PHASE``) so peak RSS is
attributable; the parent collects their JSON lines, prints Markdown tables, writes
bench/results/scale.json and plots docs/scale-latency.png and docs/scale-store.png.

``--sweep`` adds a standalone usearch experiment at N >= 100k: memloom's own saved
HNSW graph searched with other ``expansion_search`` and candidate counts (oversampling),
candidates re-scored in float32 as memloom does, to show what those settings would need
to be for a given top-10 overlap.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import resource
import shlex
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from recall import DIM, exact_top, fill_text, make_queries, make_vectors  # noqa: E402

RESULTS = HERE / "results"
DOCS = HERE.parent / "docs"
K = 10
WARMUP = 20
MARK = "@@SCALE-RESULT@@ "
STORE_BATCH = 1000  # Memloom.store entries per call
DIRECT_TX = 10_000  # rows per transaction with --fill direct
CHROMA_BATCH = 5000
LANCE_BATCH = 10_000
LANCE_INDEX_MIN = 100_000  # LanceDB gets an ANN index from this size on
EMBED_FILL_N = 10_000  # the local-embedding store run happens at this size only
EXTRA = 5000  # held-out vectors written after the queries: write throughput *at* N
PROFILED = 1000  # of which the last this many run under cProfile (memloom)
MEMLOOM_EF = 128  # expansion_search memloom's VectorIndex.build_ann configures

LABELS = {
    "numpy": "numpy brute force",
    "memloom": "memloom in-process",
    "memloom-http": "memloom over HTTP",
    "memloom-embed": "memloom store, local embedding",
    "chroma": "ChromaDB (embedded)",
    "lancedb": "LanceDB IVF_HNSW_SQ",
    "lancedb-flat": "LanceDB flat",
}


# --------------------------------------------------------------------------- helpers


def pct(samples: list[float]) -> dict[str, float]:
    ms = sorted(s * 1000 for s in samples)
    return {
        "p50_ms": round(statistics.median(ms), 3),
        "p95_ms": round(ms[int(0.95 * (len(ms) - 1))], 3),
    }


def peak_rss_mb() -> float:
    # VmHWM belongs to this process's address space; ru_maxrss would carry over the
    # parent's peak across fork + exec on Linux.
    hwm = _vm_hwm_mb(os.getpid())
    if hwm is not None:
        return hwm
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def dir_bytes(path: Path) -> int:
    if not path.exists():
        return 0
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def direct_row(i: int, vec: np.ndarray, now: float) -> Any:
    """Memory ``i`` as a store row: written past the engine (no dedup) to fill fast."""
    from memloom.hashing import content_hash, new_id
    from memloom.store.base import MemoryRow

    text = memory_text(i)
    mid = new_id()
    return MemoryRow(
        id=mid,
        root_id=mid,
        version=1,
        status="active",
        type="fact",
        text=text,
        original_text=None,
        content_hash=content_hash(text),
        embedding=vec,
        source=None,
        tags=[],
        metadata={},
        project=None,
        sensitivity=0,
        session_id=None,
        created_at=now,
        asserted_at=now,
        last_referenced=now,
    )


def memory_text(i: int) -> str:
    """Memory ``i``'s text (``recall.fill_text``: unique words; "memory number i" would
    read as one statement with its value changed, and a fill through ``store`` would make
    versions since issue 34)."""
    return fill_text(i)


def index_of(text: str) -> int:
    try:
        return int(text.rsplit(" ", 1)[1])
    except (IndexError, ValueError):
        return -1


class Data:
    """One size's inputs on disk: raw float32 vectors, queries and exact top-10 ids.

    ``make_vectors(n + EXTRA)`` is drawn once; the first n rows are the store, the last
    EXTRA rows (same distribution, never queried for) are the writes timed at size n.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        info = json.loads((folder / "data.json").read_text())
        self.n: int = info["n"]
        self.queries = np.load(folder / "queries.npy")
        self.truth = np.load(folder / "truth.npy")

    @staticmethod
    def make(folder: Path, n: int, queries: int) -> dict:
        folder.mkdir(parents=True, exist_ok=True)
        t = time.perf_counter()
        full = make_vectors(n + EXTRA)
        x = full[:n]
        q = make_queries(x, queries)
        gen_s = time.perf_counter() - t
        truth = np.array([exact_top(x, v, K) for v in q], dtype=np.int64)
        full.tofile(folder / "x.f32")
        del full, x
        np.save(folder / "queries.npy", q)
        np.save(folder / "truth.npy", truth)
        info = {"n": n, "queries": queries, "generate_s": round(gen_s, 2)}
        (folder / "data.json").write_text(json.dumps(info))
        return info

    def chunks(self, size: int, extra: bool = False):
        """(index, float32 block) pairs read from disk, never the whole matrix at once.

        ``extra``: the held-out rows n .. n + EXTRA instead of the store's rows.
        """
        first, stop = (self.n, self.n + EXTRA) if extra else (0, self.n)
        with open(self.folder / "x.f32", "rb") as fh:
            fh.seek(first * DIM * 4)
            for start in range(first, stop, size):
                m = min(size, stop - start)
                block = np.fromfile(fh, dtype=np.float32, count=m * DIM)
                yield start, block.reshape(m, DIM)

    def matrix(self) -> np.ndarray:
        return np.fromfile(self.folder / "x.f32", dtype=np.float32, count=self.n * DIM).reshape(
            self.n, DIM
        )

    def overlap(self, qi: int, got: list[int] | set[int]) -> float:
        return len(set(got) & set(self.truth[qi].tolist())) / K


def timed_queries(data: Data, run) -> dict:
    """Cold first query, a warm-up, then every query timed; ``run(q)`` returns indices."""
    t = time.perf_counter()
    run(data.queries[0])
    cold = time.perf_counter() - t
    for q in data.queries[:WARMUP]:
        run(q)
    times, overlap = [], []
    for qi, q in enumerate(data.queries):
        t = time.perf_counter()
        got = run(q)
        times.append(time.perf_counter() - t)
        overlap.append(data.overlap(qi, got))
    return {
        **pct(times),
        "top10_overlap": round(float(np.mean(overlap)), 4),
        "min_query_overlap": round(float(np.min(overlap)), 2),
        "first_query_s": round(cold, 3),
    }


# --------------------------------------------------------------------------- sentences

_SUBJECTS = (
    "the build",
    "our CI pipeline",
    "the login page",
    "the payments service",
    "the nightly job",
    "the parser",
    "this repository",
    "the staging database",
    "the cache layer",
    "the gateway",
    "the test suite",
    "the deploy script",
    "the mobile app",
    "the search index",
    "Maria",
    "the onboarding flow",
    "the billing worker",
    "the auth middleware",
    "the release branch",
    "the metrics exporter",
    "the frontend bundle",
    "the message queue",
    "the cron scheduler",
    "the legacy importer",
    "the feature flag service",
    "Dmitri",
    "the docs site",
    "the linter",
)
_ADVERBS = ("usually", "sometimes", "always", "rarely", "now", "still", "quietly", "often")
_VERBS = (
    "fails on",
    "depends on",
    "retries",
    "reads from",
    "writes to",
    "times out on",
    "skips",
    "validates",
    "migrates",
    "caches",
    "logs",
    "rejects",
    "compresses",
    "renders",
    "schedules",
    "ignores",
    "locks",
    "parses",
    "uploads",
    "downloads",
    "checks",
    "rebuilds",
    "pins",
)
_OBJECTS = (
    "the config file",
    "expired tokens",
    "large CSV exports",
    "the Redis cluster",
    "Postgres replicas",
    "user avatars",
    "the webhook payloads",
    "the S3 bucket",
    "stale lock files",
    "the schema migrations",
    "nested JSON fields",
    "the retry budget",
    "unicode file names",
    "the proxy settings",
    "the Docker image",
    "the protobuf definitions",
    "the rate limiter",
    "old session cookies",
    "the TLS certificates",
    "the audit log",
    "the translation strings",
    "the GraphQL schema",
    "the vendored wheels",
    "the SSH keys",
)
_TAILS = (
    "when the queue is full",
    "after every merge to main",
    "unless the flag is set",
    "on Monday mornings",
    "during the release freeze",
    "if the token has expired",
    "since the last upgrade",
    "in the eu-west region",
    "before the tests start",
    "whenever someone rebases",
    "under heavy load",
    "for enterprise customers only",
    "because the timeout is too short",
    "so run it twice",
    "until the cache is warmed",
    "and nobody has fixed it yet",
    "which breaks the dashboard",
    "on the ARM runners",
    "with Python 3.12",
    "behind the corporate VPN",
    "in the nightly build only",
)


def sentences(n: int, seed: int = 7) -> list[str]:
    """Short varied English sentences of 10-20 words (what an agent would remember)."""
    rng = np.random.default_rng(seed)

    def pick(pool: tuple[str, ...]) -> str:
        return pool[int(rng.integers(len(pool)))]

    out: list[str] = []
    while len(out) < n:
        words = [pick(_SUBJECTS)]
        if rng.random() < 0.5:
            words.append(pick(_ADVERBS))
        words += [pick(_VERBS), pick(_OBJECTS), pick(_TAILS)]
        text = " ".join(words)
        while len(text.split()) < 10:
            text += " " + pick(_TAILS)
        if len(text.split()) > 20:
            continue
        out.append(text[0].upper() + text[1:] + ".")
    return out


# --------------------------------------------------------------------------- workers


def _memloom_env() -> None:
    os.environ.setdefault("MEMLOOM_LLM", "offline")
    os.environ.pop("MEMLOOM_ANN_THRESHOLD", None)


def fill_memloom(data: Data, home: Path, how: str) -> dict:
    import memloom

    _memloom_env()
    m = memloom.open(home=str(home))
    progress: list[list[float]] = []
    marks = {int(data.n * f / 10) for f in range(1, 11)}
    counts = {"stored": 0, "merged": 0, "deduplicated": 0, "conflicts": 0}
    t0 = time.perf_counter()
    if how == "store":
        for start, block in data.chunks(STORE_BATCH):
            entries = [
                {"text": memory_text(start + j), "embedding": block[j].tolist()}
                for j in range(len(block))
            ]
            res = m.store({"entries": entries})
            counts["stored"] += res.stored
            counts["merged"] += res.merged
            counts["deduplicated"] += res.deduplicated
            counts["conflicts"] += len(res.conflicts)
            done = start + len(block)
            if any(start < mk <= done for mk in marks):
                progress.append([done, round(time.perf_counter() - t0, 2)])
                log(f"memloom store fill {done:,}/{data.n:,} {progress[-1][1]} s")
    else:
        backend = m.backend
        for start, block in data.chunks(DIRECT_TX):
            block = block / np.linalg.norm(block, axis=1, keepdims=True)
            now = time.time()
            with backend.transaction():
                for j in range(len(block)):
                    backend.insert(direct_row(start + j, block[j], now))
            counts["stored"] += len(block)
            done = start + len(block)
            if any(start < mk <= done for mk in marks):
                progress.append([done, round(time.perf_counter() - t0, 2)])
                log(f"memloom direct fill {done:,}/{data.n:,} {progress[-1][1]} s")
    insert_s = time.perf_counter() - t0
    graph_s = None
    if how == "direct":
        # Inserts alone never search, so no HNSW graph exists yet; one recall builds it
        # (as the first write or recall would) and close() saves it, like a store fill.
        t = time.perf_counter()
        m.recall({"query_embedding": data.queries[0].tolist(), "max_results": K})
        graph_s = round(time.perf_counter() - t, 2)
        log(f"memloom graph built in {graph_s} s")
    fill_s = time.perf_counter() - t0
    total = m.stats().total_memories
    t = time.perf_counter()
    m.close()  # saves the HNSW graph when one was built
    close_s = time.perf_counter() - t
    return {
        "fill": how,
        "store_per_s": round(data.n / fill_s, 1),
        "fill_s": round(fill_s, 2),
        "insert_s": round(insert_s, 2),
        "graph_build_s": graph_s,
        "close_s": round(close_s, 2),
        "stored": total,
        **counts,
        "fill_progress": progress,
    }


def fill_memloom_embed(data: Data, home: Path) -> dict:
    import memloom

    _memloom_env()
    texts = sentences(data.n)
    m = memloom.open(home=str(home))
    t = time.perf_counter()
    m.embedder.embed(["warm the model up"])
    load_s = time.perf_counter() - t
    counts = {"stored": 0, "merged": 0, "deduplicated": 0, "conflicts": 0}
    t0 = time.perf_counter()
    for start in range(0, len(texts), STORE_BATCH):
        res = m.store({"entries": [{"text": s} for s in texts[start : start + STORE_BATCH]]})
        counts["stored"] += res.stored
        counts["merged"] += res.merged
        counts["deduplicated"] += res.deduplicated
        counts["conflicts"] += len(res.conflicts)
    fill_s = time.perf_counter() - t0
    total = m.stats().total_memories
    m.close()
    words = [len(s.split()) for s in texts]
    return {
        "fill": "store (local embedding)",
        "store_per_s": round(data.n / fill_s, 1),
        "fill_s": round(fill_s, 2),
        "model_load_s": round(load_s, 2),
        "stored": total,
        **counts,
        "words_per_text": [min(words), max(words)],
        "distinct_texts": len(set(texts)),
    }


def _graph_expansion(m: Any) -> int | None:
    index = getattr(m.backend, "_index", None)
    ann = getattr(index, "_ann", None)
    return None if ann is None else int(ann.expansion_search)


def query_memloom(data: Data, home: Path, what_if_ef: int | None = None) -> dict:
    """In-process recall. ``what_if_ef``: set a restored graph's expansion_search (a
    bench-side patch of ``VectorIndex.load_ann`` in this process only)."""
    import memloom

    _memloom_env()
    if what_if_ef is not None:
        from memloom.store import vectors

        original = vectors.VectorIndex.load_ann

        def load_ann(self: Any, path: Path) -> int | None:
            seq = original(self, path)
            if self._ann is not None:
                self._ann.expansion_search = what_if_ef
            return seq

        vectors.VectorIndex.load_ann = load_ann  # type: ignore[method-assign]
        if hasattr(vectors, "expansion_for"):  # memloom that sizes the breadth per search
            vectors.expansion_for = lambda *_args: what_if_ef
    t = time.perf_counter()
    m = memloom.open(home=str(home))
    open_s = time.perf_counter() - t

    def run(q: np.ndarray) -> list[int]:
        res = m.recall({"query_embedding": q.tolist(), "max_results": K})
        return [index_of(mem.text) for mem in res.memories]

    out = timed_queries(data, run)
    out["graph_expansion_search"] = _graph_expansion(m)
    out["open_first_recall_s"] = round(open_s + out["first_query_s"], 3)
    t = time.perf_counter()
    m.close()
    return {**out, "open_s": round(open_s, 3), "close_s": round(time.perf_counter() - t, 2)}


def trim_memloom(data: Data, home: Path) -> dict:
    """Forget the held-out rows a finished run wrote after its queries (for --post-only)."""
    import memloom

    _memloom_env()
    m = memloom.open(home=str(home))
    ids = [
        mid
        for mid, text in m.backend.db.execute("SELECT id, text FROM memories").fetchall()
        if index_of(text) >= data.n
    ]
    removed = 0
    for start in range(0, len(ids), 100):
        removed += m.forget({"ids": ids[start : start + 100]}).removed
    m.close()
    return {"removed": removed}


def trim_chroma(data: Data, home: Path) -> dict:
    """Delete the held-out rows a finished run added after its queries (for --post-only)."""
    _chroma_env()
    import chromadb

    col = chromadb.PersistentClient(path=str(home)).get_collection("bench")
    before = col.count()
    ids = [str(i) for i in range(data.n, data.n + EXTRA)]
    for start in range(0, len(ids), 1000):
        col.delete(ids=ids[start : start + 1000])
    return {"removed": before - col.count()}


def _profile_top(profiler: Any, limit: int = 18) -> list[str]:
    import io
    import pstats

    buf = io.StringIO()
    stats = pstats.Stats(profiler, stream=buf)
    stats.sort_stats("tottime").print_stats(limit)
    lines = [ln.rstrip() for ln in buf.getvalue().splitlines() if ln.strip()]
    root = str(HERE.parent)
    return [ln.replace(root + "/", "").replace(sys.prefix + "/", "") for ln in lines[-limit - 1 :]]


def extra_memloom(data: Data, home: Path) -> dict:
    """Memloom.store of EXTRA held-out vectors into the filled store: throughput at N.

    The last PROFILED entries run under cProfile; their top functions are returned.
    """
    import cProfile

    import memloom

    _memloom_env()
    m = memloom.open(home=str(home))
    # Warm: the first write after open may build or load the graph; keep it out.
    m.recall({"query_embedding": data.queries[0].tolist(), "max_results": K})
    timed, elapsed = 0, 0.0
    profiler = cProfile.Profile()
    batches = list(data.chunks(STORE_BATCH, extra=True))
    for b, (start, block) in enumerate(batches):
        entries = [
            {"text": memory_text(start + j), "embedding": block[j].tolist()}
            for j in range(len(block))
        ]
        last = b == len(batches) - 1 and len(batches) > 1
        if last:
            profiler.enable()
        t = time.perf_counter()
        m.store({"entries": entries})
        spent = time.perf_counter() - t
        if last:
            profiler.disable()
        else:
            timed += len(entries)
            elapsed += spent
    m.close()
    return {
        "store_at_n_per_s": round(timed / elapsed, 1),
        "store_at_n_entries": timed,
        "store_at_n_profile": _profile_top(profiler),
    }


def extra_chroma(data: Data, home: Path) -> dict:
    """ChromaDB add of the same EXTRA held-out vectors into the filled collection."""
    _chroma_env()
    import chromadb

    client = chromadb.PersistentClient(path=str(home))
    col = client.get_collection("bench")
    col.query(query_embeddings=[data.queries[0]], n_results=K)
    timed, elapsed = 0, 0.0
    for start, block in data.chunks(STORE_BATCH, extra=True):
        end = start + len(block)
        t = time.perf_counter()
        col.add(
            ids=[str(i) for i in range(start, end)],
            embeddings=block,
            documents=[memory_text(i) for i in range(start, end)],
        )
        elapsed += time.perf_counter() - t
        timed += len(block)
    return {"store_at_n_per_s": round(timed / elapsed, 1), "store_at_n_entries": timed}


def _vm_hwm_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


def query_http(data: Data, home: Path) -> dict:
    import httpx

    env = {**os.environ, "MEMLOOM_HOME": str(home), "MEMLOOM_LLM": "offline"}
    env.pop("MEMLOOM_ANN_THRESHOLD", None)
    (home / "daemon.json").unlink(missing_ok=True)
    t = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "memloom.cli", "serve", "--port", "0"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = None
    try:
        deadline = time.monotonic() + 3600
        while url is None and time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"memloom serve exited with {proc.returncode}")
            record = home / "daemon.json"
            if record.exists():
                try:
                    candidate = json.loads(record.read_text())["url"]
                    httpx.get(candidate + "/health", timeout=5).raise_for_status()
                    url = candidate
                    break
                except (ValueError, KeyError, httpx.HTTPError):
                    pass
            time.sleep(0.1)
        if url is None:
            raise RuntimeError("memloom serve did not start")
        start_s = time.perf_counter() - t
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        token = (home / "api-token").read_text().strip()  # the daemon serves its owner only
        with httpx.Client(
            base_url=url,
            timeout=3600,
            limits=limits,
            headers={"Authorization": f"Bearer {token}"},
        ) as client:

            def run(q: np.ndarray) -> list[int]:
                res = client.post(
                    "/v1/memory/recall", json={"query_embedding": q.tolist(), "max_results": K}
                )
                res.raise_for_status()
                return [index_of(mem["text"]) for mem in res.json()["memories"]]

            out = timed_queries(data, run)
        server_rss = _vm_hwm_mb(proc.pid)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=600)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return {**out, "server_start_s": round(start_s, 2), "server_peak_rss_mb": server_rss}


def query_numpy(data: Data) -> dict:
    t = time.perf_counter()
    x = data.matrix()
    load_s = time.perf_counter() - t
    out = timed_queries(data, lambda q: exact_top(x, q, K))
    return {**out, "open_s": round(load_s, 3)}


def _chroma_env() -> None:
    os.environ["ANONYMIZED_TELEMETRY"] = "False"


def fill_chroma(data: Data, home: Path) -> dict:
    _chroma_env()
    import chromadb

    client = chromadb.PersistentClient(path=str(home))
    col = client.create_collection("bench", metadata={"hnsw:space": "cosine"})
    batch = min(CHROMA_BATCH, client.get_max_batch_size())
    t0 = time.perf_counter()
    progress = []
    for start, block in data.chunks(batch):
        end = start + len(block)
        col.add(
            ids=[str(i) for i in range(start, end)],
            embeddings=block,
            documents=[memory_text(i) for i in range(start, end)],
        )
        if end % max(data.n // 10, batch) < batch or end == data.n:
            progress.append([end, round(time.perf_counter() - t0, 2)])
            log(f"chroma fill {end:,}/{data.n:,} {progress[-1][1]} s")
    fill_s = time.perf_counter() - t0
    stored = col.count()
    return {
        "fill": f"add, batches of {batch}",
        "store_per_s": round(data.n / fill_s, 1),
        "fill_s": round(fill_s, 2),
        "stored": stored,
        "fill_progress": progress,
    }


def query_chroma(data: Data, home: Path) -> dict:
    _chroma_env()
    import chromadb

    t = time.perf_counter()
    client = chromadb.PersistentClient(path=str(home))
    col = client.get_collection("bench")
    open_s = time.perf_counter() - t

    def run(q: np.ndarray) -> list[int]:
        res = col.query(query_embeddings=[q], n_results=K)
        return [int(i) for i in res["ids"][0]]

    return {**timed_queries(data, run), "open_s": round(open_s, 3)}


def _lance_table(start: int, block: np.ndarray):
    import pyarrow as pa

    end = start + len(block)
    return pa.table(
        {
            "id": pa.array(np.arange(start, end), pa.int64()),
            "text": [memory_text(i) for i in range(start, end)],
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(block.ravel()), DIM),
        }
    )


def fill_lancedb(data: Data, home: Path) -> dict:
    import lancedb

    db = lancedb.connect(str(home))
    table = None
    t0 = time.perf_counter()
    for start, block in data.chunks(LANCE_BATCH):
        chunk = _lance_table(start, block)
        if table is None:
            table = db.create_table("bench", data=chunk)
        else:
            table.add(chunk)
    add_s = time.perf_counter() - t0
    assert table is not None
    out: dict[str, Any] = {
        "add_per_s": round(data.n / add_s, 1),
        "add_s": round(add_s, 2),
        "stored": table.count_rows(),
    }
    if data.n >= LANCE_INDEX_MIN:
        from lancedb.index import IvfHnswSq

        log(f"lancedb: building IVF_HNSW_SQ over {data.n:,} rows")
        t = time.perf_counter()
        table.create_index("vector", config=IvfHnswSq(distance_type="cosine"))
        index_s = time.perf_counter() - t
        info = table.list_indices()[0]
        out.update(
            index_build_s=round(index_s, 2),
            index="IVF_HNSW_SQ (cosine, defaults)",
            index_details=getattr(info, "index_details", None),
        )
        out["fill"] = f"add, batches of {LANCE_BATCH:,} + IVF_HNSW_SQ build"
        out["store_per_s"] = round(data.n / (add_s + index_s), 1)
    else:
        out["fill"] = f"add, batches of {LANCE_BATCH:,} (no index below {LANCE_INDEX_MIN:,})"
        out["store_per_s"] = out["add_per_s"]
    out["fill_s"] = round(time.perf_counter() - t0, 2)
    return out


def query_lancedb(data: Data, home: Path, flat: bool) -> dict:
    import lancedb

    t = time.perf_counter()
    db = lancedb.connect(str(home))
    table = db.open_table("bench")
    open_s = time.perf_counter() - t
    indexed = bool(table.list_indices())

    def run(q: np.ndarray) -> list[int]:
        query = table.search(q, vector_column_name="vector").distance_type("cosine").limit(K)
        if flat:
            query = query.bypass_vector_index()
        res = query.select(["id", "text"]).to_arrow()
        return res["id"].to_pylist()

    out = timed_queries(data, run)
    return {**out, "open_s": round(open_s, 3), "search": "flat" if flat or not indexed else "ANN"}


def usearch_sweep(data: Data, home: Path) -> dict:
    """memloom's saved graph searched with other expansion_search / candidate counts."""
    from usearch.index import Index

    graph = home / "memloom.db.hnsw"
    if not graph.exists():
        return {"error": f"{graph} not found (memloom built no graph at this size)"}
    ann = Index.restore(str(graph))
    assert ann is not None
    db = sqlite3.connect(str(home / "memloom.db"))
    rows = db.execute("SELECT rowid, text FROM memories").fetchall()
    db.close()
    max_rowid = max(r[0] for r in rows)
    row_to_i = np.full(max_rowid + 1, -1, dtype=np.int64)
    for rowid, text in rows:
        row_to_i[rowid] = index_of(text)
    x = data.matrix()
    configs = []
    pool = max(K * 2, 20)  # Memloom.recall asks the store for this many
    restored_ef = int(ann.expansion_search)
    for expansion in (64, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048):
        ann.expansion_search = expansion
        for want in (40, 80, 160, 320):
            times, overlap = [], []
            for qi, q in enumerate(data.queries):
                t = time.perf_counter()
                found = ann.search(q, want)
                idx = row_to_i[np.asarray(found.keys, dtype=np.int64)]
                idx = idx[(idx >= 0) & (idx < data.n)]  # not the held-out rows written later
                sims = x[idx] @ q
                top = idx[np.argsort(-sims, kind="stable")[:pool]][:K]
                times.append(time.perf_counter() - t)
                overlap.append(data.overlap(qi, top.tolist()))
            row = {
                "expansion_search": expansion,
                "candidates": want,
                "top10_overlap": round(float(np.mean(overlap)), 4),
                **pct(times),
            }
            configs.append(row)
            log(f"sweep n={data.n:,} {row}")
    return {
        "graph": {
            "dtype": str(ann.dtype),
            "connectivity": ann.connectivity,
            "expansion_add": ann.expansion_add,
            "size": len(ann),
        },
        "restored_expansion_search": restored_ef,
        "memloom_configures": {"expansion_search": MEMLOOM_EF, "candidates": max(pool * 4, 40)},
        "configs": configs,
    }


def worker(args: argparse.Namespace) -> None:
    data = Data(Path(args.data))
    home = Path(args.home) if args.home else None
    system, phase = args.worker, args.phase
    t = time.perf_counter()
    if phase == "fill":
        assert home is not None
        home.mkdir(parents=True, exist_ok=True)
        if system == "memloom":
            out = fill_memloom(data, home, args.fill[0])
        elif system == "memloom-embed":
            out = fill_memloom_embed(data, home)
        elif system == "chroma":
            out = fill_chroma(data, home)
        elif system == "lancedb":
            out = fill_lancedb(data, home)
        else:
            raise SystemExit(f"no fill phase for {system}")
    elif phase == "extra":
        if system == "memloom":
            out = extra_memloom(data, home)
        elif system == "chroma":
            out = extra_chroma(data, home)
        else:
            raise SystemExit(f"no extra phase for {system}")
    elif system == "numpy":
        out = query_numpy(data)
    elif system == "memloom":
        out = query_memloom(data, home)
    elif system.startswith("memloom-ef"):
        out = query_memloom(data, home, what_if_ef=int(system.removeprefix("memloom-ef")))
    elif system == "memloom-trim":
        out = trim_memloom(data, home)
    elif system == "chroma-trim":
        out = trim_chroma(data, home)
    elif system == "memloom-http":
        out = query_http(data, home)
    elif system == "chroma":
        out = query_chroma(data, home)
    elif system in ("lancedb", "lancedb-flat"):
        out = query_lancedb(data, home, flat=system == "lancedb-flat")
    elif system == "usearch-sweep":
        out = usearch_sweep(data, home)
    else:
        raise SystemExit(f"unknown worker {system}")
    out["phase_s"] = round(time.perf_counter() - t, 2)
    out["peak_rss_mb"] = peak_rss_mb()
    print(MARK + json.dumps(out), flush=True)


# --------------------------------------------------------------------------- parent


def run_child(
    system: str, phase: str, data: Path, home: Path | None, logs: Path, timeout: float, **extra
) -> dict:
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        system,
        "--phase",
        phase,
        "--data",
        str(data),
    ]
    if home is not None:
        cmd += ["--home", str(home)]
    if extra.get("fill"):
        cmd += ["--fill", extra["fill"]]
    logfile = logs / f"{data.name}-{system}-{phase}.log"
    log(f"{data.name}: {system} {phase} ...")
    t = time.perf_counter()
    try:
        with open(logfile, "w") as err:
            proc = subprocess.run(
                cmd, stdout=subprocess.PIPE, stderr=err, text=True, timeout=timeout, check=False
            )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(MARK):
            out = json.loads(line[len(MARK) :])
            log(f"{data.name}: {system} {phase} done in {time.perf_counter() - t:.1f} s")
            return out
    tail = logfile.read_text()[-1500:]
    log(f"{data.name}: {system} {phase} FAILED (exit {proc.returncode})\n{tail}")
    return {"error": f"exit {proc.returncode}: {tail.strip().splitlines()[-1] if tail else ''}"}


def versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in (
        "memloom",
        "numpy",
        "usearch",
        "chromadb",
        "lancedb",
        "pylance",
        "pyarrow",
        "onnxruntime",
        "httpx",
        "uvicorn",
        "matplotlib",
    ):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def source_state() -> dict[str, Any]:
    """The memloom commit measured, and whether src/ had uncommitted edits (read-only git)."""
    from importlib.util import find_spec

    spec = find_spec("memloom")
    origin = Path(spec.origin) if spec and spec.origin else HERE
    root = origin.resolve().parents[2] if spec and spec.origin else HERE.parent

    def git(*cmd: str) -> str | None:
        try:
            res = subprocess.run(
                ["git", *cmd], cwd=root, capture_output=True, text=True, timeout=30, check=True
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return res.stdout.strip()

    dirty = git("status", "--porcelain", "--", "src")
    return {"commit": git("rev-parse", "HEAD"), "src_dirty": None if dirty is None else bool(dirty)}


def machine() -> dict[str, Any]:
    cpu = platform.processor() or "cpu"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem_gb = None
    with contextlib.suppress(OSError, ValueError, IndexError):
        line = Path("/proc/meminfo").read_text().splitlines()[0]
        mem_gb = round(int(line.split()[1]) / 1024 / 1024, 1)
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": mem_gb,
    }


def size_row(n: int, home: Path, stored: int | None) -> dict:
    total = dir_bytes(home)
    count = stored or n
    out = {"disk_bytes": total, "bytes_per_memory": round(total / max(count, 1))}
    db = home / "memloom.db"
    if db.exists():
        out["db_bytes_per_memory"] = round(db.stat().st_size / max(count, 1))
        graph = home / "memloom.db.hnsw"
        out["hnsw_bytes_per_memory"] = (
            round(graph.stat().st_size / max(count, 1)) if graph.exists() else 0
        )
    return out


def measure_size(n: int, rows: dict[str, dict], system: str, home: Path) -> None:
    row = rows.get(system)
    if row is None or "error" in row:
        return
    row.update(size_row(n, home, row.get("stored")))


def run_size(
    n: int, fill: str, args: argparse.Namespace, work: Path, report: dict, save, post: bool = False
) -> dict:
    """Fill, query, size and write-at-N phases for one size.

    ``post``: on stores kept by an earlier ``--keep`` run, skip data, fills and sizes, forget
    the rows that run wrote after its queries, then redo the query and write-at-N phases.
    """
    folder = work / f"n{n}"
    logs = work / "logs"
    logs.mkdir(exist_ok=True)
    skip = set(args.skip)
    homes = {
        "memloom": folder / "memloom",
        "memloom-embed": folder / "memloom-embed",
        "chroma": folder / "chroma",
        "lancedb": folder / "lancedb",
    }
    timeout = args.timeout
    if post:
        run = next(r for r in report["runs"] if r["n"] == n)
        run.setdefault("first_run_rows", json.loads(json.dumps(run["rows"])))
        trimmed = run_child("memloom-trim", "query", folder, homes["memloom"], logs, timeout)
        run["post_run"] = {
            "command": report["post_command"],
            "memloom_source": report["post_source"],
            "memloom_trimmed_rows": trimmed.get("removed", trimmed.get("error")),
        }
        if "chroma" not in skip and homes["chroma"].exists():
            trimmed = run_child("chroma-trim", "query", folder, homes["chroma"], logs, timeout)
            run["post_run"]["chroma_trimmed_rows"] = trimmed.get("removed", trimmed.get("error"))
    else:
        earlier = next((r for r in report["runs"] if r["n"] == n), None)
        kept = folder / "data.json"
        if (
            args.fill_only
            and earlier
            and kept.exists()
            and earlier["data"] == json.loads(kept.read_text())
        ):
            # Another --fill-only step on the same folder: the data and the stores filled
            # so far stay (fills can so be spread over several runs).
            log(f"== {n:,} memories: the data in {folder} is kept")
            run = earlier
        else:
            log(f"== {n:,} memories: generating vectors")
            info = Data.make(folder, n, args.queries)
            run = {"n": n, "memloom_fill": fill, "data": info, "rows": {}}
            report["runs"] = [r for r in report["runs"] if r["n"] != n] + [run]
    rows: dict[str, dict] = run["rows"]

    def record(system: str, phase: str, out: dict) -> None:
        row = rows.setdefault(system, {"system": system, "label": label_of(system)})
        if "error" in out:
            row.setdefault("errors", {})[phase] = out["error"]
            if phase == "query" or system == "memloom-embed":
                row["error"] = out["error"]
            save()
            return
        peak = out.pop("peak_rss_mb")
        phase_s = out.pop("phase_s")
        row[f"{phase}_peak_rss_mb"] = peak
        row[f"{phase}_phase_s"] = phase_s
        row.update(out)
        save()

    def child(system: str, phase: str, home: Path | None, row: str | None = None, **kw) -> None:
        if phase != "fill":
            os.sync()  # no write-back of the fills' dirty pages while latency is timed
        record(row or system, phase, run_child(system, phase, folder, home, logs, timeout, **kw))

    lance_ok = "lancedb" not in skip and _lancedb_available(run)
    lance_ann = n >= LANCE_INDEX_MIN
    lance_row = "lancedb" if lance_ann else "lancedb-flat"
    if post:
        # What-if rows are per run: drop earlier ones, the flags of this run decide.
        for key in [k for k in rows if k.startswith("memloom-ef")]:
            del rows[key]
    else:
        # Fill phases (a --fill-only step leaves a store filled by an earlier step).
        def fill_step(system: str, home: Path, row: str | None = None, **kw: Any) -> None:
            if args.fill_only and home.exists():
                log(f"{folder.name}: {system} was filled by an earlier step")
                return
            child(system, "fill", home, row, **kw)

        fill_step("memloom", homes["memloom"], fill=fill)
        if n == EMBED_FILL_N and "embed" not in skip:
            fill_step("memloom-embed", homes["memloom-embed"])
            measure_size(n, rows, "memloom-embed", homes["memloom-embed"])
            shutil.rmtree(homes["memloom-embed"], ignore_errors=True)
        if "chroma" not in skip:
            fill_step("chroma", homes["chroma"])
        if lance_ok:
            fill_step("lancedb", homes["lancedb"], row=lance_row)
        if args.fill_only:
            # The stores stay for a later --post-only run, which times the queries.
            save()
            return run

    # Query phases, one system after another on the quiet machine.
    if args.rounds and "chroma" not in skip:
        run["rounds_vs_chroma"] = alternating_rounds(args.rounds, folder, homes, logs, timeout)
        save()
    child("numpy", "query", None)
    child("memloom", "query", homes["memloom"])
    if n >= 20_000:  # a graph exists (DEFAULT_ANN_THRESHOLD) and was restored from disk
        for ef in args.what_if_ef:
            child(f"memloom-ef{ef}", "query", homes["memloom"])
    if "http" not in skip:
        child("memloom-http", "query", homes["memloom"])
    if "chroma" not in skip:
        child("chroma", "query", homes["chroma"])
    if lance_ok:
        if lance_ann:
            child("lancedb", "query", homes["lancedb"])
        if "flat" not in skip or not lance_ann:
            child("lancedb-flat", "query", homes["lancedb"])

    # Sizes after every process has closed its store (memloom has saved its graph); a post
    # run keeps the first run's: its stores carry the free pages of the forgotten rows.
    if not post:
        measure_size(n, rows, "memloom", homes["memloom"])
        measure_size(n, rows, "chroma", homes["chroma"])
        if lance_ok:
            measure_size(n, rows, lance_row, homes["lancedb"])
    if args.sweep and n >= 100_000:
        run["usearch_sweep"] = run_child(
            "usearch-sweep", "query", folder, homes["memloom"], logs, timeout
        )
    # Writes at size N (these change the stores, so they come last).
    if "writes" not in skip:
        child("memloom", "extra", homes["memloom"])
    if "chroma" not in skip and "writes" not in skip:
        child("chroma", "extra", homes["chroma"])
    floor = rows.get("numpy", {}).get("p50_ms")
    for row in rows.values():
        if floor and row.get("p50_ms"):
            row["vs_numpy_p50"] = round(row["p50_ms"] / floor, 2)
    save()
    if not args.keep and not post:
        shutil.rmtree(folder, ignore_errors=True)
    return run


def alternating_rounds(
    rounds: int, folder: Path, homes: dict[str, Path], logs: Path, timeout: float
) -> list[dict]:
    """memloom and ChromaDB queried in turn, ``rounds`` times, the first to go alternating:
    a machine that gets busier part-way favours neither."""
    out = []
    for i in range(rounds):
        order = ["memloom", "chroma"] if i % 2 == 0 else ["chroma", "memloom"]
        entry: dict[str, Any] = {"round": i + 1, "first": order[0]}
        for system in order:
            os.sync()
            res = run_child(system, "query", folder, homes[system], logs, timeout)
            for field in ("p50_ms", "p95_ms", "top10_overlap", "error"):
                if field in res:
                    entry[f"{system}_{field}"] = res[field]
        out.append(entry)
        log(f"{folder.name}: round {i + 1}: {entry}")
    return out


def post_only(args: argparse.Namespace, out: Path) -> None:
    report = json.loads(out.read_text())
    work = Path(args.workdir)
    report["post_command"] = "python bench/scale.py " + shlex.join(sys.argv[1:])
    report["post_source"] = source_state()
    report["post_started"] = datetime.now(UTC).isoformat(timespec="seconds")

    def save() -> None:
        report["targets"] = targets(report)
        out.write_text(json.dumps(report, indent=2))

    for n in args.sizes:
        if any(r["n"] == n for r in report["runs"]) and (work / f"n{n}" / "memloom").exists():
            run_size(n, "", args, work, report, save, post=True)
    report["post_finished"] = datetime.now(UTC).isoformat(timespec="seconds")
    save()
    print(markdown(report))
    for p in plot(report):
        print(f"plot: {p}")


def _lancedb_available(run: dict) -> bool:
    try:
        import lancedb  # noqa: F401
    except Exception as exc:  # not installed, or a broken wheel
        run["lancedb_unavailable"] = f"{type(exc).__name__}: {exc}"
        return False
    return True


# --------------------------------------------------------------------------- output

ORDER = [
    "numpy",
    "memloom",
    "memloom-http",
    "chroma",
    "lancedb",
    "lancedb-flat",
    "memloom-embed",
]


def label_of(key: str) -> str:
    if key.startswith("memloom-ef"):
        ef = key.removeprefix("memloom-ef")
        return f"memloom, graph searched at expansion_search {ef} (what-if)"
    return LABELS[key]


def ordered(rows: dict) -> list[str]:
    """Table and legend order: the floor, memloom and its what-ifs, then the others."""
    what_if = sorted(
        (k for k in rows if k.startswith("memloom-ef")),
        key=lambda k: int(k.removeprefix("memloom-ef")),
    )
    order = ORDER[:2] + what_if + ORDER[2:]
    return [k for k in order if k in rows]


def _cell(value: Any, fmt: str = "{}") -> str:
    return "" if value is None else fmt.format(value)


def markdown(report: dict) -> str:
    lines = []
    for run in sorted(report["runs"], key=lambda r: r["n"]):
        rows = run["rows"]
        lines.append(f"\n## {run['n']:,} memories (memloom fill: {run['memloom_fill']})\n")
        if run.get("post_run"):
            commit = (run["post_run"].get("memloom_source") or {}).get("commit") or "?"
            lines.append(
                f"Queries, sizes and writes at N re-measured on the kept stores with memloom "
                f"{commit[:10]} (`{run['post_run']['command']}`); fill figures from the first "
                "run.\n"
            )
        lines.append(
            "| system | recall p50 ms | p95 ms | top-10 overlap | first query s | "
            "fill/s | store/s at N | bytes/memory | peak RSS fill MB | peak RSS query MB |"
        )
        lines.append("|---|---|---|---|---|---|---|---|---|---|")
        for key in ordered(rows):
            r = rows.get(key)
            if r is None:
                continue
            label = r["label"]
            if key == "chroma" and report["versions"].get("chromadb"):
                label = f"ChromaDB {report['versions']['chromadb']} (embedded)"
            if r.get("error"):
                lines.append(f"| {label} | error: {r['error'][:80]} | | | | | | | | |")
                continue
            query_rss = r.get("query_peak_rss_mb")
            if key == "memloom-http" and r.get("server_peak_rss_mb"):
                query_rss = f"{r['server_peak_rss_mb']} (server)"
            store = r.get("store_per_s")
            if key == "memloom" and r.get("fill") == "direct":
                store = f"{store} (direct)"
            lines.append(
                f"| {label} | {_cell(r.get('p50_ms'))} | {_cell(r.get('p95_ms'))} | "
                f"{_cell(r.get('top10_overlap'))} | {_cell(r.get('first_query_s'))} | "
                f"{_cell(store)} | {_cell(r.get('store_at_n_per_s'))} | "
                f"{_cell(r.get('bytes_per_memory'))} | "
                f"{_cell(r.get('fill_peak_rss_mb'))} | {_cell(query_rss)} |"
            )
        m = rows.get("memloom", {})
        if m.get("open_first_recall_s") is not None:
            lines.append(
                f"\nmemloom open {m.get('open_s')} s + first recall {m.get('first_query_s')} s "
                f"= {m['open_first_recall_s']} s (a new process; the files in the page cache)."
            )
        if run.get("rounds_vs_chroma"):
            lines.append(
                "\nAlternating rounds (each a fresh process per system, 300 queries):\n\n"
                "| round | first | memloom p50 ms | overlap | ChromaDB p50 ms | overlap |\n"
                "|---|---|---|---|---|---|"
            )
            for e in run["rounds_vs_chroma"]:
                lines.append(
                    f"| {e['round']} | {e['first']} | {_cell(e.get('memloom_p50_ms'))} | "
                    f"{_cell(e.get('memloom_top10_overlap'))} | {_cell(e.get('chroma_p50_ms'))} | "
                    f"{_cell(e.get('chroma_top10_overlap'))} |"
                )
        sweep = run.get("usearch_sweep")
        if sweep and sweep.get("configs"):
            lines.append(
                f"\nusearch sweep on memloom's saved graph at {run['n']:,} (int8, candidates "
                f"re-scored in float32; memloom configures expansion_search {MEMLOOM_EF} and "
                f"asks for 80 candidates, a restored graph searches at "
                f"{sweep.get('restored_expansion_search')}):\n"
            )
            lines.append("| expansion_search | candidates | top-10 overlap | p50 ms | p95 ms |")
            lines.append("|---|---|---|---|---|")
            for c in sweep["configs"]:
                lines.append(
                    f"| {c['expansion_search']} | {c['candidates']} | {c['top10_overlap']} | "
                    f"{c['p50_ms']} | {c['p95_ms']} |"
                )
    if report.get("targets"):
        lines.append("\n## Targets\n")
        for t in report["targets"]:
            lines.append(f"- {t['target']}: **{'met' if t['met'] else 'NOT met'}** ({t['detail']})")
    return "\n".join(lines)


def targets(report: dict) -> list[dict]:
    """The figures issue 17 asks for, each read from this report."""
    out = []
    by_n = {r["n"]: r for r in report["runs"]}
    r100 = by_n.get(100_000)
    if r100 and "p50_ms" in r100["rows"].get("memloom", {}):
        m = r100["rows"]["memloom"]
        c = r100["rows"].get("chroma", {})
        faster = c.get("p50_ms") is not None and m["p50_ms"] <= c["p50_ms"]
        out.append(
            {
                "target": "100k: recall p50 no slower than ChromaDB, top-10 overlap >= 0.98",
                "met": faster and m["top10_overlap"] >= 0.98,
                "detail": f"memloom p50 {m['p50_ms']} ms vs ChromaDB {c.get('p50_ms')} ms, "
                f"overlap {m['top10_overlap']}",
            }
        )
        rounds = r100.get("rounds_vs_chroma") or []
        if rounds:
            won = [
                e
                for e in rounds
                if e.get("memloom_p50_ms") is not None
                and e.get("chroma_p50_ms") is not None
                and e["memloom_p50_ms"] <= e["chroma_p50_ms"]
                and e.get("memloom_top10_overlap", 0) >= 0.98
            ]
            out.append(
                {
                    "target": f"100k: no slower than ChromaDB at overlap >= 0.98 in every one "
                    f"of {len(rounds)} alternating rounds",
                    "met": len(won) == len(rounds),
                    "detail": f"{len(won)} of {len(rounds)}",
                }
            )
    r1m = by_n.get(1_000_000)
    if r1m and "p50_ms" in r1m["rows"].get("memloom", {}):
        m = r1m["rows"]["memloom"]
        checks = [
            (
                "1M: recall p50 <= 2 ms at top-10 overlap >= 0.98",
                m["p50_ms"] <= 2 and m["top10_overlap"] >= 0.98,
                f"p50 {m['p50_ms']} ms, overlap {m['top10_overlap']}",
            ),
            (
                "1M: peak RSS while recalling <= 1.5 GB",
                m.get("query_peak_rss_mb") is not None and m["query_peak_rss_mb"] <= 1536,
                f"{m.get('query_peak_rss_mb')} MB",
            ),
            (
                "1M: open + first recall <= 1 s",
                m.get("open_first_recall_s") is not None and m["open_first_recall_s"] <= 1,
                f"{m.get('open_first_recall_s')} s",
            ),
            (
                "1M: Memloom.store into the full store >= 1,500/s (batches of 1,000)",
                m.get("store_at_n_per_s") is not None and m["store_at_n_per_s"] >= 1500,
                f"{m.get('store_at_n_per_s')}/s over {m.get('store_at_n_entries')} writes",
            ),
        ]
        out += [{"target": t, "met": ok, "detail": d} for t, ok, d in checks]
    return out


STYLE = {
    "numpy": ("#777777", "s", ":"),
    "memloom": ("#d62728", "o", "-"),
    "memloom-http": ("#ff7f0e", "o", "--"),
    "chroma": ("#1f77b4", "^", "-"),
    "lancedb": ("#2ca02c", "D", "-"),
    "lancedb-flat": ("#2ca02c", "D", ":"),
    "memloom-embed": ("#9467bd", "*", ""),
}


def plot(report: dict) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = sorted(report["runs"], key=lambda r: r["n"])
    if not runs:
        return []
    machine_note = f"{report['machine']['cores']} cores, {report['machine']['cpu']}"
    sizes = [r["n"] for r in runs]
    DOCS.mkdir(exist_ok=True)
    written = []

    def series(key: str, field: str) -> tuple[list[int], list[float]]:
        xs, ys = [], []
        for r in runs:
            row = r["rows"].get(key)
            if row and row.get(field) is not None and not row.get("error"):
                xs.append(r["n"])
                ys.append(row[field])
        return xs, ys

    def finish(ax, title: str, ylabel: str, path: Path) -> None:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(
            sizes, [f"{n // 1000:,}k" if n < 1_000_000 else f"{n / 1e6:g}M" for n in sizes]
        )
        ax.minorticks_off()
        ax.set_xlabel("memories in the store (N, log scale)")
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=12)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8.5, loc="upper left", bbox_to_anchor=(0, -0.13), frameon=False, ncol=1)
        ax.figure.text(
            0.99,
            0.005,
            f"384-d vectors, {report['settings']['queries']} queries, {machine_note}",
            ha="right",
            va="bottom",
            fontsize=7,
            color="#555555",
        )
        ax.figure.savefig(path, dpi=130, bbox_inches="tight", pad_inches=0.15)
        plt.close(ax.figure)
        written.append(path)

    _, ax = plt.subplots(figsize=(8, 5))
    keys = ordered({k: None for r in runs for k in r["rows"]})
    what_if = [k for k in keys if k.startswith("memloom-ef")]
    for key in keys:
        if key == "memloom-embed":
            continue
        xs, ys = series(key, "p50_ms")
        if not xs:
            continue
        if key in what_if:
            color, ls = STYLE["memloom"][0], ":"
            marker = "ovsp"[what_if.index(key) % 4]
        else:
            color, marker, ls = STYLE[key]
        overlaps = [r["rows"][key].get("top10_overlap") for r in runs if r["n"] in xs]
        label = f"{label_of(key)} (top-10 overlap {' / '.join(f'{o:.3f}' for o in overlaps)})"
        ax.plot(xs, ys, marker=marker, linestyle=ls, color=color, label=label, linewidth=1.8)
    first = [
        (r["n"], r["first_run_rows"]["memloom"])
        for r in runs
        if r.get("first_run_rows", {}).get("memloom", {}).get("p50_ms") is not None
    ]
    if first:
        commit = ((report.get("memloom_source") or {}).get("commit") or "")[:7]
        label = f"memloom in-process, first run{' at ' + commit if commit else ''} (top-10 overlap "
        label += " / ".join(f"{row['top10_overlap']:.3f}" for _, row in first) + ")"
        ax.plot(
            [n for n, _ in first],
            [row["p50_ms"] for _, row in first],
            color=STYLE["memloom"][0],
            marker="o",
            linestyle="-.",
            alpha=0.45,
            linewidth=1.4,
            label=label,
        )
    ax.axhline(50, color="#999999", linewidth=0.8, linestyle="--")
    ax.text(sizes[0], 50, " 50 ms", va="bottom", fontsize=7, color="#777777")
    finish(
        ax,
        "Top-10 recall latency (p50) vs store size",
        "recall p50 latency, ms (log)",
        DOCS / "scale-latency.png",
    )

    _, ax = plt.subplots(figsize=(8, 5))

    def value(run: dict, key: str, field: str) -> float | None:
        row = run["rows"].get(key) or {}
        return None if row.get("error") else row.get(field)

    def line(points: list[tuple[int, float | None]], label: str, **style: Any) -> None:
        pts = [(n, v) for n, v in points if v is not None]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], label=label, **style)

    red, blue, green = STYLE["memloom"][0], STYLE["chroma"][0], STYLE["lancedb"][0]
    line(
        [(r["n"], value(r, "memloom", "store_at_n_per_s")) for r in runs],
        f"memloom Memloom.store into a store of N ({EXTRA:,} writes, dedup + conflicts)",
        color=red,
        marker="o",
        linewidth=2,
    )
    line(
        [
            (r["n"], value(r, "memloom", "store_per_s"))
            for r in runs
            if value(r, "memloom", "fill") == "store"
        ],
        "memloom Memloom.store, average over the fill 0 → N",
        color=red,
        marker="o",
        linestyle=":",
        alpha=0.7,
    )
    line(
        [
            (r["n"], value(r, "memloom", "store_per_s"))
            for r in runs
            if value(r, "memloom", "fill") == "direct"
        ],
        "memloom --fill direct (SQLite inserts + graph build, no dedup)",
        color=red,
        marker="x",
        linestyle="none",
        markersize=9,
    )
    line(
        [(r["n"], value(r, "chroma", "store_at_n_per_s")) for r in runs],
        f"ChromaDB add into a collection of N ({EXTRA:,} rows, batches of {STORE_BATCH:,})",
        color=blue,
        marker="^",
        linewidth=2,
    )
    line(
        [(r["n"], value(r, "chroma", "store_per_s")) for r in runs],
        f"ChromaDB add, average over the fill 0 → N (batches of {CHROMA_BATCH:,})",
        color=blue,
        marker="^",
        linestyle=":",
        alpha=0.7,
    )
    line(
        [
            (r["n"], value(r, "lancedb", "add_per_s") or value(r, "lancedb-flat", "add_per_s"))
            for r in runs
        ],
        f"LanceDB add, average over the fill (batches of {LANCE_BATCH:,})",
        color=green,
        marker="D",
        linestyle=":",
        alpha=0.7,
    )
    line(
        [(r["n"], value(r, "lancedb", "store_per_s")) for r in runs],
        "LanceDB add + IVF_HNSW_SQ build",
        color=green,
        marker="D",
        linewidth=2,
    )
    line(
        [(r["n"], value(r, "memloom-embed", "store_per_s")) for r in runs],
        "memloom Memloom.store with local embedding (text only)",
        color=STYLE["memloom-embed"][0],
        marker="*",
        linestyle="none",
        markersize=13,
    )
    finish(
        ax,
        "Write throughput vs store size",
        "memories stored per second (log)",
        DOCS / "scale-store.png",
    )
    return written


# --------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument(
        "--skip",
        nargs="*",
        default=[],
        choices=["chroma", "lancedb", "http", "embed", "flat", "writes"],
        help="systems to leave out",
    )
    parser.add_argument(
        "--fill",
        nargs="+",
        default=["store"],
        choices=["store", "direct"],
        help="how memloom is filled: one value for every size, or one per size "
        "(store: Memloom.store with dedup; direct: SQLite inserts, 10k rows a transaction)",
    )
    parser.add_argument(
        "--sweep",
        action="store_true",
        help="also sweep usearch expansion_search/candidates at N >= 100k",
    )
    parser.add_argument("--workdir", help="where stores are built (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the stores afterwards")
    parser.add_argument("--timeout", type=float, default=4 * 3600, help="per child, seconds")
    parser.add_argument("--out", default=str(RESULTS / "scale.json"))
    parser.add_argument(
        "--plot-only", action="store_true", help="re-draw the plots and tables from --out"
    )
    parser.add_argument(
        "--what-if-ef",
        type=int,
        nargs="*",
        default=[MEMLOOM_EF],
        help="extra memloom rows with the restored graph searched at these expansion_search "
        "values (a bench-side patch, N >= 20k)",
    )
    parser.add_argument(
        "--post-only",
        action="store_true",
        help="on the stores kept in --workdir by a --keep run: forget the rows written after "
        "its queries, then redo every query phase, the --what-if-ef rows, (with --sweep) the "
        "usearch sweep and the writes at N for --sizes with the current code; fills and their "
        "figures stay those of the first run. Merges into --out",
    )
    parser.add_argument(
        "--fill-only",
        action="store_true",
        help="generate the data and fill the stores into --workdir, then stop: a later "
        "--post-only run on that folder times the queries (fills can run while other work "
        "does, the timed part alone needs a quiet machine)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=0,
        help="also query memloom and ChromaDB this many times each, alternating which goes "
        "first, and report every round's p50 and overlap",
    )
    # Child-process mode.
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--phase", choices=["fill", "query", "extra"], help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--home", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.worker:
        worker(args)
        return
    out = Path(args.out)
    if args.plot_only:
        report = json.loads(out.read_text())
        print(markdown(report))
        for p in plot(report):
            print(f"plot: {p}")
        return
    if args.post_only:
        if not args.workdir:
            parser.error("--post-only needs the --workdir of a run made with --keep")
        post_only(args, out)
        return
    if args.fill_only and not args.workdir:
        parser.error("--fill-only needs --workdir (the stores are kept there)")
    if len(args.fill) not in (1, len(args.sizes)):
        parser.error("--fill takes one value, or one per size")
    fills = args.fill * len(args.sizes) if len(args.fill) == 1 else args.fill

    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="memloom-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {
        "command": "python bench/scale.py " + shlex.join(sys.argv[1:]),
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "versions": versions(),
        "memloom_source": source_state(),
        "settings": {
            "dim": DIM,
            "k": K,
            "queries": args.queries,
            "warmup_queries": WARMUP,
            "memloom_store_batch": STORE_BATCH,
            "memloom_direct_rows_per_transaction": DIRECT_TX,
            "chroma_batch": CHROMA_BATCH,
            "lancedb_batch": LANCE_BATCH,
            "lancedb_index_from": LANCE_INDEX_MIN,
            "vectors": "bench/recall.py make_vectors (clustered, 48-d basis + noise), "
            "queries: make_queries (a stored vector + noise 0.03)",
        },
        "runs": [],
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    if args.fill_only and out.exists():
        # An earlier --fill-only step's figures stay (run_size reuses its run).
        report["runs"] = json.loads(out.read_text()).get("runs", [])

    def save() -> None:
        report["targets"] = targets(report)
        out.write_text(json.dumps(report, indent=2))

    log(f"work dir {work}; results {out}")
    for n, fill in zip(args.sizes, fills, strict=True):
        run_size(n, fill, args, work, report, save)
    report["finished"] = datetime.now(UTC).isoformat(timespec="seconds")
    save()
    if args.fill_only:
        print(f"\nfilled: {work}; time the queries with --post-only --workdir {work}")
        return
    print(markdown(report))
    for p in plot(report):
        print(f"plot: {p}")
    print(f"\nJSON: {out}")
    if not args.workdir and not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
