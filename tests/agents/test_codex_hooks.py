"""Codex hooks as the real Codex 0.169.0 sees them (tests/e2e found each of these):
no deprecated feature flag, an older memloom's flag taken out, and the hook trust
Codex records in config.toml read back for ``memloom connect`` and ``memloom status``."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import tomlkit

from memloom.agents.codex import Codex
from memloom.agents.codex import hooks as codex_hooks
from memloom.agents.codex import trust as codex_trust

CONFIG = """# mine
model = "gpt-5-codex"  # kept

[features]
plugins = false
"""


def _env(tmp_path: Path) -> dict[str, str]:
    return {"CODEX_HOME": str(tmp_path / "codex")}


def _older_memloom_install(home: Path, original: str | None) -> None:
    """What memloom's installer before the e2e suite left: hooks.json, and
    ``[features] codex_hooks = true`` added to config.toml, recorded in the state."""
    Codex().install_hooks("memloom", env={"CODEX_HOME": str(home)})
    config = home / "config.toml"
    doc = tomlkit.parse(original or "")
    created_table = "features" not in doc
    if created_table:
        doc["features"] = tomlkit.table()
    doc["features"]["codex_hooks"] = True
    if original is not None:
        (home / "config.toml.memloom-backup").write_text(original)
    config.write_text(tomlkit.dumps(doc))
    state_path = home / "hooks.json.memloom-state"
    state = json.loads(state_path.read_text())
    state["config"] = {
        "added_key": "codex_hooks",
        "created_table": created_table,
        "created_file": original is None,
        "original_sha256": None
        if original is None
        else hashlib.sha256(original.encode()).hexdigest(),
    }
    state_path.write_text(json.dumps(state))


def test_connect_takes_out_the_flag_an_older_memloom_added(tmp_path):
    env = _env(tmp_path)
    home = Path(env["CODEX_HOME"])
    home.mkdir()
    (home / "config.toml").write_text(CONFIG)
    _older_memloom_install(home, CONFIG)
    assert "codex_hooks = true" in (home / "config.toml").read_text()

    change = Codex().install_hooks("memloom", env=env)
    assert change.changed and change.config_changed
    assert codex_hooks.LEGACY_FLAG_NOTE in change.notes
    assert (home / "config.toml").read_text() == CONFIG  # byte for byte, comments and all
    state = json.loads((home / "hooks.json.memloom-state").read_text())
    assert "config" not in state
    again = Codex().install_hooks("memloom", env=env)
    assert not again.changed and not again.config_changed
    Codex().remove_hooks(env)
    assert (home / "config.toml").read_text() == CONFIG


def test_disconnect_takes_out_an_older_memloom_s_flag_and_the_file_it_created(tmp_path):
    env = _env(tmp_path)
    home = Path(env["CODEX_HOME"])
    home.mkdir()
    _older_memloom_install(home, None)
    assert (home / "config.toml").read_text() == "[features]\ncodex_hooks = true\n"
    removed = Codex().remove_hooks(env)
    assert removed.changed and removed.config_changed
    assert sorted(p.name for p in home.iterdir()) == []


def test_connect_never_writes_a_feature_flag(tmp_path):
    env = _env(tmp_path)
    home = Path(env["CODEX_HOME"])
    home.mkdir()
    (home / "config.toml").write_text(CONFIG)
    change = Codex().install_hooks("memloom", env=env)
    assert not change.config_changed and change.config_backup is None
    assert (home / "config.toml").read_text() == CONFIG
    assert not (home / "config.toml.memloom-backup").exists()


def test_hooks_json_keeps_the_user_s_indentation(tmp_path):
    env = _env(tmp_path)
    home = Path(env["CODEX_HOME"])
    home.mkdir()
    mine = {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "x"}]}]}}
    original = json.dumps(mine, indent=4) + "\n"
    (home / "hooks.json").write_text(original)
    Codex().install_hooks("memloom", env=env)
    text = (home / "hooks.json").read_text()
    assert '\n    "hooks": {\n        "UserPromptSubmit"' in text
    (home / "hooks.json.memloom-backup").unlink()  # no backup to put back: a rewrite
    Codex().remove_hooks(env)
    assert (home / "hooks.json").read_text() == original


# --------------------------------------------------------------------------- trust

#: What Codex 0.169.0's ``codex app-server`` (JSON-RPC ``hooks/list``) reported as
#: ``currentHash`` for these two handlers of ~/.codex/hooks.json.
CODEX_0_169_HASHES = [
    (
        "UserPromptSubmit",
        {"type": "command", "command": "echo hi", "timeout": 5},
        "sha256:c84163e232e754e50a34ceb5974474e1c22b7f4d562b198ff40bbcdd0928ffac",
    ),
    (
        "Stop",
        {"type": "command", "command": "/usr/bin/memloom hook notify --agent codex", "timeout": 10},
        "sha256:c36bfc176bb4fb7b9f1781e3aa9dd345e87282ab80c4d2129ea0e451593eca28",
    ),
]


def test_the_hash_is_the_one_codex_computes():
    for event, handler, expected in CODEX_0_169_HASHES:
        assert codex_trust.hook_hash(event, handler) == expected
    assert codex_trust.event_label("UserPromptSubmit") == "user_prompt_submit"
    assert codex_trust.event_label("SessionStart") == "session_start"
    key = codex_trust.hook_key(Path("/h/.codex/hooks.json"), "UserPromptSubmit", 0, 0)
    assert key == "/h/.codex/hooks.json:user_prompt_submit:0:0"


def _trust_all(home: Path, *, hooks_file: Path | None = None, only: tuple[str, ...] = ()) -> None:
    """What trusting each memloom hook in Codex's /hooks records in config.toml."""
    hooks_file = hooks_file or home / "hooks.json"
    data = json.loads((home / "hooks.json").read_text())
    lines = []
    for event, groups in data["hooks"].items():
        for g, group in enumerate(groups):
            for h, handler in enumerate(group["hooks"]):
                if not codex_hooks.is_memloom_hook(handler) or (only and event not in only):
                    continue
                key = codex_trust.hook_key(hooks_file, event, g, h)
                digest = codex_trust.hook_hash(event, handler, group.get("matcher"))
                lines.append(f'[hooks.state."{key}"]\ntrusted_hash = "{digest}"\n')
    config = home / "config.toml"
    config.write_text((config.read_text() if config.exists() else "") + "\n" + "\n".join(lines))


