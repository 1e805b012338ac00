"""GitHub Copilot CLI 1.0.102, what only Copilot does.

* It runs the sessionStart and userPromptSubmitted hooks at the same time, so both
  of memloom's hooks read what the session was shown before either records: a
  pinned memory that also fits the prompt went in twice (the digest and the
  prompt's context). Now the hook that records a memory first shows it.
* It ignores, silently and whole, a hook file that is not strict JSON: a user's
  ``hooks.json`` with a comment runs none of its hooks, memloom's included.
  ``memloom connect`` says so.
"""

from __future__ import annotations

import pytest

from tests.e2e.drivers import DRIVERS
from tests.e2e.drivers.copilot import Copilot
from tests.e2e.harness import Sandbox
from tests.e2e.test_agents import FACT, QUESTION, answered

pytestmark = pytest.mark.skipif("copilot" not in DRIVERS, reason="no Copilot driver")


def test_a_pinned_memory_that_fits_the_prompt_is_injected_once(sandbox: Sandbox):
    copilot = Copilot()
    copilot.seed_user_config(sandbox)
    sandbox.memloom("connect", "copilot", "--all")
    sandbox.save(FACT, pin=True)
    for _ in range(3):  # the two hooks race: a few sessions, each must show it once
        run = copilot.run(sandbox, QUESTION)
        answered(run)
        last = run.requests[-1].text
        assert last.count("5433") == 1, "the pinned memory went in twice (digest and prompt)"


def test_connect_says_when_copilot_ignores_the_hook_file(sandbox: Sandbox):
    copilot = Copilot()
    path = copilot.hooks_file(sandbox)
    path.parent.mkdir(parents=True)
    path.write_text('// my hooks\n{"version": 1, "hooks": {}}\n')
    sandbox.save(FACT)
    doc = sandbox.memloom("connect", "copilot", "--all", "--json")
    assert any("not strict JSON" in note for note in doc.get("notes", [])), doc
    run = copilot.run(sandbox, QUESTION)
    answered(run)
    assert "5433" not in run.sent  # what the note warns of: Copilot ran none of them
    path.write_text(path.read_text().replace("// my hooks\n", ""))
    assert "notes" not in sandbox.memloom("connect", "copilot", "--all", "--json")
    assert "5433" in copilot.run(sandbox, QUESTION).sent
