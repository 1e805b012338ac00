"""What a capture queue is: a queued session (:class:`Job`) and the interface both
queues implement (:class:`JobQueue`).

A stdlib-only leaf, so the SQLite queue (:mod:`memloom.capture.queue`), the
PostgreSQL one (:mod:`memloom.capture.pg_queue`) and the factory that picks
between them (:mod:`memloom.capture.queues`) each import it and not each other.
"""

from __future__ import annotations

from memloom.values import Value

__all__ = ["INJECTED_TTL_S", "JOB_COLUMNS", "Job", "JobQueue"]

#: How long a session's record of what the hooks injected is kept. Not cleared at the
#: session's end: a resumed session (claude --continue, codex resume) carries what it
#: was shown in its history, so showing it again would say everything twice (seen with
#: the real Claude Code 2.1.328, tests/e2e).
INJECTED_TTL_S = 7 * 86400.0

#: The columns a :class:`Job` is built from, in its field order.
JOB_COLUMNS = "id, transcript_path, session_id, cwd, reason, status, attempts, detail, enqueued_at"


class Job(Value):
    """A queued session, as its row reads (``JOB_COLUMNS``, in this order)."""

    FIELDS = (
        "id",
        "transcript_path",
        "session_id",
        "cwd",
        "reason",
        "status",
        "attempts",
        "detail",
        "enqueued_at",
    )

    def __init__(
        self,
        id: int,
        transcript_path: str,
        session_id: str | None,
        cwd: str | None,
        reason: str | None,
        status: str,
        attempts: int,
        detail: str | None,
        enqueued_at: float,
    ) -> None:
        self.id = id
        self.transcript_path = transcript_path
        self.session_id = session_id
        self.cwd = cwd
        self.reason = reason
        self.status = status
        self.attempts = attempts
        self.detail = detail
        self.enqueued_at = enqueued_at


class JobQueue:
    """A durable queue of finished sessions, its event log and the daily budget counters.

    The base both queues extend (a plain class, not a ``Protocol``: the hooks import
    it on every run, and it holds :meth:`enqueue`, which they share). Each backend
    implements the rest with its own SQL.
    """

    def close(self) -> None:
        raise NotImplementedError

    def enqueue(
        self,
        transcript_path: str,
        session_id: str | None = None,
        cwd: str | None = None,
        reason: str | None = None,
    ) -> int:
        """Queue a session; a session already waiting is not queued twice."""
        return self.insert_job(transcript_path, session_id, cwd, reason)

    def insert_job(
        self, transcript_path: str, session_id: str | None, cwd: str | None, reason: str | None
    ) -> int:
        """The backend's insert behind :meth:`enqueue` (the queue's own SQL)."""
        raise NotImplementedError

    def claim(self) -> Job | None:
        """Take the oldest queued job; no other claimer gets it."""
        raise NotImplementedError

    def finish(self, job_id: int, status: str, detail: str | None = None) -> None:
        raise NotImplementedError

    def requeue(self, job_id: int, detail: str | None = None) -> None:
        raise NotImplementedError

    def recover(self) -> int:
        """Put jobs whose claimer died back in the queue; how many."""
        raise NotImplementedError

    def pending(self) -> int:
        raise NotImplementedError

    def log(self, kind: str, detail: str | None = None) -> None:
        raise NotImplementedError

    def last_event(self, *kinds: str) -> tuple[str, str | None, float] | None:
        raise NotImplementedError

    def recent_jobs(self, limit: int = 20) -> list[Job]:
        raise NotImplementedError

    def budget_used(self, day: str) -> int:
        raise NotImplementedError

    def budget_take(self, day: str, cap: int) -> bool:
        """Count one call against ``day`` unless ``cap`` is reached (atomically)."""
        raise NotImplementedError

    # ---------------------------------------------------------------- injected memories

    def injected(self, session_id: str) -> set[str]:
        """The memories the hooks already showed this agent session (never shown twice)."""
        raise NotImplementedError

    def record_injected(self, session_id: str, memory_ids: list[str]) -> set[str]:
        """Remember what was shown to ``session_id``; records older than
        :data:`INJECTED_TTL_S` of any session go at the same time. Returns the ids
        recorded by this call (not already recorded by another hook of the session)."""
        raise NotImplementedError

    def forget_injected(self, session_id: str, keep: frozenset[str] = frozenset()) -> int:
        """Forget what ``session_id`` was shown, except the ids in ``keep``: the agent
        compacted its context, so what was shown is gone from it. How many went."""
        raise NotImplementedError

    def take_injected(self, session_id: str, memory_id: str) -> bool:
        """Remove one record; True for the one call that removed it (a mark claimed once)."""
        raise NotImplementedError
