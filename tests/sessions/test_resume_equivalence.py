"""An interrupted import, re-run, ends exactly where an uninterrupted one does.

A seeded sweep over interruption points, on both backends. The sessions span
several chunks and hold, across chunks, exact repeats, restatements (the
classifier's "identical": a new version), negations (a conflict and a judge
verdict) and a change of directory part-way (a Claude Code worktree agent);
one of them is a real Claude Code transcript. The model is
:class:`tests.support.crash.CrashModel`, whose answers are a function of each
line alone, served over the real OpenAI-compatible protocol.

Each point interrupts one run, then a second run with a healthy provider and
disk finishes the import; the store (every memory with its version chain and
access count, conflicts and verdicts, provenance rows, ledger rows, transcript
record ids) must equal the uninterrupted run's (:func:`tests.support.crash.compare`).
The interruptions:

* ``provider``: from the n-th model call on, every call answers 402 (credits run
  out), 429 or a 5xx (after memloom's own retries);
* ``ctrl-c``: ``KeyboardInterrupt`` just before or just after the n-th commit;
* ``disk-full``: SQLite's own ``SQLITE_FULL`` (``PRAGMA max_page_count`` a few
  pages above the file's size), for the rest of the run; on PostgreSQL ``ENOSPC``
  raised inside the n-th transaction and every one after it, which rolls them back
  as a failed write does;
* ``store-error``: one transaction, the n-th, fails (``EIO``) and rolls back; the
  next ones work again.

SIGKILL at any instant is the subprocess harness's (``tests/test_crash_safety.py``).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import memloom
from memloom.llm.openai import OpenAIProvider
from tests.sessions.test_importer import record
from tests.support.crash import BIG, FIXTURE_PROJECTS, CrashModel, Snapshot, compare, snapshot

#: Interruption points tried per backend in CI (``MEMLOOM_RESUME_POINTS`` for more).
POINTS = {"sqlite": 32, "postgres": 16}
PROVIDER_STATUSES = (402, 429, 500, 503)
CWD = "/home/dev/shop"

SUBJECTS = ("the build", "the test suite", "the API", "deploys", "the cache")
TOOLS = ("vite", "pytest", "docker", "make")


def _statement(rng: random.Random, i: int) -> str:
    """A typed prompt: the same few beliefs restated, repeated and negated."""
    subject, tool = rng.choice(SUBJECTS), rng.choice(TOOLS)
    return rng.choice(
        [
            f"{subject} uses {tool}",
            f"{subject[0].upper()}{subject[1:]} uses {tool}.",
            f"{subject} never uses {tool}",
            f"remember that {subject} uses {tool} since turn {i}",
            f"please check why {subject} is slow with {tool} today",
        ]
    )


def distill_typed(payload: dict[str, Any]) -> dict[str, Any]:
    """The scripted extraction: every typed prompt of at least four words is a memory
    of its own words (a function of the line alone, whatever the chunking)."""
    memories = []
    for line in payload["lines"]:
        text = line["text"].strip()
        if line["role"] == "user" and len(text.split()) >= 4 and not text.startswith("<"):
            kind = "preference" if "prefer" in text else "fact"
            memories.append({"type": kind, "content": text[:300], "lines": [line["line"]] * 2})
    return {"memories": memories}


def write_sessions(projects: Path, seed: int = 7) -> list[Path]:
    """Two synthetic multi-chunk sessions (one changes directory part-way) and a real
    transcript that changes directory too, with deterministic modification times."""
    rng = random.Random(seed)
    out = []
    for s, turns in enumerate((44, 30)):
        sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        path = projects / "-home-dev-shop" / f"{sid}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8") as fh:
            for i in range(turns):
                # The first session's middle third runs in a worktree agent's folder.
                away = s == 0 and turns // 3 <= i < 2 * turns // 3
                cwd = f"{CWD}/.claude/worktrees/agent-1" if away else CWD
                for role, text in (
                    ("user", _statement(rng, i)),
                    ("assistant", f"done with step {i}. " + "details " * rng.randint(250, 400)),
                ):
                    fh.write(json.dumps(record(role, text, sid=sid, cwd=cwd, rng=rng)) + "\n")
        out.append(path)
    real = projects / BIG[1]
    real.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURE_PROJECTS / BIG[1], real)
    out.append(real)
    base = int(time.time()) - 3 * 3600
    for i, path in enumerate(sorted(out)):
        os.utime(path, (base - 60 * i, base - 60 * i))
    return out


@dataclass
class Point:
    kind: str  # provider | ctrl-c | disk-full
    at: int  # the n-th model call, or the n-th commit
    status: int = 0  # provider: the HTTP status
    before_commit: bool = True  # inside the transaction, or (ctrl-c) just after it

    def describe(self) -> str:
        if self.kind == "provider":
            return f"provider {self.status} from call {self.at}"
        where = "inside" if self.before_commit else "just after"
        return f"{self.kind} {where} commit {self.at}"


class Interrupted(KeyboardInterrupt):
    """Ctrl-C, raised at a chosen commit."""


@contextlib.contextmanager
def interrupt_at_commit(
    store_class: type,
    at: int,
    make: Callable[[], BaseException],
    before: bool,
    *,
    lasting: bool = False,
) -> Iterator[dict[str, int]]:
    """Raise ``make()`` inside (``before``) or just after the ``at``-th outer commit
    (``lasting``: inside that one and every one after it)."""
    original = store_class.transaction
    tally = {"commits": 0}
    depth = {"n": 0}

    @contextlib.contextmanager
    def transaction(self: Any) -> Iterator[None]:
        depth["n"] += 1
        outer = depth["n"] == 1
        try:
            with original(self):
                yield
                due = tally["commits"] + 1 >= at if lasting else tally["commits"] + 1 == at
                if outer and before and due:
                    tally["commits"] += 1
                    raise make()
            if outer:
                tally["commits"] += 1
                if not before and tally["commits"] == at:
                    raise make()
        finally:
            depth["n"] -= 1

    store_class.transaction = transaction
    try:
        yield tally
    finally:
        store_class.transaction = original


class Lab:
    """The sessions, the model, and runs of ``import sessions`` against a backend."""

    def __init__(self, root: Path, database_url: Callable[[], str] | None = None) -> None:
        self.root = root
        self.claude = root / "claude"
        self.sessions = write_sessions(self.claude / "projects")
        self.model = CrashModel(distill=distill_typed)
        self.database_url = database_url
        self.urls: dict[Path, str] = {}
        self._n = 0

    def close(self) -> None:
        self.model.close()

    def home(self, name: str) -> Path:
        self._n += 1
        home = self.root / f"{self._n:03d}-{name}"
        home.mkdir(mode=0o700)
        if self.database_url is not None:
            self.urls[home] = self.database_url()
        return home

    def open(self, home: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
        monkeypatch.setenv("MEMLOOM_EMBEDDER", "openai")
        monkeypatch.setenv("MEMLOOM_EMBED_BASE_URL", self.model.base_url)
        monkeypatch.setenv("MEMLOOM_EMBED_MODEL", "bag-of-words")
        monkeypatch.setenv("MEMLOOM_EMBED_API_KEY", "sk-resume-test")
        monkeypatch.setenv("MEMLOOM_LLM", "openai")
        monkeypatch.setenv("MEMLOOM_LLM_BASE_URL", self.model.base_url)
        monkeypatch.setenv("MEMLOOM_LLM_MODEL", "resume-scripted")
        monkeypatch.setenv("MEMLOOM_LLM_API_KEY", "sk-resume-test")
        if home in self.urls:
            monkeypatch.setenv("MEMLOOM_DATABASE_URL", self.urls[home])
        else:
            monkeypatch.delenv("MEMLOOM_DATABASE_URL", raising=False)
        return memloom.open(home=str(home))

    def llm(self) -> OpenAIProvider:
        # memloom's retries run as configured, without their waits.
        return OpenAIProvider(
            base_url=self.model.base_url,
            model="resume-scripted",
            api_key="sk-resume-test",
            max_tries=2,
            sleep=lambda _s: None,
        )

    def run(self, m: Any) -> Any:
        return m.import_sessions(
            [self.claude / "projects"], days=None, sessions=None, llm=self.llm()
        )

    def snapshot(self, home: Path) -> Snapshot:
        return snapshot(home, self.claude, self.urls.get(home))


@pytest.fixture(scope="module")
def sqlite_lab(tmp_path_factory) -> Iterator[Lab]:
    lab = Lab(tmp_path_factory.mktemp("resume"))
    yield lab
    lab.close()


def reference(lab: Lab, monkeypatch: pytest.MonkeyPatch) -> tuple[Snapshot, int, int]:
    """The uninterrupted run: its snapshot, model calls and commits."""
    home = lab.home("reference")
    lab.model.reset()
    with lab.open(home, monkeypatch) as m:
        with interrupt_at_commit(type(m.backend), 0, KeyboardInterrupt, True) as tally:
            report = lab.run(m)
        assert report.stopped is None and report.failed == 0
    calls = sum(n for kind, n in lab.model.counts.items() if kind != "embed")
    snap = lab.snapshot(home)
    assert not snap.problems
    return snap, calls, tally["commits"]


def points(rng: random.Random, count: int, calls: int, commits: int) -> list[Point]:
    kinds = ["provider", "ctrl-c", "disk-full", "store-error"]
    out = []
    for i in range(count):
        kind = kinds[i % len(kinds)]
        if kind == "provider":
            out.append(Point(kind, rng.randint(1, calls), rng.choice(PROVIDER_STATUSES)))
        else:
            inside = kind != "ctrl-c" or rng.random() < 0.6
            out.append(Point(kind, rng.randint(1, commits), before_commit=inside))
    return out


def interrupted_run(lab: Lab, home: Path, point: Point, monkeypatch: pytest.MonkeyPatch) -> None:
    """One run interrupted at ``point``; what it raises is what a user would see."""
    lab.model.reset()
    if point.kind == "provider":
        lab.model.fail_from(point.at, point.status)
    try:
        with lab.open(home, monkeypatch) as m:
            store_class = type(m.backend)
            if point.kind == "disk-full" and home not in lab.urls:
                pages = m.backend.db.execute("PRAGMA page_count").fetchone()[0]
                m.backend.db.execute(f"PRAGMA max_page_count = {pages + point.at % 7 + 1}")
                report = lab.run(m)
                assert report.stopped and "full" in report.stopped, point.describe()
                return
            if point.kind == "provider":
                report = lab.run(m)
                assert report.failed or report.stopped, point.describe()
                return

            def make() -> BaseException:
                if point.kind == "ctrl-c":
                    return Interrupted()
                if point.kind == "disk-full":
                    return OSError(28, "No space left on device")
                return OSError(5, "Input/output error")

            full = point.kind == "disk-full"
            with (
                interrupt_at_commit(store_class, point.at, make, point.before_commit, lasting=full),
                contextlib.suppress(Interrupted),
            ):
                report = lab.run(m)
                # The store failing stops the run; it never goes on to later sessions.
                assert report.stopped, point.describe()
    finally:
        lab.model.heal()


def sweep(lab: Lab, monkeypatch: pytest.MonkeyPatch, count: int, seed: int) -> list[str]:
    ref, calls, commits = reference(lab, monkeypatch)
    assert calls > 20 and commits > 20
    # The reference exercises what resuming must reproduce.
    statuses = {row[1] for row in ref.tables["memories"]}
    assert {"active", "stale"} <= statuses, statuses
    assert ref.tables["conflicts"], "no contradiction across chunks"
    projects = {row[8] for row in ref.tables["memories"]}
    assert CWD in projects and f"{CWD}/.claude/worktrees/agent-1" not in projects
    failures = []
    for point in points(random.Random(seed), count, calls, commits):
        home = lab.home(point.kind)
        interrupted_run(lab, home, point, monkeypatch)
        lab.model.reset()
        with lab.open(home, monkeypatch) as m:
            report = lab.run(m)
        if report.stopped or report.failed:
            failures.append(f"{point.describe()}: the healed run failed: {report.stopped}")
            continue
        diff = compare(ref, lab.snapshot(home))
        if not diff.equal:
            failures.append(f"{point.describe()}: " + "; ".join(d[:200] for d in diff.details[:4]))
    return failures


def test_every_interruption_point_resumes_to_the_uninterrupted_store(sqlite_lab, monkeypatch):
    failures = sweep(sqlite_lab, monkeypatch, POINTS["sqlite"], seed=25)
    assert not failures, "\n".join(failures)


@pytest.mark.postgres
def test_every_interruption_point_resumes_to_the_uninterrupted_store_on_postgresql(
    postgres_server, tmp_path, monkeypatch
):
    names: list[str] = []

    def fresh() -> str:
        name, url = postgres_server.create_database()
        names.append(name)
        return url

    lab = Lab(tmp_path, database_url=fresh)
    try:
        failures = sweep(lab, monkeypatch, POINTS["postgres"], seed=26)
        assert not failures, "\n".join(failures)
    finally:
        lab.close()
        for name in names:
            postgres_server.drop_database(name)


def test_a_belief_restated_many_times_is_recognised_on_replay(tmp_path, monkeypatch):
    """One belief restated in two spellings, turn after turn, over several chunks: each
    restatement is a new version, so dozens of rows share almost one vector. A run
    interrupted inside a chunk replays it; each item already written must be found by
    its provenance (file and lines), however many near-identical rows there are."""
    rng = random.Random(3)
    lab = Lab(tmp_path / "lab")
    try:
        projects = lab.claude / "projects"
        shutil.rmtree(projects)
        sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        path = projects / "-home-dev-shop" / f"{sid}.jsonl"
        path.parent.mkdir(parents=True)
        with path.open("w", encoding="utf-8") as fh:
            for i in range(70):
                said = "the build uses vite" if i % 2 else "The build uses vite."
                for role, text in (("user", said), ("assistant", f"ok {i} " + "w " * 1_200)):
                    fh.write(json.dumps(record(role, text, sid=sid, cwd=CWD, rng=rng)) + "\n")
        stamp = int(time.time()) - 3600
        os.utime(path, (stamp, stamp))
        ref, _calls, commits = reference(lab, monkeypatch)
        versions = [row for row in ref.tables["memories"] if row[1] == "stale"]
        assert len(versions) > 40
        for at in (commits - 3, commits - 10, commits // 2):
            home = lab.home("restated")
            interrupted_run(lab, home, Point("ctrl-c", at), monkeypatch)
            lab.model.reset()
            with lab.open(home, monkeypatch) as m:
                assert lab.run(m).stopped is None
            diff = compare(ref, lab.snapshot(home))
            assert diff.equal, f"interrupted at commit {at}: {diff.details[:3]}"
    finally:
        lab.close()
