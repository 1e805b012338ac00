"""Gemini CLI 0.61.0 as memloom's distiller (``MEMLOOM_LLM=gemini-cli``), for real.

memloom runs the pinned ``gemini`` headless; Gemini asks the scripted model over
the Gemini API. The model is scripted as a hostile transcript would make it act,
and more: it *insists*, calling ``read_file`` on a secret and
``run_shell_command`` though Gemini offers it no tool at all (the deny-all policy
removes every tool from the request). Four CLI runs: the distillation, one direct
provider call that keeps its session file (to prove the importer skips it), a 401,
a plan's daily quota, and the run after ``recover()``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.e2e.distiller import (
    CANARY_SECRET,
    CUE,
    FACT,
    PASSWORD,
    active_texts,
    assert_clean,
    canary_file,
    cli_env,
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

GEMINI = DRIVERS["gemini"]
PROVIDER = "gemini-cli"
#: A fast stop: Gemini fails a 401 or a terminal quota at once (~3 s); memloom must not
#: retry it (its retries would take > 20 s with the backoff).
FAST_S = 20.0
#: Gemini's answer to a plan's daily quota: a 429 whose QuotaFailure names a per-day
#: quota (Gemini CLI's classifyGoogleError: TerminalQuotaError, never retried).
DAILY_QUOTA = {
    "error": {
        "code": 429,
        "message": "Quota exceeded for quota metric 'Generate Content API requests per day' "
        "and limit 'GenerateContent request limit per day'.",
        "status": "RESOURCE_EXHAUSTED",
        "details": [
            {
                "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                "violations": [{"quotaId": "GenerateRequestsPerDayPerProjectPerModel"}],
            }
        ],
    }
}


def insist(sb: Sandbox) -> None:
    """The model calls Gemini's file reader and shell though none is offered, then answers."""
    sb.model.script(
        ToolCall.named("read_file", file_path=str(canary_file(sb))).insisting(),
        ToolCall.named("run_shell_command", command=f"touch {ran_marker(sb)}").insisting(),
        when=CUE,
        answer=reply(),
    )


def gemini_projects(sb: Sandbox) -> list[Path]:
    """Gemini's project folders of memloom's calls (a leftover session's home)."""
    return sorted((sb.home / ".gemini" / "tmp").glob("memloom-llm-*"))


def test_gemini_distils_with_no_tool_no_secret_and_no_trace(sandbox: Sandbox):
    sb = sandbox
    GEMINI.configure(sb)
    GEMINI.seed_user_config(sb)
    sb.memloom("connect", "gemini", "--all")
    session = write_session(sb)
    insist(sb)
    mark = sb.model.mark()
    run = distil(sb, GEMINI, PROVIDER, session)
    assert run.returncode == 0, run.stderr[-3000:]
    requests = sb.model.since(mark)

    # Asked, with no tool offered in any request; the insisted calls came back refused
    # (Gemini: "Tool not found"), no secret and no memloom block reached the model.
    assert_clean(sb, run)
    assert all(not _tools(r.body) for r in requests), [_tools(r.body) for r in requests]
    assert len(requests) == 3, "the model's two insisted calls and the answer"
    refused = json.dumps(requests[-1].body)
    assert "functionResponse" in refused and "not found" in refused
    assert CANARY_SECRET not in refused and PASSWORD not in run.sent
    # The instructions are the system instruction (GEMINI_SYSTEM_MD), not Gemini's own.
    system = json.dumps(requests[0].body.get("systemInstruction"))
    assert "memories" in system and "non-interactive CLI agent" not in system

    # The memory, with its provenance: the session file and its lines.
    assert any(FACT in t for t in active_texts(sb)), active_texts(sb)
    [prov] = exported(sb)["provenance"]
    assert (prov["path"], prov["start_line"], prov["end_line"]) == (str(session), 1, 1), prov
    assert PASSWORD not in prov["excerpt"] and "[redacted:" in prov["excerpt"]

    # memloom's hooks stood down (the user's own hook did run for the call).
    assert GEMINI.other_hook_marker(sb).exists(), "Gemini ran no hook at all"
    capture = sb.memloom("capture", "run-once", "--json")
    assert capture["processed"] == 0, capture

    # The call's own session: Gemini saved it; memloom removed the call's project folder,
    # and a later import of Gemini's sessions finds nothing of it.
    assert not gemini_projects(sb), gemini_projects(sb)
    later = memloom(sb, GEMINI, PROVIDER, "import", "sessions", "--agent", "gemini", "--json")
    assert later.returncode == 0, later.stderr[-2000:]
    assert json.loads(later.stdout)["sessions"] == 0, later.stdout


