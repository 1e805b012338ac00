"""The seams: config's LLMSettings, the provider registry and the HTTP provider base."""

from __future__ import annotations

from typing import Any

import pytest

from memloom.config import (
    LLM_ENVIRONMENT,
    ConfigError,
    LLMSettings,
    llm_requested,
    llm_settings,
)
from memloom.llm import PROVIDERS, LLMError, OfflineLLM, ProviderAuthError, resolve_llm
from memloom.llm._http import HTTPProvider
from memloom.llm.registry import ALIASES, REGISTRY
from tests.support.openai_server import ScriptedOpenAI, ok, status


def nothing(name: str) -> None:
    return None


def test_registry_names_are_the_documented_providers() -> None:
    assert (
        PROVIDERS
        == tuple(REGISTRY)
        == (
            "openai",
            "anthropic",
            "claude-cli",
            "codex-cli",
            "gemini-cli",
            "qwen-cli",
            "copilot-cli",
            "opencode-cli",
            "offline",
        )
    )
    assert set(ALIASES.values()) <= set(REGISTRY)


def test_settings_drop_blanks_and_keep_the_generic_key_first() -> None:
    s = llm_settings({"MEMLOOM_LLM": "  ", "OPENAI_API_KEY": " o ", "MEMLOOM_LLM_API_KEY": "g"})
    assert s.provider is None and s.openai_api_key == "o"
    assert s.key_for("OPENAI_API_KEY") == ("g", "MEMLOOM_LLM_API_KEY")
    assert LLMSettings(anthropic_api_key="a").key_for("ANTHROPIC_API_KEY") == (
        "a",
        "ANTHROPIC_API_KEY",
    )
    assert LLMSettings(anthropic_api_key="a").key_for("OPENAI_API_KEY") == (None, None)


def test_settings_repr_never_shows_a_key() -> None:
    s = llm_settings({"MEMLOOM_LLM_API_KEY": "sk-secret-1", "ANTHROPIC_API_KEY": "sk-ant-2"})
    assert "sk-secret-1" not in repr(s) and "sk-ant-2" not in repr(s)
    assert "MEMLOOM_LLM_API_KEY" in repr(s)


def test_settings_check_values_only_when_read() -> None:
    s = llm_settings({"MEMLOOM_LLM_BASE_URL": "localhost:1", "MEMLOOM_LLM_TIMEOUT": "soon"})
    with pytest.raises(ConfigError, match="http"):
        _ = s.base_url
    with pytest.raises(ConfigError, match="MEMLOOM_LLM_TIMEOUT"):
        s.timeout(1.0)
    assert llm_settings({"MEMLOOM_LLM_BASE_URL": "http://h:1/v1/"}).base_url == "http://h:1/v1"
    assert llm_settings({}).timeout(7.0) == 7.0
    # A provider that ignores a variable is not stopped by its bad value.
    env = {"MEMLOOM_LLM": "offline", "MEMLOOM_LLM_TIMEOUT": "soon", "MEMLOOM_LLM_BASE_URL": "x"}
    assert isinstance(resolve_llm(env, which=nothing), OfflineLLM)


@pytest.mark.parametrize("var", LLM_ENVIRONMENT)
def test_llm_requested_shares_the_settings_variables(var: str) -> None:
    assert llm_requested({var: "x"})
    assert llm_settings({var: "x"}) != llm_settings({})
    assert not llm_requested({})


class EchoProvider(HTTPProvider):
    """A provider that only declares its wire format (what a new one has to write)."""

    name = "echo"
    kind = "echo endpoint"
    label = "Echo API"
    default_base_url = "http://unused.invalid"
    default_model = "echo-1"
    path = "/echo"

    def headers(self) -> dict[str, str]:
        return {"x-key": self._api_key} if self._api_key else {}

    def request_body(self, task: str, system: str, user: str, schema: dict[str, Any]) -> dict:
        return {"task": task, "system": system, "user": user}

    def usage_tokens(self, usage: dict[str, Any]) -> tuple[Any, Any]:
        return usage.get("in"), usage.get("out")

    def parse_reply(self, task: str, doc: dict[str, Any]) -> dict[str, Any]:
        if "answer" not in doc:
            raise LLMError(f"{task}: no answer")
        return doc["answer"]


def test_a_declared_provider_inherits_the_template() -> None:
    srv = ScriptedOpenAI(
        script=[status(503), ok({"answer": {"x": 1}, "usage": {"in": 5, "out": 2}})],
        default=ok({"nope": True}),
    )
    sleeps: list[float] = []
    try:
        p = EchoProvider(base_url=srv.url + "/", api_key="sekrit", sleep=sleeps.append)
        assert p.url == srv.url + "/echo" and p.model == "echo-1"
        assert repr(p) == f"EchoProvider(url={p.url!r}, model='echo-1', api_key=set)"
        assert p.description == f"Echo API at {srv.url}, model echo-1"
        assert p.complete("t", "sys", {"a": "ü"}, {}) == {"x": 1}
        assert sleeps == [1.0] and len(srv.requests) == 2
        (path, body) = srv.requests[1]
        assert path == "/echo" and body == {
            "model": "echo-1",
            "task": "t",
            "system": "sys",
            "user": '{"a": "ü"}',
        }
        assert srv.requests[1].headers["x-key"] == "sekrit"
        assert (p.calls["t"], p.input_chars, p.input_tokens, p.output_tokens) == (1, 13, 5, 2)
        with pytest.raises(LLMError, match="no answer"):
            p.complete("t", "sys", {}, {})
        assert p.failures["t"] == 1
        srv.script = [status(401)]
        with pytest.raises(ProviderAuthError, match="echo endpoint"):
            p.complete("t", "sys", {}, {})
    finally:
        srv.close()


def test_empty_base_url_or_model_is_refused() -> None:
    with pytest.raises(ValueError, match=r"base_url is required, e\.g\. http://unused\.invalid"):
        EchoProvider(base_url="")
    with pytest.raises(ValueError, match=r"model is required, e\.g\. echo-1"):
        EchoProvider(model="")
    with pytest.raises(ValueError, match="max_tries"):
        EchoProvider(max_tries=0)
