"""The Gemini CLI provider, against a fake ``gemini`` replaying the real CLI's output."""

from __future__ import annotations

import json
import os
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
from memloom.llm.gemini_cli import (
    DENY_ALL_POLICY,
    NO_MCP_SERVER,
    POLICY_FILE,
    SYSTEM_FILE,
    GeminiCLIProvider,
    last_json_object,
)
from tests.llm.cli_fake import FakeCLI

PAYLOAD = {
    "session": {"id": "s", "project": "/w/acme", "path": "/p/s.jsonl"},
    "lines": [{"line": 1, "role": "user", "text": "tests need PostgreSQL 16 on port 5433"}],
}
#: What the scripted model answered in the fixtures' runs.
REPLY = {
    "memories": [
        {
            "type": "fact",
            "content": "The integration tests need PostgreSQL 16 on port 5433.",
            "lines": [1, 1],
        }
    ]
}


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeCLI:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)
    return FakeCLI(tmp_path, monkeypatch, "gemini", "gemini")


def run(p: GeminiCLIProvider) -> dict[str, Any]:
    return p.complete(DISTILL, system_for(DISTILL), PAYLOAD, schema_for(DISTILL))


def provider(**kw: Any) -> GeminiCLIProvider:
    return GeminiCLIProvider(backoff=0.0, **kw)


def test_argv_policy_system_prompt_and_isolation(fake: FakeCLI, tmp_path: Path) -> None:
    p = provider(model="gemini-2.5-flash")
    assert p.executable == str(fake.exe)
    assert run(p) == REPLY
    [seen] = fake.calls()
    argv = seen["argv"]

    def after(flag: str) -> str:
        return str(argv[argv.index(flag) + 1])

    workdir = Path(seen["cwd"])
    assert workdir.name.startswith("memloom-llm-gemini-") and not workdir.exists()
    assert after("--output-format") == "json"
    assert after("--approval-mode") == "default"
    policy = str(workdir / POLICY_FILE)
    assert after("--admin-policy") == policy and after("--policy") == policy
    assert seen["files"][policy] == DENY_ALL_POLICY
    assert 'toolName = "*"' in DENY_ALL_POLICY and 'decision = "deny"' in DENY_ALL_POLICY
    assert after("--allowed-mcp-server-names") == NO_MCP_SERVER
    assert after("--extensions") == "none"
    assert "--skip-trust" in argv and after("--model") == "gemini-2.5-flash"
    assert "--yolo" not in argv and "-y" not in argv
    # The instructions are Gemini's system prompt; the prompt is the marker and the data.
    env = seen["env"]
    assert env["MEMLOOM_LLM_CHILD"] == "1"
    assert env["GEMINI_SYSTEM_MD"] == str(workdir / SYSTEM_FILE)
    assert env["TMPDIR"] == str(workdir)  # Gemini's error reports stay in the folder
    system = seen["files"][str(workdir / SYSTEM_FILE)]
    assert system.startswith(system_for(DISTILL).rstrip()) and '"memories"' in system
    first, _, rest = seen["stdin"].partition("\n")
    assert first == LLM_CALL_MARKER and json.dumps(PAYLOAD, ensure_ascii=False) in rest
    assert p.input_tokens == 100 and p.output_tokens == 10  # the fixture's stats


def test_the_answer_after_a_refused_tool_call(fake: FakeCLI) -> None:
    fake.replay("insisted")  # the model called run_shell_command; Gemini: not found
    assert run(provider()) == REPLY
    assert len(fake.calls()) == 1


@pytest.mark.parametrize(
    ("case", "error", "words"),
    [
        ("401", ProviderAuthError, ("not logged in", "api key not valid", "sign in")),
        ("no-key", ProviderAuthError, ("not logged in", "gemini_api_key")),
        ("daily-quota", ProviderStopError, ("usage limit", "exhausted your daily quota")),
    ],
)
def test_login_and_quota_stop_at_once_in_one_line(
    fake: FakeCLI, case: str, error: type[Exception], words: tuple[str, ...]
) -> None:
    fake.replay(case)
    with pytest.raises(error) as info:
        run(provider(max_tries=3))
    text = str(info.value)
    assert "\n" not in text and text.startswith("Gemini CLI")
    assert all(w in text.lower() for w in words), text
    assert len(fake.calls()) == 1, "retried"


