"""The Codex CLI provider, run against a fake ``codex`` executable that prints what the
real Codex CLI 0.169.0 printed against the scripted model (tests/fixtures/llm_cli/codex,
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
from memloom.llm.codex_cli import DISABLED_FEATURES, CodexCLIProvider, mcp_server_names

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "llm_cli" / "codex"

FAKE = f"""#!{sys.executable}
import json, os, sys, time
stdin = sys.stdin.read()
argv = sys.argv
schema = None
if "--output-schema" in argv:
    with open(argv[argv.index("--output-schema") + 1], encoding="utf-8") as fh:
        schema = json.load(fh)
with open(os.environ["FAKE_RECORD"], "a", encoding="utf-8") as fh:
    fh.write(json.dumps({{"argv": argv, "stdin": stdin, "cwd": os.getcwd(),
                         "listing": os.listdir("."), "schema": schema,
                         "child": os.environ.get("MEMLOOM_LLM_CHILD")}}) + "\\n")
time.sleep(float(os.environ.get("FAKE_SLEEP", "0")))
sys.stdout.write(open(os.environ["FAKE_STDOUT"], encoding="utf-8").read())
sys.stderr.write(open(os.environ["FAKE_STDERR"], encoding="utf-8").read())
sys.exit(int(os.environ.get("FAKE_EXIT", "0")))
"""

PAYLOAD = {
    "session": {"id": "s", "project": "/w/acme", "path": "/p/s.jsonl"},
    "lines": [{"line": 1, "role": "user", "text": "The tests need PostgreSQL 16 on port 5433."}],
}
FACT = "The shop's integration tests need PostgreSQL 16 listening on port 5433."


class Fake:
    def __init__(self, tmp_path: Path) -> None:
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        self.exe = bin_dir / "codex"
        self.exe.write_text(FAKE, encoding="utf-8")
        self.exe.chmod(0o755)
        self.record = tmp_path / "record.jsonl"
        self.stdout = tmp_path / "stdout.txt"
        self.stderr = tmp_path / "stderr.txt"
        self.home = tmp_path / "codex-home"
        self.home.mkdir()
        self.env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(tmp_path),
            "CODEX_HOME": str(self.home),
            "FAKE_RECORD": str(self.record),
            "FAKE_STDOUT": str(self.stdout),
            "FAKE_STDERR": str(self.stderr),
        }
        self.fixture("ok")

    def fixture(self, name: str, **env: str) -> None:
        """Print what the real CLI printed in case ``name`` (stdout, stderr)."""
        self.reply(
            (FIXTURES / f"{name}.stdout").read_text(),
            (FIXTURES / f"{name}.stderr").read_text(),
            **env,
        )

    def reply(self, stdout: str, stderr: str = "", **env: str) -> None:
        self.stdout.write_text(stdout, encoding="utf-8")
        self.stderr.write_text(stderr, encoding="utf-8")
        self.env.update({f"FAKE_{k.upper()}": v for k, v in env.items()})

    def provider(self, **kw: Any) -> CodexCLIProvider:
        kw.setdefault("sleep", lambda s: None)
        return CodexCLIProvider(executable=str(self.exe), env=self.env, **kw)

    def calls(self) -> list[dict[str, Any]]:
        if not self.record.exists():
            return []
        return [json.loads(x) for x in self.record.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def fake(tmp_path: Path) -> Fake:
    return Fake(tmp_path)


def run(p: CodexCLIProvider) -> dict[str, Any]:
    return p.complete(DISTILL, system_for(DISTILL), PAYLOAD, schema_for(DISTILL))


def test_argv_stdin_and_isolation(fake: Fake) -> None:
    (fake.home / "config.toml").write_text(
        'model = "gpt-x"\n[mcp_servers.user-tool]\ncommand = "x"\n'
        '[mcp_servers.memloom]\ncommand = "memloom"\nargs = ["mcp"]\n'
        '[profiles.work.mcp_servers.work_db]\ncommand = "db"\n'
    )
    p = fake.provider(model="gpt-5-codex")
    reply = run(p)
    assert reply["memories"][0]["content"] == FACT
    [seen] = fake.calls()
    argv = seen["argv"]
    assert argv[1:6] == ["exec", "--skip-git-repo-check", "--ephemeral", "--sandbox", "read-only"]
    assert "--json" in argv and argv[-1] == "-"  # the prompt on stdin
    configs = [argv[i + 1] for i, a in enumerate(argv) if a == "-c"]
    assert configs == [
        'approval_policy="never"',
        'web_search="disabled"',
        "mcp_servers.memloom.enabled=false",
        "mcp_servers.user-tool.enabled=false",
    ]  # not a legacy profile's: naming a server config.toml lacks breaks Codex's config
    disabled = [argv[i + 1] for i, a in enumerate(argv) if a == "--disable"]
    assert disabled == list(DISABLED_FEATURES)
    assert {"shell_tool", "unified_exec", "view_image", "hooks", "multi_agent"} <= set(disabled)
    assert argv[argv.index("-m") + 1] == "gpt-5-codex"
    # The schema file: the task's schema, beside the folder (never in it), removed after.
    schema_path = Path(argv[argv.index("--output-schema") + 1])
    assert seen["schema"] == schema_for(DISTILL)
    assert schema_path.parent == Path(seen["cwd"]).parent and not schema_path.exists()
    # A fresh, empty folder of memloom's, removed after; the marker first; the child flag.
    assert Path(seen["cwd"]).name.startswith("memloom-llm-codex-")
    assert seen["listing"] == [] and not Path(seen["cwd"]).exists()
    assert seen["stdin"].startswith(LLM_CALL_MARKER + "\n")
    assert json.dumps(PAYLOAD) in seen["stdin"] and seen["child"] == "1"


def test_the_real_output_is_read_with_its_usage(fake: Fake) -> None:
    p = fake.provider()
    assert run(p) == {"memories": [{"type": "fact", "content": FACT, "lines": [1, 1]}]}
    assert (p.input_tokens, p.output_tokens) == (100, 10)
    assert "-m" not in fake.calls()[0]["argv"]


def test_no_config_means_no_mcp_override(fake: Fake) -> None:
    assert mcp_server_names({"CODEX_HOME": str(fake.home)}) == []
    (fake.home / "config.toml").write_text("not toml = = =")
    assert mcp_server_names({"CODEX_HOME": str(fake.home)}) == []


def test_401_stops_the_run_in_one_line(fake: Fake) -> None:
    fake.fixture("401", exit="1")
    with pytest.raises(ProviderAuthError) as err:
        run(fake.provider())
    line = str(err.value)
    assert line.startswith("Codex CLI is not logged in (unexpected status 401 Unauthorized")
    assert "run `codex login`" in line and "\n" not in line
    assert len(fake.calls()) == 1  # never retried


def test_usage_limit_stops_the_run_with_its_reset(fake: Fake) -> None:
    fake.fixture("limit", exit="1")
    with pytest.raises(ProviderStopError) as err:
        run(fake.provider())
    line = str(err.value)
    assert "reached its plan's usage limit (You’ve hit your usage limit." in line
    assert "try again at Mar 17th, 2030 5:46 PM" in line and "\n" not in line
    assert len(fake.calls()) == 1


def test_a_refused_request_is_retried_then_stops(fake: Fake) -> None:
    fake.fixture("400", exit="1")
    with pytest.raises(ProviderUnavailableError, match="Invalid schema for response_format"):
        run(fake.provider())
    assert len(fake.calls()) == 2


def test_garbage_output_ends_with_a_clear_line(fake: Fake) -> None:
    fake.reply("Segmentation fault (core dumped)\n")
    with pytest.raises(ProviderUnavailableError, match="gave no answer after 2 tries"):
        run(fake.provider())


def test_a_message_that_is_no_json_fails_the_chunk(fake: Fake) -> None:
    ok = (FIXTURES / "ok.stdout").read_text()
    doc = json.dumps({"memories": [{"type": "fact", "content": FACT, "lines": [1, 1]}]})
    fake.reply(ok.replace(json.dumps(doc)[1:-1], "I found nothing worth keeping."))
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


def test_a_codex_too_old_for_a_flag_or_a_feature(fake: Fake) -> None:
    fake.reply("", "error: unexpected argument '--ephemeral' found\n", exit="2")
    with pytest.raises(ProviderStopError, match=r"needs Codex CLI 0\.169\.0 or newer"):
        run(fake.provider())
    fake.reply(
        "",
        "WARNING: proceeding, even though we could not create PATH aliases\n"
        "Error: Unknown feature flag: goals\n\nStack backtrace:\n   0: <unknown>\n",
        exit="1",
    )
    with pytest.raises(ProviderStopError, match=r"Unknown feature flag: goals.*0\.169\.0"):
        run(fake.provider())
