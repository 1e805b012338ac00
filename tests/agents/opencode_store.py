"""An OpenCode store for the tests, written the way OpenCode 1.18.33 writes it (its
schema's columns, WAL, a message row before its parts)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from memloom.agents import get_agent

SCHEMA = """
CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, parent_id text,
  slug text NOT NULL, directory text NOT NULL, title text NOT NULL, version text NOT NULL,
  time_created integer NOT NULL, time_updated integer NOT NULL);
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL,
  time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL,
  time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
"""
SID = "ses_0001"
T0 = 1_796_391_807_000


class Store:
    """A store written the way OpenCode writes it (WAL, rows then parts)."""

    def __init__(self, path: Path, wal: bool = True) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.con = sqlite3.connect(path, isolation_level=None)
        if wal:
            self.con.execute("PRAGMA journal_mode=WAL")
        self.con.executescript(SCHEMA)
        self.n = 0

    def session(self, sid: str = SID, directory: str = "/home/dev/shop", parent: str | None = None):
        self.con.execute(
            "INSERT INTO session VALUES (?, 'global', ?, 'slug', ?, 'title', '1.18.33', ?, ?)",
            (sid, parent, directory, T0, T0),
        )

    def message(self, role: str, *parts: dict, sid: str = SID, done: bool = True) -> str:
        self.n += 1
        mid = f"msg_{self.n:04d}"
        data: dict = {"role": role, "time": {"created": T0 + self.n}}
        if role == "assistant" and done:
            data["time"]["completed"] = T0 + self.n + 1
        self.con.execute(
            "INSERT INTO message VALUES (?, ?, ?, ?, ?)",
            (mid, sid, T0 + self.n, T0 + self.n, json.dumps(data)),
        )
        for i, part in enumerate(parts):
            self.part(mid, f"prt_{self.n:04d}_{i}", part, sid=sid)
        return mid

    def part(self, mid: str, pid: str, data: dict, sid: str = SID) -> None:
        self.con.execute(
            "INSERT OR REPLACE INTO part VALUES (?, ?, ?, ?, ?, ?)",
            (pid, mid, sid, T0 + self.n, T0 + self.n, json.dumps(data)),
        )

    def finish(self, mid: str) -> None:
        row = self.con.execute("SELECT data FROM message WHERE id = ?", (mid,)).fetchone()
        data = json.loads(row[0])
        data["time"]["completed"] = T0 + 99_999
        self.con.execute("UPDATE message SET data = ? WHERE id = ?", (json.dumps(data), mid))


def text(t: str, **extra) -> dict:
    return {"type": "text", "text": t, **extra}


def new_store(tmp_path: Path) -> Store:
    """The store of a test (``<tmp>/data/opencode/opencode.db``) with session :data:`SID`."""
    s = Store(tmp_path / "data" / "opencode" / "opencode.db")
    s.session()
    return s


def read(path: Path, **wm):
    return get_agent("opencode").read(path, **wm)
