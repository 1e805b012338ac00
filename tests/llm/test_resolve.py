"""``resolve_llm``: explicit choices, the auto-detection order and clear config errors."""

from __future__ import annotations

import pytest

from memloom.config import ConfigError
from memloom.llm import (
    LLM,
    AnthropicProvider,
    ClaudeCLIProvider,
    OfflineLLM,
    OpenAIProvider,
    resolve_llm,
)

CLAUDE = "/opt/claude/bin/claude"


def on_path(name: str) -> str | None:
    return CLAUDE if name == "claude" else None


def nothing(name: str) -> None:
    return None


@pytest.mark.parametrize(
    ("env", "which", "kind"),
    [
        ({}, nothing, OfflineLLM),
        ({}, on_path, ClaudeCLIProvider),
        ({"OPENAI_API_KEY": "sk-o"}, on_path, OpenAIProvider),
        ({"ANTHROPIC_API_KEY": "sk-ant-a"}, on_path, AnthropicProvider),
        ({"OPENAI_API_KEY": "sk-o", "ANTHROPIC_API_KEY": "sk-ant-a"}, on_path, OpenAIProvider),
        (
            {"MEMLOOM_LLM_BASE_URL": "http://localhost:11434/v1", "MEMLOOM_LLM_MODEL": "llama3"},
            on_path,
            OpenAIProvider,
        ),
        (
            {
                "MEMLOOM_LLM_BASE_URL": "http://localhost:11434/v1",
                "MEMLOOM_LLM_MODEL": "llama3",
                "ANTHROPIC_API_KEY": "sk-ant-a",
            },
            nothing,
            OpenAIProvider,
        ),
        ({"MEMLOOM_LLM_API_KEY": "sk-ant-lone"}, nothing, AnthropicProvider),
        ({"MEMLOOM_LLM_API_KEY": "sk-lone"}, nothing, OpenAIProvider),
        ({"OPENAI_API_KEY": "  "}, nothing, OfflineLLM),
        ({"MEMLOOM_LLM": "offline", "OPENAI_API_KEY": "sk-o"}, on_path, OfflineLLM),
        (
            {"MEMLOOM_LLM": "anthropic", "ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "o"},
            nothing,
            AnthropicProvider,
        ),
        ({"MEMLOOM_LLM": "claude-cli", "OPENAI_API_KEY": "sk-o"}, on_path, ClaudeCLIProvider),
        ({"MEMLOOM_LLM": " OpenAI ", "OPENAI_API_KEY": "sk-o"}, nothing, OpenAIProvider),
        ({"MEMLOOM_LLM": "openai", "MEMLOOM_LLM_API_KEY": "k"}, nothing, OpenAIProvider),
        ({"MEMLOOM_LLM": "claude_cli"}, on_path, ClaudeCLIProvider),
    ],
)
def test_detection_matrix(env: dict[str, str], which, kind: type) -> None:
    llm = resolve_llm(env, which=which)
    assert type(llm) is kind
    assert isinstance(llm, LLM)
    assert llm.description
    assert llm.offline is (kind is OfflineLLM)
    for value in env.values():
        if value.strip().startswith("sk-"):
            assert value not in llm.description and value not in repr(llm)


def test_offline_says_so() -> None:
    llm = resolve_llm({}, which=nothing)
    assert llm.name == "offline" and llm.model is None
    assert "no LLM configured and no agent CLI on PATH" in llm.description
    assert "memloom llm use <name>" in llm.description
    explicit = resolve_llm({"MEMLOOM_LLM": "offline"}, which=nothing)
    assert "MEMLOOM_LLM=offline" in explicit.description


def test_openai_defaults_and_description() -> None:
    llm = resolve_llm({"OPENAI_API_KEY": "sk-o"}, which=nothing)
    assert isinstance(llm, OpenAIProvider)
    assert llm.url == "https://api.openai.com/v1/chat/completions"
    assert llm.model == "gpt-4o-mini"
    assert "auto-detected from OPENAI_API_KEY" in llm.description
    assert "key from OPENAI_API_KEY" in llm.description


def test_generic_key_wins_over_the_provider_key() -> None:
    llm = resolve_llm(
        {"MEMLOOM_LLM": "openai", "MEMLOOM_LLM_API_KEY": "k1", "OPENAI_API_KEY": "k2"},
        which=nothing,
    )
    assert "key from MEMLOOM_LLM_API_KEY" in llm.description


def test_local_server_needs_no_key() -> None:
    llm = resolve_llm(
        {"MEMLOOM_LLM_BASE_URL": "http://127.0.0.1:8080/v1/", "MEMLOOM_LLM_MODEL": "qwen"},
        which=nothing,
    )
    assert isinstance(llm, OpenAIProvider)
    assert llm.url == "http://127.0.0.1:8080/v1/chat/completions"
    assert llm.model == "qwen"
    assert "local server" in llm.description and "no API key" in llm.description


def test_anthropic_defaults() -> None:
    llm = resolve_llm({"ANTHROPIC_API_KEY": "sk-ant-x", "MEMLOOM_LLM_MODEL": "m"}, which=nothing)
    assert isinstance(llm, AnthropicProvider)
    assert llm.url == "https://api.anthropic.com/v1/messages"
    assert llm.model == "m"
    assert "auto-detected from ANTHROPIC_API_KEY" in llm.description


def test_claude_cli_model_and_description() -> None:
    llm = resolve_llm({"MEMLOOM_LLM_MODEL": "sonnet"}, which=on_path)
    assert isinstance(llm, ClaudeCLIProvider)
    assert llm.executable == CLAUDE and llm.model == "sonnet"
    assert "`claude` is on PATH" in llm.description


def test_timeout_setting() -> None:
    llm = resolve_llm({"OPENAI_API_KEY": "k", "MEMLOOM_LLM_TIMEOUT": "42"}, which=nothing)
    assert isinstance(llm, OpenAIProvider) and llm.timeout == 42.0


@pytest.mark.parametrize(
    ("env", "which", "words"),
    [
        ({"MEMLOOM_LLM": "gpt"}, nothing, "not a known distiller; choose one of openai, anthropic"),
        ({"MEMLOOM_LLM": "openai"}, nothing, "needs an API key"),
        (
            {"MEMLOOM_LLM": "openai", "MEMLOOM_LLM_BASE_URL": "https://api.openai.com/v1"},
            nothing,
            "needs an API key",
        ),
        ({"MEMLOOM_LLM": "anthropic"}, on_path, "ANTHROPIC_API_KEY"),
        ({"MEMLOOM_LLM": "anthropic", "OPENAI_API_KEY": "sk-o"}, nothing, "needs an API key"),
        ({"MEMLOOM_LLM": "claude-cli"}, nothing, "no `claude` executable"),
        ({"MEMLOOM_LLM_BASE_URL": "http://localhost:11434/v1"}, nothing, "MEMLOOM_LLM_MODEL"),
        ({"MEMLOOM_LLM_BASE_URL": "localhost:11434"}, nothing, "http(s) URL"),
        ({"OPENAI_API_KEY": "k", "MEMLOOM_LLM_TIMEOUT": "soon"}, nothing, "MEMLOOM_LLM_TIMEOUT"),
        ({"OPENAI_API_KEY": "k", "MEMLOOM_LLM_TIMEOUT": "0"}, nothing, "MEMLOOM_LLM_TIMEOUT"),
    ],
)
def test_config_errors(env: dict[str, str], which, words: str) -> None:
    with pytest.raises(ConfigError) as err:
        resolve_llm(env, which=which)
    assert isinstance(err.value, ValueError)
    assert words in str(err.value)


def test_reads_os_environ_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMLOOM_LLM", "offline")
    assert isinstance(resolve_llm(which=nothing), OfflineLLM)
