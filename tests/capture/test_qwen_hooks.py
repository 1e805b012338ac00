"""Qwen Code's installed hooks as real processes, fed Qwen Code 0.24.4's stdin (tests/e2e):
Stop queues the session each turn (no SessionEnd headless) and a repeated Stop neither
loses nor re-distils anything; UserPromptSubmit prints plain text; SessionStart gives
the digest at startup and again on a resume (Qwen rebuilds the system prompt)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import memloom
from memloom.capture.scope import Scope, save_scope
from tests.agents.qwen_records import SID, lines, reply, session, user
from tests.capture.test_agent_hooks import hook, queued
from tests.support.scripted_llm import ScriptedModel
from tests.support.seed import remember


def base(path: object, event: str) -> dict:
    return {
        "session_id": SID,
        "transcript_path": str(path),
        "cwd": "/home/dev/acme",
        "hook_event_name": event,
        "timestamp": "2026-12-04T13:40:43.327Z",
        "permission_mode": "default",
    }


def test_stop_queues_the_session_every_turn(tmp_path):
    path = session(tmp_path / ".qwen", [user("hi", "u1")])
    env = {"QWEN_HOME": str(tmp_path / ".qwen")}
    stop = {**base(path, "Stop"), "stop_hook_active": False, "last_assistant_message": "ok"}
    assert hook(tmp_path / "home", env, "notify", "--agent", "qwen", payload=stop).stdout == ""
    assert queued(tmp_path / "home") == [str(path.resolve())]
    outside = {**stop, "transcript_path": str(tmp_path / "x.jsonl")}
    hook(tmp_path / "home", env, "notify", "--agent", "qwen", payload=outside)
    assert queued(tmp_path / "home") == []  # refused, logged, exit 0


def test_prompt_recall_plain_text_and_nothing_for_a_tool_continuation(tmp_path, seeded_home):
    env = {"QWEN_HOME": str(tmp_path / ".qwen")}
    prompt = {**base(None, "UserPromptSubmit"), "prompt": "where does the deploy script live?"}
    prompt["submitted_prompt"] = prompt["prompt"]
    res = hook(seeded_home, env, "prompt-recall", "--agent", "qwen", payload=prompt)
    assert res.stdout.lstrip().startswith("<memloom-context>") and "tools/deploy.sh" in res.stdout
    continuation = {**prompt, "session_id": "other", "prompt": ""}
    del continuation["submitted_prompt"]
    res = hook(seeded_home, env, "prompt-recall", "--agent", "qwen", payload=continuation)
    assert res.stdout == ""


def test_the_digest_at_startup_and_again_on_resume(tmp_path, seeded_home):
    remember(seeded_home, {"text": "Always run make lint before a commit", "type": "preference"})
    env = {"QWEN_HOME": str(tmp_path / ".qwen")}
    start = {**base(None, "SessionStart"), "source": "startup", "model": "m"}
    first = hook(seeded_home, env, "session-start", "--agent", "qwen", payload=start)
    assert "make lint" in first.stdout
    again = hook(seeded_home, env, "session-start", "--agent", "qwen", payload=start)
    assert again.stdout == ""  # a second startup hook of one session: once
    resumed = hook(
        seeded_home, env, "session-start", "--agent", "qwen", payload={**start, "source": "resume"}
    )
    assert "make lint" in resumed.stdout and resumed.stdout.count("make lint") == 1
    claude = {**start, "session_id": "claude-session", "source": "resume"}
    hook(seeded_home, {}, "session-start", payload=claude)
    assert hook(seeded_home, {}, "session-start", payload=claude).stdout == ""  # others: once


def run_once(home, env: dict[str, str]) -> dict:
    """``memloom capture run-once --json`` without the sweep: only what the hooks queued."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("MEMLOOM_", "CLAUDE_"))}
    clean.update(env, MEMLOOM_HOME=str(home))
    res = subprocess.run(
        [sys.executable, "-m", "memloom._entry", "capture", "run-once", "--no-sweep", "--json"],
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_a_repeated_stop_neither_loses_nor_redistils(tmp_path):
    llm = ScriptedModel()
    try:
        qhome = tmp_path / ".qwen"
        home = tmp_path / "home"
        save_scope(home, Scope(all=True))
        env = {
            "QWEN_HOME": str(qhome),
            "MEMLOOM_LLM": "openai",
            "MEMLOOM_LLM_BASE_URL": llm.base_url,
            "MEMLOOM_LLM_MODEL": "scripted",
            "MEMLOOM_LLM_API_KEY": "sk-test",
        }
        path = session(qhome, [user("REMEMBER: staging is port 5433", "u1"), reply("ok", "a1")])
        stop = {**base(path, "Stop"), "stop_hook_active": False}
        hook(home, env, "notify", "--agent", "qwen", payload=stop)
        hook(home, env, "notify", "--agent", "qwen", payload=stop)  # Stop again, same turn
        assert run_once(home, env)["processed"] >= 1
        calls = len(llm.payloads.get("memloom_distill", []))
        assert calls == 1
        hook(home, env, "notify", "--agent", "qwen", payload=stop)  # nothing new since
        run_once(home, env)
        assert len(llm.payloads.get("memloom_distill", [])) == calls
        with path.open("ab") as f:
            f.write(lines([user("REMEMBER: deploys on Fridays", "u2"), reply("ok", "a2")]))
        hook(home, env, "notify", "--agent", "qwen", payload=stop)
        assert run_once(home, env)["processed"] == 1
        assert len(llm.payloads["memloom_distill"]) == calls + 1
        m = memloom.open(home=str(home))
        try:
            texts = [x.text for x in m.list({"limit": 10}).memories]
        finally:
            m.close()
        assert len(texts) == 2, texts
        assert any("5433" in t for t in texts) and any("Fridays" in t for t in texts)
    finally:
        llm.close()


def test_the_daemon_s_sweep_finds_a_qwen_session_no_hook_queued(tmp_path):
    llm = ScriptedModel()
    try:
        home = tmp_path / "home"
        save_scope(home, Scope(all=True))
        qhome = tmp_path / "q"
        path = session(qhome, [user("REMEMBER: the sweep found me", "u1")])
        t = time.time() - 3600  # quiet for an hour
        os.utime(path, (t, t))
        env = {
            "HOME": str(tmp_path),
            "QWEN_HOME": str(qhome),
            "MEMLOOM_LLM": "openai",
            "MEMLOOM_LLM_BASE_URL": llm.base_url,
            "MEMLOOM_LLM_MODEL": "scripted",
            "MEMLOOM_LLM_API_KEY": "sk-test",
        }
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("MEMLOOM_", "CLAUDE_"))}
        clean.update(env, MEMLOOM_HOME=str(home))
        res = subprocess.run(
            [sys.executable, "-m", "memloom._entry", "capture", "run-once", "--json"],
            env=clean,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert res.returncode == 0, res.stderr
        doc = json.loads(res.stdout)
        assert doc["swept"] == 1 and doc["processed"] == 1, doc
        m = memloom.open(home=str(home))
        try:
            (mem,) = m.list({"limit": 10}).memories
        finally:
            m.close()
        assert mem.source == "qwen" and "sweep found me" in mem.text
    finally:
        llm.close()
