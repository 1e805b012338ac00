"""OpenCode's reader (memloom.agents.opencode.parse, .store): text parts as units, the
watermark over the rendering when a session grows and when parts change in place, and
bad input (locked, corrupt, read-only, huge, not JSON)."""

from __future__ import annotations

import json
import sqlite3
import time

import pytest

import memloom
from memloom.agents import agent_for_file, get_agent
from memloom.agents.base import DiscoverOptions
from memloom.agents.opencode import store
from memloom.sessions.importer import Importer, ImportOptions
from tests.agents.opencode_store import SID, Store, new_store, read, text
from tests.sessions.test_importer import model  # noqa: F401  (fixture)


@pytest.fixture
def db(tmp_path) -> Store:
    return new_store(tmp_path)


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


def test_import_distils_a_grown_session_once_and_a_rerun_makes_no_call(
    tmp_path,
    db,
    model,  # noqa: F811
    monkeypatch,
):
    # OpenCode's own store (/context serves lines of a file in the agent's folders only)
    monkeypatch.setenv("OPENCODE_DB", str(db.path))
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
        # The viewer's context of a memory: the messages its provenance lines are.
        first_memory = next(p.memory_id for p in prov if p.start_line == 2)
        (ctx,) = m.memory_context(first_memory)["provenance"]
        assert ctx["exists"] and ctx["path"] == str(path)
        cited = [line for line in ctx["lines"] if line["cited"]]
        assert [line["text"] for line in cited] == ["REMEMBER: staging listens on port 5433"]
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