def test_trust_is_read_from_config_toml(tmp_path):
    env = _env(tmp_path)
    home = Path(env["CODEX_HOME"])
    home.mkdir()
    (home / "config.toml").write_text(CONFIG)
    agent = Codex()
    agent.install_hooks("memloom", env=env)
    events = ("Stop", "UserPromptSubmit", "SessionStart", "PostToolUse")
    assert agent.hook_trust(env) == dict.fromkeys(events, "untrusted")

    _trust_all(home, only=("Stop",))
    assert agent.hook_trust(env)["Stop"] == "trusted"
    assert agent.hook_trust(env)["SessionStart"] == "untrusted"
    assert codex_hooks.TRUST_NOTE in agent.install_hooks("memloom", env=env).notes

    _trust_all(home, only=("UserPromptSubmit", "SessionStart", "PostToolUse"))
    assert set(agent.hook_trust(env).values()) == {"trusted"}
    again = agent.install_hooks("memloom", env=env)
    assert not again.changed and codex_hooks.TRUST_NOTE not in again.notes

    # a new memloom path changes every command: trusted before, modified now
    change = agent.install_hooks("/opt/memloom", env=env)
    assert set(agent.hook_trust(env).values()) == {"modified"}
    assert codex_hooks.TRUST_NOTE in change.notes


def test_a_disabled_hook_and_another_spelling_of_the_path(tmp_path):
    env = _env(tmp_path)
    home = Path(env["CODEX_HOME"])
    home.mkdir()
    agent = Codex()
    agent.install_hooks("memloom", recall=False, env=env)
    link = tmp_path / "link"
    link.symlink_to(home)
    _trust_all(home, hooks_file=link / "hooks.json")  # Codex keyed it through the link
    assert agent.hook_trust(env) == {"Stop": "trusted"}
    key = codex_trust.hook_key(home / "hooks.json", "Stop", 0, 0)
    with (home / "config.toml").open("a") as f:
        f.write(f'\n[hooks.state."{key}"]\nenabled = false\n')
    assert agent.hook_trust(env) == {"Stop": "disabled"}


