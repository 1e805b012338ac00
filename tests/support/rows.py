"""Store rows made directly, past the engine (no dedup, no embedding): fills and fixtures."""

from __future__ import annotations

import time
from typing import Any

from memloom.store.base import MemoryRow


def fact_row(
    mid: str, text: str, vec: Any, *, content_hash: str, now: float | None = None, **fields: Any
) -> MemoryRow:
    """An active fact at version 1, its own root, made ``now`` (default: the time now);
    ``fields`` set any other column (``status``, ``tags``, ``project``, ``session_id`` …)."""
    now = time.time() if now is None else now
    columns: dict[str, Any] = {
        "status": "active",
        "source": None,
        "tags": [],
        "metadata": {},
        "project": None,
        "sensitivity": 0,
        "session_id": None,
        **fields,
    }
    return MemoryRow(
        id=mid,
        root_id=mid,
        version=1,
        type="fact",
        text=text,
        original_text=None,
        content_hash=content_hash,
        embedding=vec,
        created_at=now,
        asserted_at=now,
        last_referenced=now,
        **columns,
    )
