"""Qwen Code 0.24.4 as memloom's distiller (``MEMLOOM_LLM=qwen-cli``), for real.

memloom runs the pinned ``qwen`` headless; Qwen asks the scripted model over Chat
Completions. Qwen is offered one tool, ``structured_output`` (``--json-schema``),
every other one excluded. Runs: the distillation (the model answers through
``structured_output``), the model *insisting* on ``read_file`` and
``run_shell_command`` though neither is offered (``--max-tool-calls 0`` aborts the
call before any tool runs: that chunk gets no answer), a 401, a plan's usage
limit, and the run after ``recover()``.

The user's settings.json here leaves Qwen's managed auto-memory on (the default):
``--safe-mode`` turns it off for the call, which the single request per call proves.
"""

from __future__ import annotations

import json

import pytest

from tests.e2e.distiller import (
    CANARY_SECRET,
    CUE,
    FACT,
    MEMORY,
    PASSWORD,
    active_texts,
    assert_clean,
    canary_file,
    distil,
    exported,
    memloom,
    ran_marker,
    reply,
    write_session,
)
from tests.e2e.drivers import DRIVERS
from tests.e2e.harness import Sandbox
from tests.e2e.model import ToolCall, _tools

QWEN = DRIVERS["qwen"]
PROVIDER = "qwen-cli"
FAST_S = 25.0
#: A Qwen plan's limit as its API says it: Qwen fails fast on a quota "exceeded" with
#: a reset time (isQuotaExhaustedError) and prints "Quota exhausted: …".
LIMIT = "You have exceeded your 5-hour usage quota. Your quota will reset at 2026-12-07 23:00 UTC."


def seed(sb: Sandbox) -> None:
    """The user's Qwen settings, with Qwen's auto-memory left at its default (on)."""
    QWEN.configure(sb)
    path = QWEN.seed_user_config(sb)[0]
    text = path.read_text()
    kept = text.replace(
        '  "memory": { "enableManagedAutoMemory": false, "enableManagedAutoDream": false },\n', ""
    )
    assert kept != text
    path.write_text(kept)


def structured(sb: Sandbox) -> None:
    """The model answers through Qwen's structured_output tool, as asked."""
    sb.model.script(ToolCall.named("structured_output", memories=[MEMORY]), when=CUE)


def test_qwen_distils_with_one_tool_offered_and_no_trace(sandbox: Sandbox):
    sb = sandbox
    seed(sb)
    sb.memloom("connect", "qwen", "--all")
    session = write_session(sb)
    structured(sb)
    mark = sb.model.mark()
    run = distil(sb, QWEN, PROVIDER, session)
    assert run.returncode == 0, run.stderr[-3000:]
    requests = sb.model.since(mark)

    assert_clean(sb, run)
    assert len(requests) == 1, "one request per call: no auto-memory pass, no tool turn"
    assert [t["name"] for t in _tools(requests[0].body)] == ["structured_output"]
    messages = requests[0].body["messages"]
    system = messages[0]["content"]
    assert messages[0]["role"] == "system" and "memories" in str(system)
    assert "Qwen Code" not in str(system), "Qwen's own agentic system prompt was sent"

    assert any(FACT in t for t in active_texts(sb)), active_texts(sb)
    [prov] = exported(sb)["provenance"]
    assert (prov["path"], prov["start_line"], prov["end_line"]) == (str(session), 1, 1), prov
    assert PASSWORD not in prov["excerpt"]

    # Safe mode: no hook ran for the call (the user's nor memloom's): nothing queued.
    assert not QWEN.other_hook_marker(sb).exists(), "a hook ran in the distiller call"
    capture = sb.memloom("capture", "run-once", "--json")
    assert capture["processed"] == 0, capture
    # --chat-recording false: Qwen saved no session of the call.
    assert not QWEN.session_files(sb), QWEN.session_files(sb)
    later = memloom(sb, QWEN, PROVIDER, "import", "sessions", "--agent", "qwen", "--json")
    assert later.returncode == 0 and json.loads(later.stdout)["sessions"] == 0, later.stdout


def test_a_model_that_insists_on_a_tool_runs_none_and_that_chunk_gets_no_answer(
    sandbox: Sandbox,
):
    sb = sandbox
    seed(sb)
    session = write_session(sb)
    sb.model.script(
        ToolCall.named("read_file", file_path=str(canary_file(sb))).insisting(),
        ToolCall.named("run_shell_command", command=f"touch {ran_marker(sb)}").insisting(),
        when=CUE,
        answer=reply(),
    )
    run = distil(sb, QWEN, PROVIDER, session)
    assert run.returncode == 0, run.stderr[-3000:]
    assert CUE in run.sent and CANARY_SECRET not in run.sent and PASSWORD not in run.sent
    assert not ran_marker(sb).exists(), "the shell command ran"
    assert run.requests == 1, "the call went on after the tool call"
    report = run.report
    assert report["failed"] == 1 and report["stopped"] is None, report
    assert not [t for t in active_texts(sb) if FACT in t]


@pytest.mark.parametrize("case", ["401", "usage-limit"])
def test_a_401_or_a_usage_limit_stops_at_once_and_the_next_run_completes(
    sandbox: Sandbox, case: str
):
    sb = sandbox
    seed(sb)
    session = write_session(sb)
    structured(sb)
    if case == "401":
        sb.model.fail(401, "Incorrect API key provided: sk-e2e***.", "invalid_api_key")
        said = ("not logged in", "incorrect api key")
    else:
        sb.model.fail(429, LIMIT, "insufficient_quota")
        said = ("usage limit", "reset at 2026-12-07 23:00 utc")
    try:
        stopped = distil(sb, QWEN, PROVIDER, session)
    finally:
        sb.model.recover()
    assert stopped.elapsed < FAST_S, stopped.elapsed
    line = stopped.report["stopped"]
    assert stopped.returncode == 2 and "\n" not in line, (stopped.returncode, line)
    assert line.startswith("Qwen Code") and all(s in line.lower() for s in said), line
    assert stopped.report["calls"]["extraction"] == 1, "retried"
    assert not [t for t in active_texts(sb) if FACT in t]

    done = distil(sb, QWEN, PROVIDER, session)
    assert done.returncode == 0, done.stderr[-2000:]
    assert len([t for t in active_texts(sb) if FACT in t]) == 1
    again = distil(sb, QWEN, PROVIDER, session)
    assert again.requests == 0 and len([t for t in active_texts(sb) if FACT in t]) == 1
