"""OpenCode 1.18.33 as memloom's distiller (``MEMLOOM_LLM=opencode-cli``), for real.

memloom runs the pinned ``opencode run`` headless; OpenCode asks the scripted model
over OpenAI Chat Completions. Two tests, four OpenCode runs:

1. One import through OpenCode, with memloom connected to OpenCode (its plugin and
   its MCP server in opencode.json, a memory saved for the plugin to recall), the
   user's config allowing every tool, and an MCP server of the user's that would
   leave a file if started: the memory is stored with its provenance; the model
   was offered no tool at all, the scripted read and shell never ran and nothing
   of them reached the model; the password never left memloom; memloom's plugin
   stood down (no capture job, no ``<memloom-context>``); no MCP server was
   started; OpenCode saved the call's session (it has no way not to) with the
   temporary folder as its directory, and ``memloom import sessions --agent
   opencode`` skips it as memloom's own call, then and on every later run.
2. A 401, then a plan's usage limit (a 429 OpenCode would retry for ~80 s): each
   stops the import at once with one line, the session stays undone; after
   ``recover()`` the next import completes it, one memory, not two.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from tests.e2e.distiller import (
    CONTEXT_MARK,
    CUE,
    FACT,
    assert_clean,
    distil,
    exported,
    memloom,
    plan_answer,
    plan_attack,
    write_session,
)
from tests.e2e.drivers import DRIVERS
from tests.e2e.drivers.opencode import OpenCode
from tests.e2e.harness import Sandbox
from tests.e2e.model import _tools

pytestmark = pytest.mark.skipif("opencode" not in DRIVERS, reason="no OpenCode driver")

PROVIDER = "opencode-cli"
#: A fact saved before the import: memloom's plugin would put it in the call.
SAVED = "The shop's staging deploys go through ArgoCD on Fridays."


def connected(sb: Sandbox) -> OpenCode:
    """OpenCode as the user has it, memloom connected, every tool allowed by the user,
    and an MCP server of the user's that leaves a file when started."""
    d = OpenCode()
    d.configure(sb)
    config, _ = d.seed_user_config(sb)
    sb.memloom("connect", "opencode", "--all")
    started = sb.root / "user-mcp-started"
    server = json.dumps({"type": "local", "command": ["sh", "-c", f"touch {started}; sleep 30"]})
    text = config.read_text().replace(
        '"mcp": {',
        '"permission": {"*": "allow", "external_directory": "allow"},\n'
        '  "agent": {"build": {"permission": {"*": "allow"}}},\n'
        f'  "mcp": {{\n    "user-tool": {server},',
        1,
    )
    config.write_text(text)
    sb.save(SAVED)
    return d


def sessions(sb: Sandbox) -> list[tuple[str, str]]:
    [db] = OpenCode().session_files(sb)
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        return con.execute("SELECT id, directory FROM session").fetchall()


def age_sessions(sb: Sandbox, seconds: int = 900) -> None:
    """Make every stored session look finished ``seconds`` ago (past the quiet period)."""
    [db] = OpenCode().session_files(sb)
    with sqlite3.connect(db) as con:
        for table in ("session", "message", "part"):
            con.execute(f"UPDATE {table} SET time_updated = time_updated - ?", (seconds * 1000,))


def test_opencode_distils_with_no_tools_no_hooks_and_its_session_skipped(sandbox: Sandbox):
    d = connected(sandbox)
    session = write_session(sandbox)
    plan_attack(sandbox)
    mark = sandbox.model.mark()

    run = distil(sandbox, d, PROVIDER, session)
    assert run.returncode == 0, run.stderr[-2000:]
    assert_clean(sandbox, run)
    asked = [r for r in sandbox.model.since(mark) if isinstance(r.body, dict)]
    assert [t["name"] for r in asked for t in _tools(r.body)] == []  # no tool offered
    assert len([r for r in asked if CUE in r.text]) == 1  # --title: no title request
    assert not (sandbox.root / "user-mcp-started").exists(), "the user's MCP server started"

    records = exported(sandbox)
    [memory] = [m for m in records["memory"] if FACT in json.dumps(m)]
    provenance = [p for p in records.get("provenance", []) if p.get("memory_id") == memory["id"]]
    assert [(p["path"], p["start_line"], p["end_line"]) for p in provenance] == [
        (str(session), 1, 1)
    ]

    # memloom's plugin stood down: no capture job, and the saved memory never recalled.
    assert CONTEXT_MARK not in run.sent and "ArgoCD" not in run.sent
    assert sandbox.memloom("capture", "run-once", "--json")["processed"] == 0

    # OpenCode kept the call's session, in the temporary folder: never imported.
    [(_, directory)] = sessions(sandbox)
    assert "/memloom-llm-opencode-" in directory, directory
    age_sessions(sandbox)
    reports = []
    for _ in range(2):
        later = memloom(
            sandbox, d, "offline", "import", "sessions", "--agent", "opencode", "--json"
        )
        assert later.returncode == 0, later.stderr
        reports.append(json.loads(later.stdout))
    first, second = reports
    assert first["skipped"]["memloom_calls"] == 1, first
    assert second["skipped"]["memloom_calls"] == 0, second  # in the ledger: never read again
    assert first["sessions"] == second["sessions"] == 0
    assert first["saved"] == second["saved"] == 0
    ledger = [r for r in exported(sandbox).get("ledger", []) if r.get("agent") == "opencode"]
    assert len(ledger) == 1 and ledger[0]["memories"] == 0, ledger


def test_opencode_401_and_usage_limit_stop_at_once_and_the_next_run_completes(sandbox: Sandbox):
    d = OpenCode()
    d.configure(sandbox)
    d.seed_user_config(sandbox)
    session = write_session(sandbox)
    plan_answer(sandbox)

    sandbox.model.fail(
        401,
        "Incorrect API key provided: sk-dummy. You can find your API key at "
        "https://platform.openai.com/account/api-keys.",
        "invalid_api_key",
    )
    auth = distil(sandbox, d, PROVIDER, session)
    assert auth.returncode != 0
    stop = auth.report["stopped"]
    assert stop.startswith("OpenCode is not logged in (Incorrect API key provided"), stop
    assert "opencode auth login" in stop and "\n" not in stop
    assert auth.elapsed < 40, auth.elapsed

    sandbox.model.fail(429, "The usage limit has been reached", "usage_limit_reached")
    limit = distil(sandbox, d, PROVIDER, session)
    assert limit.returncode != 0
    stop = limit.report["stopped"]
    assert stop.startswith("OpenCode reached its plan's usage limit ("), stop
    assert "The usage limit has been reached" in stop and "\n" not in stop
    assert limit.elapsed < 40, limit.elapsed  # OpenCode alone would retry for ~80 s
    assert limit.requests == 1, limit.requests  # stopped at the first refused request
    records = exported(sandbox)
    assert not [m for m in records.get("memory", []) if FACT in json.dumps(m)]
    assert not [r for r in records.get("ledger", []) if r["status"] == "complete"]

    sandbox.model.recover()
    done = distil(sandbox, d, PROVIDER, session)
    assert done.returncode == 0, done.stderr[-2000:]
    assert_clean(sandbox, done)
    memories = [m for m in exported(sandbox)["memory"] if FACT in json.dumps(m)]
    assert len(memories) == 1, memories
