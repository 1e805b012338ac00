"""The capture queue on PostgreSQL: shared by several servers of one host."""

from __future__ import annotations

import threading
import time

from memloom.capture.pg_queue import PgCaptureQueue


def test_concurrent_claimers_never_take_the_same_job(pg_url):
    producer = PgCaptureQueue(pg_url, host="laptop")
    for i in range(60):
        producer.enqueue(f"/p/{i}.jsonl")
    assert producer.enqueue("/p/0.jsonl") == producer.enqueue("/p/0.jsonl")  # still waiting
    assert producer.pending() == 60
    claimed: list[list[int]] = [[] for _ in range(4)]

    def drain(slot: int) -> None:
        q = PgCaptureQueue(pg_url, host="laptop")
        try:
            while (job := q.claim()) is not None:
                claimed[slot].append(job.id)
                q.finish(job.id, "done")
        finally:
            q.close()

    threads = [threading.Thread(target=drain, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = [j for c in claimed for j in c]
    assert len(every) == 60 and len(set(every)) == 60
    assert sum(1 for c in claimed if c) >= 2  # the work really was shared
    assert producer.pending() == 0
    producer.close()


def test_jobs_of_another_host_or_owner_are_not_claimed(pg_url):
    PgCaptureQueue(pg_url, host="laptop-a").enqueue("/a.jsonl")
    PgCaptureQueue(pg_url, host="laptop-b", owner="bob").enqueue("/b.jsonl")
    q = PgCaptureQueue(pg_url, host="laptop-b")
    assert q.claim() is None  # laptop-b's job is bob's, not local's
    bob = PgCaptureQueue(pg_url, host="laptop-b", owner="bob")
    job = bob.claim()
    assert job is not None and job.transcript_path == "/b.jsonl"


def test_recover_requeues_only_jobs_whose_server_died(pg_url):
    alive, dying, sweeper = (PgCaptureQueue(pg_url, host="h") for _ in range(3))
    alive.enqueue("/1.jsonl")
    alive.enqueue("/2.jsonl")
    working = alive.claim()
    lost = dying.claim()
    assert working is not None and lost is not None and working.id != lost.id
    assert sweeper.recover() == 0  # both claimers are connected: both jobs are in hand
    dying.close()  # the server dies: its session, and the lock on its job, are gone
    # PostgreSQL ends the closed session (releasing its locks) a moment later.
    deadline = time.monotonic() + 10
    recovered = sweeper.recover()
    while recovered == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
        recovered = sweeper.recover()
    assert recovered == 1
    again = sweeper.claim()
    assert again is not None and again.id == lost.id and again.attempts == 1  # tried before
    assert alive.recover() == 0  # never requeues its own running job
    alive.finish(working.id, "done")
    sweeper.finish(again.id, "done")
    assert [j.status for j in sweeper.recent_jobs()] == ["done", "done"]


def test_daily_budget_is_shared_and_never_overspent(pg_url):
    queues = [PgCaptureQueue(pg_url, host=f"h{i}") for i in range(4)]
    granted: list[bool] = []
    lock = threading.Lock()

    def spend(q: PgCaptureQueue) -> None:
        for _ in range(10):
            ok = q.budget_take("2026-11-30", 17)
            with lock:
                granted.append(ok)

    threads = [threading.Thread(target=spend, args=(q,)) for q in queues]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert granted.count(True) == 17 and queues[0].budget_used("2026-11-30") == 17
    assert queues[0].budget_take("2026-12-01", 0) is False  # a cap of 0 allows nothing
    other = PgCaptureQueue(pg_url, owner="bob")
    assert other.budget_used("2026-11-30") == 0  # each owner has a budget of their own
    for q in [*queues, other]:
        q.close()


def test_record_injected_returns_what_this_call_claimed(pg_url):
    """Two hooks of one session that picked the same memory: only the first to record
    it shows it (Copilot runs sessionStart and userPromptSubmitted at once)."""
    q = PgCaptureQueue(pg_url, host="laptop")
    assert q.record_injected("s-1", ["m-1", "m-2"]) == {"m-1", "m-2"}
    assert q.record_injected("s-1", ["m-2", "m-3"]) == {"m-3"}
    assert q.record_injected("s-2", ["m-2"]) == {"m-2"}
    assert PgCaptureQueue(pg_url, host="laptop", owner="bob").record_injected("s-1", ["m-1"]) == {
        "m-1"
    }
    assert q.injected("s-1") == {"m-1", "m-2", "m-3"}


def test_a_compaction_forgets_one_session_of_one_owner(pg_url):
    """What a compacted session was shown goes (but the ids kept); another session's and
    another owner's records of the same session id stay; a mark is taken once."""
    q = PgCaptureQueue(pg_url, host="laptop")
    bob = PgCaptureQueue(pg_url, host="laptop", owner="bob")
    try:
        q.record_injected("c-1", ["m-1", "m-2", "note"])
        q.record_injected("c-2", ["m-1"])
        bob.record_injected("c-1", ["m-1", "due"])
        assert q.forget_injected("c-1", frozenset({"note"})) == 2
        assert q.injected("c-1") == {"note"} and q.injected("c-2") == {"m-1"}
        assert bob.injected("c-1") == {"m-1", "due"}
        assert q.take_injected("c-1", "due") is False  # bob's mark is not ours
        assert bob.take_injected("c-1", "due") is True
        assert bob.take_injected("c-1", "due") is False
        assert q.forget_injected("c-1") == 1 and q.injected("c-1") == set()
    finally:
        q.close()
        bob.close()