#: One provider call in a child process whose after() keeps Gemini's files: the session
#: file a crash between the call and the tidy-up would leave behind.
KEEP_SESSION = textwrap.dedent(
    """
    import json, sys
    from memloom.llm import DISTILL, schema_for, system_for
    from memloom.llm.gemini_cli import GeminiCLIProvider

    class Kept(GeminiCLIProvider):
        def after(self, workdir):
            pass

    payload = {"session": {"id": "s"}, "lines": [{"line": 1, "role": "user", "text": sys.argv[1]}]}
    print(json.dumps(Kept(max_tries=1).complete(DISTILL, system_for(DISTILL), payload,
                                                schema_for(DISTILL))))
    """
)


def test_a_left_over_call_session_is_never_imported(sandbox: Sandbox):
    sb = sandbox
    GEMINI.configure(sb)
    GEMINI.seed_user_config(sb)
    sb.model.script(when=CUE, answer=reply())
    proc = subprocess.run(
        [sys.executable, "-c", KEEP_SESSION, f"{CUE}: a fact"],
        cwd=str(sb.project),
        env=cli_env(sb, GEMINI, PROVIDER),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["memories"], proc.stdout
    assert gemini_projects(sb) and GEMINI.session_files(sb), "Gemini saved no session"
    for path in gemini_projects(sb)[0].rglob("*"):  # past the importer's quiet period
        os.utime(path, (time.time() - 3600, time.time() - 3600))
    skipped = []
    for _ in range(2):
        later = memloom(sb, GEMINI, PROVIDER, "import", "sessions", "--agent", "gemini", "--json")
        doc = json.loads(later.stdout)
        assert doc["sessions"] == 0 and doc["saved"] == 0 and doc["calls"]["extraction"] == 0
        skipped.append(doc["skipped"]["memloom_calls"])
    assert skipped == [1, 0], "skipped as memloom's call, then never read again"
    assert not [t for t in active_texts(sb) if "a fact" in t]


@pytest.mark.parametrize("case", ["401", "daily-quota"])
def test_a_401_or_a_daily_quota_stops_at_once_and_the_next_run_completes(
    sandbox: Sandbox, case: str
):
    sb = sandbox
    GEMINI.configure(sb)
    GEMINI.seed_user_config(sb)
    session = write_session(sb)
    sb.model.script(when=CUE, answer=reply())
    if case == "401":
        sb.model.fail(401, "API key not valid. Please pass a valid API key.")
        said = ("not logged in", "gemini")
    else:
        sb.model.fail(429, "", doc=DAILY_QUOTA)
        said = ("usage limit", "exhausted your daily quota")
    try:
        stopped = distil(sb, GEMINI, PROVIDER, session)
    finally:
        sb.model.recover()
    assert stopped.elapsed < FAST_S, stopped.elapsed
    line = stopped.report["stopped"]
    assert stopped.returncode == 2 and "\n" not in line, (stopped.returncode, line)
    assert line.startswith("Gemini CLI") and all(s in line.lower() for s in said), line
    assert stopped.report["calls"]["extraction"] == 1, "retried"
    assert not [t for t in active_texts(sb) if FACT in t], "a memory from a refused call"

    done = distil(sb, GEMINI, PROVIDER, session)
    assert done.returncode == 0, done.stderr[-2000:]
    texts = [t for t in active_texts(sb) if FACT in t]
    assert len(texts) == 1, texts
    again = distil(sb, GEMINI, PROVIDER, session)
    assert again.requests == 0 and len([t for t in active_texts(sb) if FACT in t]) == 1
