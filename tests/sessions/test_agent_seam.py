"""The agent seam: the registry, the Claude Code adapter behind the ``Agent`` protocol,
and an importer that keys, reads and labels sessions only through that protocol."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

import memloom
from memloom import agents
from memloom.agents.base import Agent, DiscoverOptions, HookEvent, SessionFile
from memloom.agents.claude_code import ClaudeCode
from memloom.agents.claude_code.parse import parse_transcript
from memloom.capture import connect as connect_mod
from memloom.capture import notify as notify_mod
from memloom.errors import NotificationRefused
from memloom.sessions.importer import Importer, ImportOptions
from tests.sessions.test_importer import model, write_session  # noqa: F401  (fixture)


class KeyedBySession(ClaudeCode):
    """Claude Code's files, keyed like Codex keys its rollouts: by session id, not path."""

    name = "keyed-by-session"

    def ledger_identity(self, file: SessionFile) -> str:
        return f"session:{file.session_id}"


def test_registry_hands_out_the_claude_code_adapter():
    agent = agents.get_agent()
    assert agents.DEFAULT_AGENT == "claude-code" == agent.name
    assert isinstance(agent, ClaudeCode) and isinstance(agent, Agent)
    assert agents.get_agent("claude-code") is agent  # loaded once
    assert "claude-code" in agents.agent_names()
    with pytest.raises(KeyError, match="claude-code"):
        agents.get_agent("no-such-agent")


def test_one_claude_home_for_discovery_hooks_and_payloads(tmp_path, monkeypatch):
    agent = agents.get_agent()
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")}
    assert agent.home(env) == tmp_path / "cfg"
    assert agent.transcripts_root(env) == tmp_path / "cfg" / "projects"
    assert agent.settings_path(env) == tmp_path / "cfg" / "settings.json"
    assert agent.home({"CLAUDE_CONFIG_DIR": ""}) == Path.home() / ".claude"
    assert not agent.found(env)
    (tmp_path / "cfg").mkdir()
    assert agent.found(env)
    # the shells' old names answer the same
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    assert connect_mod.claude_root() == agent.home()
    assert connect_mod.settings_path() == agent.settings_path()
    assert notify_mod.claude_projects() == agent.transcripts_root()
    assert notify_mod.claude_projects(env) == agent.transcripts_root(env)


def test_read_is_the_transcript_parser(tmp_path):
    path = write_session(
        tmp_path / "projects" / "p" / f"{uuid.uuid4()}.jsonl",
        [("user", "hello there"), ("assistant", "hi"), ("user", "bye")],
    )
    agent = agents.get_agent()
    whole = agent.read(path, final=True)
    assert [(u.role, u.text) for u in whole.units] == [
        ("user", "hello there"),
        ("assistant", "hi"),
        ("user", "bye"),
    ]
    assert whole == parse_transcript(path, final=True)
    first = path.read_bytes().split(b"\n", 1)[0] + b"\n"
    tail = agent.read(path, start_offset=len(first), start_line=1)
    assert [u.start_line for u in tail.units] == [2, 3]
    assert agent.read_bytes(first).units[0].text == "hello there"
    assert agent.project_of(path) == "/home/dev/acme"


def test_discover_by_options(tmp_path):
    agent = agents.get_agent()
    path = write_session(tmp_path / "projects" / "p" / f"{uuid.uuid4()}.jsonl", [("user", "x")])
    found = agent.discover(DiscoverOptions(root=tmp_path, quiet_seconds=0))
    assert [f.path for f in found.files] == [path]
    assert agent.ledger_identity(found.files[0]) == str(path)
    named = agent.discover(DiscoverOptions(paths=[path, tmp_path / "gone.jsonl"]))
    assert [f.path for f in named.files] == [path] and named.skipped["missing"] == 1


def test_hook_payload_and_hook_install(tmp_path):
    agent = agents.get_agent()
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path)}
    path = write_session(tmp_path / "projects" / "p" / f"{uuid.uuid4()}.jsonl", [("user", "x")])
    event = agent.parse_hook_payload(
        {"transcript_path": str(path), "session_id": "s", "cwd": "/w", "reason": "exit"}, env
    )
    assert event == HookEvent("claude-code", path.resolve(), "s", "/w", "exit")
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text("{}\n")
    with pytest.raises(NotificationRefused, match="outside the Claude Code projects folder"):
        agent.parse_hook_payload({"transcript_path": str(outside)}, env)

    change = agent.install_hooks("/bin/memloom", env=env)
    events = ["SessionEnd", "UserPromptSubmit", "SessionStart", "PostToolUse"]
    assert change.changed and change.events == events
    assert agent.installed_hooks(env) == {
        "notify": True,
        "prompt_recall": True,
        "session_start": True,
        "read": True,
        "readable": True,
    }
    assert not agent.install_hooks("/bin/memloom", env=env).changed  # idempotent
    assert agent.remove_hooks(env).changed
    assert json.loads(agent.settings_path(env).read_text()) == {}
    assert agent.installed_hooks(env)["notify"] is False


