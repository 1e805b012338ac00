"""Both backends implement the whole Store protocol; only PostgreSQL the team one."""

from __future__ import annotations

from dataclasses import fields

from memloom.store.base import ConflictRow, MemoryRow, Store, TeamStore
from memloom.store.postgres import PostgresStore
from memloom.store.sql import CONFLICT_FIELDS, MEMORY_FIELDS
from memloom.store.sqlite import SQLiteStore


def _members(protocol: type) -> set[str]:
    return {
        name
        for klass in protocol.__mro__
        if klass not in (object,) and klass.__name__ != "Protocol" and klass.__name__ != "Generic"
        for name in vars(klass)
        if not name.startswith("_")
    } | set(getattr(protocol, "__annotations__", {}))


def test_both_stores_have_every_store_method():
    for backend in (SQLiteStore, PostgresStore):
        missing = {n for n in _members(Store) if not hasattr(backend, n)}
        assert not missing, (backend.__name__, missing)


def test_rows_are_read_in_the_order_of_their_fields():
    """The shared SQL builds memory and conflict rows from their columns by position."""
    assert tuple(f.name for f in fields(MemoryRow)) == MEMORY_FIELDS
    assert tuple(f.name for f in fields(ConflictRow)) == CONFLICT_FIELDS


def test_only_the_postgres_store_is_a_team_store(tmp_path, pg_url):
    lite = SQLiteStore(tmp_path / "m.db")
    pg = PostgresStore(pg_url)
    try:
        assert not isinstance(lite, TeamStore)
        assert isinstance(pg, TeamStore)
        assert isinstance(pg.scoped(None), TeamStore)
    finally:
        lite.close()
        pg.close()
