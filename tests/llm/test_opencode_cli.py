"""The OpenCode provider, run against a fake ``opencode`` executable that prints what the
real OpenCode 1.18.33 printed against the scripted model (tests/fixtures/llm_cli/opencode,
captured by running the provider's own command line in the e2e sandbox)."""

from __future__ import annotations

import json
import os
import sys
import time
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
    schema_for,
    system_for,
)
from memloom.llm.opencode_cli import AGENT, OpenCodeCLIProvider, call_config

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "llm_cli" / "opencode"

#: Prints the fixture's stderr first (OpenCode's log, as it comes), then sleeps, then
#: its stdout (the events), as the real CLI does when a request fails and it retries.
FAKE = f"""#!{sys.executable}
import json, os, sys, time
stdin = sys.stdin.read()
with open(os.environ["FAKE_RECORD"], "a", encoding="utf-8") as fh:
    fh.write(json.dumps({{"argv": sys.argv, "stdin": stdin, "cwd": os.getcwd(),
                         "listing": os.listdir("."),
                         "env": {{k: v for k, v in os.environ.items()
                                 if k.startswith(("OPENCODE_", "MEMLOOM_"))}}}}) + "\\n")
sys.stderr.write(open(os.environ["FAKE_STDERR"], encoding="utf-8").read())
sys.stderr.flush()
time.sleep(float(os.environ.get("FAKE_SLEEP", "0")))
sys.stdout.write(open(os.environ["FAKE_STDOUT"], encoding="utf-8").read())
sys.exit(int(os.environ.get("FAKE_EXIT", "0")))
"""

PAYLOAD = {
    "session": {"id": "s", "project": "/w/acme", "path": "/p/s.jsonl"},
    "lines": [{"line": 1, "role": "user", "text": "The tests need PostgreSQL 16 on port 5433."}],
}
FACT = "The shop's integration tests need PostgreSQL 16 listening on port 5433."
USER_CONFIG = """{
  // mine
  "model": "anthropic/claude-sonnet-4-5",
  "permission": {"*": "allow"},
  "mcp": {
    "user-tool": {"type": "local", "command": ["user-tool", "mcp"]},
    /* memloom connect's */
    "memloom": {"type": "local", "command": ["memloom", "mcp"], "enabled": true}
  }
}
"""


