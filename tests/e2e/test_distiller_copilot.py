"""GitHub Copilot CLI 1.0.102 as memloom's distiller (``MEMLOOM_LLM=copilot-cli``),
against the scripted model over Chat Completions (BYOK, tests/e2e/drivers/copilot.py).

Copilot cannot be kept from saving the call's session or from running the user's
hooks, so the checks that matter most here are that memloom skips that session and
that its own hooks stand down; and that no tool runs although the model, as a
hostile transcript would make it, calls Copilot's own ``view`` and ``bash`` anyway.
Four real CLI runs: the distillation, a 401, a usage limit, the recovery.
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
    Distilled,
    assert_clean,
    canary_file,
    distil,
    exported,
    memloom,
    plan_answer,
    ran_marker,
    reply,
    write_session,
)
from tests.e2e.drivers import DRIVERS
from tests.e2e.drivers.copilot import Copilot
from tests.e2e.harness import Sandbox
from tests.e2e.model import ToolCall

pytestmark = pytest.mark.skipif("copilot" not in DRIVERS, reason="no Copilot driver")

PROVIDER = "copilot-cli"
#: A stop must come at once: Copilot's own 401 gives up after ~3 s, a 402 at once.
FAST_S = 30


def mcp_marker(sb: Sandbox) -> Path:
    return sb.root / "user-mcp-started"


def seed(sb: Sandbox) -> Copilot:
    """Copilot as the user has it: another tool's hooks, an MCP server of their own
    (it writes a file when started), memloom connected."""
    copilot = Copilot()
    copilot.seed_user_config(sb)
    mcp = {
        "mcpServers": {
            "user-db": {
                "type": "local",
                "command": "sh",
                "args": ["-c", f"echo started >> {mcp_marker(sb)}; cat >/dev/null"],
                "tools": ["*"],
            }
        }
    }
    (copilot.root(sb) / "mcp-config.json").write_text(json.dumps(mcp))
    sb.memloom("connect", "copilot", "--all")
    return copilot


def plan_attack(sb: Sandbox) -> None:
    """The model calls Copilot's own read and shell tools (offered or not), then answers."""
    sb.model.script(
        ToolCall(("view",), {"path": str(canary_file(sb))}, insist=True),
        ToolCall(("bash",), {"command": f"touch {ran_marker(sb)}", "description": "x"}, True),
        when=CUE,
        answer=reply(),
    )


def stopped(sb: Sandbox, run: Distilled, session: Path, words: str) -> None:
    """The run stopped at once with one line naming Copilot; the session stays undone."""
    line = str(run.report.get("stopped") or "")
    assert line.startswith("GitHub Copilot CLI") and words in line, run.stdout[-2000:]
    assert "\n" not in line
    assert run.elapsed < FAST_S, f"the stop took {run.elapsed:.1f} s"
    done = [r for r in exported(sb).get("ledger", []) if r.get("path") == str(session)]
    assert all(r.get("status") != "complete" for r in done), done


def fact_memories(sb: Sandbox) -> list[dict]:
    return [m for m in exported(sb).get("memory", []) if "5433" in str(m.get("text"))]


def test_copilot_distils_with_no_tool_no_mcp_and_skips_its_own_session(sandbox: Sandbox):
    copilot = seed(sandbox)
    session = write_session(sandbox)
    plan_attack(sandbox)
    mark = sandbox.model.mark()
    run = distil(sandbox, copilot, PROVIDER, session)
    assert run.returncode == 0, run.stderr[-3000:]
    assert_clean(sandbox, run)
    # Offered no tool; the calls the model made anyway were refused, not run.
    bodies = [r.body for r in sandbox.model.since(mark) if CUE in r.text]
    assert bodies and all(not (b.get("tools") or []) for b in bodies), "a tool was offered"
    assert "Tool 'view' does not exist" in run.sent and "Tool 'bash' does not exist" in run.sent
    assert CANARY_SECRET not in run.sent
    assert not mcp_marker(sandbox).exists(), "the user's MCP server was started"
    # The memory, with its provenance (the session file and its lines).
    docs = exported(sandbox)
    [memory] = [m for m in docs.get("memory", []) if FACT in str(m.get("text"))]
    prov = [p for p in docs.get("provenance", []) if p.get("memory_id") == memory["id"]]
    assert prov and str(session) in json.dumps(prov), prov
    # memloom's hooks stood down in the call (another tool's may fire): no capture
    # job, no hook recorded, no memloom context in any request.
    assert CONTEXT_MARK not in run.sent
    status = sandbox.memloom("status", "--json")
    assert status["capture"]["queued"] == 0 and not status["capture"]["last_hook"], status
    # Copilot saved the call's session anyway; memloom never imports it.
    files = copilot.session_files(sandbox)
    assert files, "Copilot saved no session (then this check proves nothing)"
    assert any("memloom-llm-copilot-" in f.read_text() for f in files)
    proc = memloom(sandbox, copilot, PROVIDER, "import", "sessions", "--agent", "copilot", "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(proc.stdout)
    assert doc["skipped"]["memloom_calls"] == len(files), doc
    assert len(fact_memories(sandbox)) == 1


def test_401_and_usage_limit_stop_at_once_then_the_session_completes(sandbox: Sandbox):
    copilot = seed(sandbox)
    session = write_session(sandbox)
    plan_answer(sandbox)
    model = sandbox.model
    try:
        model.fail(401, "Incorrect API key provided")
        run = distil(sandbox, copilot, PROVIDER, session)
        stopped(sandbox, run, session, "is not logged in")
        model.fail(402, "You've run out of your included AI credits for the month.", "quota")
        run = distil(sandbox, copilot, PROVIDER, session)
        stopped(sandbox, run, session, "usage limit")
    finally:
        model.recover()
    assert not fact_memories(sandbox), "a stopped run wrote a memory"
    run = distil(sandbox, copilot, PROVIDER, session)
    assert run.returncode == 0, run.stderr[-3000:]
    assert_clean(sandbox, run)
    assert len(fact_memories(sandbox)) == 1
    again = distil(sandbox, copilot, PROVIDER, session)  # up to date: no CLI call
    assert again.requests == 0 and len(fact_memories(sandbox)) == 1
