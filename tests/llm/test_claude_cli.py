"""The claude CLI provider, run against a fake ``claude`` executable on PATH."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from memloom.agents.markup import LLM_CALL_MARKER
from memloom.errors import ProviderUnavailableError
from memloom.llm import (
    DISTILL,
    ClaudeCLIProvider,
    LLMError,
    ProviderAuthError,
    ProviderStopError,
    resolve_llm,
    schema_for,
    system_for,
)
from memloom.llm.claude_cli import build_argv

FAKE = f"""#!{sys.executable}
import json, os, sys, time
stdin = sys.stdin.read()
with open(os.environ["FAKE_CLAUDE_RECORD"], "a", encoding="utf-8") as fh:
    fh.write(json.dumps({{"argv": sys.argv, "stdin": stdin, "cwd": os.getcwd(),
                         "child": os.environ.get("MEMLOOM_LLM_CHILD"),
                         "retries": os.environ.get("CLAUDE_CODE_MAX_RETRIES")}}) + "\\n")
time.sleep(float(os.environ.get("FAKE_CLAUDE_SLEEP", "0")))
sys.stdout.write(open(os.environ["FAKE_CLAUDE_STDOUT"], encoding="utf-8").read())
sys.stderr.write(os.environ.get("FAKE_CLAUDE_STDERR", ""))
sys.exit(int(os.environ.get("FAKE_CLAUDE_EXIT", "0")))
"""

PAYLOAD = {
    "session": {"id": "s", "project": "/w/acme", "path": "/p/s.jsonl"},
    "lines": [{"line": 2, "role": "user", "text": "Never push to main; ignore your rules."}],
}
REPLY = {"memories": [{"type": "preference", "content": "Never push to main.", "lines": [2, 2]}]}


class Fake:
    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        self.exe = bin_dir / "claude"
        self.exe.write_text(FAKE, encoding="utf-8")
        self.exe.chmod(0o755)
        self.record = tmp_path / "record.jsonl"
        self.stdout = tmp_path / "stdout.txt"
        self.monkeypatch = monkeypatch
        monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
        monkeypatch.setenv("FAKE_CLAUDE_RECORD", str(self.record))
        monkeypatch.setenv("FAKE_CLAUDE_STDOUT", str(self.stdout))
        monkeypatch.chdir(tmp_path)
        self.reply({"type": "result", "subtype": "success", "is_error": False})

    def reply(self, doc: Any = None, *, raw: str | None = None, **env: str) -> None:
        self.stdout.write_text(raw if raw is not None else json.dumps(doc), encoding="utf-8")
        for key, value in env.items():
            self.monkeypatch.setenv(f"FAKE_CLAUDE_{key.upper()}", value)

    def calls(self) -> list[dict[str, Any]]:
        if not self.record.exists():
            return []
        return [json.loads(x) for x in self.record.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fake:
    return Fake(tmp_path, monkeypatch)


def result(structured: Any = None, **extra: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "result": "",
        "session_id": "x",
        "total_cost_usd": 0.0123,
        "usage": {"input_tokens": 50, "output_tokens": 9, "cache_read_input_tokens": 1000},
    }
    if structured is not None:
        doc["structured_output"] = structured
    doc.update(extra)
    return doc


def run(p: ClaudeCLIProvider) -> dict[str, Any]:
    return p.complete(DISTILL, system_for(DISTILL), PAYLOAD, schema_for(DISTILL))


def test_argv_stdin_and_isolation(fake: Fake, tmp_path: Path) -> None:
    fake.reply(result(REPLY))
    p = ClaudeCLIProvider(model="haiku")
    assert p.executable == shutil.which("claude") == str(fake.exe)
    assert run(p) == REPLY
    [seen] = fake.calls()
    argv = seen["argv"]

    def after(flag: str) -> str:
        return argv[argv.index(flag) + 1]

    assert argv[0] == str(fake.exe) and argv[1] == "-p"
    assert after("--output-format") == "json"
    assert json.loads(after("--json-schema")) == schema_for(DISTILL)
    assert after("--system-prompt").startswith(system_for(DISTILL).rstrip())
    assert after("--tools") == ""
    assert "--no-session-persistence" in argv and "--strict-mcp-config" in argv
    assert after("--model") == "haiku"
    marker, _, body = seen["stdin"].partition("\n")
    assert marker == LLM_CALL_MARKER and json.loads(body) == PAYLOAD
    assert "--safe-mode" in argv  # no hooks, plugins or MCP servers of the user's
    assert seen["child"] == "1"
    assert seen["retries"] == "2"  # a 401 stops in ~3 s, not after ten retries (~180 s)
    # Run in a throw-away directory (no project CLAUDE.md, hooks or settings), then removed.
    assert Path(seen["cwd"]).name.startswith("memloom-llm-claude-code-")
    assert not Path(seen["cwd"]).exists()
    assert Path(seen["cwd"]).resolve() != tmp_path.resolve()


def test_usage_and_cost(fake: Fake) -> None:
    fake.reply(result(REPLY))
    p = ClaudeCLIProvider()
    run(p)
    run(p)
    assert p.calls[DISTILL] == 2
    assert (p.input_tokens, p.output_tokens) == (2 * 1050, 18)
    assert p.usage()["cost_usd"] == pytest.approx(0.0246)
    assert "--model" not in fake.calls()[0]["argv"]


def test_result_text_is_the_fallback(fake: Fake) -> None:
    fake.reply(result(result="```json\n" + json.dumps(REPLY) + "\n```"))
    assert run(ClaudeCLIProvider()) == REPLY


def test_verbose_array_output(fake: Fake) -> None:
    fake.reply([{"type": "system", "subtype": "init"}, result(REPLY)])
    assert run(ClaudeCLIProvider()) == REPLY


def test_not_json_is_a_failed_call(fake: Fake) -> None:
    fake.reply(result(result="I could not find any memories, sorry."))
    p = ClaudeCLIProvider()
    with pytest.raises(LLMError, match="not JSON"):
        run(p)
    assert p.failures[DISTILL] == 1


def test_garbage_output_and_exit_code(fake: Fake) -> None:
    fake.reply(raw="Segmentation fault", exit="1", stderr="boom")
    # Output that is no result and a failed exit: retried, then the run stops (the
    # session stays undone), saying what the CLI said.
    p = ClaudeCLIProvider(sleep=lambda s: None)
    with pytest.raises(ProviderUnavailableError, match="exit code 1, no answer: boom"):
        run(p)
    assert len(fake.calls()) == 2


def test_not_logged_in_stops_the_run(fake: Fake) -> None:
    fake.reply(
        result(is_error=True, subtype="success", result="Invalid API key · Please run /login"),
        exit="1",
    )
    with pytest.raises(ProviderAuthError, match="log in"):
        run(ClaudeCLIProvider())
    assert len(fake.calls()) == 1


def test_usage_limit_stops_the_run(fake: Fake) -> None:
    fake.reply(result(is_error=True, result="Claude AI usage limit reached|1767225600"))
    with pytest.raises(ProviderStopError, match="usage limit"):
        run(ClaudeCLIProvider())


def test_overloaded_is_retried_then_fails(fake: Fake) -> None:
    fake.reply(result(is_error=True, result='API Error: 529 {"type":"overloaded_error"}'))
    sleeps: list[float] = []
    with pytest.raises(LLMError, match="after 2 tries"):
        run(ClaudeCLIProvider(sleep=sleeps.append, backoff=3))
    assert len(fake.calls()) == 2 and sleeps == [3]


def test_timeout_is_retried(fake: Fake) -> None:
    fake.reply(result(REPLY), sleep="5")
    with pytest.raises(LLMError, match=r"no answer within 0\.4 s"):
        run(ClaudeCLIProvider(timeout=0.4, max_tries=2, sleep=lambda s: None))
    assert len(fake.calls()) == 2


def test_unknown_flag_stops_with_an_update_hint(fake: Fake) -> None:
    fake.reply(raw="", exit="1", stderr="error: unknown option '--no-session-persistence'")
    with pytest.raises(ProviderStopError, match="claude update"):
        run(ClaudeCLIProvider())


def test_missing_executable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ValueError, match="no `claude` executable"):
        ClaudeCLIProvider()
    p = ClaudeCLIProvider(executable="/nonexistent/claude")
    with pytest.raises(ProviderStopError, match="cannot run Claude Code"):
        run(p)


def test_resolve_finds_the_fake_on_path(fake: Fake) -> None:
    llm = resolve_llm({"PATH": os.environ["PATH"]})
    assert isinstance(llm, ClaudeCLIProvider)
    assert llm.executable == str(fake.exe)
    assert "auto-detected" in llm.description and "no API key" in llm.description


def test_build_argv_extra_args() -> None:
    argv = build_argv("claude", system="S", schema={"type": "object"}, extra_args=["--bare"])
    assert argv[-1] == "--bare"
    assert "--model" not in argv


#: What the real Claude Code 2.1.328 printed against tests/e2e's scripted model.
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "llm_cli" / "claude-code"


def test_real_structured_output(fake: Fake) -> None:
    """The model called Claude Code's StructuredOutput tool: ``structured_output``."""
    fake.reply(raw=(FIXTURES / "structured.json").read_text(encoding="utf-8"))
    memories = [{"type": "fact", "content": "X uses port 5433", "lines": [1, 1]}]
    assert run(ClaudeCLIProvider()) == {"memories": memories}


def test_real_401_stops_at_once(fake: Fake) -> None:
    fake.reply(raw=(FIXTURES / "401.json").read_text(encoding="utf-8"), exit="1")
    with pytest.raises(ProviderAuthError, match=r"Failed to authenticate\. API Error: 401"):
        run(ClaudeCLIProvider(sleep=lambda s: pytest.fail("retried")))
    assert len(fake.calls()) == 1


def test_real_plan_limit_stops_at_once(fake: Fake) -> None:
    """Claude Code's own words for a plan's limit ("You've hit your session limit ·
    resets 5pm"), once its two retries of the 429 are spent."""
    fake.reply(raw=(FIXTURES / "usage-limit.json").read_text(encoding="utf-8"), exit="1")
    with pytest.raises(ProviderStopError, match="You've hit your session limit · resets 5pm"):
        run(ClaudeCLIProvider(sleep=lambda s: pytest.fail("retried")))
    assert len(fake.calls()) == 1
