"""Qwen Code 0.24.4 traps memloom meets (beyond the generic checks of test_agents.py)."""

from __future__ import annotations

import json
import re

import pytest

from tests.e2e.drivers import DRIVERS
from tests.e2e.harness import Driver, Sandbox
from tests.e2e.model import TOOL_TRIGGER
from tests.e2e.test_agents import FACT, PINNED, QUESTION, answered, connected

QWEN = DRIVERS["qwen"]
#: Parametrized by the driver so that the e2e matrix (scripts/e2e_matrix.py) files these
#: checks under Qwen Code's row.
qwen_only = pytest.mark.parametrize("driver", [QWEN], ids=lambda d: d.name)


@qwen_only
def test_a_resumed_session_gets_the_digest_again(driver: Driver, sandbox: Sandbox):
    """Qwen puts SessionStart context into the system prompt, which ``--continue``
    rebuilds: shown once per session, the pinned memory was gone after a resume."""
    connected(driver, sandbox)
    sandbox.save(PINNED, pin=True)
    answered(driver.run(sandbox, "hello"))
    again = driver.run(sandbox, "hello again", resume=True)
    answered(again)
    assert PINNED in again.requests[-1].text, "the resumed session lost the digest"
    assert again.requests[-1].text.count(PINNED) == 1


@qwen_only
def test_a_tool_call_s_continuation_recalls_nothing(driver: Driver, sandbox: Sandbox):
    """Qwen fires UserPromptSubmit again (``prompt: ""``) when it sends a tool's result
    back: the memory goes with the typed prompt only, and capture reads past the tool."""
    connected(driver, sandbox)
    sandbox.save(FACT)
    run = driver.run(sandbox, f"{QUESTION} and please {TOOL_TRIGGER}")
    answered(run)
    assert len(run.requests) >= 2, "the model was not asked for the tool turn"
    assert run.requests[-1].text.count("5433") == run.requests[0].text.count("5433") >= 1
    doc = sandbox.memloom("capture", "run-once", "--json")
    assert doc["processed"] >= 1, doc


@qwen_only
def test_disconnect_when_qwen_added_its_settings_version(driver: Driver, sandbox: Sandbox):
    """A settings.json without ``$version`` is rewritten by Qwen on start (it adds the
    key): memloom's disconnect takes out exactly its hooks from the file as Qwen left
    it, the user's comments and hook included."""
    driver.configure(sandbox)
    path = driver.seed_user_config(sandbox)[0]
    original = re.sub(r'\n  "\$version": 4,', "", path.read_text())
    path.write_text(original)
    sandbox.memloom("connect", driver.name, "--all")
    answered(driver.run(sandbox, QUESTION))
    touched = path.read_text()
    assert '"$version"' in touched, "Qwen no longer writes $version: drop this test"
    sandbox.memloom("disconnect", driver.name)
    after = path.read_text()
    assert "memloom" not in after
    assert "// my Qwen Code settings" in after and "/* another tool's hook */" in after
    assert json.dumps(driver.other_hook_command(sandbox)) in after
    # Qwen's own edit is all that is left: "$version" appended as the last member.
    assert original.endswith("\n  }\n}\n")
    assert after == original[: -len("  }\n}\n")] + '  },\n  "$version": 4\n}\n'
    answered(driver.run(sandbox, "hello"))
