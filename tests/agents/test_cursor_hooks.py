"""memloom's hooks in Cursor's ~/.cursor/hooks.json (memloom.agents.cursor.hooks): merge,
backup, idempotence, exact removal, refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memloom.agents import get_agent
from memloom.errors import SettingsError

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "agents" / "cursor" / "hooks"
CMD = "/usr/local/bin/memloom"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path)}


def hooks_file(env: dict[str, str]) -> Path:
    return Path(env["HOME"]) / ".cursor" / "hooks.json"


def test_fresh_install_writes_a_versioned_file_and_removal_deletes_it(env):
    agent = get_agent("cursor")
    change = agent.install_hooks(CMD, env=env)
    assert change.changed and change.backup_path is None
    assert change.events == ["stop", "sessionEnd", "sessionStart", "postToolUse"]
    doc = json.loads(hooks_file(env).read_text())
    assert doc == {
        "version": 1,
        "hooks": {
            "stop": [{"command": f"{CMD} hook notify --agent cursor"}],
            "sessionEnd": [{"command": f"{CMD} hook notify --agent cursor"}],
            "sessionStart": [{"command": f"{CMD} hook session-start --agent cursor"}],
            # after the Read tool only (a regular expression on tool_name)
            "postToolUse": [{"command": f"{CMD} hook read --agent cursor", "matcher": "^Read$"}],
        },
    }
    assert "beforeSubmitPrompt" not in doc["hooks"]  # it cannot add context
    assert agent.installed_hooks(env) == {
        "notify": True,
        "session_start": True,
        "read": True,
        "readable": True,
    }
    assert not agent.install_hooks(CMD, env=env).changed  # idempotent
    assert agent.remove_hooks(env).changed
    assert not hooks_file(env).exists()
    assert not agent.remove_hooks(env).changed


def test_other_tools_hooks_stay_and_disconnect_restores_the_bytes(env):
    path = hooks_file(env)
    path.parent.mkdir(parents=True)
    original = (FIX / "hooks.other-tool.json").read_bytes()
    path.write_bytes(original)
    agent = get_agent("cursor")
    change = agent.install_hooks(CMD, env=env)
    assert change.backup_path == path.with_name("hooks.json.memloom-backup")
    assert change.backup_path.read_bytes() == original
    doc = json.loads(path.read_text())
    assert doc["$schema"].startswith("https://") and doc["version"] == 1
    assert doc["hooks"]["beforeShellExecution"] == [
        {"command": "node ./hooks/guard-shell.js", "timeout": 5}
    ]
    assert doc["hooks"]["sessionStart"][0] == {
        "command": "node ~/.agentmemory/cursor/session-start.mjs"
    }
    assert doc["hooks"]["stop"] == [
        {"command": "./hooks/audit.sh", "loop_limit": 1},
        {"command": f"{CMD} hook notify --agent cursor"},
    ]
    assert list(doc) == ["version", "hooks", "$schema"]  # key order kept
    agent.install_hooks("/other/memloom", env=env)  # a new command replaces memloom's own
    assert json.dumps(json.loads(path.read_text())).count("hook notify") == 2
    assert agent.remove_hooks(env).changed
    assert path.read_bytes() == original


def test_no_recall_installs_only_the_capture_hooks(env):
    agent = get_agent("cursor")
    agent.install_hooks(CMD, recall=True, env=env)
    change = agent.install_hooks(CMD, recall=False, env=env)
    assert change.changed and change.events == ["stop", "sessionEnd"]
    assert agent.installed_hooks(env)["session_start"] is False
    assert agent.installed_hooks(env)["read"] is False
    assert "postToolUse" not in json.loads(hooks_file(env).read_text())["hooks"]


def test_a_file_without_version_gets_one_and_gets_its_bytes_back(env):
    path = hooks_file(env)
    path.parent.mkdir(parents=True)
    original = b'{"hooks": {"afterFileEdit": [{"command": "prettier --write"}]}}'
    path.write_bytes(original)
    agent = get_agent("cursor")
    agent.install_hooks(CMD, env=env)
    assert json.loads(path.read_text())["version"] == 1
    agent.remove_hooks(env)
    assert path.read_bytes() == original


def test_an_empty_file_is_empty_again_after_removal(env):
    path = hooks_file(env)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\n")
    agent = get_agent("cursor")
    assert agent.install_hooks(CMD, env=env).changed
    assert json.loads(path.read_text())["version"] == 1
    agent.remove_hooks(env)
    assert path.read_bytes() == b"\n"


def test_a_changed_file_keeps_the_users_later_edits_on_removal(env):
    path = hooks_file(env)
    path.parent.mkdir(parents=True)
    path.write_text('{"version": 1, "hooks": {}}')
    agent = get_agent("cursor")
    agent.install_hooks(CMD, env=env)
    doc = json.loads(path.read_text())
    doc["hooks"]["afterFileEdit"] = [{"command": "prettier"}]  # the user adds a hook
    path.write_text(json.dumps(doc))
    agent.remove_hooks(env)
    assert json.loads(path.read_text()) == {
        "version": 1,
        "hooks": {"afterFileEdit": [{"command": "prettier"}]},
    }


@pytest.mark.parametrize(
    "broken",
    [
        "{not json",
        "[1, 2]",
        '{"version": 1, "hooks": []}',
        '{"version": 1, "hooks": {"stop": {"command": "x"}}}',
    ],
)
def test_a_file_memloom_cannot_read_is_refused_and_left_alone(env, broken):
    path = hooks_file(env)
    path.parent.mkdir(parents=True)
    path.write_text(broken)
    agent = get_agent("cursor")
    with pytest.raises(SettingsError, match="memloom has not changed it"):
        agent.install_hooks(CMD, env=env)
    with pytest.raises(SettingsError):
        agent.remove_hooks(env)
    assert path.read_text() == broken
    assert not path.with_name("hooks.json.memloom-backup").exists()
    assert agent.installed_hooks(env)["readable"] is False


def test_other_entries_naming_memloom_are_not_taken_for_memlooms(env):
    path = hooks_file(env)
    path.parent.mkdir(parents=True)
    mine = {"command": "memloom hook notify"}  # no --agent cursor: not what connect writes
    theirs = {"command": "echo memloom hook notify --agent cursor-like", "matcher": "x"}
    path.write_text(json.dumps({"version": 1, "hooks": {"stop": [mine, theirs]}}))
    agent = get_agent("cursor")
    assert agent.installed_hooks(env)["notify"] is False
    agent.install_hooks(CMD, env=env)
    agent.remove_hooks(env)
    assert json.loads(path.read_text())["hooks"]["stop"] == [mine, theirs]
