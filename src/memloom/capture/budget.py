"""The daily cap on unattended LLM calls, counted per local day."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_DAILY_CAP = 200


def today() -> str:
    return time.strftime("%Y-%m-%d", time.localtime())


def daily_cap(settings_raw: dict[str, Any] | None = None) -> int:
    raw = os.environ.get("MEMLOOM_DAILY_CAP")
    if raw is None and settings_raw:
        raw = settings_raw.get("capture", {}).get("daily_cap")
    if raw is None:
        return DEFAULT_DAILY_CAP
    try:
        value = int(raw)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"the daily cap must be an integer, got {raw!r}") from exc
    if value < 0:
        raise ValueError("the daily cap must not be negative")
    return value


@contextmanager
def server_budget(home: Path, settings: Any) -> Iterator[Budget]:
    """The daily budget an LLM run the server starts (an HTTP import, ``conflicts
    auto``) draws on: the capture worker's counter and cap, on the queue's database,
    whoever asked for the run. The CLI's own runs at the terminal are not capped."""
    from memloom.capture.queues import open_queue

    queue = open_queue(home, settings)
    try:
        yield Budget(queue, daily_cap(settings.raw))
    finally:
        queue.close()


@dataclass
class Budget:
    """Today's count of unattended calls, kept by the queue's database (so every
    process, and on PostgreSQL every server, draws on the same cap)."""

    queue: Any
    cap: int

    def used(self, day: str | None = None) -> int:
        return int(self.queue.budget_used(day or today()))

    @property
    def paused(self) -> bool:
        return self.used() >= self.cap

    def take(self) -> bool:
        """Count one unattended extraction call; False when today's cap is spent."""
        return bool(self.queue.budget_take(today(), self.cap))

    def note_spent(self, run: str) -> None:
        """Log that ``run`` stopped at the cap (``memloom status`` shows the last one)."""
        self.queue.log("budget_paused", f"{run}: {self.used()} of {self.cap} calls used")


#: How often the daemon sweeps every agent's session folders, in minutes.
DEFAULT_SWEEP_MINUTES = 30


def sweep_interval(settings_raw: dict[str, Any] | None = None) -> float:
    """Seconds between the daemon's sweeps: ``[capture] sweep_minutes`` (default 30)."""
    raw = (settings_raw or {}).get("capture", {}).get("sweep_minutes", DEFAULT_SWEEP_MINUTES)
    try:
        minutes = float(raw)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"[capture] sweep_minutes must be a number, got {raw!r}") from exc
    if not minutes > 0:
        raise ValueError("[capture] sweep_minutes must be positive")
    return minutes * 60
