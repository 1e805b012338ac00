"""``import_sessions`` anchors a memory to the files the agent's tool calls read or edited
in the transcript lines it was distilled from (``via: tool``), on both backends: a
real git repository (tests/fixtures/anchors/repo), real Claude Code records, a real
store, and the scripted model over the OpenAI-compatible protocol."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import pytest

import memloom
from memloom import anchors
from tests.sessions.test_importer import record
from tests.support.scripted_llm import ScriptedModel
from tests.test_anchors import git, make_repo


@pytest.fixture
def model(monkeypatch):
    scripted = ScriptedModel(through_reply=True)  # a memory cites its whole turn
    monkeypatch.setenv("MEMLOOM_LLM", "openai")
    monkeypatch.setenv("MEMLOOM_LLM_BASE_URL", scripted.base_url)
    monkeypatch.setenv("MEMLOOM_LLM_MODEL", "scripted")
    monkeypatch.setenv("MEMLOOM_LLM_API_KEY", "sk-scripted-test-key")
    yield scripted
    scripted.close()


@pytest.fixture
def m(tmp_path, backend, model):
    engine = memloom.open(home=str(tmp_path / "home"), database_url=backend)
    yield engine
    engine.close()


@pytest.fixture
def repo(tmp_path) -> Path:
    return make_repo(tmp_path)


def tool_use(cwd: Path, name: str, **inputs: str) -> dict:
    """A Claude Code assistant record holding one tool call, as Claude Code writes it."""
    rec = record("assistant", "", cwd=str(cwd))
    rec["message"]["content"] = [
        {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:20]}", "name": name, "input": inputs}
    ]
    return rec


def tool_result(cwd: Path, text: str) -> dict:
    rec = record("user", "", cwd=str(cwd))
    rec["message"]["content"] = [{"type": "tool_result", "tool_use_id": "toolu_x", "content": text}]
    return rec


def append(path: Path, *records: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        for rec in records:
            fh.write(json.dumps(rec) + "\n")


def memories(m) -> dict[str, list[dict]]:
    """Each memory's text -> its anchors, as ``get`` shows them."""
    out = {}
    for d in m.list({"limit": 100}).memories:
        out[d.text] = [a.model_dump() for a in m.get(d.id).anchors]
    return out


def session(tmp_path: Path) -> Path:
    return tmp_path / "claude" / "projects" / "-repo" / f"{uuid.uuid4()}.jsonl"


def test_a_memory_is_anchored_to_the_file_a_tool_read_in_its_lines_and_no_other(
    m, model, repo, tmp_path
):
    path = session(tmp_path)
    append(
        path,
        record("user", "REMEMBER: retries stop after `MAX_RETRIES` attempts", cwd=str(repo)),
        tool_use(repo, "Read", file_path=str(repo / "svc/net/retry.py")),
        tool_result(repo, "MAX_RETRIES = 3"),
        record("assistant", "Yes: MAX_RETRIES is 3.", cwd=str(repo)),
        record("user", "REMEMBER: deploys happen on Fridays", cwd=str(repo)),
        record("assistant", "Noted.", cwd=str(repo)),
        record("user", "and the settings?", cwd=str(repo)),
        tool_use(repo, "Edit", file_path="svc/config.py", old_string="a", new_string="b"),
        record("assistant", "Edited.", cwd=str(repo)),
    )
    report = m.import_sessions([path])
    assert (report.saved, report.failed) == (2, 0)
    got = memories(m)
    assert got["retries stop after `MAX_RETRIES` attempts"] == [
        {
            "path": "svc/net/retry.py",
            "symbols": ["MAX_RETRIES"],
            "commit": git(repo, "rev-parse", "HEAD"),
            "root": str(repo),
            "via": "tool",
        }
    ]
    assert got["deploys happen on Fridays"] == []  # its lines read nothing
    # The tool call stayed out of what the model was sent.
    sent = json.dumps(model.payloads["memloom_distill"])
    assert "MAX_RETRIES is 3" in sent and "svc/net/retry.py" not in sent and "tool_use" not in sent


