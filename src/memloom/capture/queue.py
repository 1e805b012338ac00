"""A durable queue of finished sessions, in its own small SQLite file.

The SessionEnd hook must enqueue within a few milliseconds and never wait on
the main database (which the daemon may be writing), so the queue lives in
``$MEMLOOM_HOME/capture.db``: one table, WAL, nothing else.

A process that claims a job holds an exclusive lock on a file of its own,
``capture.locks/<claimer>.lock``, for as long as its queue is open, and the job
row names that claimer. The lock goes when the process does -- even on SIGKILL
-- so :meth:`CaptureQueue.recover` can tell a job whose worker died (back to the
queue) from one a live worker (the daemon, a cron run) is still importing (left
alone): a job is never imported by two processes at once.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from pathlib import Path

from memloom.capture.jobs import INJECTED_TTL_S, JOB_COLUMNS, Job, JobQueue

SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    transcript_path TEXT NOT NULL,
    session_id TEXT,
    cwd TEXT,
    reason TEXT,
    status TEXT NOT NULL DEFAULT 'queued',  -- queued | running | done | skipped | failed
    attempts INTEGER NOT NULL DEFAULT 0,
    detail TEXT,
    enqueued_at REAL NOT NULL,
    started_at REAL,
    finished_at REAL,
    claimer TEXT  -- who runs it: capture.locks/<claimer>.lock is held while it lives
);
CREATE INDEX IF NOT EXISTS jobs_status ON jobs (status, id);
CREATE TABLE IF NOT EXISTS budget (day TEXT PRIMARY KEY, calls INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS injected (  -- what the hooks showed each agent session
    session_id TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (session_id, memory_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS injected_at ON injected (at);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,  -- hook_notify, hook_refused, worker_run, worker_error, ...
    detail TEXT,
    at REAL NOT NULL
);
"""


try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no liveness check (a running job is orphaned)
    fcntl = None  # type: ignore[assignment]

LOCKS_DIR = "capture.locks"


def queue_path(home: Path) -> Path:
    return home / "capture.db"


