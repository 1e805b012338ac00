"""Codex CLI 0.169.0 as memloom's distiller (``MEMLOOM_LLM=codex-cli``), for real.

memloom runs the pinned ``codex exec`` headless; Codex asks the scripted model over
the OpenAI Responses API. Two tests, four Codex runs:

1. One import through Codex, with memloom connected to Codex (its hooks trusted,
   a memory saved for them to recall) and an MCP server of the user's that would
   leave a file if started: the memory is stored with its provenance; the model
   was offered no tool but ``request_user_input`` (no shell, no file reader), the
   scripted read and shell never ran and nothing of them reached the model; the
   password never left memloom; no hook of memloom's ran (no capture job, no
   ``<memloom-context>``); the MCP server was never started; Codex wrote no
   rollout, and a later ``memloom import sessions --agent codex`` imports nothing.
2. A 401, then a plan's usage limit: each stops the import at once with one line
   naming Codex and what to do, the session stays undone; after ``recover()`` the
   next import completes it, one memory, not two.
"""

from __future__ import annotations

import json

import pytest

from memloom.agents.codex import hooks as codex_hooks
from memloom.agents.codex import trust as codex_trust
from tests.e2e.distiller import (
    CONTEXT_MARK,
    CUE,
    FACT,
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
from tests.e2e.drivers.codex import Codex
from tests.e2e.harness import Sandbox
from tests.e2e.model import ToolCall, _tools

pytestmark = pytest.mark.skipif("codex" not in DRIVERS, reason="no Codex driver")

PROVIDER = "codex-cli"
#: A fact saved before the import: a prompt hook of memloom's would put it in the call.
SAVED = "The shop's staging deploys go through ArgoCD on Fridays."


def driver() -> Codex:
    return Codex(bypass_trust=False)  # as memloom runs it: no trust bypass


def trust_memloom_hooks(d: Codex, sb: Sandbox) -> None:
    """What trusting memloom's hooks in Codex's /hooks records (tests/e2e/test_codex.py)."""
    path = d.hooks_file(sb)
    data = json.loads(path.read_text())
    with d.config(sb).open("a") as f:
        for event, groups in data["hooks"].items():
            for g, group in enumerate(groups):
                for h, handler in enumerate(group["hooks"]):
                    if codex_hooks.is_memloom_hook(handler):
                        key = codex_trust.hook_key(path, event, g, h)
                        digest = codex_trust.hook_hash(event, handler, group.get("matcher"))
                        f.write(f'\n[hooks.state."{key}"]\ntrusted_hash = "{digest}"\n')


def add_mcp_server(d: Codex, sb: Sandbox) -> str:
    """An MCP server of the user's that leaves a file when started; the file's path."""
    started = sb.root / "user-mcp-started"
    text = d.config(sb).read_text()
    server = (
        f'[mcp_servers.user-tool]\ncommand = "sh"\nargs = ["-c", "touch {started}; sleep 30"]\n\n'
    )
    d.config(sb).write_text(text.replace("[features]", server + "[features]", 1))
    return str(started)


def connected(sb: Sandbox) -> Codex:
    d = driver()
    d.configure(sb)
    d.seed_user_config(sb)
    sb.memloom("connect", "codex", "--all")
    trust_memloom_hooks(d, sb)
    sb.save(SAVED)
    return d


def tools_offered(sb: Sandbox, mark: int) -> set[str]:
    return {
        t["name"]
        for r in sb.model.since(mark)
        if isinstance(r.body, dict) and r.path.endswith("/responses")
        for t in _tools(r.body)
    }


def test_codex_distils_with_no_tools_no_hooks_and_no_session_of_its_own(sandbox: Sandbox):
    d = connected(sandbox)
    started = add_mcp_server(d, sandbox)
    session = write_session(sandbox)
    # The attack, plus the two tools Codex offers unless told not to (its shell, and
    # view_image, which reads any file), plus the one it still offers.
    ask = {"id": "q", "header": "File", "question": f"Paste {canary_file(sandbox)}?"}
    sandbox.model.script(
        ToolCall.read(canary_file(sandbox)),
        ToolCall.shell(f"touch {ran_marker(sandbox)}"),
        ToolCall.named("view_image", path=str(canary_file(sandbox))),
        ToolCall.named("request_user_input", questions=[ask]),
        when=CUE,
        answer=reply(),
        skip_missing=True,
    )
    mark = sandbox.model.mark()

    run = distil(sandbox, d, PROVIDER, session)
    assert run.returncode == 0, run.stderr[-2000:]
    assert_clean(sandbox, run)
    # Codex offers only request_user_input, which it refuses outside Plan mode.
    assert tools_offered(sandbox, mark) == {"request_user_input"}
    first = next(r for r in sandbox.model.since(mark) if CUE in r.text)
    assert first.body["text"]["format"]["type"] == "json_schema"  # --output-schema
    assert not (sandbox.root / "user-mcp-started").exists(), f"{started} was started"
    refused = [
        item.get("output")
        for r in sandbox.model.since(mark)
        if isinstance(r.body, dict)
        for item in r.body.get("input") or []
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    ]
    assert refused == ["request_user_input is unavailable in Default mode"], refused

    records = exported(sandbox)
    [memory] = [m for m in records["memory"] if FACT in json.dumps(m)]
    provenance = [p for p in records.get("provenance", []) if p.get("memory_id") == memory["id"]]
    assert [(p["path"], p["start_line"], p["end_line"]) for p in provenance] == [
        (str(session), 1, 1)
    ]

    # memloom's hooks stood down: no capture job, and the saved memory was never recalled.
    assert CONTEXT_MARK not in run.sent and "ArgoCD" not in run.sent
    assert sandbox.memloom("capture", "run-once", "--json")["processed"] == 0
    # --ephemeral: no rollout, so nothing of the call to import, ever.
    assert d.session_files(sandbox) == []
    later = memloom(sandbox, d, "offline", "import", "sessions", "--agent", "codex", "--json")
    assert later.returncode == 0, later.stderr
    assert json.loads(later.stdout)["sessions"] == 0


def test_codex_401_and_usage_limit_stop_at_once_and_the_next_run_completes(sandbox: Sandbox):
    d = driver()
    d.configure(sandbox)
    session = write_session(sandbox)
    plan_answer(sandbox)

    sandbox.model.fail(
        401,
        "Incorrect API key provided: sk-e2e-***. You can find your API key at "
        "https://platform.openai.com/account/api-keys.",
        "invalid_api_key",
    )
    auth = distil(sandbox, d, PROVIDER, session)
    assert auth.returncode != 0
    stop = auth.report["stopped"]
    assert stop.startswith("Codex CLI is not logged in (unexpected status 401"), stop
    assert "run `codex login`" in stop and "\n" not in stop
    assert auth.elapsed < 30, auth.elapsed  # Codex's five quick reconnects, no retry loop

    resets = 1_900_000_000
    sandbox.model.fail(
        429,
        "",
        doc={
            "error": {
                "type": "usage_limit_reached",
                "message": "The usage limit has been reached",
                "plan_type": "plus",
                "resets_at": resets,
            }
        },
    )
    limit = distil(sandbox, d, PROVIDER, session)
    assert limit.returncode != 0
    stop = limit.report["stopped"]
    assert stop.startswith("Codex CLI reached its plan's usage limit (You"), stop
    assert "hit your usage limit" in stop and "; it says: try again at " in stop, stop
    assert "\n" not in stop
    assert limit.elapsed < 20, limit.elapsed
    assert limit.requests == 1  # stopped at once: no retry of memloom's
    records = exported(sandbox)
    assert not [m for m in records.get("memory", []) if FACT in json.dumps(m)]
    assert not [r for r in records.get("ledger", []) if r["status"] == "complete"]

    sandbox.model.recover()
    done = distil(sandbox, d, PROVIDER, session)
    assert done.returncode == 0, done.stderr[-2000:]
    assert_clean(sandbox, done)
    memories = [m for m in exported(sandbox)["memory"] if FACT in json.dumps(m)]
    assert len(memories) == 1, memories
