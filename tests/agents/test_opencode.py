"""The OpenCode adapter on stores built with OpenCode 1.18.33's own schema: the reader,
the watermark when a session grows and when parts change in place, discovery, the
plugin payload, connect/disconnect, and bad input (locked, corrupt, unknown parts, huge)."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

import memloom
from memloom.agents import agent_for_file, get_agent
from memloom.agents.base import DiscoverOptions
from memloom.agents.opencode import hooks, store
from memloom.agents.opencode.payload import parse_hook_payload
from memloom.errors import NotificationRefused, SettingsError
from memloom.sessions.importer import Importer, ImportOptions
from tests.sessions.test_importer import model  # noqa: F401  (fixture)

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


@pytest.fixture
def db(tmp_path) -> Store:
    s = Store(tmp_path / "data" / "opencode" / "opencode.db")
    s.session()
    return s


def read(path: Path, **wm):
    return get_agent("opencode").read(path, **wm)


# ---------------------------------------------------------------- reader


def test_text_parts_are_units_and_tool_reasoning_step_parts_are_left_out(db):
    db.message("user", text("REMEMBER: staging listens on 5433"))
    db.message(
        "assistant",
        {"type": "step-start"},
        {"type": "reasoning", "text": "SECRET-THOUGHT"},
        {"type": "tool", "tool": "bash", "state": {"output": "Makefile"}},
        text("Noted."),
        {"type": "brand-new-kind", "text": "UNKNOWN"},
        {"type": "step-finish"},
    )
    db.message("user", text("file contents", synthetic=True), text("and the typed part"))
    db.message("assistant", text("ok"))
    res = read(store.session_path(db.path, SID))
    assert [(u.role, u.text) for u in res.units] == [
        ("user", "REMEMBER: staging listens on 5433"),
        ("assistant", "Noted."),
        ("user", "and the typed part"),
        ("assistant", "ok"),
    ]
    assert [u.uuid for u in res.units] == ["msg_0001", "msg_0002", "msg_0003", "msg_0004"]
    assert res.session_id == SID and res.cwd == "/home/dev/shop"
    for kind in ("reasoning", "tool", "step-start", "brand-new-kind", "synthetic"):
        assert res.dropped[f"part_{kind}"] == 1, res.dropped
    assert all("SECRET" not in u.text and "Makefile" not in u.text for u in res.units)


def test_memloom_s_own_block_is_taken_out(db):
    db.message("user", text("<memloom-context>\nrecalled 5433\n</memloom-context>\nwhat port?"))
    db.message("assistant", text("5433."))
    (user, _) = read(store.session_path(db.path, SID)).units
    assert user.text == "what port?"


# ---------------------------------------------------------------- watermark


def test_a_grown_session_resumes_after_what_was_read(db):
    path = store.session_path(db.path, SID)
    db.message("user", text("first prompt"))
    a = db.message("assistant", text("first answer"))
    one = read(path)
    assert [u.text for u in one.units] == ["first prompt", "first answer"]
    db.message("user", text("second prompt"))
    db.message("assistant", text("second answer"))
    two = read(path, start_offset=one.end_offset, start_line=one.lines_read)
    assert [u.text for u in two.units] == ["second prompt", "second answer"]
    assert two.units[0].start_line == one.lines_read + 1
    # What was read is a prefix of the new rendering: the ledger's hash still matches.
    assert store.render_session(path)[: one.end_offset] == get_agent("opencode").open(path).read(
        one.end_offset
    )
    assert a == "msg_0002"


def test_a_message_still_streaming_is_not_read_until_it_is_complete(db):
    path = store.session_path(db.path, SID)
    db.message("user", text("prompt"))
    mid = db.message("assistant", text("partial ans"), done=False)
    first = read(path)
    assert [u.text for u in first.units] == ["prompt"]  # the answer is still being written
    db.part(mid, "prt_0002_0", text("partial answer, now whole"))  # updated in place
    db.finish(mid)
    rest = read(path, start_offset=first.end_offset, start_line=first.lines_read)
    assert [u.text for u in rest.units] == ["partial answer, now whole"]


def test_a_user_message_without_parts_or_answer_waits(db):
    path = store.session_path(db.path, SID)
    db.message("user")  # the row is written before its parts
    assert read(path).units == []
    db.con.execute("DELETE FROM message")
    db.message("user", text("typed, no answer yet"))
    db.con.execute("UPDATE message SET time_created = ?", (int(time.time() * 1000),))
    store._cache.clear()
    assert read(path).units == []  # may still get its answer: not yet
    old = time.time() + store.USER_SETTLE_MS / 1000
    sid, directory, msgs = store.read_messages(path)
    assert b"typed, no answer yet" in store.render(sid, directory, msgs, now=old)


def test_import_distils_a_grown_session_once_and_a_rerun_makes_no_call(tmp_path, db, model):  # noqa: F811
    path = store.session_path(db.path, SID)
    db.message("user", text("REMEMBER: staging listens on port 5433"))
    db.message("assistant", text("Noted."))
    m = memloom.open(home=str(tmp_path / "home"))
    try:
        options = ImportOptions(paths=[path], agent="opencode")
        first = Importer(m, m.llm, options).run()
        assert (first.sessions, first.saved, first.calls["extraction"]) == (1, 1, 1)
        again = Importer(m, m.llm, options).run()
        assert again.calls["extraction"] == 0 and again.skipped["up_to_date"] == 1
        db.message("user", text("REMEMBER: invoices live in bucket ledger-seven"))
        db.message("assistant", text("Noted too."))
        grown = Importer(m, m.llm, options).run()
        (rep,) = grown.per_session
        assert rep.reason == "grown" and rep.units == 2 and grown.calls["extraction"] == 1
        rows = m.backend.ledger_get_many([f"opencode:{SID}"])
        assert list(rows) == [f"opencode:{SID}"]
        prov = m.backend.provenance([mem.id for mem in m.list({"limit": 10}).memories])
        assert {p.path for p in prov} == {str(path)}
        # A consumed message changed in place (a revert): read again, nothing re-distilled.
        db.con.execute(
            "UPDATE part SET data = ? WHERE message_id = 'msg_0002'", (json.dumps(text("Edited.")),)
        )
        edited = Importer(m, m.llm, options).run()
        assert edited.per_session[0].reason == "rewritten"
        assert edited.calls["extraction"] == 0 and edited.duplicates == 4, edited.model_dump()
    finally:
        m.close()


# ---------------------------------------------------------------- bad input


def test_a_locked_store_is_a_counted_skip_and_read_later(tmp_path):
    s = Store(tmp_path / "opencode" / "opencode.db", wal=False)  # a rollback journal
    s.session()
    s.message("user", text("prompt"))
    s.message("assistant", text("answer"))
    s.con.execute("BEGIN EXCLUSIVE")
    try:
        found = get_agent("opencode").discover(
            DiscoverOptions(root=tmp_path / "opencode", quiet_seconds=0, days=None)
        )
        assert found.files == [] and found.skipped["unreadable"] == 1
        with pytest.raises(store.StoreUnreadable, match="locked"):
            read(store.session_path(s.path, SID))
    finally:
        s.con.execute("ROLLBACK")
    found = get_agent("opencode").discover(
        DiscoverOptions(root=tmp_path / "opencode", quiet_seconds=0, days=None)
    )
    assert len(found.files) == 1


def test_a_corrupt_store_is_a_counted_skip(tmp_path):
    bad = tmp_path / "opencode" / "opencode.db"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"SQLite format 3\x00" + b"\xff" * 5000)
    found = get_agent("opencode").discover(
        DiscoverOptions(root=bad.parent, quiet_seconds=0, days=None)
    )
    assert found.files == [] and found.skipped["unreadable"] == 1
    assert not store.is_store(bad) and agent_for_file(bad) is None


def test_import_counts_a_store_that_fails_after_discovery(tmp_path, db, model, monkeypatch):  # noqa: F811
    db.message("user", text("prompt"))
    db.message("assistant", text("answer"))
    path = store.session_path(db.path, SID)
    m = memloom.open(home=str(tmp_path / "home"))
    try:
        real = store.render_session
        calls = {"n": 0}

        def flaky(p):
            calls["n"] += 1
            if calls["n"] > 1:  # discovery read it; then it locked
                raise store.StoreUnreadable(db.path, "locked", "database is locked")
            return real(p)

        monkeypatch.setattr(store, "render_session", flaky)
        report = Importer(m, m.llm, ImportOptions(paths=[path], agent="opencode")).run()
        assert report.skipped["unreadable"] == 1 and report.saved == 0
        assert m.backend.ledger_get_many([f"opencode:{SID}"]) == {}  # not marked read
    finally:
        m.close()


def test_a_store_whose_shm_cannot_be_written_is_read_from_a_copy(db, monkeypatch):
    db.message("user", text("prompt in the WAL"))
    db.message("assistant", text("answer"))
    real = store._open
    tried = []

    def refuse_first(path):
        tried.append(path)
        if len(tried) == 1:
            raise sqlite3.OperationalError("unable to open database file")
        return real(path)

    monkeypatch.setattr(store, "_open", refuse_first)
    store._cache.clear()
    res = read(store.session_path(db.path, SID))
    assert [u.text for u in res.units] == ["prompt in the WAL", "answer"]
    assert tried[1] != db.path and not tried[1].exists()  # the copy, removed after


def test_a_huge_message_is_skipped_as_oversized_and_the_rest_read(db, monkeypatch):
    from memloom.agents.opencode import parse

    monkeypatch.setattr(parse, "MAX_LINE_BYTES", 10_000)
    db.message("user", text("x" * 20_000))
    db.message("assistant", text("after the huge one"))
    res = read(store.session_path(db.path, SID))
    assert res.oversized == 1 and [u.text for u in res.units] == ["after the huge one"]


# ---------------------------------------------------------------- discovery


def test_discovery_rules(tmp_path, db):
    db.message("user", text("p"))
    db.message("assistant", text("a"))
    db.session("ses_child", parent=SID)
    db.session("ses_other", directory="/home/dev/blog")
    db.con.execute(
        "UPDATE session SET time_updated = ? WHERE id = 'ses_other'", (T0 - 86_400_000 * 30,)
    )
    agent = get_agent("opencode")
    root = db.path.parent
    now = T0 / 1000 + 10
    found = agent.discover(DiscoverOptions(root=root, now=now, quiet_seconds=300, days=14))
    assert found.files == [] and found.skipped["active"] == 1
    assert found.skipped["sidecars"] == 1 and found.skipped["outside_window"] == 1
    later = agent.discover(DiscoverOptions(root=root, now=now + 600, days=14, project="SHOP"))
    assert [f.session_id for f in later.files] == [SID] and later.skipped["project_filter"] == 1
    (f,) = later.files
    assert f.size == len(store.render_session(f.path)) and f.project_dir == "/home/dev/shop"
    assert agent.ledger_identity(f) == f"opencode:{SID}"
    named = agent.discover(DiscoverOptions(paths=[tmp_path]))  # a folder: stores in it
    assert {f.session_id for f in named.files} == {SID, "ses_other"}
    assert agent_for_file(db.path) == "opencode" and agent_for_file(f.path) == "opencode"


def test_kilo_code_s_store_and_the_json_layout(tmp_path, monkeypatch):
    data = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    monkeypatch.delenv("OPENCODE_DB", raising=False)
    monkeypatch.delenv("KILO_DB", raising=False)
    kilo = Store(data / "kilo" / "kilo.db")
    kilo.session("ses_kilo")
    kilo.message("user", text("typed in kilo"), sid="ses_kilo")
    kilo.message("assistant", text("ok"), sid="ses_kilo")
    storage = data / "opencode" / "storage"
    (storage / "session" / "global").mkdir(parents=True)
    (storage / "session" / "global" / "ses_old.json").write_text(
        json.dumps({"id": "ses_old", "directory": "/home/dev/old", "time": {"updated": T0}})
    )
    for mid, role, t in (("msg_a", "user", "typed long ago"), ("msg_b", "assistant", "answered")):
        (storage / "message" / "ses_old").mkdir(parents=True, exist_ok=True)
        times = {"created": T0, "completed": T0 + 1} if role == "assistant" else {"created": T0}
        (storage / "message" / "ses_old" / f"{mid}.json").write_text(
            json.dumps({"id": mid, "sessionID": "ses_old", "role": role, "time": times})
        )
        (storage / "part" / mid).mkdir(parents=True)
        (storage / "part" / mid / "prt_1.json").write_text(json.dumps({"id": "prt_1", **text(t)}))
    agent = get_agent("opencode")
    assert agent.found()
    found = agent.discover(DiscoverOptions(quiet_seconds=0, days=None))
    by_id = {f.session_id: f for f in found.files}
    assert set(by_id) == {"ses_kilo", "ses_old"}
    assert [u.text for u in agent.read(by_id["ses_old"].path).units] == [
        "typed long ago",
        "answered",
    ]
    assert [u.text for u in agent.read(by_id["ses_kilo"].path).units] == ["typed in kilo", "ok"]


# ---------------------------------------------------------------- plugin payload


def test_the_plugin_payload_names_a_session_of_a_known_store(tmp_path, db):
    env = {"XDG_DATA_HOME": str(tmp_path / "data"), "HOME": str(tmp_path)}
    event = parse_hook_payload({"session_id": SID, "cwd": "/x", "db": str(db.path)}, env)
    assert event.transcript_path == store.session_path(db.path.resolve(), SID)
    assert event.agent == "opencode" and event.cwd == "/x"
    with pytest.raises(NotificationRefused):
        parse_hook_payload({"session_id": "../etc", "db": str(db.path)}, env)
    elsewhere = Store(tmp_path / "elsewhere" / "opencode.db")
    with pytest.raises(NotificationRefused, match="outside"):
        parse_hook_payload({"session_id": SID, "db": str(elsewhere.path)}, env)
    env["OPENCODE_DB"] = str(elsewhere.path)
    assert parse_hook_payload({"session_id": SID, "db": str(elsewhere.path)}, env).session_id == SID


# ---------------------------------------------------------------- connect


USER = """{
  // mine
  "model": "fake/fake-model",
  "mcp": { "other": { "type": "local", "command": ["other"] } }
}
"""


def test_connect_adds_the_plugin_and_mcp_entry_and_disconnect_restores_exactly(tmp_path):
    env = {"XDG_CONFIG_HOME": str(tmp_path / "cfg"), "HOME": str(tmp_path)}
    config = tmp_path / "cfg" / "opencode" / "opencode.json"
    config.parent.mkdir(parents=True)
    config.write_text(USER)
    change = hooks.install("/opt/bin/memloom --home /h", env=env)
    assert change.changed and change.backup_path is not None
    doc = store._json(__import__("re").sub(r"//.*", "", config.read_text()))
    assert doc["mcp"]["memloom"]["command"] == ["/opt/bin/memloom", "--home", "/h", "mcp"]
    assert doc["mcp"]["other"] == {"type": "local", "command": ["other"]}
    assert "// mine" in config.read_text()
    plugin = tmp_path / "cfg" / "opencode" / "plugins" / "memloom.js"
    assert '["/opt/bin/memloom", "--home", "/h"]' in plugin.read_text()
    assert hooks.installed(env) == {"plugin": True, "mcp": True, "readable": True}
    assert not hooks.install("/opt/bin/memloom --home /h", env=env).changed
    assert hooks.remove(env).changed
    assert config.read_text() == USER and not plugin.exists()
    assert hooks.installed(env) == {"plugin": False, "mcp": False, "readable": True}


def test_connect_creates_what_is_missing_and_disconnect_deletes_it(tmp_path):
    env = {"XDG_CONFIG_HOME": str(tmp_path / "cfg"), "HOME": str(tmp_path)}
    hooks.install("memloom", recall=False, env=env)
    config = tmp_path / "cfg" / "opencode" / "opencode.json"
    assert json.loads(config.read_text())["mcp"]["memloom"]["command"] == ["memloom", "mcp"]
    assert "const RECALL = false;" in hooks.plugin_path(env).read_text()
    hooks.remove(env)
    assert not config.exists() and not hooks.plugin_path(env).exists()


def test_connect_refuses_a_broken_config_and_someone_else_s_plugin(tmp_path):
    env = {"XDG_CONFIG_HOME": str(tmp_path / "cfg"), "HOME": str(tmp_path)}
    config = tmp_path / "cfg" / "opencode" / "opencode.json"
    config.parent.mkdir(parents=True)
    config.write_text('{"mcp": [}')
    with pytest.raises(SettingsError):
        hooks.install("memloom", env=env)
    assert config.read_text() == '{"mcp": [}'
    config.write_text("{}")
    hooks.plugin_path(env).parent.mkdir(parents=True)
    hooks.plugin_path(env).write_text("export const Mine = async () => ({});\n")
    with pytest.raises(SettingsError, match="not memloom's plugin"):
        hooks.install("memloom", env=env)
    assert hooks.plugin_path(env).read_text().startswith("export const Mine")


# ---------------------------------------------------------------- the shells


def test_hook_notify_sweep_status_and_import_through_the_cli(tmp_path, db):
    """The plugin's notify queues ``<store>#<id>``, the worker imports it; the sweep finds
    the others; ``memloom status`` shows the plugin and the MCP entry."""
    from tests.capture.test_capture import memloom as cli

    home, claude = tmp_path / "home", tmp_path / "claude"
    extra = {
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "HOME": str(tmp_path),
    }
    db.message("user", text("Remember that the shop deploys with ArgoCD."))
    db.message("assistant", text("Noted."))
    db.session("ses_0002", directory="/home/dev/blog")
    db.message("user", text("Remember that the blog uses Hugo."), sid="ses_0002")
    db.message("assistant", text("Noted."), sid="ses_0002")
    assert cli(home, claude, "connect", "opencode", "--all", **extra).returncode == 0
    payload = json.dumps({"session_id": SID, "cwd": "/home/dev/shop", "db": str(db.path)})
    res = cli(home, claude, "hook", "notify", "--agent", "opencode", stdin=payload, **extra)
    assert (res.returncode, res.stdout) == (0, "")
    run = cli(home, claude, "capture", "run-once", "--no-sweep", "--json", **extra)
    assert json.loads(run.stdout)["processed"] == 1, run.stdout + run.stderr
    swept = json.loads(cli(home, claude, "capture", "run-once", "--json", **extra).stdout)
    assert swept["swept"] >= 1 and swept["processed"] >= 1, swept
    doc = json.loads(cli(home, claude, "status", "--json", **extra).stdout)
    agent = doc["agents"]["opencode"]
    assert agent["found"] and agent["hooks"]["plugin"] and agent["hooks"]["mcp"], agent
    found = json.loads(
        cli(home, claude, "recall", "which tool deploys the shop", "--json", **extra).stdout
    )
    assert any("ArgoCD" in m["text"] for m in found["memories"])
    found = json.loads(
        cli(home, claude, "recall", "what does the blog use", "--json", **extra).stdout
    )
    assert any("Hugo" in m["text"] for m in found["memories"])
    again = cli(home, claude, "import", "sessions", "--agent", "opencode", "--json", **extra)
    assert json.loads(again.stdout)["calls"]["extraction"] == 0


def test_the_hook_fast_path_stays_light():
    import subprocess
    import sys

    code = (
        "import json, sys\n"
        "from memloom.agents import get_agent\n"
        "a = get_agent('opencode'); a.parse_hook_payload; a.digest_with_prompt\n"
        "import memloom.agents.opencode.payload\n"
        "heavy = ('numpy', 'pydantic', 'httpx', 'typer', 'sqlite3')\n"
        "print(json.dumps(sorted(m for m in heavy if m in sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_a_part_that_is_not_json_is_counted_and_the_message_still_read(db):
    mid = db.message("user", text("typed"))
    db.con.execute(
        "INSERT INTO part VALUES ('prt_zz', ?, ?, 1, 1, '{not json')",
        (mid, SID),
    )
    db.message("assistant", text("answer"))
    res = read(store.session_path(db.path, SID))
    assert [u.text for u in res.units] == ["typed", "answer"]
    assert res.dropped["part_untyped"] == 1


def test_discovery_reads_only_the_sessions_within_the_cap(db, monkeypatch):
    for i in range(3):
        db.session(f"ses_x{i}")
    read_ = []
    real = store.render_session
    monkeypatch.setattr(store, "render_session", lambda p: read_.append(p) or real(p))
    found = get_agent("opencode").discover(
        DiscoverOptions(root=db.path.parent, quiet_seconds=0, days=None, max_sessions=1)
    )
    assert len(found.files) == 1 and found.skipped["over_cap"] == 3
    assert read_ == [found.files[0].path]
