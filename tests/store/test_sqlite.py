"""The SQLite store: a real file, its permissions, migrations and cross-process freshness."""

from __future__ import annotations

import json
import sqlite3
import stat
import time

import numpy as np
import pytest

from memloom.hashing import content_hash, new_id
from memloom.store.base import DimensionError, MemoryRow, SearchFilter, StoreError
from memloom.store.sqlite import SQLiteStore
from memloom.store.sqlite_migrations import MIGRATIONS


def row(text: str, vec: list[float] | None = None, **kw) -> MemoryRow:
    now = kw.pop("now", time.time())
    mid = kw.pop("id", new_id())
    return MemoryRow(
        id=mid,
        root_id=kw.pop("root_id", mid),
        version=kw.pop("version", 1),
        status=kw.pop("status", "active"),
        type=kw.pop("type", "fact"),
        text=text,
        original_text=None,
        content_hash=content_hash(text),
        embedding=None if vec is None else np.asarray(vec, dtype=np.float32),
        source=kw.pop("source", None),
        tags=kw.pop("tags", []),
        metadata=kw.pop("metadata", {}),
        project=kw.pop("project", None),
        sensitivity=kw.pop("sensitivity", 0),
        session_id=None,
        created_at=now,
        asserted_at=now,
        last_referenced=now,
        **kw,
    )


@pytest.fixture
def db_path(tmp_path):
    return tmp_path / "home" / "memloom.db"


def test_file_is_private_and_in_wal_mode(db_path):
    store = SQLiteStore(db_path)
    try:
        assert stat.S_IMODE(db_path.stat().st_mode) == 0o600
        assert stat.S_IMODE(db_path.parent.stat().st_mode) == 0o700
        assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store.schema_version == len(MIGRATIONS)
    finally:
        store.close()


def test_older_database_is_upgraded_in_place(db_path):
    db_path.parent.mkdir(parents=True)
    old = sqlite3.connect(db_path, isolation_level=None)
    old.executescript(f"BEGIN; {MIGRATIONS[0]} PRAGMA user_version = 1; COMMIT;")
    old.execute(
        "INSERT INTO memories (id, root_id, text, content_hash, created_at, asserted_at, "
        "last_referenced) "
        "VALUES ('a1', 'a1', 'the staging database runs on port 5433', 'h', 1, 1, 1)"
    )
    old.close()

    store = SQLiteStore(db_path)
    try:
        assert store.schema_version == len(MIGRATIONS)
        # The keyword index built by migration 2 covers the row written before it existed.
        hits = store.keyword_search(["staging"], 5, SearchFilter())
        assert [h[0] for h in hits] == ["a1"]
        assert store.get("a1").text == "the staging database runs on port 5433"
        assert store.get("a1").anchors == []  # written before anchors (migration 10)
    finally:
        store.close()


def test_database_from_a_newer_version_is_refused(db_path):
    db_path.parent.mkdir(parents=True)
    conn = sqlite3.connect(db_path)
    conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    conn.close()
    with pytest.raises(StoreError, match="newer memloom"):
        SQLiteStore(db_path)


def test_writes_outside_a_transaction_are_refused(db_path):
    store = SQLiteStore(db_path)
    try:
        with pytest.raises(StoreError, match="transaction"):
            store.insert(row("x", [1.0, 0.0]))
    finally:
        store.close()


def test_dimension_is_fixed_by_the_first_vector(db_path):
    store = SQLiteStore(db_path)
    try:
        with store.transaction():
            store.insert(row("first", [1.0, 0.0, 0.0]))
        assert store.dimension == 3
        with pytest.raises(DimensionError, match="3"), store.transaction():
            store.insert(row("second", [1.0, 0.0]))
        assert store.count() == 1  # the failed transaction left nothing behind
    finally:
        store.close()


def test_rollback_removes_rows_from_the_vector_index(db_path):
    store = SQLiteStore(db_path)
    try:
        with store.transaction():
            store.insert(row("kept", [1.0, 0.0]))
        with pytest.raises(RuntimeError), store.transaction():
            store.insert(row("rolled back", [0.0, 1.0]))
            raise RuntimeError("boom")
        hits = store.vector_search(np.array([0.0, 1.0], dtype=np.float32), 5, SearchFilter())
        assert [store.get(h[0]).text for h in hits] == ["kept"]
    finally:
        store.close()


def test_second_connection_sees_inserts_expiries_and_deletes(db_path):
    """Two processes (daemon + MCP server) share one file; each index must catch up."""
    a = SQLiteStore(db_path)
    b = SQLiteStore(db_path)
    try:
        q = np.array([1.0, 0.0], dtype=np.float32)
        r1, r2 = row("one", [1.0, 0.0]), row("two", [0.9, 0.1])
        with a.transaction():
            a.insert(r1)
            a.insert(r2)
        assert {h[0] for h in b.vector_search(q, 5, SearchFilter())} == {r1.id, r2.id}
        with a.transaction():
            a.expire_ids([r1.id], time.time())
        assert [h[0] for h in b.vector_search(q, 5, SearchFilter())] == [r2.id]
        with a.transaction():
            a.delete([r2.id])
        assert b.vector_search(q, 5, SearchFilter()) == []
        expired = SearchFilter(statuses=frozenset({"active", "expired"}))
        assert [h[0] for h in b.vector_search(q, 5, expired)] == [r1.id]
    finally:
        a.close()
        b.close()


