"""Cursor's hook payloads (memloom.agents.cursor.payload) and memloom's hooks run as
Cursor runs them: a process fed the documented stdin (tests/fixtures/agents/cursor/hooks)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import memloom
from memloom.agents import get_agent
from memloom.agents.cursor.payload import parse_hook_payload, session_start_output, workspace_of
from memloom.capture.queue import CaptureQueue
from memloom.errors import NotificationRefused
from tests.capture.test_agent_hooks import hook, queued

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "agents" / "cursor"
SID = "5b1c2d3e-0000-4a11-9b22-3c4d5e6f7a81"


@pytest.fixture
def cursor_home(tmp_path: Path) -> Path:
    """A HOME whose ~/.cursor holds the fixture transcripts."""
    shutil.copytree(FIX / "home", tmp_path / "user", dirs_exist_ok=True)
    return tmp_path / "user"


def transcript(home: Path) -> Path:
    t = home / ".cursor" / "projects" / "home-dev-acme-api" / "agent-transcripts"
    return t / SID / f"{SID}.jsonl"


def payload(name: str, path: Path | None) -> dict:
    text = (FIX / "hooks" / f"{name}.json").read_text()
    doc = json.loads(text.replace("$TRANSCRIPT", str(path) if path else ""))
    if path is None:
        doc["transcript_path"] = None
    return doc


def test_stop_payload_names_the_transcript_and_the_workspace(cursor_home):
    env = {"HOME": str(cursor_home)}
    event = parse_hook_payload(payload("stop", transcript(cursor_home)), env)
    assert event.agent == "cursor" and event.transcript_path == transcript(cursor_home)
    assert (event.session_id, event.cwd, event.reason) == (SID, "/home/dev/acme-api", "completed")
    end = parse_hook_payload(payload("sessionEnd", transcript(cursor_home)), env)
    assert end.reason == "user_close"
    txt = next(transcript(cursor_home).parents[1].glob("*.txt"))
    assert parse_hook_payload(payload("stop", txt), env).transcript_path == txt


def test_a_null_transcript_path_falls_back_to_the_environment_else_is_refused(cursor_home):
    env = {"HOME": str(cursor_home)}
    with pytest.raises(NotificationRefused, match="transcript_path is null"):
        parse_hook_payload(payload("stop", None), env)
    env["CURSOR_TRANSCRIPT_PATH"] = str(transcript(cursor_home))
    assert parse_hook_payload(payload("stop", None), env).transcript_path == transcript(cursor_home)


@pytest.mark.parametrize(
    "where",
    [
        "/etc/passwd",
        "relative/a.jsonl",
        "{home}/.cursor/projects/../hooks.json",
        "{home}/.cursor/projects/x/agent-transcripts/missing.jsonl",
        "{home}/.cursor/projects/home-dev-acme-api/agent-transcripts/notes.md",
        "{home}/elsewhere.jsonl",
    ],
)
def test_paths_outside_the_projects_folder_are_refused(cursor_home, where):
    (cursor_home / "elsewhere.jsonl").write_text("{}\n")
    doc = payload("stop", None)
    doc["transcript_path"] = where.format(home=cursor_home)
    with pytest.raises(NotificationRefused):
        parse_hook_payload(doc, {"HOME": str(cursor_home)})


def test_workspace_and_session_start_output():
    assert workspace_of({"workspace_roots": ["/a", "/b"]}, {}) == "/a"
    assert workspace_of({"workspace_roots": []}, {"CURSOR_PROJECT_DIR": "/c"}) == "/c"
    assert workspace_of({"workspace_roots": [None]}, {}) is None
    assert session_start_output("") == ""
    assert json.loads(session_start_output("ctx")) == {"additional_context": "ctx"}
    agent = get_agent("cursor")
    assert agent.hook_cwd({"workspace_roots": ["/w"], "cwd": "/home/dev/.cursor"}) == "/w"
    assert json.loads(agent.format_context("session-start", "x")) == {"additional_context": "x"}


def test_stop_hook_queues_the_transcript_from_its_payload(tmp_path, cursor_home):
    home = tmp_path / "memloom"
    env = {"HOME": str(cursor_home)}
    res = hook(
        home, env, "notify", "--agent", "cursor", payload=payload("stop", transcript(cursor_home))
    )
    assert res.stdout == ""  # stop's output would be a followup_message: nothing
    assert queued(home) == [str(transcript(cursor_home))]


def test_a_refused_payload_exits_0_and_is_logged(tmp_path, cursor_home):
    home = tmp_path / "memloom"
    env = {"HOME": str(cursor_home)}
    res = hook(home, env, "notify", "--agent", "cursor", payload=payload("stop", None))
    assert res.stdout == "" and queued(home) == []
    queue = CaptureQueue(home)
    try:
        kind, detail, _ = queue.last_event("hook_refused")
        assert kind == "hook_refused" and "transcript_path is null" in (detail or "")
    finally:
        queue.close()


@pytest.mark.parametrize("args", [("notify",), ("session-start",), ("prompt-recall",)])
def test_hooks_fail_open_on_garbage(tmp_path, cursor_home, args):
    res = hook(
        tmp_path / "memloom",
        {"HOME": str(cursor_home)},
        *args,
        "--agent",
        "cursor",
        payload="{not json",
    )
    assert res.stdout == ""


def test_session_start_prints_the_workspaces_digest_as_additional_context(tmp_path, cursor_home):
    home = tmp_path / "memloom"
    m = memloom.open(home=str(home))
    try:
        m.store(
            {
                "entries": [
                    {
                        "text": "Run the acme tests with make check",
                        "type": "preference",
                        "project": "/home/dev/acme-api",
                    },
                    {
                        "text": "Billing deploys need a change ticket",
                        "type": "preference",
                        "project": "/srv/billing",
                    },
                ]
            }
        )
    finally:
        m.close()
    env = {"HOME": str(cursor_home)}
    start = payload("sessionStart", None)
    res = hook(home, env, "session-start", "--agent", "cursor", payload=start)
    doc = json.loads(res.stdout)  # exactly one JSON document
    assert list(doc) == ["additional_context"]
    text = doc["additional_context"]
    assert text.startswith("<memloom-context>") and "make check" in text
    assert "change ticket" not in text  # another workspace's: out of this project's digest
    again = hook(home, env, "session-start", "--agent", "cursor", payload=start)
    assert again.stdout == ""  # each memory once per session (session_id)


def test_the_cursor_hooks_stay_on_the_light_fast_path(tmp_path, cursor_home):
    """``hook notify|session-start --agent cursor`` import neither numpy nor pydantic."""
    import os
    import subprocess
    import sys

    from tests.capture.test_hook_imports import SCRIPT, heavy

    home = tmp_path / "memloom"
    for name, doc in (
        ("notify", payload("stop", transcript(cursor_home))),
        ("session-start", payload("sessionStart", None)),
    ):
        evidence = tmp_path / f"{name}.json"
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLOOM_")}
        env.update(MEMLOOM_HOME=str(home), HOME=str(cursor_home), EVIDENCE=str(evidence))
        res = subprocess.run(
            [sys.executable, "-c", SCRIPT, "hook", name, "--agent", "cursor"],
            input=json.dumps(doc),
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert res.returncode == 0, res.stderr
        seen = json.loads(evidence.read_text())
        assert seen["exit"] == 0 and "memloom.agents.cursor.payload" in seen["modules"]
        assert heavy(seen["modules"]) == []
    assert queued(home) == [str(transcript(cursor_home))]
