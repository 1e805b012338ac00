"""Storage: the :class:`~memloom.store.base.Store` protocol and its two backends.

``open_store(settings)`` is the one way to get a store. This module imports
nothing heavy at import time (the hook fast path may import ``memloom.store``
submodules), so the backends load only when a store is opened.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's, without loading typing (~3 ms): the hooks load this module
if TYPE_CHECKING:
    from memloom.config import Settings
    from memloom.store.base import Store

__all__ = ["open_store"]


def open_store(settings: Settings) -> Store:
    """The configured backend, acting for ``settings.owner`` when one is set."""
    from memloom.errors import StoreError
    from memloom.store.base import Principal

    principal = Principal(settings.owner, frozenset(settings.shared)) if settings.owner else None
    if settings.is_postgres:
        from memloom.store.postgres import PostgresStore

        return PostgresStore(settings.database_url, principal=principal)
    if principal is not None:
        raise StoreError(
            "owners (MEMLOOM_OWNER) need a shared PostgreSQL store; "
            "the SQLite store belongs to one person"
        )
    from memloom.store.sqlite import SQLiteStore

    assert settings.sqlite_path is not None
    return SQLiteStore(settings.sqlite_path)
