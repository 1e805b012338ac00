"""Drains the capture queue: scope check, daily budget, then the import pipeline."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memloom.capture.budget import Budget, daily_cap
from memloom.capture.queues import open_queue
from memloom.capture.scope import load_scope

log = logging.getLogger("memloom.capture")

BUDGET_MESSAGE = "daily budget of unattended calls is spent"


class CaptureWorker:
    def __init__(
        self,
        engine: Any,
        home: Path,
        *,
        should_stop: Callable[[], bool] = lambda: False,
        sweep_days: float = 14,
        sweep_sessions: int = 50,
    ) -> None:
        self.engine = engine
        self.home = home
        self.should_stop = should_stop
        self.sweep_days = sweep_days
        self.sweep_sessions = sweep_sessions
        self.last_run: float | None = None
        self.last_error: str | None = None
        self.paused = False

    def state(self) -> dict[str, Any]:
        return {"last_run": self.last_run, "last_error": self.last_error, "paused": self.paused}

    def _budget(self, queue: Any) -> Budget:
        return Budget(queue, daily_cap(self.engine.settings.raw))

    def _allow(self, budget: Budget) -> Callable[[], bool]:
        def allow() -> bool:
            if self.should_stop():
                return False
            return budget.take()

        return allow

    def drain(self, limit: int | None = None) -> int:
        """Process queued jobs; returns how many finished (done or skipped)."""
        queue = open_queue(self.home, self.engine.settings)
        try:
            queue.recover()
            budget = self._budget(queue)
            done = 0
            while not self.should_stop() and (limit is None or done < limit):
                if budget.paused:
                    self.paused = True
                    queue.log("budget_paused", f"{budget.used()} of {budget.cap} calls used")
                    break
                self.paused = False
                job = queue.claim()
                if job is None:
                    break
                self._run_job(queue, budget, job)
                done += 1
            return done
        finally:
            queue.close()

    def _run_job(self, queue: Any, budget: Budget, job: Any) -> None:
        from memloom.agents import DEFAULT_AGENT, agent_for_file, get_agent, session_container

        self.last_run = time.time()
        scope = load_scope(self.home)
        path = Path(job.transcript_path)
        exists = Path(session_container(path)).exists()  # a session of a database: its file
        if not scope.enabled:
            queue.finish(job.id, "skipped", "capture is not enabled (memloom connect)")
            return
        # The job names a file; whose it is, its content says (hooks of every agent
        # and the sweep share one queue).
        agent = (agent_for_file(path) if exists else None) or DEFAULT_AGENT
        project = job.cwd or get_agent(agent).project_of(path)
        if not scope.covers(project):
            queue.finish(job.id, "skipped", f"out of scope: {project or 'unknown project'}")
            queue.log("worker_skipped", f"{path} ({project})")
            return
        if not exists:
            queue.finish(job.id, "failed", "transcript no longer exists")
            return
        try:
            report = self.engine.import_sessions(
                [path], allow_call=self._allow(budget), agent=agent
            )
        except Exception as exc:
            self.last_error = f"{path.name}: {exc}"
            queue.finish(job.id, "failed", str(exc))
            queue.log("worker_error", self.last_error)
            return
        if report.stopped:
            if self.should_stop():
                queue.requeue(job.id, "interrupted: the daemon is stopping")
                return
            if report.stopped == BUDGET_MESSAGE or budget.paused:
                self.paused = True
                queue.requeue(job.id, "paused: daily budget spent")
                queue.log("budget_paused", str(path))
                return
            self.last_error = f"{path.name}: {report.stopped}"
            queue.finish(job.id, "failed", report.stopped)
            queue.log("worker_error", self.last_error)
            return
        failed = [s for s in report.per_session if s.error]
        if failed:
            self.last_error = f"{path.name}: {failed[0].error}"
            queue.finish(job.id, "failed", failed[0].error)
            queue.log("worker_error", self.last_error)
            return
        queue.finish(job.id, "done", f"saved {report.saved}, versioned {report.versioned}")
        queue.log("worker_run", f"{path} saved {report.saved}")
        # The session may have written to the agent's own memory: follow it now.
        self.follow_native(queue, [agent], scope)

    def follow_native(self, queue: Any, agents: list[str] | None, scope: Any) -> None:
        """Read the agents' own memory files (``[native]`` in config.toml; no LLM call,
        no budget), for the projects capture covers; a failure is logged, not raised."""
        try:
            report = self.engine.import_native(agents, covers=scope.covers, configured=True)
        except Exception as exc:
            self.last_error = f"native memory: {exc}"
            queue.log("native_error", self.last_error)
            log.warning("reading the agents' own memory failed: %s", exc)
            return
        if report.changed or report.removed:
            queue.log(
                "native_run",
                f"{report.changed} files read, {report.removed} gone: {report.added} added, "
                f"{report.versioned} versioned, {report.expired} expired",
            )

    def sweep(self) -> int:
        """Queue in-scope sessions the hooks missed, of every agent found (the ledger
        makes imported ones free). The only capture for agents without hooks (Aider)
        or whose end hook is not awaited (Gemini SessionEnd)."""
        from memloom.agents import found_agents, get_agent
        from memloom.agents.base import DiscoverOptions
        from memloom.sessions.runs import share_project_roots

        scope = load_scope(self.home)
        if not scope.enabled:
            return 0
        # Aider's roots: the folders `memloom connect aider` named, and those the ledger
        # vouches for -- never a memory's project label (any API caller sets those).
        share_project_roots(self.engine, named=scope.roots)
        pending = []
        for name in found_agents():
            agent = get_agent(name)
            try:
                found = agent.discover(
                    DiscoverOptions(days=self.sweep_days, max_sessions=self.sweep_sessions)
                )
            except OSError as exc:  # one agent's folder unreadable: the others go on
                log.warning("sweep of %s failed: %s", name, exc)
                continue
            rows = self.engine.ledger_rows([agent.ledger_identity(f) for f in found.files])
            for f in found.files:
                row = rows.get(agent.ledger_identity(f))
                if row is None or row.status != "complete" or row.size != f.size:
                    pending.append(str(f.path))
        queue = open_queue(self.home, self.engine.settings)
        queued = 0
        try:
            # A job whose worker was killed goes back first: then the session is not
            # queued a second time beside it (enqueue skips a session already waiting).
            queue.recover()
            for path in pending:
                queue.enqueue(path)
                queued += 1
            if queued:
                queue.log("sweep", f"queued {queued} sessions")
            self.follow_native(queue, None, scope)
        finally:
            queue.close()
        return queued