class CaptureQueue(JobQueue):
    def __init__(self, home: Path) -> None:
        home.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = queue_path(home)
        if not path.exists():
            fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
            os.close(fd)
        self.db = sqlite3.connect(str(path), isolation_level=None, timeout=5.0)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)
        if "claimer" not in {r[1] for r in self.db.execute("PRAGMA table_info(jobs)")}:
            with contextlib.suppress(sqlite3.OperationalError):  # another process was first
                self.db.execute("ALTER TABLE jobs ADD COLUMN claimer TEXT")
        self.home = home
        self._claimer: str | None = None
        self._lock_fd: int | None = None

    def close(self) -> None:
        self.db.close()
        if self._lock_fd is not None:
            # Our running jobs (if any) now read as orphaned, which they are.
            with contextlib.suppress(OSError):
                (self.home / LOCKS_DIR / f"{self._claimer}.lock").unlink()
            os.close(self._lock_fd)
            self._lock_fd = None

    # ---------------------------------------------------------------- liveness

    def _claimer_id(self) -> str:
        """This queue's claimer name; its lock file is locked before any job names it."""
        if self._claimer is None:
            # os.urandom, not secrets: the hooks import this module and skip that one
            claimer = f"{os.getpid()}-{os.urandom(4).hex()}"
            if fcntl is not None:
                folder = self.home / LOCKS_DIR
                folder.mkdir(mode=0o700, exist_ok=True)
                fd = os.open(folder / f"{claimer}.lock", os.O_CREAT | os.O_RDWR, 0o600)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    os.close(fd)
                    raise
                self._lock_fd = fd
            self._claimer = claimer
        return self._claimer

    def _alive(self, claimer: str | None) -> bool:
        """Whether the process that claimed a job still runs (holds its lock file)."""
        if claimer is not None and claimer == self._claimer:
            return True
        if claimer is None or fcntl is None:
            return False
        path = self.home / LOCKS_DIR / f"{claimer}.lock"
        try:
            fd = os.open(path, os.O_RDWR)
        except OSError:
            return False
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            except OSError:
                return False
            with contextlib.suppress(OSError):
                path.unlink()  # its owner is gone
            return False
        finally:
            os.close(fd)

    def insert_job(
        self, transcript_path: str, session_id: str | None, cwd: str | None, reason: str | None
    ) -> int:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            row = self.db.execute(
                "SELECT id FROM jobs WHERE transcript_path = ? AND status = 'queued'",
                (transcript_path,),
            ).fetchone()
            if row is not None:
                job_id = int(row[0])
            else:
                cur = self.db.execute(
                    "INSERT INTO jobs (transcript_path, session_id, cwd, reason, enqueued_at) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (transcript_path, session_id, cwd, reason, time.time()),
                )
                job_id = int(cur.lastrowid or 0)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return job_id

    def claim(self) -> Job | None:
        """Take the oldest queued job (one claimer at a time, across processes)."""
        claimer = self._claimer_id()
        self.db.execute("BEGIN IMMEDIATE")
        try:
            row = self.db.execute(
                f"SELECT {JOB_COLUMNS} FROM jobs WHERE status = 'queued' ORDER BY id LIMIT 1"
            ).fetchone()
            if row is None:
                self.db.execute("COMMIT")
                return None
            self.db.execute(
                "UPDATE jobs SET status = 'running', attempts = attempts + 1, started_at = ?, "
                "claimer = ? WHERE id = ?",
                (time.time(), claimer, row[0]),
            )
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        job = Job(*row)
        job.status = "running"
        return job

    def finish(self, job_id: int, status: str, detail: str | None = None) -> None:
        self.db.execute(
            "UPDATE jobs SET status = ?, detail = ?, finished_at = ? WHERE id = ?",
            (status, detail, time.time(), job_id),
        )

    def requeue(self, job_id: int, detail: str | None = None) -> None:
        self.db.execute(
            "UPDATE jobs SET status = 'queued', detail = ?, claimer = NULL WHERE id = ?",
            (detail, job_id),
        )

    def recover(self) -> int:
        """Jobs left 'running' by a process that died go back to the queue (in their
        place: the oldest first); those a live process is working on stay."""
        running = self.db.execute(
            "SELECT id, claimer FROM jobs WHERE status = 'running'"
        ).fetchall()
        recovered = 0
        for job_id, claimer in running:
            if self._alive(claimer):
                continue
            cur = self.db.execute(
                "UPDATE jobs SET status = 'queued', claimer = NULL "
                "WHERE id = ? AND status = 'running' AND claimer IS ?",
                (job_id, claimer),
            )
            recovered += cur.rowcount
        return recovered

    def pending(self) -> int:
        return int(
            self.db.execute("SELECT COUNT(*) FROM jobs WHERE status = 'queued'").fetchone()[0]
        )

    def log(self, kind: str, detail: str | None = None) -> None:
        self.db.execute(
            "INSERT INTO events (kind, detail, at) VALUES (?, ?, ?)", (kind, detail, time.time())
        )

    def last_event(self, *kinds: str) -> tuple[str, str | None, float] | None:
        marks = ",".join("?" * len(kinds))
        row = self.db.execute(
            f"SELECT kind, detail, at FROM events WHERE kind IN ({marks}) ORDER BY id DESC LIMIT 1",
            kinds,
        ).fetchone()
        return None if row is None else (row[0], row[1], row[2])

    def recent_jobs(self, limit: int = 20) -> list[Job]:
        rows = self.db.execute(f"SELECT {JOB_COLUMNS} FROM jobs ORDER BY id DESC LIMIT ?", (limit,))
        return [Job(*r) for r in rows]

    # ---------------------------------------------------------------- daily budget

    def budget_used(self, day: str) -> int:
        row = self.db.execute("SELECT calls FROM budget WHERE day = ?", (day,)).fetchone()
        return int(row[0]) if row else 0

    def budget_take(self, day: str, cap: int) -> bool:
        """Count one call against ``day`` unless ``cap`` is reached (atomically)."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            if self.budget_used(day) >= cap:
                self.db.execute("COMMIT")
                return False
            self.db.execute(
                "INSERT INTO budget (day, calls) VALUES (?, 1) "
                "ON CONFLICT (day) DO UPDATE SET calls = calls + 1",
                (day,),
            )
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return True

    # ---------------------------------------------------------------- injected memories

    def injected(self, session_id: str) -> set[str]:
        rows = self.db.execute(
            "SELECT memory_id FROM injected WHERE session_id = ?", (session_id,)
        ).fetchall()
        return {r[0] for r in rows}

    def record_injected(self, session_id: str, memory_ids: list[str]) -> set[str]:
        now = time.time()
        claimed: set[str] = set()
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self.db.execute("DELETE FROM injected WHERE at < ?", (now - INJECTED_TTL_S,))
            for mid in memory_ids:
                cur = self.db.execute(
                    "INSERT OR IGNORE INTO injected (session_id, memory_id, at) VALUES (?, ?, ?)",
                    (session_id, mid, now),
                )
                if cur.rowcount == 1:
                    claimed.add(mid)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return claimed

    def forget_injected(self, session_id: str, keep: frozenset[str] = frozenset()) -> int:
        kept = sorted(keep)
        marks = ", ".join("?" for _ in kept)
        unless = f" AND memory_id NOT IN ({marks})" if kept else ""
        cur = self.db.execute(
            f"DELETE FROM injected WHERE session_id = ?{unless}", (session_id, *kept)
        )
        return cur.rowcount

    def take_injected(self, session_id: str, memory_id: str) -> bool:
        cur = self.db.execute(
            "DELETE FROM injected WHERE session_id = ? AND memory_id = ?", (session_id, memory_id)
        )
        return cur.rowcount == 1
