"""Qwen Code 0.24.4 traps memloom meets (beyond the generic checks of test_agents.py)."""

from __future__ import annotations

import json
import re

from tests.e2e.drivers import DRIVERS
from tests.e2e.harness import Sandbox
from tests.e2e.model import TOOL_TRIGGER
from tests.e2e.test_agents import FACT, PINNED, QUESTION, answered, connected

QWEN = DRIVERS["qwen"]


def test_a_resumed_session_gets_the_digest_again(sandbox: Sandbox):
    """Qwen puts SessionStart context into the system prompt, which ``--continue``
    rebuilds: shown once per session, the pinned memory was gone after a resume."""
    connected(QWEN, sandbox)
    sandbox.save(PINNED, pin=True)
    answered(QWEN.run(sandbox, "hello"))
    again = QWEN.run(sandbox, "hello again", resume=True)
    answered(again)
    assert PINNED in again.requests[-1].text, "the resumed session lost the digest"
    assert again.requests[-1].text.count(PINNED) == 1


def test_a_tool_call_s_continuation_recalls_nothing(sandbox: Sandbox):
    """Qwen fires UserPromptSubmit again (``prompt: ""``) when it sends a tool's result
    back: the memory goes with the typed prompt only, and capture reads past the tool."""
    connected(QWEN, sandbox)
    sandbox.save(FACT)
    run = QWEN.run(sandbox, f"{QUESTION} and please {TOOL_TRIGGER}")
    answered(run)
    assert len(run.requests) >= 2, "the model was not asked for the tool turn"
    assert run.requests[-1].text.count("5433") == run.requests[0].text.count("5433") >= 1
    doc = sandbox.memloom("capture", "run-once", "--json")
    assert doc["processed"] >= 1, doc


def test_disconnect_when_qwen_added_its_settings_version(sandbox: Sandbox):
    """A settings.json without ``$version`` is rewritten by Qwen on start (it adds the
    key): memloom's disconnect takes out exactly its hooks from the file as Qwen left
    it, the user's comments and hook included."""
    QWEN.configure(sandbox)
    path = QWEN.seed_user_config(sandbox)[0]
    original = re.sub(r'\n  "\$version": 4,', "", path.read_text())
    path.write_text(original)
    sandbox.memloom("connect", QWEN.name, "--all")
    answered(QWEN.run(sandbox, QUESTION))
    touched = path.read_text()
    assert '"$version"' in touched, "Qwen no longer writes $version: drop this test"
    sandbox.memloom("disconnect", QWEN.name)
    after = path.read_text()
    assert "memloom" not in after
    assert "// my Qwen Code settings" in after and "/* another tool's hook */" in after
    assert json.dumps(QWEN.other_hook_command(sandbox)) in after
    # Qwen's own edit is all that is left: its "$version" line.
    assert [ln for ln in after.splitlines() if ln not in original.splitlines()] == [
        '  "$version": 4,'
    ] or '"$version": 4' in after
    answered(QWEN.run(sandbox, "hello"))