def test_filters_apply_to_vector_and_keyword_search(db_path):
    store = SQLiteStore(db_path)
    try:
        rows = [
            row("alpha deploy notes", [1.0, 0.0], project="api", tags=["ops"]),
            row("alpha deploy global", [0.99, 0.05]),
            row("alpha deploy web", [0.98, 0.1], project="web", sensitivity=3),
            row("alpha deploy steps", [0.97, 0.12], type="procedure", project="api"),
        ]
        with store.transaction():
            for r in rows:
                store.insert(r)
        q = np.array([1.0, 0.0], dtype=np.float32)

        def both(flt: SearchFilter) -> tuple[set[str], set[str]]:
            vec = {store.get(h[0]).text for h in store.vector_search(q, 10, flt)}
            kw = {store.get(h[0]).text for h in store.keyword_search(["alpha"], 10, flt)}
            return vec, kw

        scoped = SearchFilter(project="api", project_mode="scoped")
        expected = {"alpha deploy notes", "alpha deploy global", "alpha deploy steps"}
        assert both(scoped) == (expected, expected)
        exact = SearchFilter(project=None, project_mode="exact")
        assert both(exact) == ({"alpha deploy global"},) * 2
        procedures = SearchFilter(types=frozenset({"procedure"}))
        assert both(procedures) == ({"alpha deploy steps"},) * 2
        tagged = SearchFilter(tags=frozenset({"ops"}))
        assert both(tagged) == ({"alpha deploy notes"},) * 2
        safe = SearchFilter(max_sensitivity=2)
        assert "alpha deploy web" not in both(safe)[0] | both(safe)[1]
        unknown = SearchFilter(project="nope", project_mode="exact")
        assert both(unknown) == (set(), set())
    finally:
        store.close()


def test_keyset_pages_cover_every_row_once(db_path):
    store = SQLiteStore(db_path)
    try:
        with store.transaction():
            for i in range(23):
                store.insert(row(f"memory {i}", None, now=1000.0 + (i % 5)))
        seen: list[str] = []
        cursor = None
        while True:
            page = store.list(
                SearchFilter(),
                source=None,
                min_sensitivity=None,
                order="recent",
                limit=5,
                cursor=cursor,
            )
            assert page.total == 23
            seen.extend(r.id for r in page.rows)
            cursor = page.next_cursor
            if cursor is None:
                break
        assert len(seen) == 23 == len(set(seen))
    finally:
        store.close()


def test_a_data_folder_that_cannot_be_made_is_a_store_error(tmp_path):
    """Not an OSError out of the engine: the CLI says it in one line, the MCP server as
    a tool error (it opens the store at the first tool call)."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(StoreError, match=r"cannot create the store .*Not a directory"):
        SQLiteStore(blocker / "home" / "memloom.db")


def test_the_anchor_paths_of_rows_written_before_migration_11_are_indexed(db_path):
    """Migration 11 reads the paths of every row already anchored (items without a text
    path are skipped, not an error); its triggers follow inserts, anchor changes and
    deletions."""
    db_path.parent.mkdir(parents=True)
    old = sqlite3.connect(db_path, isolation_level=None)
    old.executescript(f"BEGIN; {' '.join(MIGRATIONS[:10])} PRAGMA user_version = 10; COMMIT;")
    for mid, anchors in (
        ("a1", [{"path": "svc/retry.py"}, {"path": "docs/a.md"}]),
        ("a2", ["svc/retry.py", {"path": 7}, {"symbols": []}, {"path": "svc/retry.py"}]),
        ("a3", []),
    ):
        old.execute(
            "INSERT INTO memories (id, root_id, text, content_hash, created_at, asserted_at, "
            "last_referenced, anchors) VALUES (?, ?, 't', 'h', 1, 1, 1, ?)",
            (mid, mid, json.dumps(anchors)),
        )
    old.close()

    store = SQLiteStore(db_path)
    try:
        assert store.schema_version == len(MIGRATIONS)

        def ids(path: str) -> list[str]:
            return sorted(r.id for r in store.anchored_to(path, SearchFilter(), 10))

        assert ids("svc/retry.py") == ["a1", "a2"]
        assert ids("docs/a.md") == ["a1"]
        with store.transaction():
            store.update("a1", anchors=[{"path": "svc/other.py"}])
            store.update("a3", anchors=[{"path": "svc/retry.py"}])
        assert ids("svc/retry.py") == ["a2", "a3"]
        assert ids("docs/a.md") == [] and ids("svc/other.py") == ["a1"]
        with store.transaction():
            store.delete(["a2"])
        assert ids("svc/retry.py") == ["a3"]
    finally:
        store.close()
