"""The Anthropic provider against a scripted ``/v1/messages`` server on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from memloom.llm import (
    CLASSIFY,
    DISTILL,
    AnthropicProvider,
    LLMError,
    ProviderAuthError,
    ProviderStopError,
    classify,
    schema_for,
    system_for,
)
from memloom.llm.anthropic import ANTHROPIC_VERSION
from tests.support.openai_server import ScriptedOpenAI, ok, status

KEY = "sk-ant-test-SECRET-42"
PAYLOAD = {
    "session": {"id": "s1", "project": "/w/acme", "path": "/p/s1.jsonl"},
    "lines": [{"line": 7, "role": "user", "text": "We deploy acme with `fly deploy`."}],
}
REPLY = {
    "memories": [{"type": "procedure", "content": "Deploy acme: `fly deploy`.", "lines": [7, 7]}]
}


def message(tool_input: Any, name: str = DISTILL, **extra: Any) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [
            {"type": "text", "text": "Recording."},
            {"type": "tool_use", "id": "toolu_1", "name": name, "input": tool_input},
        ],
        "stop_reason": "tool_use",
        "usage": {
            "input_tokens": 100,
            "output_tokens": 20,
            "cache_read_input_tokens": 5,
            "cache_creation_input_tokens": 0,
        },
        **extra,
    }


@pytest.fixture
def http() -> Iterator[ScriptedOpenAI]:
    srv = ScriptedOpenAI(default=ok(message(REPLY)))
    yield srv
    srv.close()


def provider(url: str, **kw: Any) -> tuple[AnthropicProvider, list[float]]:
    sleeps: list[float] = []
    kw.setdefault("api_key", KEY)
    return AnthropicProvider(base_url=url, model="claude-test", sleep=sleeps.append, **kw), sleeps


def call(p: AnthropicProvider, task: str = DISTILL, payload: dict | None = None) -> dict:
    return p.complete(task, system_for(task), payload or PAYLOAD, schema_for(task))


def test_forced_tool_request_shape(http: ScriptedOpenAI) -> None:
    p, _ = provider(http.url)
    assert call(p) == REPLY
    [req] = http.requests
    assert req.path == "/v1/messages"
    assert req.headers["x-api-key"] == KEY
    assert req.headers["anthropic-version"] == ANTHROPIC_VERSION
    assert "authorization" not in req.headers
    body = req.body
    assert body["model"] == "claude-test"
    assert body["temperature"] == 0
    assert isinstance(body["max_tokens"], int) and body["max_tokens"] > 0
    assert body["system"] == system_for(DISTILL)
    assert [m["role"] for m in body["messages"]] == ["user"]
    assert json.loads(body["messages"][0]["content"]) == PAYLOAD
    [tool] = body["tools"]
    assert tool["name"] == DISTILL
    assert tool["input_schema"] == schema_for(DISTILL)
    assert tool["description"]
    assert body["tool_choice"] == {"type": "tool", "name": DISTILL}


def test_usage_and_key_hygiene(http: ScriptedOpenAI) -> None:
    p, _ = provider(http.url)
    call(p)
    assert p.calls[DISTILL] == 1
    assert (p.input_tokens, p.output_tokens) == (105, 20)
    assert p.input_chars == len(system_for(DISTILL)) + len(
        http.requests[0].body["messages"][0]["content"]
    )
    assert KEY not in repr(p) and KEY not in p.description


def test_base_url_with_v1_suffix_is_accepted(http: ScriptedOpenAI) -> None:
    p, _ = provider(http.url + "/v1/")
    call(p)
    assert http.requests[0].path == "/v1/messages"


def test_classify_through_the_forced_tool(http: ScriptedOpenAI) -> None:
    labels = {"labels": [{"index": 0, "label": "contradictory", "reason": "npm vs pnpm"}]}
    http.default = ok(message(labels, name=CLASSIFY))
    p, _ = provider(http.url)
    result, dropped = classify(p, "acme uses pnpm", ["acme uses npm"])
    assert [(x.index, x.label) for x in result] == [(0, "contradictory")] and dropped == 0
    assert http.requests[0].body["tool_choice"] == {"type": "tool", "name": CLASSIFY}


def test_no_tool_call_is_a_failed_call(http: ScriptedOpenAI) -> None:
    reply = message(REPLY)
    reply["content"] = [{"type": "text", "text": "I'd rather not."}]
    reply["stop_reason"] = "end_turn"
    http.default = ok(reply)
    p, _ = provider(http.url)
    with pytest.raises(LLMError, match="no memloom_distill tool call"):
        call(p)
    assert p.failures[DISTILL] == 1


def test_overloaded_529_is_retried(http: ScriptedOpenAI) -> None:
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    http.script = [status(529, overloaded), status(429, None, **{"retry-after": "2"})]
    p, sleeps = provider(http.url, backoff=0.25)
    assert call(p) == REPLY
    assert sleeps == [0.25, 2.0]


@pytest.mark.parametrize(("code", "kind"), [(401, ProviderAuthError), (403, ProviderAuthError)])
def test_auth_errors_stop(http: ScriptedOpenAI, code: int, kind: type) -> None:
    body = {
        "type": "error",
        "error": {"type": "authentication_error", "message": "invalid x-api-key"},
    }
    http.script = [status(code, body)]
    p, sleeps = provider(http.url)
    with pytest.raises(kind, match=f"HTTP {code}.*invalid x-api-key"):
        call(p)
    assert len(http.requests) == 1 and sleeps == []


def test_low_credit_balance_stops(http: ScriptedOpenAI) -> None:
    body = {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "Your credit balance is too low to access the Anthropic API.",
        },
    }
    http.script = [status(400, body)]
    p, _ = provider(http.url)
    with pytest.raises(ProviderStopError, match="credit balance"):
        call(p)
