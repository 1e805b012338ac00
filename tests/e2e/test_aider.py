"""Aider 0.86.2, the agent without hooks, run headless against the scripted model.

memloom installs nothing in Aider: ``memloom connect aider`` names the project
folder, and the capture worker's sweep (``memloom capture run-once``) imports the
``.aider.chat.history.md`` Aider itself wrote there. What applies to it of
test_agents.py's checks: the typed prompt reaches memloom's distiller and Aider's
own lines do not (its echo of the command line, with the API key's tail, and its
``> Tokens: …`` footers); the history is read once (a re-run of the sweep makes no
extraction call) and, once Aider appends a session, only that session is read; a
fact typed in Aider reaches another agent's model (test_agents.py's pair
aider → claude-code); the user's ``~/.aider.conf.yml`` is never touched.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.drivers import DRIVERS
from tests.e2e.harness import Driver, Sandbox, snapshot
from tests.e2e.model import ANSWER

TYPED = "REMEMBER: deploys of the shop go through ArgoCD on Fridays"
LATER = "REMEMBER: the shop's cache is Redis 7 on port 6380"

#: Parametrized, so that the suite's matrix (conftest.py) files these checks under Aider.
aider_only = pytest.mark.parametrize(
    "driver", [DRIVERS[n] for n in ("aider",) if n in DRIVERS], ids=lambda d: d.name
)


def distilled(sb: Sandbox, since: int) -> list[str]:
    """The lines memloom's distiller was sent after the ``since``-th call."""
    sent = sb.memloom_llm.payloads.get("memloom_distill", [])[since:]
    return [line["text"] for payload in sent for line in payload["lines"]]


def calls(sb: Sandbox) -> int:
    return len(sb.memloom_llm.payloads.get("memloom_distill", []))


@aider_only
def test_the_sweep_distills_the_history_aider_wrote(driver: Driver, sandbox: Sandbox):
    aider = driver
    aider.configure(sandbox)
    user_files = aider.seed_user_config(sandbox)
    before_files = snapshot(user_files)
    doc = sandbox.memloom("connect", "aider", "--all", "--json")
    assert doc["roots"] == [str(sandbox.project)], doc

    run = aider.run(sandbox, f"{TYPED}. Also, how do I run the tests?")
    assert run.returncode == 0, run.stderr[-1500:]
    assert ANSWER in run.stdout, run.stdout[-1500:]
    assert any(TYPED in r.text for r in run.requests), "the prompt never reached the model"
    [history] = aider.session_files(sandbox)
    text = history.read_text()
    assert "> Tokens:" in text and "--openai-api-key" in text  # what Aider wrote itself

    start = calls(sandbox)
    doc = sandbox.memloom("capture", "run-once", "--json")
    assert doc["swept"] == 1 and doc["processed"] == 1, doc
    lines = distilled(sandbox, start)
    assert any("ArgoCD" in line for line in lines), "the typed prompt never reached the distiller"
    assert any(ANSWER in line for line in lines), "the model's answer was left out"
    for echo in ("Tokens:", "--openai-api-key", "ummy", "Aider v0.86.2", "Repo-map", "aider chat"):
        assert not any(echo in line for line in lines), f"Aider's own {echo!r} was distilled"
    found = sandbox.memloom("recall", "deploys ArgoCD", "--json")
    assert any("ArgoCD" in m["text"] for m in found["memories"]), found

    again = calls(sandbox)
    doc = sandbox.memloom("capture", "run-once", "--json")
    assert doc["swept"] == 0 and calls(sandbox) == again, "a re-run distilled the history again"

    # Aider appends the next session to the same file: the read resumes at the
    # watermark. The lines before it come again only as the importer's context (the
    # 40 lines before a resumed read), and nothing is made of them a second time.
    memories = sandbox.memloom("stats", "--json")["total_memories"]
    assert aider.run(sandbox, LATER).returncode == 0
    start = calls(sandbox)
    doc = sandbox.memloom("capture", "run-once", "--json")
    assert doc["processed"] == 1, doc
    sent = sandbox.memloom_llm.payloads["memloom_distill"][start:]
    numbered = [(line["line"], line["text"]) for payload in sent for line in payload["lines"]]
    new_from = min(n for n, text in numbered if "Redis 7" in text)
    assert all(n < new_from for n, text in numbered if "ArgoCD" in text)
    assert sandbox.memloom("stats", "--json")["total_memories"] == memories + 1

    assert snapshot(user_files) == before_files, "memloom touched ~/.aider.conf.yml"
    sandbox.memloom("disconnect", "aider")
    assert snapshot(user_files) == before_files


@aider_only
def test_a_history_still_being_written_waits_for_the_quiet_period(driver: Driver, sandbox: Sandbox):
    """The sweep leaves a history written in the last 5 minutes (Aider has no end marker)."""
    aider = driver
    aider.configure(sandbox)
    sandbox.memloom("connect", "aider", "--json")
    assert aider.run(sandbox, TYPED).returncode == 0
    [history] = aider.session_files(sandbox)
    Path(history).touch()  # just written
    doc = sandbox.memloom("capture", "run-once", "--json")
    assert doc["swept"] == 0, doc
