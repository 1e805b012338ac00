"""The capture queue on a shared PostgreSQL store.

A :class:`memloom.capture.jobs.JobQueue`, like the SQLite
:class:`memloom.capture.queue.CaptureQueue`. Transcripts are files on one
machine, so jobs belong to the host (and owner) that queued them; every
``memloom serve`` of that host may claim them. A claim is ``SELECT … FOR
UPDATE SKIP LOCKED`` (two servers never take the same job), and the claimer
holds a session advisory lock on the job while it works: when a server dies
its connection closes, the lock goes, and :meth:`recover` in any other server
can tell that job from one still being worked on.
"""

from __future__ import annotations

import socket
import time
from typing import Any

import psycopg

from memloom.capture.jobs import INJECTED_TTL_S, JOB_COLUMNS, Job, JobQueue
from memloom.errors import UnavailableError

#: First half of the two-key advisory lock held on a running job ("mlq" + 1).
JOB_LOCK = 0x6D6C7101


class PgCaptureQueue(JobQueue):
    def __init__(self, url: str, *, owner: str = "local", host: str | None = None) -> None:
        from memloom.store.postgres import PostgresStore

        self.owner = owner
        self.host = host or socket.gethostname()
        try:
            self.db = psycopg.connect(url, autocommit=True, connect_timeout=10)
        except psycopg.OperationalError as exc:
            raise UnavailableError(f"PostgreSQL: {exc}".strip()) from exc
        PostgresStore.migrate_schema(self.db)
        self._held: set[int] = set()

    def close(self) -> None:
        self.db.close()  # closing the session releases every job lock it held

    def _mine(self) -> tuple[str, list[Any]]:
        return "owner = %s AND host = %s", [self.owner, self.host]

    def insert_job(
        self, transcript_path: str, session_id: str | None, cwd: str | None, reason: str | None
    ) -> int:
        row = self.db.execute(
            "INSERT INTO capture_jobs (owner, host, transcript_path, session_id, cwd, reason, "
            "enqueued_at) VALUES (%s, %s, %s, %s, %s, %s, %s) "
            "ON CONFLICT (owner, host, transcript_path) WHERE status = 'queued' DO NOTHING "
            "RETURNING id",
            (self.owner, self.host, transcript_path, session_id, cwd, reason, time.time()),
        ).fetchone()
        if row is not None:
            return int(row[0])
        where, params = self._mine()
        found = self.db.execute(
            f"SELECT id FROM capture_jobs WHERE {where} AND transcript_path = %s "
            "AND status = 'queued'",
            [*params, transcript_path],
        ).fetchone()
        if found is None:  # claimed between the two statements: queue it again
            return self.enqueue(transcript_path, session_id, cwd, reason)
        return int(found[0])

    def claim(self) -> Job | None:
        """Take the oldest queued job of this host; other servers skip it."""
        where, params = self._mine()
        with self.db.transaction():
            row = self.db.execute(
                f"SELECT {JOB_COLUMNS} FROM capture_jobs WHERE {where} AND status = 'queued' "
                "ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED",
                params,
            ).fetchone()
            if row is None:
                return None
            # Held past the commit, for as long as this session works on the job.
            self.db.execute("SELECT pg_advisory_lock(%s, %s)", (JOB_LOCK, row[0]))
            self._held.add(int(row[0]))
            self.db.execute(
                "UPDATE capture_jobs SET status = 'running', attempts = attempts + 1, "
                "started_at = %s WHERE id = %s",
                (time.time(), row[0]),
            )
        job = Job(*row)
        job.status = "running"
        return job

    def _release(self, job_id: int) -> None:
        if job_id in self._held:
            self.db.execute("SELECT pg_advisory_unlock(%s, %s)", (JOB_LOCK, job_id))
            self._held.discard(job_id)

    def finish(self, job_id: int, status: str, detail: str | None = None) -> None:
        self.db.execute(
            "UPDATE capture_jobs SET status = %s, detail = %s, finished_at = %s WHERE id = %s",
            (status, detail, time.time(), job_id),
        )
        self._release(job_id)

    def requeue(self, job_id: int, detail: str | None = None) -> None:
        self.db.execute(
            "UPDATE capture_jobs SET status = 'queued', detail = %s WHERE id = %s",
            (detail, job_id),
        )
        self._release(job_id)

    def recover(self) -> int:
        """Jobs left 'running' by a server that died (nobody holds their lock) go back."""
        where, params = self._mine()
        running = self.db.execute(
            f"SELECT id FROM capture_jobs WHERE {where} AND status = 'running'", params
        ).fetchall()
        recovered = 0
        for (job_id,) in running:
            if job_id in self._held:
                continue
            free = self.db.execute(
                "SELECT pg_try_advisory_lock(%s, %s)", (JOB_LOCK, job_id)
            ).fetchone()[0]
            if not free:
                continue  # another live server is working on it
            try:
                cur = self.db.execute(
                    "UPDATE capture_jobs SET status = 'queued' WHERE id = %s "
                    "AND status = 'running'",
                    (job_id,),
                )
                recovered += cur.rowcount
            finally:
                self.db.execute("SELECT pg_advisory_unlock(%s, %s)", (JOB_LOCK, job_id))
        return recovered

    def pending(self) -> int:
        where, params = self._mine()
        row = self.db.execute(
            f"SELECT COUNT(*) FROM capture_jobs WHERE {where} AND status = 'queued'", params
        ).fetchone()
        return int(row[0])

    def log(self, kind: str, detail: str | None = None) -> None:
        self.db.execute(
            "INSERT INTO capture_events (owner, host, kind, detail, at) "
            "VALUES (%s, %s, %s, %s, %s)",
            (self.owner, self.host, kind, detail, time.time()),
        )

    def last_event(self, *kinds: str) -> tuple[str, str | None, float] | None:
        where, params = self._mine()
        row = self.db.execute(
            f"SELECT kind, detail, at FROM capture_events WHERE {where} AND kind = ANY(%s) "
            "ORDER BY id DESC LIMIT 1",
            [*params, list(kinds)],
        ).fetchone()
        return None if row is None else (row[0], row[1], row[2])

    def recent_jobs(self, limit: int = 20) -> list[Job]:
        where, params = self._mine()
        rows = self.db.execute(
            f"SELECT {JOB_COLUMNS} FROM capture_jobs WHERE {where} ORDER BY id DESC LIMIT %s",
            [*params, limit],
        ).fetchall()
        return [Job(*r) for r in rows]

    # ---------------------------------------------------------------- daily budget

    def budget_used(self, day: str) -> int:
        row = self.db.execute(
            "SELECT calls FROM capture_budget WHERE owner = %s AND day = %s", (self.owner, day)
        ).fetchone()
        return int(row[0]) if row else 0

    def budget_take(self, day: str, cap: int) -> bool:
        """Count one call unless the owner's cap for ``day`` is reached, whichever
        server asks: the conditional upsert is one atomic statement."""
        row = self.db.execute(
            "INSERT INTO capture_budget AS b (owner, day, calls) "
            "SELECT %s, %s, 1 WHERE %s > 0 "
            "ON CONFLICT (owner, day) DO UPDATE SET calls = b.calls + 1 WHERE b.calls < %s "
            "RETURNING calls",
            (self.owner, day, cap, cap),
        ).fetchone()
        return row is not None

    # ---------------------------------------------------------------- injected memories

    def injected(self, session_id: str) -> set[str]:
        rows = self.db.execute(
            "SELECT memory_id FROM capture_injected WHERE owner = %s AND session_id = %s",
            (self.owner, session_id),
        ).fetchall()
        return {r[0] for r in rows}

    def record_injected(self, session_id: str, memory_ids: list[str]) -> set[str]:
        now = time.time()
        claimed: set[str] = set()
        with self.db.transaction():
            self.db.execute("DELETE FROM capture_injected WHERE at < %s", (now - INJECTED_TTL_S,))
            for mid in memory_ids:
                cur = self.db.execute(
                    "INSERT INTO capture_injected (owner, session_id, memory_id, at) "
                    "VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                    (self.owner, session_id, mid, now),
                )
                if cur.rowcount == 1:
                    claimed.add(mid)
        return claimed

    def forget_injected(self, session_id: str, keep: frozenset[str] = frozenset()) -> int:
        cur = self.db.execute(
            "DELETE FROM capture_injected WHERE owner = %s AND session_id = %s "
            "AND NOT (memory_id = ANY(%s))",
            (self.owner, session_id, sorted(keep)),
        )
        return cur.rowcount

    def take_injected(self, session_id: str, memory_id: str) -> bool:
        cur = self.db.execute(
            "DELETE FROM capture_injected WHERE owner = %s AND session_id = %s AND memory_id = %s",
            (self.owner, session_id, memory_id),
        )
        return cur.rowcount == 1
