"""The import ledger per agent: what ``memloom status`` reports for each coding agent."""

from __future__ import annotations

import sqlite3

from memloom.store.base import LedgerRow
from memloom.store.sqlite import SQLiteStore
from memloom.store.sqlite_migrations import MIGRATIONS


def row(path: str, agent: str | None, **extra) -> LedgerRow:
    base = dict(
        path=path,
        session_id=path.rsplit("/", 1)[-1],
        project="/srv/acme",
        size=100,
        mtime=1.0,
        offset=100,
        lines=4,
        hash="h",
        status="complete",
        memories=2,
        updated_at=1000.0,
        agent=agent,
    )
    return LedgerRow(**{**base, **extra})


def test_ledger_stats_count_each_agent_and_name_its_newest_failure(engine):
    store = engine.backend
    with store.transaction():
        store.ledger_put(row("/c/a.jsonl", "claude-code", updated_at=1000.0))
        store.ledger_put(row("/c/b.jsonl", "claude-code", memories=3, updated_at=1500.0))
        store.ledger_put(
            row("codex:1", "codex", status="partial", last_error="LLM: 503", updated_at=1200.0)
        )
        store.ledger_put(row("codex:2", "codex", last_error="LLM: timeout", updated_at=1300.0))
        store.ledger_put(row("codex:3", "codex", memories=1, updated_at=1400.0))
    stats = engine.ledger_stats()
    assert (stats["sessions"], stats["memories"], stats["partial"]) == (5, 10, 1)
    agents = stats["agents"]
    assert set(agents) == {"claude-code", "codex"}
    assert agents["claude-code"] == {
        "sessions": 2,
        "memories": 5,
        "last_import": 1500.0,
        "last_error": None,
    }
    assert agents["codex"]["sessions"] == 3 and agents["codex"]["memories"] == 5
    assert agents["codex"]["last_import"] == 1400.0
    # The newest row that still carries an error, not the newest row.
    newest = {"path": "codex:2", "error": "LLM: timeout", "at": 1300.0}
    assert agents["codex"]["last_error"] == newest
    # A healed re-run clears it.
    with store.transaction():
        store.ledger_put(row("codex:2", "codex", updated_at=1600.0))
    assert engine.ledger_stats()["agents"]["codex"]["last_error"]["path"] == "codex:1"


def test_ledger_rows_round_trip_their_agent(engine):
    store = engine.backend
    with store.transaction():
        store.ledger_put(row("gemini:s1", "gemini-cli"))
        store.ledger_put(row("/legacy.jsonl", None))
    got = store.ledger_get_many(["gemini:s1", "/legacy.jsonl"])
    assert got["gemini:s1"].agent == "gemini-cli"
    assert got["/legacy.jsonl"].agent is None
    assert engine.ledger_stats()["agents"]["unknown"]["sessions"] == 1


def test_rows_written_before_agents_were_recorded_are_named_by_their_key(tmp_path):
    """Migration 7 names the agent of every older row from the shape of its key."""
    path = tmp_path / "memloom.db"
    old = sqlite3.connect(path, isolation_level=None)
    script = " ".join(MIGRATIONS[:6])
    old.executescript(f"BEGIN; {script} PRAGMA user_version = 6; COMMIT;")
    keys = {
        "/home/dev/.claude/projects/-acme/1.jsonl": "claude-code",
        "codex:019a": "codex",
        "gemini:5e2b": "gemini-cli",
        "copilot:77aa": "copilot-cli",
        "copilot-legacy:77ab": "copilot-cli",
        "/srv/acme/.aider.chat.history.md": "aider",
    }
    for key in keys:
        old.execute(
            "INSERT INTO ledger (path, size, mtime, offset, lines, hash, status, updated_at) "
            "VALUES (?, 1, 1, 1, 1, 'h', 'complete', 1)",
            (key,),
        )
    old.close()
    store = SQLiteStore(path)
    try:
        got = store.ledger_get_many(list(keys))
        assert {k: r.agent for k, r in got.items()} == keys
    finally:
        store.close()
