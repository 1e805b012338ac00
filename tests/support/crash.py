"""Crash-safety harness: SIGKILL memloom part-way through an import, resume, compare.

What it does, for the importer (``memloom import sessions``) and for the capture
worker (``memloom capture run-once``):

1. :func:`prepare_claude_root` lays out a Claude Code folder: byte-exact copies
   of the real fixture transcripts plus a few long sessions stitched from the
   same real records (new uuids), so that sessions span several chunks.
2. :class:`CrashModel` serves a scripted model over the real OpenAI-compatible
   HTTP protocol on 127.0.0.1 (chat *and* embeddings). Its answers depend only on
   the request content -- a memory per transcript line derived from that line's
   text -- so an interrupted-then-resumed import and an uninterrupted one are
   comparable whatever the chunk boundaries. It may add random latency (answers
   unaffected) so that timed kills land at varied points, and it can hold the
   n-th request of a kind while the harness kills the client (a kill "between
   the LLM answer and the ledger write").
3. memloom runs as a real subprocess (``python -m tests.support.crash child --
   ARGS``, which is the ``memloom`` command plus optional in-process kill points:
   right after / right before the N-th committed store transaction, after a
   queue claim, before a queue finish). The harness kills it with SIGKILL --
   at a seeded random time, at a held request, or at such a point -- then runs
   the same command again to completion.
4. :func:`snapshot` reads the store through the ``Store`` protocol (SQLite or
   PostgreSQL) into a canonical form -- random ids replaced by labels derived
   from content, timestamps of the run left out -- and checks the SQLite file
   (``PRAGMA integrity_check``, ``foreign_key_check``, the FTS index, the tag
   index). :func:`compare` diffs it with the uninterrupted reference run:
   duplicates, missing rows, mismatched rows.

``python -m tests.support.crash demo`` runs a few trials and prints them.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import hashlib
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.support.openai_server import bag_of_words
from tests.support.scripted_llm import classify_labels

REPO = Path(__file__).resolve().parents[2]
FIXTURE_PROJECTS = REPO / "tests" / "fixtures" / "transcripts" / "claude" / "projects"
#: The three large real transcripts; long sessions are stitched from their records.
BIG = (
    "-Users-dain-workspace-JSSoundRecorder/7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl",
    "-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
    "-Users-dain-workspace-claude-code-log-sample/fe869ecb-c176-478f-9734-7e4b8ef12cff.jsonl",
)
LONG_DIR = "-home-dev-crashlab"
LONG_CWD = "/home/dev/crashlab"
#: Where the middle round of a long session runs: Claude Code's worktree agents move a
#: session into a subfolder for a while, so its records' ``cwd`` changes part-way.
AWAY_CWD = LONG_CWD + "/.claude/worktrees/agent-1"
_UUID_NAME = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.jsonl$")
_UUID_KEYS = ("uuid", "parentUuid", "leafUuid", "logicalParentUuid", "sourceToolAssistantUUID")

#: Environment variables of the caller that must not leak into the child.
_STRIP_ENV = re.compile(r"^(MEMLOOM_|CLAUDE_CONFIG_DIR$|OPENAI_API_KEY$|ANTHROPIC_API_KEY$)")

# =============================================================== the transcripts


def _rewrite(obj: Any, *, salt: str, sid: str, round_: int) -> Any:
    """A record of a stitched session: fresh uuids and message ids, one session id."""
    if not isinstance(obj, dict):
        return obj
    for key in _UUID_KEYS:
        if isinstance(obj.get(key), str):
            obj[key] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{salt}:{obj[key]}"))
    if "sessionId" in obj:
        obj["sessionId"] = sid
    if "cwd" in obj:
        obj["cwd"] = AWAY_CWD if round_ == 1 else LONG_CWD
    if isinstance(obj.get("requestId"), str):
        obj["requestId"] = f"{obj['requestId']}_{salt}"
    msg = obj.get("message")
    if isinstance(msg, dict):
        if isinstance(msg.get("id"), str):
            msg["id"] = f"{msg['id']}_{salt}"
        if round_ and obj.get("type") == "user":
            # Later rounds say slightly different things: distinct lines, distinct memories.
            content = msg.get("content")
            suffix = f" (round {round_ + 1})"
            if isinstance(content, str) and content and content[0] not in "<C":
                msg["content"] = content + suffix
            elif isinstance(content, list):
                for block in content:
                    if (
                        isinstance(block, dict)
                        and block.get("type") == "text"
                        and isinstance(block.get("text"), str)
                        and block["text"][:1] not in ("<", "C", "")
                    ):
                        block["text"] += suffix
                        break
    return obj


def prepare_claude_root(
    dest: Path, *, long_sessions: int = 2, rounds: int = 3, seed: int = 1234
) -> list[Path]:
    """A Claude Code config folder at ``dest`` (``dest/projects/...``); its main transcripts.

    Copies every real fixture transcript (sidecars included: discovery must skip
    them) and adds ``long_sessions`` sessions of ``rounds`` passes over the big
    real transcripts' records, in a seeded order. Modification times are set
    deterministically (older than the 5-minute quiet window, newest first in a
    fixed order), so every run discovers the same files in the same order.
    """
    projects = dest / "projects"
    shutil.copytree(FIXTURE_PROJECTS, projects)
    rng = random.Random(seed)
    for s in range(long_sessions):
        sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        out = projects / LONG_DIR / f"{sid}.jsonl"
        out.parent.mkdir(parents=True, exist_ok=True)
        sources = rng.sample(BIG, len(BIG))
        with out.open("wb") as fh:
            for r in range(rounds):
                for src in sources:
                    salt = f"s{s}r{r}"
                    for raw in (FIXTURE_PROJECTS / src).read_bytes().split(b"\n"):
                        if not raw.strip():
                            continue
                        try:
                            obj = json.loads(raw)
                        except ValueError:
                            fh.write(raw + b"\n")
                            continue
                        rec = _rewrite(obj, salt=salt, sid=sid, round_=r)
                        fh.write(json.dumps(rec, ensure_ascii=False).encode() + b"\n")
    mains = sorted(p for p in projects.glob("*/*.jsonl") if _UUID_NAME.match(p.name))
    base = int(time.time()) - 3 * 3600
    for i, path in enumerate(sorted(projects.rglob("*.jsonl"))):
        stamp = base - 60 * i
        os.utime(path, (stamp, stamp))
    return mains


# =============================================================== the model

SUBJECTS = ("the build", "the test suite", "the recorder", "the API", "deploys", "the cache")
TOOLS = ("vite", "webpack", "pytest", "make", "docker")
TYPES = ("fact", "preference", "procedure", "episode")
VERDICTS = ("keep_new", "keep_existing", "keep_both", "unsure")


def _h(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("\x00".join(parts).encode()).digest()[:8], "big")


def memory_for_line(role: str, text: str, line: int) -> dict[str, Any] | None:
    """The memory the scripted model distills from one transcript line (or None).

    A function of the line alone, so chunking cannot change it. The contents come
    from a small space of statements, so the belief pipeline sees exact repeats
    (merge), restatements (classifier "identical": a new version), negations
    (contradiction: a conflict, and a judge verdict) and line-specific notes.
    """
    h = _h(role, text)
    if h % 10 >= (6 if role == "user" else 2):
        return None
    h //= 10
    subject = SUBJECTS[h % len(SUBJECTS)]
    h //= len(SUBJECTS)
    tool = TOOLS[h % len(TOOLS)]
    h //= len(TOOLS)
    style = h % 10
    h //= 10
    if style < 4:
        content = f"{subject} uses {tool}"
    elif style < 5:
        content = f"{subject} never uses {tool}"
    elif style < 7:
        content = f"{subject[0].upper()}{subject[1:]} uses {tool}."
    else:
        words = " ".join(text.split()[:8])[:160]
        content = f"{subject}: {words}"
    return {"type": TYPES[h % len(TYPES)], "content": content, "lines": [line, line]}


def distill_reply(payload: dict[str, Any]) -> dict[str, Any]:
    memories = []
    for line in payload["lines"]:
        item = memory_for_line(line["role"], line["text"], line["line"])
        if item is not None:
            memories.append(item)
    return {"memories": memories}


def judge_reply(payload: dict[str, Any]) -> dict[str, Any]:
    key = [payload["new"]["text"], *(e["text"] for e in payload["existing"])]
    verdict = VERDICTS[_h(*key) % len(VERDICTS)]
    return {"verdict": verdict, "index": 0, "reason": f"scripted {verdict}"}


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client killed mid-request is the point of the exercise


class CrashModel:
    """The scripted model over HTTP, with latency and a gate on the n-th request of a kind.

    Request kinds: ``embed``, ``distill``, ``classify``, ``judge``. ``counts`` counts
    them since the last :meth:`reset`.
    """

    def __init__(
        self,
        *,
        dim: int = 64,
        latency: float = 0.0,
        seed: int = 0,
        distill: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    ) -> None:
        self.dim = dim
        self.distill = distill or distill_reply
        self.latency = latency
        self.counts: Counter[str] = Counter()
        self.unexpected: list[Any] = []  # requests the script does not know
        self.first_request = threading.Event()
        self.gate: tuple[str, int] | None = None
        self.gate_hit = threading.Event()
        self.gate_release = threading.Event()
        #: (n, status): the n-th chat request since the last reset, and every one after
        #: it, answers ``status`` (credits run out, an outage) until :meth:`heal`.
        self.failing: tuple[int, int] | None = None
        self._chats = 0
        self._lock = threading.Lock()
        self._rng = random.Random(seed)
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out at once: no 40 ms stalls

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                status, doc = owner._answer(self.path, body)
                raw = json.dumps(doc).encode()
                with contextlib.suppress(OSError):
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw)

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def close(self) -> None:
        self.gate_release.set()
        self._server.shutdown()
        self._server.server_close()

    def reset(self) -> None:
        with self._lock:
            self.counts.clear()
            self._chats = 0
            self.first_request.clear()

    def fail_from(self, n: int, status: int) -> None:
        """Answer ``status`` to the n-th chat request from now on, and to all after it."""
        with self._lock:
            self._chats = 0
            self.failing = (n, status)

    def heal(self) -> None:
        with self._lock:
            self.failing = None

    def arm(self, kind: str, n: int) -> None:
        """Hold the n-th request of ``kind`` (counted from now) until :meth:`disarm`."""
        with self._lock:
            self.counts.clear()
            self.first_request.clear()
            self.gate = (kind, n)
            self.gate_hit.clear()
            self.gate_release.clear()

    def disarm(self) -> None:
        with self._lock:
            self.gate = None
        self.gate_release.set()

    def _answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if path.endswith("/embeddings"):
            kind = "embed"
        elif path.endswith("/chat/completions"):
            try:
                task = body["response_format"]["json_schema"]["name"]
            except (KeyError, TypeError):
                self.unexpected.append(body)
                return 400, {"error": {"message": "no response_format json_schema"}}
            kind = task.removeprefix("memloom_")
        else:
            return 404, {"error": {"message": f"no route {path}"}}
        with self._lock:
            self.counts[kind] += 1
            held = self.gate == (kind, self.counts[kind])
            if kind != "embed":
                self._chats += 1
            failed = self.failing is not None and kind != "embed" and self._chats >= self.failing[0]
            if failed:
                assert self.failing is not None
                status = self.failing[1]
                return status, {"error": {"message": f"scripted {status}", "type": "scripted"}}
            delay = self._rng.uniform(0, self.latency) if self.latency else 0.0
        self.first_request.set()
        if held:
            self.gate_hit.set()
            self.gate_release.wait(60)
        if delay:
            time.sleep(delay)
        if kind == "embed":
            inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
            data = [
                {"object": "embedding", "index": i, "embedding": bag_of_words(t, self.dim)}
                for i, t in enumerate(inputs)
            ]
            return 200, {"object": "list", "data": data, "model": body.get("model")}
        payload = json.loads(body["messages"][1]["content"])
        if kind == "distill":
            reply = self.distill(payload)
        elif kind == "classify":
            reply = classify_labels(payload)
        else:
            reply = judge_reply(payload)
        return 200, {
            "id": "chatcmpl-crash",
            "object": "chat.completion",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": json.dumps(reply)}}
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1},
        }


# =============================================================== running memloom


@dataclass
class Setup:
    """Where a run reads and writes, and which model it talks to."""

    home: Path
    claude: Path
    base_url: str
    database_url: str | None = None

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not _STRIP_ENV.match(k)}
        env.update(
            MEMLOOM_HOME=str(self.home),
            CLAUDE_CONFIG_DIR=str(self.claude),
            MEMLOOM_LLM="openai",
            MEMLOOM_LLM_BASE_URL=self.base_url,
            MEMLOOM_LLM_MODEL="crash-scripted",
            MEMLOOM_LLM_API_KEY="sk-crash-harness",
            MEMLOOM_EMBEDDER="openai",
            MEMLOOM_EMBED_BASE_URL=self.base_url,
            MEMLOOM_EMBED_MODEL="bag-of-words",
            MEMLOOM_EMBED_API_KEY="sk-crash-harness",
            PYTHONPATH=os.pathsep.join(
                p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p
            ),
            PYTHONDONTWRITEBYTECODE="1",
        )
        if self.database_url:
            env["MEMLOOM_DATABASE_URL"] = self.database_url
        return env


IMPORT_ARGS = ("import", "sessions", "--json", "--path")
WORKER_ARGS = ("capture", "run-once", "--json")


def child_command(
    args: Sequence[str], *, crash_at: str | None = None, count_file: Path | None = None
) -> list[str]:
    cmd = [sys.executable, "-m", "tests.support.crash", "child"]
    if crash_at:
        cmd += ["--crash-at", crash_at]
    if count_file:
        cmd += ["--count-file", str(count_file)]
    return [*cmd, "--", *args]


@dataclass
class KillPlan:
    """Where to kill: ``time`` (seconds after start, from outside), ``request``
    (while the n-th request of ``what`` is held, from outside), or a point inside
    the child: ``commit`` (just after the n-th committed store transaction),
    ``precommit`` (inside it, just before COMMIT), ``claim`` (just after the n-th
    queue claim), ``prefinish`` (just before the n-th queue finish)."""

    kind: str
    at: float
    what: str = ""

    def describe(self) -> str:
        if self.kind == "time":
            return f"time:{self.at:.3f}s"
        if self.kind == "request":
            return f"request:{self.what}#{int(self.at)}"
        return f"{self.kind}#{int(self.at)}"


@dataclass
class RunResult:
    returncode: int
    killed: bool
    elapsed: float
    stdout: str = ""
    stderr: str = ""


def run(setup: Setup, args: Sequence[str], *, timeout: float = 300) -> RunResult:
    """One uninterrupted run of ``memloom ARGS`` (through the child wrapper)."""
    started = time.perf_counter()
    proc = subprocess.run(
        child_command(args),
        env=setup.env(),
        cwd=str(REPO),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return RunResult(
        proc.returncode, False, time.perf_counter() - started, proc.stdout, proc.stderr
    )


def run_killed(
    setup: Setup, args: Sequence[str], plan: KillPlan, model: CrashModel, *, timeout: float = 300
) -> RunResult:
    """Run ``memloom ARGS`` and SIGKILL it according to ``plan`` (if it gets that far)."""
    inside = plan.kind not in ("time", "request")
    cmd = child_command(args, crash_at=f"{plan.kind}:{int(plan.at)}" if inside else None)
    if plan.kind == "request":
        model.arm(plan.what, int(plan.at))
    started = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        env=setup.env(),
        cwd=str(REPO),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    killed = False
    try:
        if plan.kind == "time":
            try:
                proc.wait(timeout=plan.at)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                killed = True
        elif plan.kind == "request":
            deadline = time.monotonic() + timeout
            while proc.poll() is None and time.monotonic() < deadline:
                if model.gate_hit.wait(0.02):
                    os.kill(proc.pid, signal.SIGKILL)
                    killed = True
                    break
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        if plan.kind == "request":
            model.disarm()
    if inside:
        killed = proc.returncode == -signal.SIGKILL
    return RunResult(proc.returncode, killed, time.perf_counter() - started, out, err)


def notify(setup: Setup, transcript: Path) -> None:
    """What the SessionEnd hook runs: ``memloom hook notify`` with the hook's JSON."""
    payload = {
        "session_id": transcript.stem,
        "transcript_path": str(transcript),
        "cwd": None,
        "hook_event_name": "SessionEnd",
        "reason": "exit",
    }
    subprocess.run(
        [sys.executable, "-m", "memloom._entry", "hook", "notify"],
        input=json.dumps(payload),
        env=setup.env(),
        cwd=str(REPO),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )


