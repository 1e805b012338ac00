"""OpenCode's discovery (memloom.agents.opencode.discover): the rules, the cap, Kilo
Code's store and the JSON layout."""

from __future__ import annotations

import json

import pytest

from memloom.agents import agent_for_file, get_agent
from memloom.agents.base import DiscoverOptions
from memloom.agents.opencode import store
from tests.agents.opencode_store import SID, T0, Store, new_store, text


@pytest.fixture
def db(tmp_path) -> Store:
    return new_store(tmp_path)


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


def test_a_sub_agent_session_named_by_path_is_a_sidecar(db):
    db.session("ses_child", parent=SID)
    child = store.session_path(db.path, "ses_child")
    found = get_agent("opencode").discover(DiscoverOptions(paths=[child]))
    assert found.files == [] and found.skipped["sidecars"] == 1
    gone = get_agent("opencode").discover(
        DiscoverOptions(paths=[store.session_path(db.path, "ses_x")])
    )
    assert found.files == [] and gone.skipped["missing"] == 1


def test_a_channel_s_store_beside_the_default_one_is_read(tmp_path, monkeypatch):
    data = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    for env in ("OPENCODE_DB", "KILO_DB"):
        monkeypatch.delenv(env, raising=False)
    beta = Store(data / "opencode" / "opencode-beta.db")
    beta.session("ses_beta")
    beta.message("user", text("typed in beta"), sid="ses_beta")
    beta.message("assistant", text("ok"), sid="ses_beta")
    agent = get_agent("opencode")
    assert agent.found()
    found = agent.discover(DiscoverOptions(quiet_seconds=0, days=None))
    assert [f.session_id for f in found.files] == ["ses_beta"]
    walked = agent.discover(DiscoverOptions(paths=[data]))  # its -wal and -shm are not stores
    assert [f.session_id for f in walked.files] == ["ses_beta"] and not walked.skipped.get(
        "unreadable"
    )