class Fake:
    def __init__(self, tmp_path: Path) -> None:
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        self.exe = bin_dir / "opencode"
        self.exe.write_text(FAKE, encoding="utf-8")
        self.exe.chmod(0o755)
        self.record = tmp_path / "record.jsonl"
        self.stdout = tmp_path / "stdout.txt"
        self.stderr = tmp_path / "stderr.txt"
        self.config = tmp_path / "config"
        (self.config / "opencode").mkdir(parents=True)
        self.env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(tmp_path),
            "XDG_CONFIG_HOME": str(self.config),
            "FAKE_RECORD": str(self.record),
            "FAKE_STDOUT": str(self.stdout),
            "FAKE_STDERR": str(self.stderr),
        }
        self.fixture("ok")

    def fixture(self, name: str, **env: str) -> None:
        self.reply(
            (FIXTURES / f"{name}.stdout").read_text(),
            (FIXTURES / f"{name}.stderr").read_text(),
            **env,
        )

    def reply(self, stdout: str, stderr: str = "", **env: str) -> None:
        self.stdout.write_text(stdout, encoding="utf-8")
        self.stderr.write_text(stderr, encoding="utf-8")
        self.env.update({f"FAKE_{k.upper()}": v for k, v in env.items()})

    def provider(self, **kw: Any) -> OpenCodeCLIProvider:
        kw.setdefault("sleep", lambda s: None)
        return OpenCodeCLIProvider(executable=str(self.exe), env=self.env, **kw)

    def calls(self) -> list[dict[str, Any]]:
        if not self.record.exists():
            return []
        return [json.loads(x) for x in self.record.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def fake(tmp_path: Path) -> Fake:
    return Fake(tmp_path)


def run(p: OpenCodeCLIProvider) -> dict[str, Any]:
    return p.complete(DISTILL, system_for(DISTILL), PAYLOAD, schema_for(DISTILL))


def test_argv_config_and_isolation(fake: Fake) -> None:
    (fake.config / "opencode" / "opencode.jsonc").write_text(USER_CONFIG)
    fake.env["OPENCODE_CONFIG_CONTENT"] = json.dumps(
        {"provider": {"mine": {"options": {"baseURL": "http://x"}}}, "share": "auto"}
    )
    assert run(fake.provider(model="anthropic/claude-haiku-4-5"))["memories"][0]["content"] == FACT
    [seen] = fake.calls()
    argv = seen["argv"]
    assert argv[1:] == [
        "run",
        "--format",
        "json",
        "--agent",
        AGENT,
        "--title",
        "memloom distiller call",
        "--print-logs",
        "--log-level",
        "ERROR",
        "-m",
        "anthropic/claude-haiku-4-5",
    ]
    env = seen["env"]
    config = json.loads(env["OPENCODE_CONFIG_CONTENT"])
    # memloom's agent: no tool offered, every permission denied.
    assert config["agent"][AGENT]["permission"] == {"*": "deny"}
    assert config["agent"][AGENT]["tools"] == {"*": False}
    # Every MCP server of the user's off by name, memloom's own included; never shared;
    # the user's own inline config kept.
    assert config["mcp"] == {"memloom": {"enabled": False}, "user-tool": {"enabled": False}}
    assert config["share"] == "disabled"
    assert config["provider"] == {"mine": {"options": {"baseURL": "http://x"}}}
    assert env["OPENCODE_DISABLE_PROJECT_CONFIG"] == "1" and env["MEMLOOM_LLM_CHILD"] == "1"
    assert Path(seen["cwd"]).name.startswith("memloom-llm-opencode-")
    assert seen["listing"] == [] and not Path(seen["cwd"]).exists()
    assert seen["stdin"].startswith(LLM_CALL_MARKER + "\n")


def test_a_config_that_does_not_parse_declares_no_server(fake: Fake) -> None:
    (fake.config / "opencode" / "opencode.json").write_text("{ not json")
    assert call_config(fake.env)["mcp"] == {}


def test_the_real_output_is_read_with_its_usage(fake: Fake) -> None:
    p = fake.provider()
    assert run(p) == {"memories": [{"type": "fact", "content": FACT, "lines": [1, 1]}]}
    assert (p.input_tokens, p.output_tokens) == (100, 10)
    assert "-m" not in fake.calls()[0]["argv"]


def test_a_401_logged_stops_the_call_at_once(fake: Fake) -> None:
    # OpenCode logs the refused request, then (were it retryable) would go on retrying.
    fake.fixture("401", sleep="30", exit="1")
    started = time.monotonic()
    with pytest.raises(ProviderAuthError) as err:
        run(fake.provider())
    assert time.monotonic() - started < 10
    line = str(err.value)
    assert line.startswith("OpenCode is not logged in (Incorrect API key provided")
    assert "opencode auth login" in line and "\n" not in line
    assert len(fake.calls()) == 1


def test_a_usage_limit_logged_stops_the_call_at_once(fake: Fake) -> None:
    fake.fixture("limit", sleep="30", exit="1")
    started = time.monotonic()
    with pytest.raises(
        ProviderStopError, match=r"usage limit \(The usage limit has been reached\)"
    ):
        run(fake.provider())
    assert time.monotonic() - started < 10
    assert len(fake.calls()) == 1


def test_an_error_event_is_read_with_its_status(fake: Fake) -> None:
    fake.fixture("400", exit="1")
    with pytest.raises(ProviderUnavailableError, match="HTTP 400: Invalid schema"):
        run(fake.provider())
    assert len(fake.calls()) == 2  # retried once, then the run stops


def test_a_quota_error_event_stops_the_run(fake: Fake) -> None:
    event = json.loads((FIXTURES / "400.stdout").read_text())
    event["error"]["data"].update(
        statusCode=429, message="You exceeded your current quota, please check your plan."
    )
    fake.reply(json.dumps(event) + "\n", exit="1")
    with pytest.raises(ProviderStopError, match="HTTP 429: You exceeded your current quota"):
        run(fake.provider())


def test_garbage_output_ends_with_a_clear_line(fake: Fake) -> None:
    fake.reply("Segmentation fault (core dumped)\n")
    with pytest.raises(ProviderUnavailableError, match="gave no answer after 2 tries"):
        run(fake.provider())


def test_a_text_that_is_no_json_fails_the_chunk(fake: Fake) -> None:
    ok = (FIXTURES / "ok.stdout").read_text().splitlines()
    text = json.loads(ok[1])
    text["part"]["text"] = "Nothing worth keeping here."
    fake.reply("\n".join([ok[0], json.dumps(text), ok[2]]) + "\n")
    p = fake.provider()
    with pytest.raises(LLMError, match="not JSON"):
        run(p)
    assert p.failures[DISTILL] == 1 and len(fake.calls()) == 1


def test_a_hang_past_the_timeout_is_killed(fake: Fake) -> None:
    fake.fixture("ok", sleep="30")
    started = time.monotonic()
    with pytest.raises(ProviderUnavailableError, match=r"no answer within 0\.5 s"):
        run(fake.provider(timeout=0.5, max_tries=1))
    assert time.monotonic() - started < 10


def test_a_non_zero_exit_with_no_output(fake: Fake) -> None:
    fake.reply("", exit="3")
    with pytest.raises(ProviderUnavailableError, match="exit code 3, no answer: no output"):
        run(fake.provider())


def test_an_opencode_too_old_for_a_flag(fake: Fake) -> None:
    # What 1.18.33 prints for an option it does not know: its usage, on stderr, exit 1.
    fake.fixture("badflag", exit="1")
    with pytest.raises(ProviderStopError, match=r"needs OpenCode 1\.18\.33 or newer"):
        run(fake.provider())
