"""Choosing an agent's CLI as the distiller: the names, config.toml's ``[llm]`` table,
the detection order, and the daily cap of calls through a CLI."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import pytest

from memloom.config import ConfigError, cli_daily_cap, llm_requested, llm_settings
from memloom.llm import (
    CLI_ORDER,
    DISTILL,
    ClaudeCLIProvider,
    DailyMeter,
    OfflineLLM,
    ProviderStopError,
    installed_clis,
    normalise,
    resolve_llm,
    schema_for,
    system_for,
)

CLAUDE_REPLY = {
    "type": "result",
    "subtype": "success",
    "is_error": False,
    "structured_output": {"memories": []},
}


def which_of(*found: str):
    return lambda name: f"/usr/bin/{name}" if name in found else None


@pytest.mark.parametrize(
    ("raw", "name"),
    [
        ("codex", "codex-cli"),
        ("Codex-CLI", "codex-cli"),
        ("claude-code", "claude-cli"),
        ("claude", "claude-cli"),
        ("gemini", "gemini-cli"),
        ("qwen-code", "qwen-cli"),
        ("qwen", "qwen-cli"),
        ("copilot", "copilot-cli"),
        ("opencode", "opencode-cli"),
        ("none", "offline"),
        (" offline ", "offline"),
    ],
)
def test_an_agents_own_name_means_its_cli(raw: str, name: str) -> None:
    assert normalise(raw) == name


def test_an_unknown_name_lists_the_choices() -> None:
    with pytest.raises(ConfigError, match=r"not a known distiller.*codex-cli.*opencode-cli"):
        normalise("cursor")


def test_detection_takes_the_first_cli_on_path_in_the_documented_order() -> None:
    order = [cli.binary for cli in CLI_ORDER]
    assert order == ["claude", "codex", "gemini", "qwen", "copilot", "opencode"]
    assert [c.name for c, _ in installed_clis(which_of("opencode", "gemini"))] == [
        "gemini-cli",
        "opencode-cli",
    ]


def test_detection_says_which_and_why(tmp_path: Path) -> None:
    exe = tmp_path / "claude"
    exe.write_text("#!/bin/sh\n")
    llm = resolve_llm({}, which=lambda n: str(exe) if n == "claude" else None)
    assert isinstance(llm, ClaudeCLIProvider)
    assert "auto-detected: `claude` is on PATH" in llm.description
    assert "memloom llm use" in llm.description
    # Keys still come first.
    llm = resolve_llm({"ANTHROPIC_API_KEY": "sk-ant-x"}, which=lambda n: str(exe))
    assert llm.name == "anthropic"
    # Nothing at all: offline.
    assert isinstance(resolve_llm({}, which=lambda n: None), OfflineLLM)


def test_config_toml_names_the_provider_and_the_environment_wins(tmp_path: Path) -> None:
    config = {"llm": {"provider": "offline", "model": "m1", "timeout": 30}}
    s = llm_settings({}, config)
    assert (s.provider, s.model, s.timeout(5)) == ("offline", "m1", 30.0)
    assert s.provider_source == "config.toml [llm] provider = offline"
    llm = resolve_llm({}, which=lambda n: "/usr/bin/claude", config=config)
    assert isinstance(llm, OfflineLLM) and "config.toml [llm] provider" in llm.description
    s = llm_settings({"MEMLOOM_LLM": "openai", "MEMLOOM_LLM_MODEL": "m2"}, config)
    assert (s.provider, s.model, s.provider_source) == ("openai", "m2", "MEMLOOM_LLM=openai")
    assert llm_requested({}, config) and not llm_requested({}, {})


def test_config_toml_errors_say_where(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"\[llm\] must be a table"):
        llm_settings({}, {"llm": "codex"})
    with pytest.raises(ConfigError, match=r"\[llm\] provider must be a string"):
        llm_settings({}, {"llm": {"provider": ["codex"]}})
    with pytest.raises(ConfigError, match=r"config.toml \[llm\] provider = gpt.*not a known"):
        resolve_llm({}, which=lambda n: None, config={"llm": {"provider": "gpt"}})
    with pytest.raises(ConfigError, match="no `claude` executable is on PATH"):
        resolve_llm({}, which=lambda n: None, config={"llm": {"provider": "claude"}})


def test_the_cli_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMLOOM_CLI_DAILY_CAP", raising=False)
    assert cli_daily_cap({}) == 25
    assert cli_daily_cap({"llm": {"cli_daily_cap": 3}}) == 3
    monkeypatch.setenv("MEMLOOM_CLI_DAILY_CAP", "7")
    assert cli_daily_cap({"llm": {"cli_daily_cap": 3}}) == 7
    monkeypatch.setenv("MEMLOOM_CLI_DAILY_CAP", "-1")
    with pytest.raises(ConfigError, match="MEMLOOM_CLI_DAILY_CAP must be a whole number"):
        cli_daily_cap({})
    monkeypatch.delenv("MEMLOOM_CLI_DAILY_CAP")
    with pytest.raises(ConfigError, match="cli_daily_cap must be a whole number"):
        cli_daily_cap({"llm": {"cli_daily_cap": "lots"}})


def test_the_meter_counts_across_threads_and_stops_at_the_cap(tmp_path: Path) -> None:
    meter = DailyMeter(tmp_path, cap=40)
    results: list[bool] = []
    lock = threading.Lock()

    def take() -> None:
        for _ in range(10):
            ok = DailyMeter(tmp_path, cap=40).take("codex-cli")
            with lock:
                results.append(ok)

    threads = [threading.Thread(target=take) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count(True) == 40 and results.count(False) == 10
    assert meter.used() == 40
    doc = json.loads((tmp_path / "llm-cli-calls.json").read_text())
    assert list(doc.values()) == [{"codex-cli": 40}]
    assert (tmp_path / "llm-cli-calls.json").stat().st_mode & 0o077 == 0


def test_a_damaged_counter_starts_again(tmp_path: Path) -> None:
    (tmp_path / "llm-cli-calls.json").write_text("{not json")
    meter = DailyMeter(tmp_path, cap=1)
    assert meter.take("gemini-cli") and not meter.take("gemini-cli")


def test_a_provider_past_its_cap_stops_the_run_before_running(tmp_path: Path) -> None:
    record = tmp_path / "ran"
    exe = tmp_path / "claude"
    exe.write_text(
        f"#!{sys.executable}\nimport sys\nsys.stdin.read()\nopen({str(record)!r}, 'a').write('x')\n"
        f"print({json.dumps(json.dumps(CLAUDE_REPLY))})\n"
    )
    exe.chmod(0o755)
    p = ClaudeCLIProvider(executable=str(exe))
    p.meter = DailyMeter(tmp_path, cap=1)
    payload = {"session": {"id": "s"}, "lines": []}
    assert p.complete(DISTILL, system_for(DISTILL), payload, schema_for(DISTILL)) == {
        "memories": []
    }
    with pytest.raises(ProviderStopError, match="today's cap of 1 distillation calls"):
        p.complete(DISTILL, system_for(DISTILL), payload, schema_for(DISTILL))
    assert record.read_text() == "x"  # the second call never ran the CLI
