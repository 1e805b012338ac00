"""One memory across agents: what a Codex session taught is recalled in a Claude Code
prompt in the same repository, with provenance naming the Codex session.

Real parts throughout: a Codex rollout on disk, the importer with the scripted
model over the OpenAI-compatible protocol, a real SQLite store, and Claude Code's
UserPromptSubmit hook as a separate process (daemon down: its keyword fallback).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import memloom
from tests.agents.test_codex import assistant, meta, rollout_name, user, write
from tests.sessions.test_importer import model  # noqa: F401  (fixture)
from tests.support.processes import run_python

SID = "019ab730-0000-7000-8000-00000000c0de"


def test_a_codex_memory_reaches_a_claude_code_prompt_in_the_same_repository(
    tmp_path,
    monkeypatch,
    model,  # noqa: F811
):
    repo = tmp_path / "acme"
    repo.mkdir()
    codex = tmp_path / "codex"
    monkeypatch.setenv("CODEX_HOME", str(codex))
    rollout = write(
        codex / "sessions" / "2025" / "11" / "24" / rollout_name(SID),
        [
            meta(SID, str(repo)),
            user("REMEMBER: the integration tests need REDIS_URL=redis://localhost:6380"),
            assistant("Understood, I will export REDIS_URL before running them."),
        ],
    )
    old = time.time() - 3600
    os.utime(rollout, (old, old))
    home = tmp_path / "home"
    m = memloom.open(home=str(home))
    try:
        report = m.import_sessions(agent="codex")
        assert (report.agents, report.saved) == (["codex"], 1)
        (mem,) = m.list({"limit": 10}).memories
        assert mem.source == "codex" and mem.project == str(repo)
        (prov,) = m.get(mem.id).provenance
        assert prov.agent == "codex" and prov.session_id == SID
    finally:
        m.close()

    payload = {  # Claude Code's UserPromptSubmit input, in the same repository
        "session_id": "5b1c0f5e-0000-4000-8000-000000000001",
        "transcript_path": str(tmp_path / "claude" / "projects" / "-acme" / "x.jsonl"),
        "cwd": str(repo),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "how do I point the integration tests at redis?",
    }
    res = run_python(
        ["-m", "memloom._entry", "hook", "prompt-recall"],
        payload,
        MEMLOOM_HOME=str(home),
        CLAUDE_CONFIG_DIR=str(tmp_path / "claude"),
    )
    assert "REDIS_URL=redis://localhost:6380" in res.stdout


#: Two unrelated facts (two that differ in a number only are one fact updated, issue 34).
FACTS = ("deploys go out on Tuesdays", "the API needs Python 3.12 or newer")


def test_status_reports_each_agent_sessions_and_its_newest_failure(tmp_path, monkeypatch, model):  # noqa: F811
    codex = tmp_path / "codex"
    claude = tmp_path / "claude"
    (claude / "projects").mkdir(parents=True)
    monkeypatch.setenv("CODEX_HOME", str(codex))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    for n in (1, 2):
        sid = f"019ab730-0000-7000-8000-00000000000{n}"
        path = write(
            codex / "sessions" / "2025" / "11" / "24" / rollout_name(sid),
            [meta(sid, str(tmp_path)), user(f"REMEMBER: {FACTS[n - 1]}"), assistant("ok")],
        )
        old = time.time() - 3600
        os.utime(path, (old, old))
    home = tmp_path / "home"
    m = memloom.open(home=str(home))
    try:
        assert m.import_sessions(agent="codex").saved == 2
    finally:
        m.close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLOOM_")}
    env.update(MEMLOOM_HOME=str(home), MEMLOOM_LLM="offline")

    def status(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "memloom._entry", "status", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    doc = json.loads(status("--json").stdout)
    seen = doc["agents"]["codex"]["imports"]
    assert (seen["sessions"], seen["memories"], seen["last_error"]) == (2, 2, None)
    assert seen["last_import"] and seen["last_import_text"]
    assert doc["agents"]["codex"]["source"] == "codex" and doc["agents"]["codex"]["found"]
    assert doc["agents"]["claude-code"]["imports"]["sessions"] == 0
    text = status().stdout
    line = next(ln for ln in text.splitlines() if ln.strip().startswith("codex"))
    assert "found" in line and "2 sessions, 2 memories" in line and "last import" in line
