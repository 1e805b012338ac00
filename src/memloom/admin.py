"""Store administration that needs no engine: API tokens, migration, online backups.

A library-level entry beside :func:`memloom.open` for the few jobs that work on
a store without an embedder (the ``tokens``, ``migrate`` and ``backup``
commands). Shells call these functions and never open a store themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from memloom.errors import StoreError

if TYPE_CHECKING:
    from memloom.config import Settings
    from memloom.store.base import TeamStore, TokenRow
    from memloom.store.migrate import MigrationReport

__all__ = [
    "create_private_file",
    "create_token",
    "list_tokens",
    "migrate_to_postgres",
    "online_backup",
    "revoke_token",
]


@contextmanager
def _team_store(settings: Settings) -> Iterator[TeamStore]:
    """The configured store, which must be PostgreSQL (tokens live in it), as the admin."""
    from memloom.store import open_store
    from memloom.store.base import TeamStore

    if not settings.is_postgres:
        raise StoreError(
            "API tokens need a shared PostgreSQL store: set MEMLOOM_DATABASE_URL=postgresql://…"
        )
    store = open_store(replace(settings, owner=None))
    try:
        assert isinstance(store, TeamStore)
        yield store
    finally:
        store.close()


def create_token(
    settings: Settings, owner: str, shared: Sequence[str] = (), name: str | None = None
) -> tuple[TokenRow, str]:
    """A new API token for ``owner`` and its secret (shown once; only a hash is kept)."""
    with _team_store(settings) as store:
        return store.token_create(owner, shared, name)


def list_tokens(settings: Settings) -> list[TokenRow]:
    """Every API token (never the secrets)."""
    with _team_store(settings) as store:
        return store.token_list()


def revoke_token(settings: Settings, token_id: str) -> TokenRow:
    """Revoke a token: requests carrying it are refused from then on."""
    with _team_store(settings) as store:
        return store.token_revoke(token_id)


def migrate_to_postgres(
    sqlite_path: Path,
    url: str,
    owner: str,
    progress: Callable[[int, int], None] | None = None,
) -> MigrationReport:
    """Copy a SQLite store into PostgreSQL; ``progress(done, total)`` as memories copy."""
    from memloom.store.base import Principal
    from memloom.store.migrate import migrate
    from memloom.store.postgres import PostgresStore
    from memloom.store.sqlite import SQLiteStore

    source = SQLiteStore(sqlite_path)
    try:
        total = source.count()
        if progress is not None:
            progress(0, total)
        target = PostgresStore(url, principal=Principal(owner))
        try:
            return migrate(source, target, progress)
        finally:
            target.close()
    finally:
        source.close()


def online_backup(settings: Settings, dest: Path) -> int:
    """A consistent copy of the live SQLite store at ``dest``; the memories copied."""
    from memloom.backup import online_copy
    from memloom.store import open_store

    store = open_store(settings)
    try:
        return online_copy(store, dest)
    finally:
        store.close()


def create_private_file(path: Path) -> None:
    """Create ``path`` readable by its owner only (exports hold memories, maybe PII)."""
    from memloom.store.sqlite import create_private_file as create

    create(path)