def enable_capture(home: Path) -> None:
    """``memloom connect claude-code --all`` without touching any settings.json."""
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    (home / "capture.json").write_text(
        json.dumps({"all": True, "projects": [], "recall": False, "connected_at": 0})
    )


# =============================================================== snapshots


@dataclass
class Snapshot:
    tables: dict[str, Counter[tuple[Any, ...]]]
    keys: dict[str, Counter[tuple[Any, ...]]]
    problems: list[str] = field(default_factory=list)  # integrity failures


def _rel(value: Any, root: str) -> Any:
    if isinstance(value, str) and value.startswith(root):
        return "<claude>" + value[len(root) :]
    return value


def _canon(value: Any, labels: dict[str, str], root: str) -> Any:
    if isinstance(value, dict):
        return {k: _canon(v, labels, root) for k, v in sorted(value.items())}
    if isinstance(value, list | tuple):
        return [_canon(v, labels, root) for v in value]
    if isinstance(value, str):
        return labels.get(value, _rel(value, root))
    return value


def _open_store(home: Path, database_url: str | None) -> Any:
    if database_url and database_url.startswith("postgres"):
        from memloom.store.postgres import PostgresStore

        return PostgresStore(database_url)
    from memloom.store.sqlite import SQLiteStore

    return SQLiteStore(home / "memloom.db")


