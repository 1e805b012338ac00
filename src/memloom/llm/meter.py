"""Today's count of distillation calls through an agent's CLI, against its own cap.

An agent's CLI answers on the user's plan, and a plan is not an API budget: its
limits are shared with the user's own work in that agent. So calls through a CLI
have a daily cap of their own, lower than the unattended budget
(:func:`memloom.config.cli_daily_cap`, default 25), counted for every run (an
import at the terminal too) in ``<home>/llm-cli-calls.json``, under an exclusive
lock so that the capture worker, the server and a terminal import draw on one count.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["COUNTER_FILE", "DailyMeter", "today"]

COUNTER_FILE = "llm-cli-calls.json"
#: Days of counts kept in the file (status shows today's; the rest is history).
KEEP_DAYS = 8


def today() -> str:
    return time.strftime("%Y-%m-%d", time.localtime())


class DailyMeter:
    """Calls per local day in one small JSON file: ``{"2026-12-07": {"codex-cli": 3}}``."""

    def __init__(self, home: str | os.PathLike[str], cap: int) -> None:
        self.path = Path(home) / COUNTER_FILE
        self.cap = cap

    @contextlib.contextmanager
    def _locked(self) -> Iterator[dict[str, Any]]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                import fcntl

                fcntl.flock(fd, fcntl.LOCK_EX)
            except ImportError:  # no fcntl (Windows): one process at a time is assumed
                pass
            raw = b""
            while chunk := os.read(fd, 65536):
                raw += chunk
            try:
                doc = json.loads(raw or b"{}")
            except ValueError:  # a damaged counter starts again (never blocks a run)
                doc = {}
            doc = doc if isinstance(doc, dict) else {}
            before = json.dumps(doc, sort_keys=True)
            yield doc
            if json.dumps(doc, sort_keys=True) != before:
                kept = dict(sorted(doc.items())[-KEEP_DAYS:])
                data = json.dumps(kept, sort_keys=True).encode()
                os.lseek(fd, 0, os.SEEK_SET)
                os.ftruncate(fd, 0)
                os.write(fd, data)
        finally:
            os.close(fd)

    def used(self, day: str | None = None) -> int:
        """Calls counted on ``day`` (default today), through every agent's CLI."""
        if not self.path.exists():
            return 0
        with self._locked() as doc:
            counts = doc.get(day or today(), {})
            return sum(v for v in counts.values() if isinstance(v, int))

    def take(self, provider: str) -> bool:
        """Count one call through ``provider``; False (nothing counted) once today's cap
        is reached."""
        with self._locked() as doc:
            counts = doc.setdefault(today(), {})
            if not isinstance(counts, dict):
                counts = doc[today()] = {}
            if sum(v for v in counts.values() if isinstance(v, int)) >= self.cap:
                return False
            counts[provider] = int(counts.get(provider, 0)) + 1
            return True