def test_a_flag_it_does_not_know_names_the_version(fake: FakeCLI) -> None:
    fake.replay("bad-flag")
    with pytest.raises(ProviderStopError, match=r"Gemini CLI 0\.61\.0 or newer") as info:
        run(provider(max_tries=3))
    assert "\n" not in str(info.value) and len(fake.calls()) == 1


def test_garbage_is_retried_as_no_answer_then_stops_the_run(fake: FakeCLI) -> None:
    fake.print("Segmentation fault\n")
    with pytest.raises(ProviderUnavailableError, match="no answer") as info:
        run(provider(max_tries=2))
    assert "\n" not in str(info.value) and len(fake.calls()) == 2


def test_an_answer_with_no_json_fails_that_chunk_only(fake: FakeCLI) -> None:
    fake.print(json.dumps({"session_id": "x", "response": "Sure! Here are the memories."}))
    with pytest.raises(LLMError) as info:
        run(provider())
    assert not isinstance(info.value, ProviderUnavailableError | ProviderStopError)
    assert len(fake.calls()) == 1


def test_an_empty_response_fails_that_chunk_only(fake: FakeCLI) -> None:
    fake.print(json.dumps({"session_id": "x", "response": "", "stats": {}}))
    with pytest.raises(LLMError, match="empty answer"):
        run(provider())


def test_a_hang_is_killed_retried_then_stops_the_run(fake: FakeCLI) -> None:
    fake.print(sleep="30")
    with pytest.raises(ProviderUnavailableError, match="no answer within 1 s") as info:
        run(provider(timeout=1, max_tries=2))
    assert "session stays undone" in str(info.value) and "\n" not in str(info.value)
    assert len(fake.calls()) == 2


def test_an_exit_with_no_output_is_retried_then_stops_the_run(fake: FakeCLI) -> None:
    fake.print(code=3)
    with pytest.raises(ProviderUnavailableError, match="exit code 3, no answer"):
        run(provider(max_tries=2))
    assert len(fake.calls()) == 2


HOOK_LEAVES_PROJECTS = """
home = os.path.join(os.environ["HOME"], ".gemini")
me = os.getcwd()
short = os.path.basename(me)
for kind in ("tmp", "history"):
    os.makedirs(os.path.join(home, kind, short, "chats"), exist_ok=True)
    open(os.path.join(home, kind, short, ".project_root"), "w").write(me)
open(os.path.join(home, "tmp", short, "chats", "session-x.jsonl"), "w").write("{}")
# the user's own project, and a folder of the same name that is another project's
os.makedirs(os.path.join(home, "tmp", "shop"), exist_ok=True)
open(os.path.join(home, "tmp", "shop", ".project_root"), "w").write("/home/u/shop")
json.dump({"projects": {me: short, "/home/u/shop": "shop"}},
          open(os.path.join(home, "projects.json"), "w"))
"""


def test_after_removes_only_the_call_s_own_project_folders(fake: FakeCLI) -> None:
    fake.print(json.dumps({"session_id": "x", "response": json.dumps(REPLY)}),
               hook=HOOK_LEAVES_PROJECTS)  # fmt: skip
    assert run(provider()) == REPLY
    home = Path(os.environ["HOME"]) / ".gemini"
    short = Path(fake.calls()[0]["cwd"]).name
    assert not (home / "tmp" / short).exists() and not (home / "history" / short).exists()
    assert (home / "tmp" / "shop" / ".project_root").read_text() == "/home/u/shop"


def test_after_keeps_a_folder_whose_root_is_another(fake: FakeCLI, tmp_path: Path) -> None:
    p = provider()
    workdir = tmp_path / "memloom-llm-gemini-abc"
    workdir.mkdir()
    other = Path(os.environ["HOME"]) / ".gemini" / "tmp" / workdir.name
    other.mkdir(parents=True)
    (other / ".project_root").write_text("/somewhere/else/memloom-llm-gemini-abc")
    p.after(workdir)
    assert other.exists()


def test_last_json_object_skips_warnings_and_traces() -> None:
    text = 'Warning: x\n  at f (file.js:1)\n{\n  "error": {"message": "m", "code": 1}\n}\n'
    assert last_json_object(text) == {"error": {"message": "m", "code": 1}}
    assert last_json_object("no json {here}") is None


def test_resolved_by_name(fake: FakeCLI) -> None:
    llm = resolve_llm({"MEMLOOM_LLM": "gemini-cli"})
    assert isinstance(llm, GeminiCLIProvider) and llm.executable == str(fake.exe)
    assert "MEMLOOM_LLM=gemini-cli" in llm.description
