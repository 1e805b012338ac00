"""The Qwen Code provider, against a fake ``qwen`` replaying the real CLI's output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memloom.agents.markup import LLM_CALL_MARKER
from memloom.errors import ProviderUnavailableError
from memloom.llm import (
    DISTILL,
    LLMError,
    ProviderAuthError,
    ProviderStopError,
    resolve_llm,
    schema_for,
    system_for,
)
from memloom.llm.qwen_cli import NO_MCP_SERVER, QWEN_TOOLS, TRAILER, QwenCLIProvider, events
from tests.llm.cli_fake import FakeCLI
from tests.llm.test_gemini_cli import PAYLOAD, REPLY


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeCLI:
    return FakeCLI(tmp_path, monkeypatch, "qwen", "qwen")


def run(p: QwenCLIProvider) -> dict[str, Any]:
    return p.complete(DISTILL, system_for(DISTILL), PAYLOAD, schema_for(DISTILL))


def provider(**kw: Any) -> QwenCLIProvider:
    return QwenCLIProvider(backoff=0.0, **kw)


def test_argv_offers_no_tool_but_the_answer_s(fake: FakeCLI) -> None:
    p = provider(model="qwen3-coder-plus")
    assert p.executable == str(fake.exe)
    assert run(p) == REPLY  # through structured_output, as the real CLI printed it
    [seen] = fake.calls()
    argv = seen["argv"]

    def after(flag: str) -> str:
        return str(argv[argv.index(flag) + 1])

    assert Path(seen["cwd"]).name.startswith("memloom-llm-qwen-")
    assert not Path(seen["cwd"]).exists()
    assert after("--output-format") == "json"
    assert json.loads(after("--json-schema")) == schema_for(DISTILL)
    excluded = after("--exclude-tools").split(",")
    assert set(excluded) == set(QWEN_TOOLS) and "structured_output" not in excluded
    for tool in ("read_file", "run_shell_command", "write_file", "edit", "web_fetch", "agent"):
        assert tool in excluded
    assert after("--max-tool-calls") == "0"
    assert after("--approval-mode") == "default" and "--yolo" not in argv
    assert "--safe-mode" in argv and after("--chat-recording") == "false"
    assert after("--allowed-mcp-server-names") == NO_MCP_SERVER
    assert after("--system-prompt").startswith(system_for(DISTILL).rstrip())
    assert after("--model") == "qwen3-coder-plus" and argv[-1] == TRAILER
    first, _, rest = seen["stdin"].partition("\n")
    assert first == LLM_CALL_MARKER and json.dumps(PAYLOAD, ensure_ascii=False) in rest
    assert seen["env"]["MEMLOOM_LLM_CHILD"] == "1"
    assert (p.input_tokens, p.output_tokens) == (100, 10)


def test_a_text_answer_instead_of_structured_output_is_read(fake: FakeCLI) -> None:
    fake.replay("text-answer")  # Qwen exits 1: "plain text instead of … structured_output"
    assert run(provider()) == REPLY


def test_a_text_answer_with_no_json_fails_that_chunk(fake: FakeCLI) -> None:
    fake.replay("text-answer")
    doc = json.loads(fake.stdout.read_text())
    for event in doc:
        if event.get("type") == "assistant":
            event["message"]["content"] = [{"type": "text", "text": "I cannot help."}]
    fake.print(json.dumps(doc), code=1)
    with pytest.raises(LLMError) as info:
        run(provider())
    assert not isinstance(info.value, ProviderUnavailableError | ProviderStopError)


def test_a_model_that_insists_on_a_tool_fails_that_chunk_only(fake: FakeCLI) -> None:
    fake.replay("insisted")  # --max-tool-calls 0: exit 55 before the tool ran
    with pytest.raises(LLMError, match="asked to run a tool") as info:
        run(provider(max_tries=3))
    assert not isinstance(info.value, ProviderUnavailableError | ProviderStopError)
    assert len(fake.calls()) == 1, "retried"


@pytest.mark.parametrize(
    ("case", "error", "words"),
    [
        ("401", ProviderAuthError, ("not logged in", "incorrect api key", "/auth")),
        ("no-key", ProviderAuthError, ("not logged in", "missing api key")),
        ("usage-limit", ProviderStopError, ("usage limit", "reset at 2026-12-07 23:00 utc")),
    ],
)
def test_login_and_limit_stop_at_once_in_one_line(
    fake: FakeCLI, case: str, error: type[Exception], words: tuple[str, ...]
) -> None:
    fake.replay(case)
    with pytest.raises(error) as info:
        run(provider(max_tries=3))
    text = str(info.value)
    assert "\n" not in text and text.startswith("Qwen Code")
    assert all(w in text.lower() for w in words), text
    assert len(fake.calls()) == 1, "retried"


def test_a_flag_it_does_not_know_names_the_version(fake: FakeCLI) -> None:
    fake.replay("bad-flag")
    with pytest.raises(ProviderStopError, match=r"Qwen Code 0\.24\.4 or newer") as info:
        run(provider(max_tries=3))
    assert "\n" not in str(info.value) and len(fake.calls()) == 1


def test_garbage_is_retried_as_no_answer_then_stops_the_run(fake: FakeCLI) -> None:
    fake.print("Segmentation fault\n", code=0)
    with pytest.raises(ProviderUnavailableError, match="no answer") as info:
        run(provider(max_tries=2))
    assert "\n" not in str(info.value) and len(fake.calls()) == 2


def test_a_hang_is_killed_retried_then_stops_the_run(fake: FakeCLI) -> None:
    fake.print(sleep="30")
    with pytest.raises(ProviderUnavailableError, match="no answer within 1 s"):
        run(provider(timeout=1, max_tries=2))
    assert len(fake.calls()) == 2


def test_an_exit_with_no_output_is_retried_then_stops_the_run(fake: FakeCLI) -> None:
    fake.print(code=3)
    with pytest.raises(ProviderUnavailableError, match="exit code 3, no answer"):
        run(provider(max_tries=2))
    assert len(fake.calls()) == 2


def test_events_read_the_array_and_the_error_object_after_warnings() -> None:
    text = '⚠ SAFE MODE\n[{"type": "result", "is_error": false}]\n{\n  "error": {"code": 1}\n}\n'
    assert events(text) == [{"type": "result", "is_error": False}, {"error": {"code": 1}}]


def test_resolved_by_name(fake: FakeCLI) -> None:
    llm = resolve_llm({"MEMLOOM_LLM": "qwen-code"})
    assert isinstance(llm, QwenCLIProvider) and llm.executable == str(fake.exe)
