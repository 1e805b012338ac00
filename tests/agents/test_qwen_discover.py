"""memloom.agents.qwen.discover and home: which sessions are imported (the rules every
agent shares), QWEN_HOME / QWEN_RUNTIME_DIR, --path by content, and telling a Qwen
session from Claude Code's and Gemini CLI's files."""

from __future__ import annotations

import os
import time
from pathlib import Path

from memloom.agents import agent_for_file, get_agent
from memloom.agents.base import DiscoverOptions
from memloom.agents.qwen.discover import discover, discover_paths, session_project
from memloom.agents.qwen.home import projects_dir, qwen_home, runtime_dir, settings_path
from tests.agents.qwen_records import conversation, session

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "agents"


def aged(path: Path, seconds: float) -> Path:
    t = time.time() - seconds
    os.utime(path, (t, t))
    return path


def test_home_runtime_and_settings_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert qwen_home({}) == tmp_path / ".qwen"
    assert projects_dir({}) == tmp_path / ".qwen" / "projects"
    env = {"QWEN_HOME": str(tmp_path / "q"), "QWEN_RUNTIME_DIR": ""}
    assert settings_path(env) == tmp_path / "q" / "settings.json"
    assert runtime_dir(env) == tmp_path / "q"
    env["QWEN_RUNTIME_DIR"] = "~/rt"
    assert projects_dir(env) == tmp_path / "rt" / "projects"
    monkeypatch.chdir(tmp_path)
    assert qwen_home({"QWEN_HOME": "rel"}) == tmp_path / "rel"  # relative to the cwd


def test_discovery_rules(tmp_path):
    root = tmp_path / ".qwen"
    old = aged(session(root, conversation(), sid="old"), 30 * 86400)
    busy = session(root, conversation(), sid="busy")
    a = aged(session(root, conversation(), sid="a"), 3600)
    b = aged(session(root, conversation(), sid="b", slug="-home-dev-other"), 7200)
    chats = a.parent
    (chats / "a.runtime.json").write_text("{}")
    (chats / "notes.txt").write_text("x")
    (root / "projects" / "-home-dev-shop" / "memory").mkdir()
    (root / "projects" / "stray.json").write_text("{}")
    os.mkfifo(chats / "fifo.jsonl")
    out = discover(root, days=14, max_sessions=20, quiet_seconds=300)
    assert [f.path for f in out.files] == [a, b]
    assert [f.session_id for f in out.files] == ["a", "b"]
    assert out.files[0].project_dir == "-home-dev-shop"
    assert out.skipped["active"] == 1 and busy.as_posix() in out.skipped_paths["active"]
    assert (
        out.skipped["outside_window"] == 1 and old.as_posix() in out.skipped_paths["outside_window"]
    )
    assert out.skipped["sidecars"] == 1 and out.skipped["not_transcripts"] == 3  # txt, stray, fifo
    capped = discover(root, max_sessions=1)
    assert [f.path for f in capped.files] == [a] and capped.skipped["over_cap"] == 1
    assert [f.path for f in discover(root / "projects").files] == [a, b]  # the folder itself


def test_the_project_needle_reads_the_cwd(tmp_path):
    root = tmp_path / ".qwen"
    a = aged(session(root, conversation(), sid="a", slug="x"), 3600)
    assert session_project(a) == "/home/dev/shop"
    assert [f.path for f in discover(root, project="DEV/SHOP").files] == [a]
    out = discover(root, project="elsewhere")
    assert out.files == [] and out.skipped["project_filter"] == 1


def test_default_root_follows_qwen_runtime_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("QWEN_RUNTIME_DIR", str(tmp_path / "rt"))
    a = aged(session(tmp_path / "rt", conversation()), 3600)
    agent = get_agent("qwen")
    assert [f.path for f in agent.discover(DiscoverOptions()).files] == [a]


def test_named_paths_by_content(tmp_path):
    root = tmp_path / ".qwen"
    a = session(root, conversation())  # fresh: --path takes it at once
    claude = tmp_path / "claude.jsonl"
    claude.write_text(
        '{"type":"user","sessionId":"s","uuid":"u","message":{"role":"user","content":"hi"}}\n'
    )
    out = discover_paths([root, claude, tmp_path / "gone.jsonl", a])
    assert [f.path for f in out.files] == [a]  # listed once
    assert out.skipped["not_transcripts"] == 1 and out.skipped["missing"] == 1
    assert discover_paths([a], project="nowhere").skipped["project_filter"] == 1


def test_a_qwen_session_is_told_from_claude_code_and_gemini_files(tmp_path):
    qwen = session(tmp_path, conversation())
    assert agent_for_file(qwen) == "qwen"
    claude = next((FIX / "claude-code").glob("e2e-*/**/*.jsonl"))
    gemini = next((FIX / "gemini").glob("e2e-*/**/*.jsonl"))
    assert agent_for_file(claude) == "claude-code"
    assert agent_for_file(gemini) == "gemini"
    assert not get_agent("qwen").recognises(claude)
    assert not get_agent("qwen").recognises(gemini)
    assert not get_agent("claude-code").recognises(qwen)
