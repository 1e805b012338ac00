"""Crash safety: ``memloom import sessions`` and ``memloom capture run-once`` killed with
SIGKILL part-way, then run again, leave exactly what an uninterrupted run leaves.

Real processes, real transcripts, a scripted model over HTTP: see
``tests/support/crash.py``. Compared with the uninterrupted run: every memory
(text, type, tags, status, version chain, access count), conflict, provenance
row, ledger row and transcript record id; the SQLite files pass
``integrity_check``, ``foreign_key_check`` and the FTS check; every queued session
ends with one job, done. ``bench/soak_crash.py`` runs the same with many more
seeds (bench/results/soak_crash.json).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from memloom.capture.queue import CaptureQueue
from tests.support.crash import CrashLab, KillPlan, Trial

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL and flock")


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> CrashLab:
    # One long session of three chunks beside the real transcripts keeps this module
    # under a minute on two cores; the soak uses two.
    with CrashLab(tmp_path_factory.mktemp("crash"), long_sessions=1, latency=0.005) as lab:
        yield lab


def explain(trial: Trial) -> str:
    lines = [trial.plan, *trial.integrity, *trial.queue, *trial.errors, *trial.details]
    return "\n".join(line[:400] for line in lines[:20])


# ---------------------------------------------------------------- the importer


@pytest.mark.parametrize(
    ("seed", "kind", "what"),
    [
        (11, "time", None),  # a random moment of the run
        (12, "request", "embed"),  # a chunk distilled, none of its memories written yet
        (13, "request", "classify"),  # part-way through a chunk: some memories written
        (14, "commit", None),  # just after a committed transaction, any of them
        (15, "precommit", None),  # inside a transaction, before its COMMIT
    ],
)
def test_importer_killed_then_resumed_equals_an_uninterrupted_run(lab, seed, kind, what):
    ref = lab.reference("import")
    # The reference exercises every path: saves, merges, versions, conflicts, the judge.
    assert ref.requests["classify"] and ref.requests["judge"] and ref.requests["distill"] > 5
    assert {row[1] for row in ref.snapshot.tables["memories"]} >= {"active", "stale", "expired"}
    plan = lab.plan("import", random.Random(seed), kind, what)
    trial = lab.trial("import", seed, plans=[plan])
    if kind != "time":  # a timed kill may come after a fast run has finished
        assert trial.kills_landed == 1, trial.plan
    assert trial.consistent, explain(trial)


def test_importer_killed_between_memory_writes_of_one_chunk(lab):
    """The dangerous window: memories of a chunk committed, its watermark not. The
    resumed run distills the chunk again and must not write those memories twice
    (nor merge into them again: access counts, conflicts and judge verdicts)."""
    ref = lab.reference("import")
    plans = [
        KillPlan("request", ref.requests["classify"] // 2, "classify"),
        KillPlan("request", max(1, ref.requests["judge"] - 1), "judge"),
    ]
    trial = lab.trial("import", 16, plans=plans)  # killed twice: the resumed run too
    assert trial.kills_landed >= 1
    assert trial.consistent, explain(trial)


def test_killed_fifteen_times_ends_where_an_uninterrupted_run_does(lab):
    """The issue's second divergence: killed again and again (each resumed run killed
    too) over sessions whose middle part runs in a subfolder (a worktree agent).
    A run resumed from a watermark in that part filed its memories under the
    subfolder's project, so near-duplicates the clean run folded stayed apart."""
    ref = lab.reference("import")
    rng = random.Random(25)
    step = max(2, ref.commits // 12)
    plans = [KillPlan("commit", rng.randint(1, step)) for _ in range(15)]
    trial = lab.trial("import", 25, plans=plans)
    assert trial.kills_landed >= 10, trial.plan
    assert trial.consistent, explain(trial)


def test_a_resumed_run_skips_what_the_earlier_run_wrote(tmp_path, monkeypatch):
    """In process: the 40 lines re-read as context on resume hold a memory written by
    the first run; distilled again, it is recognised by its provenance and skipped,
    not merged into a second time (which would bump its access count)."""
    import memloom
    from tests.sessions.test_importer import session_path, write_session
    from tests.support.scripted_llm import ScriptedModel

    model = ScriptedModel()
    monkeypatch.setenv("MEMLOOM_LLM", "openai")
    monkeypatch.setenv("MEMLOOM_LLM_BASE_URL", model.base_url)
    monkeypatch.setenv("MEMLOOM_LLM_MODEL", "scripted")
    monkeypatch.setenv("MEMLOOM_LLM_API_KEY", "sk-scripted-test-key")
    monkeypatch.setenv("MEMLOOM_EMBEDDER", "openai")
    monkeypatch.setenv("MEMLOOM_EMBED_BASE_URL", model.base_url)
    monkeypatch.setenv("MEMLOOM_EMBED_MODEL", "bag-of-words")
    monkeypatch.setenv("MEMLOOM_EMBED_API_KEY", "sk-scripted-test-key")
    path = session_path(tmp_path / "claude")
    write_session(path, [("user", f"filler line {i}") for i in range(10)])
    write_session(path, [("user", "REMEMBER: the API is written in Go")])
    try:
        with memloom.open(home=str(tmp_path / "home")) as m:
            assert m.import_sessions([path]).saved == 1
            write_session(path, [("user", "REMEMBER: deploys go through ArgoCD")])
            report = m.import_sessions([path])
            assert (report.saved, report.merged) == (1, 0)
            # The context did reach the model, with the Go line in it.
            assert "Go" in str(model.payloads["memloom_distill"][-1]["lines"])
            rows = {r.text: r for batch in m.backend.iter_rows() for r in batch}
            assert rows["the API is written in Go"].access_count == 0
            (row,) = m.backend.ledger_get_many([str(path)]).values()
            assert (row.status, row.memories) == ("complete", 2)
    finally:
        model.close()


# ---------------------------------------------------------------- the capture worker


@pytest.mark.parametrize(
    ("seed", "kind"),
    [
        (21, "claim"),  # a job just claimed: 'running', nothing imported
        (22, "prefinish"),  # a session imported, its job not yet marked done
        (23, "commit"),  # anywhere in the import of a queued session
    ],
)
def test_worker_killed_then_restarted_imports_each_session_once(lab, seed, kind):
    plan = lab.plan("worker", random.Random(seed), kind)
    trial = lab.trial("worker", seed, plans=[plan])
    assert trial.kills_landed == 1, trial.plan
    assert trial.consistent, explain(trial)


CLAIM_AND_WAIT = """
import sys, time
from pathlib import Path
from memloom.capture.queue import CaptureQueue
queue = CaptureQueue(Path(sys.argv[1]))
job = queue.claim()
print(job.transcript_path, flush=True)
time.sleep(120)
"""


def test_recover_leaves_a_live_workers_job_and_requeues_a_killed_ones(tmp_path):
    queue = CaptureQueue(tmp_path)
    try:
        queue.enqueue("/claude/projects/p/a.jsonl")
        queue.enqueue("/claude/projects/p/b.jsonl")
        worker = subprocess.Popen(
            [sys.executable, "-c", CLAIM_AND_WAIT, str(tmp_path)],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        )
        try:
            assert worker.stdout is not None
            assert worker.stdout.readline().strip() == "/claude/projects/p/a.jsonl"
            # Another process (a cron run beside the daemon) must not take a live job.
            assert queue.recover() == 0
            assert queue.claim().transcript_path == "/claude/projects/p/b.jsonl"
            assert queue.recover() == 0  # nor does it give back its own
        finally:
            os.kill(worker.pid, signal.SIGKILL)
            worker.wait()
        assert queue.recover() == 1  # the killed worker's job goes back, in its place
        again = queue.claim()
        assert again is not None and again.transcript_path == "/claude/projects/p/a.jsonl"
    finally:
        queue.close()


def test_a_closed_queue_leaves_its_unfinished_jobs_recoverable(tmp_path):
    first = CaptureQueue(tmp_path)
    first.enqueue("/claude/projects/p/a.jsonl")
    assert first.claim() is not None
    first.close()  # e.g. a worker that raised out of its loop
    second = CaptureQueue(tmp_path)
    try:
        assert second.recover() == 1
        assert not list((tmp_path / "capture.locks").iterdir())
    finally:
        second.close()


# ---------------------------------------------------------------- PostgreSQL


@pytest.mark.postgres
def test_importer_killed_then_resumed_on_postgresql(postgres_server, tmp_path):
    names: list[str] = []

    def fresh_database() -> str:
        name, url = postgres_server.create_database()
        names.append(name)
        return url

    try:
        with CrashLab(
            tmp_path, long_sessions=1, latency=0.005, database_url=fresh_database
        ) as pg_lab:
            ref = pg_lab.reference("import")
            assert sum(ref.snapshot.tables["memories"].values()) > 10
            plan = KillPlan("request", ref.requests["classify"] // 2, "classify")
            trial = pg_lab.trial("import", 31, plans=[plan])
            assert trial.kills_landed == 1
            assert trial.consistent, explain(trial)
    finally:
        for name in names:
            postgres_server.drop_database(name)