def sqlite_problems(path: Path) -> list[str]:
    """Integrity of a SQLite file: pages, foreign keys, and for the store its indexes."""
    problems: list[str] = []
    if not path.exists():
        return problems
    db = sqlite3.connect(str(path), isolation_level=None)
    try:
        rows = [r[0] for r in db.execute("PRAGMA integrity_check")]
        if rows != ["ok"]:
            problems.append(f"{path.name}: integrity_check: {rows[:5]}")
        fk = db.execute("PRAGMA foreign_key_check").fetchall()
        if fk:
            problems.append(f"{path.name}: foreign_key_check: {fk[:5]}")
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "memories_fts" in tables:
            try:
                db.execute("INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')")
            except sqlite3.DatabaseError as exc:
                problems.append(f"{path.name}: FTS index: {exc}")
        if "memory_tags" in tables:
            want = {
                (tag, rowid)
                for rowid, tags in db.execute("SELECT rowid, tags FROM memories")
                for tag in json.loads(tags)
            }
            have = set(db.execute("SELECT tag, memory_rowid FROM memory_tags").fetchall())
            if want != have:
                problems.append(f"{path.name}: memory_tags out of step with memories.tags")
    finally:
        db.close()
    return problems


def snapshot(home: Path, claude: Path, database_url: str | None = None) -> Snapshot:
    """The store in canonical form (see the module docstring) plus integrity problems."""
    root = str(claude.resolve())
    store = _open_store(home, database_url)
    try:
        rows = [r for batch in store.iter_rows() for r in batch]
        conflicts = store.all_conflicts()
        provenance = store.all_provenance()
        ledger = store.all_ledger()
        records = store.all_records()
    finally:
        store.close()
    by_id = {r.id: r for r in rows}
    labels: dict[str, str] = {}
    for r in rows:
        root_row = by_id.get(r.root_id)
        root_hash = root_row.content_hash[:10] if root_row else "?"
        labels[r.id] = f"mem:{r.project}|{r.content_hash[:10]}|v{r.version}|{root_hash}"
    for c in conflicts:
        labels[c.id] = f"conflict:{labels.get(c.new_id, '?')}>{labels.get(c.existing_id, '?')}"

    def canon(value: Any) -> Any:
        return _canon(value, labels, root)

    def frozen(value: Any) -> str:
        return json.dumps(canon(value), sort_keys=True, default=str)

    tables: dict[str, Counter[tuple[Any, ...]]] = {}
    keys: dict[str, Counter[tuple[Any, ...]]] = {}
    tables["memories"] = Counter(
        (
            labels[r.id],
            r.status,
            r.type,
            r.text,
            r.original_text,
            r.source,
            frozen(r.tags),
            frozen(r.metadata),
            r.project,
            r.sensitivity,
            r.session_id,
            r.asserted_at,
            r.access_count,
            r.expires_at,
            canon(r.superseded_by),
            r.decay_level,
            bool(r.pinned),
        )
        for r in rows
    )
    keys["memories"] = Counter((labels[r.id],) for r in rows)
    tables["conflicts"] = Counter(
        (
            labels[c.id],
            c.distance,
            c.reason,
            c.status,
            c.resolution,
            frozen(c.detail),
        )
        for c in conflicts
    )
    keys["conflicts"] = Counter((labels[c.id],) for c in conflicts)
    tables["provenance"] = Counter(
        (
            labels.get(p.memory_id, f"dangling:{p.memory_id}"),
            p.session_id,
            _rel(p.path, root),
            p.project,
            p.start_line,
            p.end_line,
            p.excerpt,
        )
        for p in provenance
    )
    keys["provenance"] = Counter(
        (labels.get(p.memory_id, "dangling"), _rel(p.path, root), p.start_line, p.end_line)
        for p in provenance
    )
    tables["ledger"] = Counter(
        (
            _rel(lg.path, root),
            lg.session_id,
            lg.project,
            lg.size,
            lg.mtime,
            lg.offset,
            lg.lines,
            lg.hash,
            lg.status,
            lg.memories,
            lg.last_error,
        )
        for lg in ledger
    )
    keys["ledger"] = Counter((_rel(lg.path, root),) for lg in ledger)
    tables["records"] = Counter((u, _rel(p, root)) for u, p in records)
    keys["records"] = Counter((u,) for u, _ in records)
    problems = [] if database_url else sqlite_problems(home / "memloom.db")
    dangling = [p for p in provenance if p.memory_id not in by_id]
    if dangling:
        problems.append(f"{len(dangling)} provenance rows point at no memory")
    return Snapshot(tables, keys, problems)