def test_text_named_files_come_first_and_one_file_is_one_anchor(m, repo, tmp_path):
    path = session(tmp_path)
    append(
        path,
        record(
            "user",
            "REMEMBER: svc/config.py reads DATABASE_URL; `MAX_RETRIES` caps retries",
            cwd=str(repo),
        ),
        tool_use(repo, "Read", file_path="svc/net/retry.py"),
        tool_use(repo, "Read", file_path=str(repo / "svc/config.py")),
        record("assistant", "Both checked.", cwd=str(repo)),
    )
    m.import_sessions([path])
    ((_, got),) = memories(m).items()
    assert [(a["path"], a["via"], a["symbols"]) for a in got] == [
        ("svc/config.py", "text", ["DATABASE_URL"]),
        ("svc/net/retry.py", "tool", ["MAX_RETRIES"]),
    ]


def test_an_attackers_transcript_anchors_nothing_outside_and_reads_nothing_there(
    m, repo, tmp_path, monkeypatch
):
    secret = tmp_path / "outside.py"
    secret.write_text("SECRET_NAME = 1\n")
    (repo / "leak.py").symlink_to(secret)
    os.mkfifo(repo / "queue.fifo")
    huge = repo / "svc" / "huge.py"
    huge.write_text("HUGE_EARLY = 1\n" + "x = 1\n" * 300_000 + "SECRET_NAME = 2\n")
    opened: list[str] = []
    real_open = anchors.open_regular
    monkeypatch.setattr(anchors, "open_regular", lambda p: opened.append(str(p)) or real_open(p))
    path = session(tmp_path)
    hostile = [
        "/etc/passwd",
        "../../.ssh/id_rsa",
        str(secret),
        f"{repo}/../outside.py",
        "leak.py",
        "queue.fifo",
        "/dev/zero",
        "svc/deleted_since.py",
        "svc/huge.py",
    ]
    append(
        path,
        record("user", "REMEMBER: SECRET_NAME and HUGE_EARLY are set", cwd=str(repo)),
        *(tool_use(repo, "Read", file_path=p) for p in hostile),
        record("assistant", "Read them.", cwd=str(repo)),
    )
    report = m.import_sessions([path])
    assert report.saved == 1
    ((_, got),) = memories(m).items()
    assert got == [
        {
            "path": "svc/huge.py",
            "symbols": ["HUGE_EARLY"],  # read up to the bound: the late name is past it
            "commit": git(repo, "rev-parse", "HEAD"),
            "root": str(repo),
            "via": "tool",
        }
    ]
    assert opened == [str(huge)]


def test_a_resumed_import_anchors_the_new_lines_to_their_own_tool_calls(m, repo, tmp_path):
    path = session(tmp_path)
    append(
        path,
        record("user", "REMEMBER: `MAX_RETRIES` is the cap", cwd=str(repo)),
        tool_use(repo, "Read", file_path="svc/net/retry.py"),
        record("assistant", "It is 3.", cwd=str(repo)),
    )
    m.import_sessions([path])
    append(
        path,
        record("user", "REMEMBER: load_settings() reads the environment", cwd=str(repo)),
        tool_use(repo, "Read", file_path="svc/config.py"),
        record("assistant", "It does.", cwd=str(repo)),
    )
    report = m.import_sessions([path])
    assert report.saved == 1 and report.sessions == 1
    got = memories(m)
    assert [(a["path"], a["symbols"]) for a in got["load_settings() reads the environment"]] == [
        ("svc/config.py", ["load_settings"])
    ]
    assert [a["path"] for a in got["`MAX_RETRIES` is the cap"]] == ["svc/net/retry.py"]
    # The second read parsed only the grown lines (and the context before them).
    row = m.backend.ledger_get_many([str(path)])[str(path)]
    assert row.lines == 6 and row.status == "complete"


def test_a_session_outside_any_folder_anchors_nothing(m, tmp_path):
    path = session(tmp_path)
    gone = tmp_path / "gone"
    append(
        path,
        record("user", "REMEMBER: `MAX_RETRIES` is the cap", cwd=str(gone)),
        tool_use(gone, "Read", file_path=str(gone / "svc/net/retry.py")),
        record("assistant", "ok", cwd=str(gone)),
    )
    assert m.import_sessions([path]).saved == 1
    assert memories(m) == {"`MAX_RETRIES` is the cap": []}
