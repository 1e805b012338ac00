"""Claude Code 2.1.328 as memloom's distiller (``MEMLOOM_LLM=claude-cli``): the first
runs of ``claude_cli`` against the real Claude Code, over Anthropic Messages to the
scripted model (tests/e2e/drivers/claude_code.py).

With ``--json-schema`` Claude Code offers the model a ``StructuredOutput`` tool (and
a ``DeferredToolPlaceholder``), nothing else; the model answers by calling it, and
``structured_output`` is filled. The hostile model first calls ``Read`` and ``Bash``
anyway: Claude Code refuses both ("No such tool available"). ``--safe-mode`` runs
none of the user's hooks, memloom's or another tool's; ``--no-session-persistence``
leaves no transcript. Four real CLI runs: the distillation, a 401, a plan's limit,
the recovery (which answers in text: the fallback).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.distiller import (
    CANARY_SECRET,
    CONTEXT_MARK,
    CUE,
    FACT,
    MEMORY,
    Distilled,
    assert_clean,
    canary_file,
    distil,
    exported,
    memloom,
    plan_answer,
    ran_marker,
    write_session,
)
from tests.e2e.drivers import DRIVERS
from tests.e2e.drivers.claude_code import ClaudeCode
from tests.e2e.harness import Sandbox
from tests.e2e.model import ToolCall

pytestmark = pytest.mark.skipif("claude-code" not in DRIVERS, reason="no Claude Code driver")

PROVIDER = "claude-cli"
#: Without CLAUDE_CODE_MAX_RETRIES Claude Code took ~180 s to give up on a 401.
FAST_S = 30
#: Only what ``--json-schema`` brings: the answer's tool, and a placeholder.
ALLOWED_TOOLS = {"StructuredOutput", "DeferredToolPlaceholder"}


def mcp_marker(sb: Sandbox) -> Path:
    return sb.root / "user-mcp-started"


def seed(sb: Sandbox) -> ClaudeCode:
    """Claude Code as the user has it: another tool's hook, an MCP server of their own
    (it writes a file when started), memloom connected."""
    claude = ClaudeCode()
    claude.seed_user_config(sb)
    server = {"command": "sh", "args": ["-c", f"echo started >> {mcp_marker(sb)}; cat"]}
    (sb.home / ".claude.json").write_text(json.dumps({"mcpServers": {"user-db": server}}))
    sb.memloom("connect", "claude-code", "--all")
    return claude


def fact_memories(sb: Sandbox) -> list[dict]:
    return [m for m in exported(sb).get("memory", []) if "5433" in str(m.get("text"))]


def stopped(sb: Sandbox, run: Distilled, session: Path, words: str) -> None:
    """The run stopped at once with one line naming Claude Code; the session stays undone."""
    line = str(run.report.get("stopped") or "")
    assert line.startswith("Claude Code") and words in line, run.stdout[-2000:]
    assert "\n" not in line
    assert run.elapsed < FAST_S, f"the stop took {run.elapsed:.1f} s"
    done = [r for r in exported(sb).get("ledger", []) if r.get("path") == str(session)]
    assert all(r.get("status") != "complete" for r in done), done


def test_claude_distils_through_structured_output_with_no_tool_hook_or_session(sandbox: Sandbox):
    claude = seed(sandbox)
    session = write_session(sandbox)
    sandbox.model.script(
        ToolCall(("Read",), {"file_path": str(canary_file(sandbox))}, insist=True),
        ToolCall(("Bash",), {"command": f"touch {ran_marker(sandbox)}"}, insist=True),
        ToolCall.named("StructuredOutput", memories=[MEMORY]),
        when=CUE,
        answer="Done.",  # not JSON: the memories come from structured_output only
    )
    mark = sandbox.model.mark()
    run = distil(sandbox, claude, PROVIDER, session)
    assert run.returncode == 0, run.stderr[-3000:]
    assert_clean(sandbox, run)
    asked = [r.body for r in sandbox.model.since(mark) if CUE in r.text]
    offered = {t.get("name") for body in asked for t in body.get("tools") or []}
    assert asked and offered <= ALLOWED_TOOLS, offered
    assert "No such tool available: Read" in run.sent
    assert "No such tool available: Bash" in run.sent
    assert CANARY_SECRET not in run.sent and not ran_marker(sandbox).exists()
    assert not mcp_marker(sandbox).exists(), "the user's MCP server was started"
    docs = exported(sandbox)
    [memory] = [m for m in docs.get("memory", []) if FACT in str(m.get("text"))]
    prov = [p for p in docs.get("provenance", []) if p.get("memory_id") == memory["id"]]
    assert prov and prov[0]["path"] == str(session) and prov[0]["start_line"] == 1, prov
    # --safe-mode: no hook of the user's ran, memloom's or the other tool's.
    assert CONTEXT_MARK not in run.sent
    assert not claude.other_hook_marker(sandbox).exists(), "the user's own hook ran"
    status = sandbox.memloom("status", "--json")
    assert status["capture"]["queued"] == 0 and not status["capture"]["last_hook"], status
    # --no-session-persistence: no transcript, so a later import finds nothing of it.
    assert claude.session_files(sandbox) == []
    proc = memloom(
        sandbox, claude, PROVIDER, "import", "sessions", "--agent", "claude-code", "--json"
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["saved"] == 0
    assert len(fact_memories(sandbox)) == 1


def test_401_and_plan_limit_stop_at_once_then_the_text_answer_completes(sandbox: Sandbox):
    claude = seed(sandbox)
    session = write_session(sandbox)
    plan_answer(sandbox)  # JSON as text, no StructuredOutput call: the fallback
    model = sandbox.model
    try:
        model.fail(401, "Invalid API key")
        run = distil(sandbox, claude, PROVIDER, session)
        stopped(sandbox, run, session, "is not logged in")
        model.fail(429, "You've hit your session limit · resets 5pm (UTC)", "rate_limit_error")
        run = distil(sandbox, claude, PROVIDER, session)
        stopped(sandbox, run, session, "usage limit")
        assert "resets 5pm" in run.report["stopped"]
    finally:
        model.recover()
    assert not fact_memories(sandbox), "a stopped run wrote a memory"
    run = distil(sandbox, claude, PROVIDER, session)
    assert run.returncode == 0, run.stderr[-3000:]
    assert_clean(sandbox, run)
    assert len(fact_memories(sandbox)) == 1
    again = distil(sandbox, claude, PROVIDER, session)  # up to date: no CLI call
    assert again.requests == 0 and len(fact_memories(sandbox)) == 1
