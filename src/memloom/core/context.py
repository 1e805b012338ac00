"""What every core service shares: the store, the embedder, settings, one lock, and
the detector and LLM, both resolved on first use.

Services receive this instead of the facade, so ``memloom.core`` never depends on
``memloom.engine`` and each service says exactly what it uses.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from memloom.config import Settings
from memloom.embed import Embedder
from memloom.errors import NotFoundError
from memloom.store.base import MemoryRow, Store


@dataclass
class CoreContext:
    """The dependencies of the core services (one per facade, shared by its services)."""

    settings: Settings
    store: Store
    embedder: Embedder
    #: Serialises this process's reads-then-writes on the store (an RLock: services nest).
    lock: threading.RLock = field(default_factory=threading.RLock)
    #: Resolved lazily: reading the environment or compiling rules costs time.
    resolved_llm: Any = None
    resolved_detector: Any = None

    @property
    def detector(self) -> Any:
        """Secret/PII rules (with config.toml's ``[redact]`` extras), compiled once."""
        if self.resolved_detector is None:
            from memloom.config import detector_for

            self.resolved_detector = detector_for(self.settings)
        return self.resolved_detector

    @property
    def llm(self) -> Any:
        """The configured LLM provider (``MEMLOOM_LLM``…), resolved on first use."""
        if self.resolved_llm is None:
            from memloom.config import cli_daily_cap
            from memloom.llm import DailyMeter, resolve_llm

            llm = resolve_llm(config=self.settings.raw)
            if getattr(llm, "metered", False):  # an agent's CLI: its own daily cap
                llm.meter = DailyMeter(self.settings.home, cli_daily_cap(self.settings.raw))
            self.resolved_llm = llm
        return self.resolved_llm

    def requested_llm(self) -> Any:
        """The LLM only if one is set or the environment names one (never probes for
        ``claude``): ``save`` consults the belief pipeline only then."""
        from memloom.config import llm_requested

        if self.resolved_llm is not None:
            return self.resolved_llm
        return self.llm if llm_requested(config=self.settings.raw) else None

    def classify_sensitivity(self, text: str) -> int:
        level, _ = self.detector.classify(text)
        return int(level)

    def sensitivity(self, text: str, explicit: int | None, auto: bool) -> int:
        """The caller's level, raised to the detector's when ``auto`` is set."""
        level = explicit or 0
        if auto:
            level = max(level, self.classify_sensitivity(text))
        return level

    def require(self, memory_id: str) -> MemoryRow:
        row = self.store.get(memory_id)
        if row is None:
            raise NotFoundError(f"memory {memory_id} not found")
        return row