@dataclass
class Diff:
    duplicates: int = 0
    missing: int = 0
    mismatched: int = 0
    details: list[str] = field(default_factory=list)

    @property
    def equal(self) -> bool:
        return not (self.duplicates or self.missing or self.mismatched)


def compare(ref: Snapshot, got: Snapshot, *, limit: int = 6) -> Diff:
    """Rows the interrupted run has too often (duplicates), too rarely (missing), or
    with different contents under the same identity (mismatched)."""
    diff = Diff()
    for table, ref_rows in ref.tables.items():
        got_rows = got.tables[table]
        ref_keys, got_keys = ref.keys[table], got.keys[table]
        dup = got_keys - ref_keys
        miss = ref_keys - got_keys
        diff.duplicates += sum(dup.values())
        diff.missing += sum(miss.values())
        extra, lacking = got_rows - ref_rows, ref_rows - got_rows
        changed = max(sum(extra.values()) - sum(dup.values()), 0)
        diff.mismatched += changed
        for row in list(extra)[:limit]:
            diff.details.append(f"{table} +{extra[row]}: {row}")
        for row in list(lacking)[:limit]:
            diff.details.append(f"{table} -{lacking[row]}: {row}")
    return diff


# =============================================================== trials


@dataclass
class Trial:
    mode: str  # import | worker
    seed: int
    plan: str
    kills_landed: int = 0
    runs: int = 0
    duplicates: int = 0
    missing: int = 0
    mismatched: int = 0
    integrity: list[str] = field(default_factory=list)
    queue: list[str] = field(default_factory=list)  # worker: jobs not done, stuck, repeated
    errors: list[str] = field(default_factory=list)  # a resumed run that did not finish
    details: list[str] = field(default_factory=list)
    elapsed: float = 0.0

    @property
    def consistent(self) -> bool:
        return not (
            self.duplicates
            or self.missing
            or self.mismatched
            or self.integrity
            or self.queue
            or self.errors
        )

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["consistent"] = self.consistent
        return out


