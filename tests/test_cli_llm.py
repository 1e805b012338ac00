"""``memloom llm`` and ``memloom llm use``; memloom standing down inside its own
distillation call (``MEMLOOM_LLM_CHILD``): hooks silent, no MCP server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.processes import run_python

CONFIG = "# my settings, keep this comment\n[recall]\nprompt_tokens = 300  # mine\n"


def fake_bin(tmp_path: Path, *names: str) -> Path:
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    for name in names:
        exe = folder / name
        exe.write_text("#!/bin/sh\nexit 0\n")
        exe.chmod(0o755)
    return folder


def run(home: Path, path: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MEMLOOM_")}
    clean.update(
        MEMLOOM_HOME=str(home),
        PATH=path,
        OPENAI_API_KEY="",
        ANTHROPIC_API_KEY="",
        **env,
    )
    return subprocess.run(
        [sys.executable, "-m", "memloom._entry", *args],
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    (h / "config.toml").write_text(CONFIG)
    return h


def test_llm_alone_names_the_choice_why_and_the_clis_found(tmp_path: Path, home: Path) -> None:
    path = f"{fake_bin(tmp_path, 'gemini', 'opencode')}{os.pathsep}/usr/bin:/bin"
    res = run(home, path, "llm")
    assert res.returncode == 0, res.stderr
    assert "distiller:" in res.stdout and "`gemini` is on PATH" in res.stdout
    assert "today 0/25 calls through the agent's CLI" in res.stdout
    assert "gemini    Gemini CLI (gemini-cli), on PATH" in res.stdout
    assert "codex     Codex CLI (codex-cli), not installed" in res.stdout
    doc = json.loads(run(home, path, "llm", "--json").stdout)
    assert doc["provider"] == "gemini-cli" and doc["agent_cli"] is True
    assert [c["agent"] for c in doc["installed_clis"]] == ["gemini", "opencode"]
    assert doc["cli_calls"] == {"used": 0, "cap": 25}


def test_use_writes_config_toml_keeps_the_rest_and_auto_removes_it(
    tmp_path: Path, home: Path
) -> None:
    path = f"{fake_bin(tmp_path, 'claude', 'qwen')}{os.pathsep}/usr/bin:/bin"
    res = run(home, path, "llm", "use", "qwen", "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["provider"] == "qwen-cli" and doc["config"] == str(home / "config.toml")
    assert "config.toml [llm] provider = qwen-cli" in doc["description"]
    text = (home / "config.toml").read_text()
    assert text.startswith(CONFIG) and '[llm]\nprovider = "qwen-cli"' in text
    assert (home / "config.toml").stat().st_mode & 0o077 == 0
    # offline, chosen, wins over the CLIs on PATH; the note names what could distil.
    doc = json.loads(run(home, path, "llm", "use", "offline", "--json").stdout)
    assert doc["provider"] == "offline"
    assert "Claude Code (memloom llm use claude)" in doc["note"]
    assert "Qwen Code (memloom llm use qwen)" in doc["note"]
    # auto: the choice is forgotten, detection picks the first CLI in its order.
    doc = json.loads(run(home, path, "llm", "use", "auto", "--json").stdout)
    assert doc["provider"] == "claude-cli"
    assert (home / "config.toml").read_text() == CONFIG
    # The environment still wins, and the human output says so.
    res = run(home, path, "llm", "use", "qwen", MEMLOOM_LLM="offline")
    assert "MEMLOOM_LLM=offline is set in this environment" in res.stdout
    assert "distiller: offline" in res.stdout


def test_use_refuses_what_cannot_distil(tmp_path: Path, home: Path) -> None:
    path = f"{fake_bin(tmp_path)}{os.pathsep}/usr/bin:/bin"
    res = run(home, path, "llm", "use", "cursor")
    assert res.returncode == 1 and "'cursor' is not a known distiller" in res.stderr
    res = run(home, path, "llm", "use", "codex")
    assert res.returncode == 1 and "`codex` is not on PATH: install Codex CLI" in res.stderr
    assert (home / "config.toml").read_text() == CONFIG  # nothing written
    (home / "config.toml").write_text("[llm\nbroken")
    res = run(home, path, "llm", "use", "offline")
    assert res.returncode == 1 and "is not valid TOML" in res.stderr


def test_status_names_the_distiller_and_the_cli_cap(tmp_path: Path, home: Path) -> None:
    path = f"{fake_bin(tmp_path, 'codex')}{os.pathsep}/usr/bin:/bin"
    res = run(home, path, "status", MEMLOOM_CLI_DAILY_CAP="7")
    assert res.returncode == 0, res.stderr
    assert "Codex CLI" in res.stdout and "auto-detected: `codex` is on PATH" in res.stdout
    assert "today 0/7 calls through the agent's CLI" in res.stdout
    doc = json.loads(run(home, path, "status", "--json").stdout)
    assert doc["distiller"]["provider"] == "codex-cli"


@pytest.mark.parametrize("hook", ["notify", "prompt-recall", "session-start"])
def test_hooks_say_nothing_inside_a_distillation_call(tmp_path: Path, hook: str) -> None:
    home = tmp_path / "home"
    payload = {
        "session_id": "s1",
        "cwd": str(tmp_path),
        "prompt": "how do I run the tests?",
        "transcript_path": str(tmp_path / "t.jsonl"),
        "hook_event_name": "Stop",
    }
    res = run_python(
        ["-m", "memloom._entry", "hook", hook, "--agent", "gemini"],
        payload,
        MEMLOOM_HOME=str(home),
        MEMLOOM_LLM_CHILD="1",
        HOME=str(tmp_path),
    )
    assert res.stdout == "" and res.stderr == ""
    assert not home.exists()  # no queue, no log, no job: nothing at all


def test_memloom_mcp_refuses_to_serve_inside_a_distillation_call(tmp_path: Path) -> None:
    res = subprocess.run(
        [sys.executable, "-m", "memloom._entry", "mcp"],
        env={**os.environ, "MEMLOOM_HOME": str(tmp_path), "MEMLOOM_LLM_CHILD": "1"},
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 1 and "not served inside memloom's own distillation call" in (
        res.stderr
    )


def test_chosen_says_the_choice_without_loading_a_provider(tmp_path: Path) -> None:
    from memloom.distiller import chosen

    which = {"codex": "/usr/bin/codex", "opencode": "/usr/bin/opencode"}.get
    assert chosen({}, {}, which)[0] == "codex-cli"
    assert chosen({"ANTHROPIC_API_KEY": "k"}, {}, which) == (
        "anthropic",
        "auto-detected from ANTHROPIC_API_KEY",
    )
    assert chosen({}, {"llm": {"provider": "qwen"}}, which) == (
        "qwen",
        "config.toml [llm] provider",
    )
    assert chosen({"MEMLOOM_LLM": " offline "}, {"llm": {"provider": "qwen"}}, which) == (
        "offline",
        "MEMLOOM_LLM",
    )
    assert chosen({}, {}, lambda n: None)[0] == "offline"


def test_the_plugin_says_the_distiller_once_per_data_folder(tmp_path: Path) -> None:
    from memloom.capture.hooks_cli import distiller_note

    home = tmp_path / "home"
    (home).mkdir()
    (home / "config.toml").write_text('[llm]\nprovider = "gemini-cli"\n')
    first = distiller_note(home)
    assert "gemini-cli (config.toml [llm] provider)" in first and "memloom llm use" in first
    assert distiller_note(home) == ""