def test_importer_keys_reads_and_labels_through_the_adapter(tmp_path, monkeypatch, model):  # noqa: F811
    monkeypatch.setitem(agents.ADAPTERS, KeyedBySession.name, f"{__name__}:KeyedBySession")
    sid = str(uuid.uuid4())
    path = write_session(
        tmp_path / "claude" / "projects" / "-home-dev-acme" / f"{sid}.jsonl",
        [("user", "REMEMBER: staging listens on port 5433")],
        sid=sid,
    )
    m = memloom.open(home=str(tmp_path / "home"))
    try:

        def run() -> object:
            options = ImportOptions(paths=[path], agent=KeyedBySession.name)
            return Importer(m, m.llm, options).run()

        report = run()
        assert (report.sessions, report.saved) == (1, 1)
        rows = m.backend.ledger_get_many([f"session:{sid}", str(path)])
        assert list(rows) == [f"session:{sid}"]  # the ledger row is keyed by the adapter
        (mem,) = m.list({"limit": 10}).memories
        assert mem.source == KeyedBySession.name  # memories carry their agent's name
        (prov,) = m.get(mem.id).provenance
        assert prov.path == str(path.resolve())  # provenance still names the file
        again = run()
        assert again.sessions == 0 and again.skipped["up_to_date"] == 1
    finally:
        m.close()


class MarkedAgent(ClaudeCode):
    """Claude Code's reader, but it claims only files whose first record says so, and
    has its own home: a stand-in second agent for routing tests."""

    name = "marked"

    def recognises(self, path: Path) -> bool:
        return path.read_bytes().startswith(b'{"marked": true}')

    def found(self, env=None) -> bool:
        return False


def test_import_routes_each_path_file_to_the_agent_that_recognises_it(
    tmp_path,
    monkeypatch,
    model,  # noqa: F811
):
    # Asked first: its files are Claude Code transcripts under a marker line.
    marked_first = {MarkedAgent.name: f"{__name__}:MarkedAgent", **agents.ADAPTERS}
    monkeypatch.setattr(agents, "ADAPTERS", marked_first)
    projects = tmp_path / "claude" / "projects" / "-home-dev-acme"
    plain = write_session(projects / f"{uuid.uuid4()}.jsonl", [("user", "REMEMBER: port 5433")])
    marked = projects / f"{uuid.uuid4()}.jsonl"
    marked.write_bytes(b'{"marked": true}\n')
    write_session(marked, [("user", "REMEMBER: the cache is redis")])
    m = memloom.open(home=str(tmp_path / "home"))
    try:
        report = m.import_sessions([plain, marked])
        assert report.agents == ["marked", "claude-code"]
        assert sorted((s.agent, Path(s.path).name) for s in report.per_session) == sorted(
            [("claude-code", plain.name), ("marked", marked.name)]
        )
        sources = sorted(mem.source for mem in m.list({"limit": 10}).memories)
        assert sources == ["claude-code", "marked"]
        assert report.sessions == 2 and report.saved == 2  # the two runs' counts add up
        # Named explicitly, another agent's file is left out and counted.
        only = m.import_sessions([marked], agent="claude-code", force=True)
        assert only.sessions == 0 and only.skipped["not_transcripts"] == 1
        with pytest.raises(ValueError, match="unknown agent 'nope'"):
            m.import_sessions([plain], agent="nope")
    finally:
        m.close()


def test_claude_code_recognises_its_transcripts_and_nothing_else(tmp_path):
    claude = ClaudeCode()
    real = write_session(tmp_path / f"{uuid.uuid4()}.jsonl", [("user", "hello")])
    assert claude.recognises(real)
    other = tmp_path / "other.jsonl"
    for data in (
        b'{"timestamp": "x", "type": "session_meta", "payload": {}}\n',
        b'{"type": [false]}\n[1, 2]\nnot json\n',
        b"[" * 100_000,
    ):
        other.write_bytes(data)
        assert not claude.recognises(other)
    assert not claude.recognises(tmp_path / "missing.jsonl")


def test_an_aider_history_in_a_project_another_agent_knows_is_imported(
    tmp_path,
    monkeypatch,
    model,  # noqa: F811
):
    """Aider keeps its history in the repository: a default import (every agent) looks
    in the project folders memloom knows from other agents' sessions."""
    import os
    import time

    repo = tmp_path / "repo"
    repo.mkdir()
    claude = tmp_path / "claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    for var in ("CODEX_HOME", "COPILOT_HOME", "GEMINI_CLI_HOME"):
        monkeypatch.setenv(var, str(tmp_path / "absent" / var))
    sid = str(uuid.uuid4())
    session = write_session(
        claude / "projects" / "-repo" / f"{sid}.jsonl",
        [("user", "REMEMBER: the API listens on port 8080")],
        cwd=str(repo),
        sid=sid,
    )
    history = repo / ".aider.chat.history.md"
    history.write_text(
        "\n# aider chat started at 2025-11-05 08:02:31\n\n"
        "> /home/dev/.local/bin/aider --model sonnet  \n> Aider v0.86.1  \n\n"
        "#### REMEMBER: staging runs Postgres on port 5433  \n\n"
        "Noted: port 5433 for staging.\n"
    )
    old = time.time() - 3600  # both quiet for an hour
    for path in (session, history):
        os.utime(path, (old, old))
    m = memloom.open(home=str(tmp_path / "home"))
    try:
        first = m.import_sessions()  # Claude Code's session names the project folder
        assert first.agents == ["claude-code"] and first.saved == 1
        second = m.import_sessions()  # now memloom knows the folder, and finds the history
        assert "aider" in second.agents
        by_source = {mem.source: mem for mem in m.list({"limit": 10}).memories}
        assert set(by_source) == {"claude-code", "aider"}
        assert by_source["aider"].project == str(repo)
        (prov,) = m.get(by_source["aider"].id).provenance
        assert prov.agent == "aider" and prov.path == str(history.resolve())
    finally:
        m.close()