def test_no_hooks_no_trust_and_an_unreadable_file(tmp_path):
    env = _env(tmp_path)
    home = Path(env["CODEX_HOME"])
    assert Codex().hook_trust(env) == {}
    home.mkdir()
    (home / "hooks.json").write_text("{ broken")
    assert Codex().hook_trust(env) == {}
    (home / "hooks.json").write_text('{"hooks": {"Stop": [{"hooks": [{"command": "x"}]}]}}')
    (home / "config.toml").write_text("not [ toml")
    assert Codex().hook_trust(env) == {}


def test_hooks_in_config_toml_as_well_are_noted(tmp_path):
    env = _env(tmp_path)
    home = Path(env["CODEX_HOME"])
    home.mkdir()
    inline = '[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = "command"\ncommand = "say"\n'
    (home / "config.toml").write_text(inline)
    notes = Codex().install_hooks("memloom", env=env).notes
    assert any("defines hooks too" in n for n in notes)
    (home / "config.toml").write_text('[hooks.state."x"]\ntrusted_hash = "sha256:0"\n')
    notes = Codex().install_hooks("memloom", env=env).notes
    assert not any("defines hooks too" in n for n in notes)


def test_status_shows_whether_codex_trusts_memloom_s_hooks(tmp_path, monkeypatch):
    from memloom.cli.capture import _trust_line
    from memloom.status import agents_summary

    env = _env(tmp_path)
    monkeypatch.setenv("CODEX_HOME", env["CODEX_HOME"])
    assert "trust" not in agents_summary()["codex"]  # nothing installed: nothing to trust
    Codex().install_hooks("memloom", env=env)
    trust = agents_summary()["codex"]["trust"]
    assert set(trust.values()) == {"untrusted"}
    assert "NOT trusted" in _trust_line(trust) and "/hooks" in _trust_line(trust)
    _trust_all(Path(env["CODEX_HOME"]))
    trust = agents_summary()["codex"]["trust"]
    assert _trust_line(trust) == "hooks trusted"


def test_disconnect_forgets_the_trust_codex_recorded_for_memloom_s_hooks(tmp_path):
    env = _env(tmp_path)
    home = Path(env["CODEX_HOME"])
    home.mkdir()
    mine = '[hooks.state."/elsewhere/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:0"\n'
    (home / "config.toml").write_text(CONFIG + "\n" + mine)
    original = (home / "config.toml").read_text()
    agent = Codex()
    agent.install_hooks("memloom", env=env)
    _trust_all(home)  # as /hooks records it
    assert set(agent.hook_trust(env).values()) == {"trusted"}
    removed = agent.remove_hooks(env)
    assert removed.changed and removed.config_changed
    text = (home / "config.toml").read_text()
    assert "hooks.json:stop:0:0" in text and str(home) not in text  # only memloom's went
    assert text == original


def test_disconnect_keeps_trust_that_is_not_memloom_s(tmp_path):
    env = _env(tmp_path)
    home = Path(env["CODEX_HOME"])
    home.mkdir()
    agent = Codex()
    agent.install_hooks("memloom", recall=False, env=env)
    key = codex_trust.hook_key(home / "hooks.json", "Stop", 0, 0)
    other = f'[hooks.state."{key}"]\ntrusted_hash = "sha256:someone-else"\n'
    (home / "config.toml").write_text(other)  # a hash that is not memloom's handler's
    agent.remove_hooks(env)
    assert (home / "config.toml").read_text() == other


def test_hooks_turned_off_in_config_toml_are_not_a_hook_in_status(tmp_path, monkeypatch):
    """``feature_disabled`` is not listed as an installed hook, and does not keep
    capture on after the last agent is disconnected."""
    from memloom.cli.capture import _quiet
    from memloom.status import agents_summary

    env = _env(tmp_path)
    home = Path(env["CODEX_HOME"])
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", env["CODEX_HOME"])
    (home / "config.toml").write_text("[features]\nhooks = false\n")
    Codex().install_hooks("memloom", env=env)
    doc = agents_summary()["codex"]
    assert doc["hooks_disabled"] is True and "feature_disabled" not in doc["hooks"]
    Codex().remove_hooks(env)
    doc = agents_summary()["codex"]
    assert not any(doc["hooks"].values()) and "trust" not in doc

    def installed(agent: str) -> dict[str, bool]:
        return Codex().installed_hooks(env)

    assert not any(_quiet(installed, "codex").values())
