"""What the public API cannot do, written straight into either backend's database."""

from __future__ import annotations

from typing import Any


def set_created_at(backend: Any, memory_id: str, when: float) -> None:
    """Move a memory's creation time (not updatable through the Store protocol)."""
    if hasattr(backend, "db"):  # SQLite
        backend.db.execute("UPDATE memories SET created_at = ? WHERE id = ?", (when, memory_id))
        return
    with backend._conn() as conn:  # PostgreSQL
        conn.execute("UPDATE memories SET created_at = %s WHERE id = %s", (when, memory_id))
