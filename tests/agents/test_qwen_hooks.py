"""memloom.agents.qwen.hooks: the ~/.qwen/settings.json merge (JSONC kept byte for byte),
the one-time backup, exact removal, refused files, and what ``installed`` reports."""

from __future__ import annotations

import json

import pytest

from memloom.agents import get_agent, jsonc
from memloom.errors import SettingsError
from tests.support.installs import check_reinstall_and_removal

USER_SETTINGS = """\
{
  // mine: keep it offline
  "$version": 4,
  "security": { "auth": { "selectedType": "openai" } },
  /* another tool's hooks */
  "hooks": {
    "UserPromptSubmit": [
      { "hooks": [ { "type": "command", "command": "other-tool prompt" } ] }
    ],
    "PreToolUse": [
      { "matcher": "run_shell_command", "hooks": [ { "type": "command", "command": "guard" } ] }
    ]
  }
}
"""


@pytest.fixture
def env(tmp_path) -> dict[str, str]:
    return {"QWEN_HOME": str(tmp_path / ".qwen")}


def tree(text: str):
    return json.loads(json.dumps(_value(jsonc.parse(text))))


def _value(node):
    if node.kind == "object":
        return {m.key: _value(m.value) for m in node.members}
    if node.kind == "array":
        return [_value(i) for i in node.items]
    return node.value


@pytest.mark.parametrize(
    "original",
    [
        USER_SETTINGS,
        USER_SETTINGS.replace("\n", "\r\n"),
        USER_SETTINGS.replace("  ", "\t"),
        "{}",
        "",
    ],
)
def test_round_trip_keeps_everything_else(env, original):
    agent = get_agent("qwen")
    path = agent.settings_path(env)
    path.parent.mkdir(parents=True)
    path.write_bytes(original.encode())
    change = agent.install_hooks("/opt/bin/memloom", env=env)
    assert change.changed and change.events == [
        "Stop",
        "SessionStart",
        "UserPromptSubmit",
        "PostToolUse",
    ]
    assert change.backup_path is not None and change.backup_path.read_bytes() == original.encode()
    text = path.read_bytes().decode()
    assert ("// mine: keep it offline" in text) == ("// mine" in original)
    hooks = tree(text)["hooks"]
    assert hooks["Stop"][-1] == {
        "hooks": [
            {
                "type": "command",
                "command": "/opt/bin/memloom hook notify --agent qwen",
                "name": "memloom-notify",
                "timeout": 10,
            }
        ]
    }
    assert hooks["SessionStart"][-1]["hooks"][0]["command"].endswith(
        "hook session-start --agent qwen"
    )
    assert hooks["UserPromptSubmit"][-1]["hooks"][0]["timeout"] == 5  # seconds for Qwen
    assert hooks["PostToolUse"][-1] == {  # after its own read tool only
        "matcher": "read_file",
        "hooks": [
            {
                "type": "command",
                "command": "/opt/bin/memloom hook read --agent qwen",
                "name": "memloom-read",
                "timeout": 5,
            }
        ],
    }
    if "other-tool" in original:
        assert hooks["UserPromptSubmit"][0]["hooks"][0]["command"] == "other-tool prompt"
        assert hooks["PreToolUse"][0]["matcher"] == "run_shell_command"
    restored = (original if original.strip() else "{}\n").encode()
    check_reinstall_and_removal(agent, env, path, change.backup_path, original.encode(), restored)


def test_removal_after_qwen_added_its_version_key(env):
    """Qwen 0.24.4 writes ``"$version": 4`` into a settings file without it, on start:
    disconnect still takes out exactly memloom's part of the file as Qwen left it."""
    agent = get_agent("qwen")
    path = agent.settings_path(env)
    path.parent.mkdir(parents=True)
    original = USER_SETTINGS.replace('  "$version": 4,\n', "")
    path.write_text(original)
    agent.install_hooks("memloom", env=env)
    path.write_text(path.read_text().replace("{\n", '{\n  "$version": 4,\n', 1))
    assert agent.remove_hooks(env).changed
    assert path.read_text() == original.replace("{\n", '{\n  "$version": 4,\n', 1)


def test_a_new_file_and_a_missing_one(env):
    agent = get_agent("qwen")
    change = agent.install_hooks("memloom", env=env)
    assert change.backup_path is None and change.settings_path.exists()
    assert set(tree(change.settings_path.read_text())["hooks"]) == {
        "Stop",
        "SessionStart",
        "UserPromptSubmit",
        "PostToolUse",
    }
    assert agent.remove_hooks(env).changed
    assert tree(change.settings_path.read_text()) == {}
    assert agent.installed_hooks({"QWEN_HOME": "/nonexistent/q"})["readable"] is True


@pytest.mark.parametrize(
    "bad", ['{"hooks": [1]}', '{"hooks": {"Stop": {}}}', "[1]", '{"a": 1,, }', "{/* x", b"\xff{}"]
)
def test_unusable_settings_are_refused_untouched(env, bad):
    agent = get_agent("qwen")
    path = agent.settings_path(env)
    path.parent.mkdir(parents=True)
    raw = bad if isinstance(bad, bytes) else bad.encode()
    path.write_bytes(raw)
    with pytest.raises(SettingsError, match="memloom has not changed it"):
        agent.install_hooks("memloom", env=env)
    assert path.read_bytes() == raw
    assert not path.with_name("settings.json.memloom-backup").exists()
    if bad != '{"hooks": {"Stop": {}}}':  # a readable file whose Stop is no list
        assert agent.installed_hooks(env)["readable"] is False


def test_another_agent_s_memloom_hooks_are_left_alone(env):
    """A Gemini-style memloom handler (``--agent gemini``) in Qwen's file is not Qwen's."""
    agent = get_agent("qwen")
    path = agent.settings_path(env)
    path.parent.mkdir(parents=True)
    other = {"type": "command", "command": "memloom hook notify --agent gemini"}
    path.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [other]}]}}, indent=2) + "\n")
    before = path.read_text()
    agent.install_hooks("memloom", env=env)
    assert agent.remove_hooks(env).changed
    assert path.read_text() == before
