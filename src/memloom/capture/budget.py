"""The daily cap on unattended LLM calls, counted per local day in capture.db."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

from memloom.capture.queue import CaptureQueue

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


@dataclass
class Budget:
    queue: CaptureQueue
    cap: int

    def __post_init__(self) -> None:
        self.queue.db.execute(
            "CREATE TABLE IF NOT EXISTS budget (day TEXT PRIMARY KEY, calls INTEGER NOT NULL)"
        )

    def used(self, day: str | None = None) -> int:
        row = self.queue.db.execute(
            "SELECT calls FROM budget WHERE day = ?", (day or today(),)
        ).fetchone()
        return int(row[0]) if row else 0

    @property
    def paused(self) -> bool:
        return self.used() >= self.cap

    def take(self) -> bool:
        """Count one unattended extraction call; False when today's cap is spent."""
        day = today()
        self.queue.db.execute("BEGIN IMMEDIATE")
        try:
            used = self.used(day)
            if used >= self.cap:
                self.queue.db.execute("COMMIT")
                return False
            self.queue.db.execute(
                "INSERT INTO budget (day, calls) VALUES (?, 1) "
                "ON CONFLICT (day) DO UPDATE SET calls = calls + 1",
                (day,),
            )
            self.queue.db.execute("COMMIT")
        except BaseException:
            self.queue.db.execute("ROLLBACK")
            raise
        return True
