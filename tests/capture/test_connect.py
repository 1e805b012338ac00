"""connect / disconnect claude-code against real settings files in a temporary CLAUDE_CONFIG_DIR."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def run(home: Path, claude: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMLOOM_HOME": str(home), "CLAUDE_CONFIG_DIR": str(claude)}
    return subprocess.run(
        [sys.executable, "-m", "memloom._entry", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def dirs(tmp_path):
    return tmp_path / "home", tmp_path / "claude"


def settings(claude: Path) -> dict:
    return json.loads((claude / "settings.json").read_text())


def memloom_commands(doc: dict) -> list[str]:
    return [
        h["command"]
        for groups in doc.get("hooks", {}).values()
        for g in groups
        for h in g.get("hooks", [])
        if "memloom" in h.get("command", "")
    ]


def test_connect_refuses_without_a_scope(dirs):
    home, claude = dirs
    res = run(home, claude, "connect", "claude-code")
    assert res.returncode == 1 and "nothing is captured until you choose" in res.stderr
    assert not (claude / "settings.json").exists()


def test_connect_on_a_missing_settings_file_then_idempotent(dirs):
    home, claude = dirs
    res = run(home, claude, "connect", "claude-code", "--project", "acme", "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert (
        doc["changed"]
        and doc["backup"] is None
        and doc["hooks"] == ["SessionEnd", "UserPromptSubmit", "SessionStart", "PostToolUse"]
    )
    first = (claude / "settings.json").read_text()
    hooks = settings(claude)["hooks"]
    (end,) = hooks["SessionEnd"]
    assert end["matcher"] == "" and end["hooks"][0]["command"].endswith(" hook notify")
    assert hooks["UserPromptSubmit"][0]["hooks"][0]["command"].endswith(" hook prompt-recall")
    (start,) = hooks["SessionStart"]  # every source: startup, resume, clear, compact
    assert start["matcher"] == "" and start["hooks"][0]["command"].endswith(" hook session-start")
    (read,) = hooks["PostToolUse"]  # after Claude Code's own Read tool only
    assert read["matcher"] == "Read" and read["hooks"][0]["command"].endswith(" hook read")
    again = json.loads(
        run(home, claude, "connect", "claude-code", "--project", "acme", "--json").stdout
    )
    assert again["changed"] is False
    assert (claude / "settings.json").read_text() == first
    scope = json.loads((home / "capture.json").read_text())
    assert scope["projects"] == ["acme"] and scope["all"] is False


def test_connect_preserves_other_keys_and_hooks_and_backs_up_once(dirs):
    home, claude = dirs
    claude.mkdir(parents=True)
    original = {
        "model": "opus",
        "permissions": {"allow": ["Bash(npm test)"]},
        "hooks": {
            "SessionEnd": [
                {"matcher": "", "hooks": [{"type": "command", "command": "notify-send bye"}]}
            ],
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}
            ],
        },
    }
    (claude / "settings.json").write_text(json.dumps(original, indent=4))
    res = run(home, claude, "connect", "claude-code", "--all", "--no-recall")
    assert res.returncode == 0, res.stderr
    assert "claude mcp add memloom -- memloom mcp" in res.stdout
    doc = settings(claude)
    assert doc["model"] == "opus" and doc["permissions"] == original["permissions"]
    assert doc["hooks"]["PreToolUse"] == original["hooks"]["PreToolUse"]
    assert doc["hooks"]["SessionEnd"][0] == original["hooks"]["SessionEnd"][0]
    assert len(doc["hooks"]["SessionEnd"]) == 2 and "UserPromptSubmit" not in doc["hooks"]
    assert "SessionStart" not in doc["hooks"]  # the digest is recall too
    assert "PostToolUse" not in doc["hooks"]  # so are the memories of a file read
    backup = claude / "settings.json.memloom-backup"
    assert json.loads(backup.read_text()) == original

    # Switching recall on changes the file; the first backup is kept as it was.
    run(home, claude, "connect", "claude-code", "--all")
    assert "UserPromptSubmit" in settings(claude)["hooks"]
    assert json.loads(backup.read_text()) == original
    assert len(memloom_commands(settings(claude))) == 4

    res = run(home, claude, "disconnect", "claude-code")
    assert res.returncode == 0
    assert settings(claude) == original
    assert not (home / "capture.json").exists()


def test_malformed_settings_are_refused_untouched(dirs):
    home, claude = dirs
    claude.mkdir(parents=True)
    broken = '{"hooks": {"SessionEnd": [ }'
    (claude / "settings.json").write_text(broken)
    res = run(home, claude, "connect", "claude-code", "--all")
    assert res.returncode == 1 and "not valid JSON" in res.stderr
    assert (claude / "settings.json").read_text() == broken
    assert not (claude / "settings.json.memloom-backup").exists()
    assert not (home / "capture.json").exists()


def test_connect_leaves_the_hooks_bytecode_to_load_not_source_to_compile():
    """Hook processes start on every prompt: with PYTHONDONTWRITEBYTECODE set (as here
    and in many container images) or an editable install, nothing else writes it."""
    import importlib.util

    import memloom.capture.hooks_cli
    import memloom.capture.prompt
    from memloom.capture.connect import compile_package

    modules = (memloom.capture.hooks_cli, memloom.capture.prompt)
    for module in modules:  # a build artifact: gone, it is only slower until rewritten
        Path(importlib.util.cache_from_source(module.__file__)).unlink(missing_ok=True)
    assert compile_package()
    for module in modules:
        cached = Path(importlib.util.cache_from_source(module.__file__))
        assert cached.exists() and cached.stat().st_mtime >= Path(module.__file__).stat().st_mtime


def test_connect_teaches_memloom_mcp_its_handshake(tmp_path, monkeypatch, dirs):
    """``memloom connect`` prepares ``memloom mcp``'s handshake cache for every protocol
    version the SDK negotiates: the agent's very first start answers at once too."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    from memloom.mcp_stdio import cache_path, fingerprint

    home, claude = dirs
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "fresh-cache"))
    # Answers made from other code than the package ships them for (an edited checkout):
    # connect learns them from the SDK, for the agent's first start.
    monkeypatch.setenv("MEMLOOM_MCP_SHIPPED", "")
    res = run(home, claude, "connect", "claude-code", "--all")
    assert res.returncode == 0, res.stderr
    doc = json.loads(cache_path().read_text())
    assert doc["fingerprint"] == fingerprint()
    for version in HANDSHAKE_PROTOCOL_VERSIONS:
        assert doc["answers"][f"initialize {version}"]["protocolVersion"] == version
        tools = doc["answers"][f"{version} tools/list"]["tools"]
        assert {t["name"] for t in tools} >= {"save_memory", "recall_memory"}


def test_a_handshake_that_cannot_be_prepared_does_not_fail_connect(monkeypatch, capsys):
    import memloom.mcp_stdio
    from memloom.cli.capture import prime_mcp

    def broken() -> list[str]:
        raise ImportError("no module named 'mcp'")

    monkeypatch.setattr(memloom.mcp_stdio, "prime", broken)
    assert prime_mcp() is False
    assert (
        "could not prepare memloom mcp's start (no module named 'mcp')" in capsys.readouterr().err
    )


def test_qwen_code_is_accepted_by_the_name_users_type(tmp_path, dirs, monkeypatch):
    """The agent is called Qwen Code: ``connect qwen-code`` is ``connect qwen``."""
    home, claude = dirs
    monkeypatch.setenv("QWEN_HOME", str(tmp_path / "qwen"))
    res = run(home, claude, "connect", "qwen-code", "--all", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["agent"] == "qwen"
    assert (tmp_path / "qwen" / "settings.json").exists()
    res = run(home, claude, "disconnect", "qwen-code", "--json")
    assert res.returncode == 0, res.stderr
    res = run(home, claude, "import", "sessions", "--agent", "qwen-code", "--dry-run")
    assert res.returncode == 0, res.stderr