@dataclass
class Reference:
    """The uninterrupted run every trial of a mode is compared with."""

    snapshot: Snapshot
    elapsed: float
    requests: Counter[str]
    commits: int
    claims: int = 0


class CrashLab:
    """One Claude folder and one model; reference runs and kill trials under ``workdir``.

    ``database_url`` (optional) is a factory of fresh PostgreSQL URLs: each run then
    uses its own database instead of ``home/memloom.db``.
    """

    def __init__(
        self,
        workdir: Path,
        *,
        long_sessions: int = 2,
        rounds: int = 3,
        latency: float = 0.01,
        seed: int = 0,
        database_url: Any = None,
    ) -> None:
        self.workdir = workdir
        self.claude = workdir / "claude"
        self.sessions = prepare_claude_root(self.claude, long_sessions=long_sessions, rounds=rounds)
        self.model = CrashModel(latency=latency, seed=seed)
        self.database_url = database_url
        self._n = 0
        self.references: dict[str, Reference] = {}

    def close(self) -> None:
        self.model.close()

    def __enter__(self) -> CrashLab:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ plumbing

    def _setup(self, name: str) -> Setup:
        self._n += 1
        home = self.workdir / f"{self._n:03d}-{name}"
        home.mkdir(parents=True, mode=0o700)
        url = self.database_url() if self.database_url else None
        return Setup(home=home, claude=self.claude, base_url=self.model.base_url, database_url=url)

    def _args(self, mode: str) -> list[str]:
        if mode == "import":
            return [*IMPORT_ARGS, str(self.claude / "projects")]
        return list(WORKER_ARGS)

    def _prepare(self, setup: Setup, mode: str) -> None:
        if mode == "worker":
            enable_capture(setup.home)
            for path in self.sessions:
                notify(setup, path)

    # ------------------------------------------------------------ reference

    def reference(self, mode: str) -> Reference:
        if mode in self.references:
            return self.references[mode]
        setup = self._setup(f"{mode}-reference")
        self._prepare(setup, mode)
        counts = setup.home / "counts.json"
        self.model.reset()
        started = time.perf_counter()
        proc = subprocess.run(
            child_command(self._args(mode), count_file=counts),
            env=setup.env(),
            cwd=str(REPO),
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        elapsed = time.perf_counter() - started
        if proc.returncode != 0:
            raise RuntimeError(f"reference {mode} run failed: {proc.stderr[-2000:]}")
        requests = Counter(self.model.counts)
        tally = json.loads(counts.read_text())
        snap = snapshot(setup.home, self.claude, setup.database_url)
        if snap.problems:
            raise RuntimeError(f"reference {mode} run is not sound: {snap.problems}")
        if mode == "worker":
            problems = queue_problems(setup.home, self.sessions)
            if problems:
                raise RuntimeError(f"reference worker run left the queue unsound: {problems}")
        ref = Reference(snap, elapsed, requests, tally.get("commit", 0), tally.get("claim", 0))
        self.references[mode] = ref
        return ref

    # ------------------------------------------------------------ plans

    def plan(
        self, mode: str, rng: random.Random, kind: str | None = None, what: str | None = None
    ) -> KillPlan:
        """A kill plan of the given kind (or a random one) that lands within the
        reference run: a moment of it, one of its commits, claims or requests."""
        ref = self.reference(mode)
        kinds = ["time", "time", "commit", "precommit", "request"]
        if mode == "worker":
            kinds += ["claim", "prefinish"]
        kind = kind or rng.choice(kinds)
        if kind == "time":
            return KillPlan("time", rng.uniform(0.1, 0.9 * ref.elapsed))
        if kind in ("commit", "precommit"):
            return KillPlan(kind, rng.randint(1, max(1, ref.commits)))
        if kind in ("claim", "prefinish"):
            return KillPlan(kind, rng.randint(1, max(1, ref.claims)))
        kinds = [k for k in ("distill", "embed", "classify", "judge") if ref.requests[k]]
        what = what or rng.choice(kinds)
        return KillPlan("request", rng.randint(1, ref.requests[what]), what)

    # ------------------------------------------------------------ trials

    def trial(
        self, mode: str, seed: int, *, kills: int = 1, plans: Sequence[KillPlan] | None = None
    ) -> Trial:
        """Kill a run ``kills`` times (each resumed run may be killed again), then run
        to completion and compare with the reference."""
        ref = self.reference(mode)
        rng = random.Random(seed)
        plans = list(plans) if plans else [self.plan(mode, rng) for _ in range(kills)]
        trial = Trial(mode, seed, " then ".join(p.describe() for p in plans))
        started = time.perf_counter()
        setup = self._setup(f"{mode}-{seed}")
        self._prepare(setup, mode)
        args = self._args(mode)
        for plan in plans:
            result = run_killed(setup, args, plan, self.model)
            trial.runs += 1
            trial.kills_landed += int(result.killed)
            if not result.killed and result.returncode != 0:
                trial.errors.append(f"run {trial.runs} exited {result.returncode}")
                trial.details.append(result.stderr[-1500:])
        for _ in range(3):  # resume; the worker may need a second pass for a requeued job
            result = run(setup, args)
            trial.runs += 1
            if result.returncode != 0:
                trial.errors.append(f"resume exited {result.returncode}")
                trial.details.append(result.stderr[-1500:])
                break
            if mode == "import" or not _queue_waiting(setup.home):
                break
        got = snapshot(setup.home, self.claude, setup.database_url)
        diff = compare(ref.snapshot, got)
        trial.duplicates, trial.missing, trial.mismatched = (
            diff.duplicates,
            diff.missing,
            diff.mismatched,
        )
        trial.details.extend(diff.details)
        trial.integrity = got.problems
        if mode == "worker":
            trial.queue = queue_problems(setup.home, self.sessions)
            trial.integrity += [
                p for p in sqlite_problems(setup.home / "capture.db") if setup.database_url is None
            ]
        trial.elapsed = round(time.perf_counter() - started, 3)
        if trial.consistent:
            # Keep the disk small over a long soak; failing homes stay for a look.
            shutil.rmtree(setup.home, ignore_errors=True)
        return trial


# =============================================================== the capture queue


def _jobs(home: Path) -> list[tuple[int, str, str, int, str | None]]:
    path = home / "capture.db"
    if not path.exists():
        return []
    db = sqlite3.connect(str(path))
    try:
        return db.execute(
            "SELECT id, transcript_path, status, attempts, detail FROM jobs ORDER BY id"
        ).fetchall()
    finally:
        db.close()


def _queue_waiting(home: Path) -> bool:
    return any(status in ("queued", "running") for _, _, status, _, _ in _jobs(home))


def queue_problems(home: Path, sessions: Sequence[Path]) -> list[str]:
    """Every enqueued session done exactly once: no job left queued or running, none
    failed or skipped, one job per session."""
    problems = []
    jobs = _jobs(home)
    per_path: Counter[str] = Counter()
    for job_id, path, status, _attempts, detail in jobs:
        per_path[path] += 1
        if status != "done":
            problems.append(f"job {job_id} {Path(path).name} {status} ({detail})")
    for path in sessions:
        key = str(path.resolve())
        if per_path[key] == 0:
            problems.append(f"{path.name} was never queued")
        elif per_path[key] > 1:
            problems.append(f"{path.name} has {per_path[key]} jobs")
    return problems


# =============================================================== the child process


def _install_kill_points(spec: str | None, count_file: str | None) -> None:
    """Count commits, claims and finishes in this process; SIGKILL it at ``spec``."""
    from memloom.capture import queue as queue_mod
    from memloom.store.sqlite import SQLiteStore

    kind, _, number = (spec or "").partition(":")
    target = int(number) if number else -1
    tally: Counter[str] = Counter()

    def die() -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    original_tx = SQLiteStore.transaction

    @contextlib.contextmanager
    def transaction(self: Any) -> Iterator[None]:
        outer = not self._in_tx
        with original_tx(self):
            yield
            if outer and kind == "precommit" and tally["commit"] + 1 == target:
                die()
        if outer:
            tally["commit"] += 1
            if kind == "commit" and tally["commit"] == target:
                die()

    SQLiteStore.transaction = transaction  # type: ignore[method-assign]

    original_claim = queue_mod.CaptureQueue.claim
    original_finish = queue_mod.CaptureQueue.finish

    def claim(self: Any) -> Any:
        job = original_claim(self)
        if job is not None:
            tally["claim"] += 1
            if kind == "claim" and tally["claim"] == target:
                die()
        return job

    def finish(self: Any, job_id: int, status: str, detail: str | None = None) -> None:
        tally["finish"] += 1
        if kind == "prefinish" and tally["finish"] == target:
            die()
        original_finish(self, job_id, status, detail)

    queue_mod.CaptureQueue.claim = claim  # type: ignore[method-assign]
    queue_mod.CaptureQueue.finish = finish  # type: ignore[method-assign]

    if count_file:

        def write_counts() -> None:
            Path(count_file).write_text(json.dumps(dict(tally)))

        atexit.register(write_counts)


def _child(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="crash child")
    parser.add_argument("--crash-at")
    parser.add_argument("--count-file")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    ns = parser.parse_args(argv)
    args = ns.args[1:] if ns.args[:1] == ["--"] else ns.args
    _install_kill_points(ns.crash_at, ns.count_file)
    from memloom._entry import main as memloom_main

    try:
        memloom_main(args)
    except SystemExit as exc:  # typer exits; run the atexit hooks with the same status
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        sys.exit(code)


def _demo(argv: list[str]) -> None:
    import tempfile

    parser = argparse.ArgumentParser(prog="crash demo")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--mode", choices=["import", "worker"], default="import")
    ns = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp, CrashLab(Path(tmp)) as lab:
        ref = lab.reference(ns.mode)
        print(f"reference: {ref.elapsed:.2f}s {dict(ref.requests)} commits={ref.commits}")
        for seed in range(ns.trials):
            t = lab.trial(ns.mode, seed)
            print(json.dumps(t.as_dict())[:2000])


if __name__ == "__main__":
    command, rest = (sys.argv[1], sys.argv[2:]) if len(sys.argv) > 1 else ("demo", [])
    if command == "child":
        _child(rest)
    else:
        _demo(rest)
