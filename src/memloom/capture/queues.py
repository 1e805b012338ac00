"""``open_queue``: the capture queue of the configured store.

``capture.db`` beside a SQLite store (:mod:`memloom.capture.queue`), the shared
tables of a PostgreSQL one (:mod:`memloom.capture.pg_queue`). Both are imported
on demand: the hooks open the SQLite queue and must not load psycopg.
"""

from __future__ import annotations

from pathlib import Path

from memloom.capture.jobs import JobQueue

TYPE_CHECKING = False  # typing's, without loading typing (~3 ms): the hooks load this module
if TYPE_CHECKING:
    from typing import Any

__all__ = ["open_queue"]


def open_queue(home: Path, settings: Any = None) -> JobQueue:
    """The capture queue of the configured store: ``capture.db`` beside a SQLite
    store, the shared tables of a PostgreSQL one (claimed with SKIP LOCKED)."""
    if settings is None:
        from memloom.location import locate

        settings = locate(home)
    if settings.is_postgres:
        from memloom.capture.pg_queue import PgCaptureQueue

        return PgCaptureQueue(settings.database_url, owner=settings.owner or "local")
    from memloom.capture.queue import CaptureQueue

    return CaptureQueue(home)
