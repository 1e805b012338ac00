"""When the real agent's own read tool opens a file, the memories anchored to it reach
the next model request; those of another file do not; a second read adds nothing.

Headless, each pinned agent is connected (``memloom connect --all``: its after-tool
hook, ``memloom hook read``), two memories are saved in the project, each naming one
of two files (so anchored to it), and the scripted model calls the agent's read tool
on the first file: Claude Code ``Read`` (PostToolUse), Gemini CLI ``read_file``
(AfterTool), Qwen Code ``read_file`` (PostToolUse). The request that carries the tool's
result holds the first file's memory; nothing the agent sent holds the second's. In the
resumed session a second read of the same file brings no new memloom block.
"""

from __future__ import annotations

import pytest

from tests.e2e.drivers import DRIVERS
from tests.e2e.harness import Driver, Sandbox
from tests.e2e.model import ToolCall
from tests.e2e.test_agents import answered, connected

#: The agents with a read hook.
READERS = ("claude-code", "gemini", "qwen")
OPENED = "svc/retry.py"
OTHER = "billing/invoice.py"
OPENED_FACT = "The retry loop of svc/retry.py keeps MAX_RETRIES at 3: the gateway bans more"
OTHER_FACT = "billing/invoice.py rounds every total to whole cents before adding the tax"
#: The prompts' words no memory holds (prompt-time recall gives nothing).
FIRST = "kickoff-rd41 open the module"
SECOND = "again-rd42 open the module once more"


@pytest.mark.parametrize(
    "driver", [DRIVERS[name] for name in READERS if name in DRIVERS], ids=lambda d: d.name
)
def test_the_opened_file_s_memory_reaches_the_next_request_once(driver: Driver, sandbox: Sandbox):
    connected(driver, sandbox)
    for rel, body in ((OPENED, "MAX_RETRIES = 3\n"), (OTHER, "def total(x):\n    return x\n")):
        path = sandbox.project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
    for fact, rel in ((OPENED_FACT, OPENED), (OTHER_FACT, OTHER)):
        saved = sandbox.memloom("show", sandbox.save(fact), "--json")
        assert [a["path"] for a in saved["anchors"]] == [rel], saved  # anchored to its file

    sandbox.model.script(ToolCall.read(sandbox.project / OPENED), when="kickoff-rd41")
    first = driver.run(sandbox, FIRST)
    answered(first)
    before = [r for r in first.requests if OPENED_FACT in r.text]
    assert before, "the opened file's memory reached no request"
    assert OPENED_FACT not in first.requests[0].text  # not before the read
    assert first.requests[-1].text.count(OPENED_FACT) == 1
    assert OTHER_FACT not in first.sent  # only the opened file's memories

    sandbox.model.script(ToolCall.read(sandbox.project / OPENED), when="again-rd42")
    second = driver.run(sandbox, SECOND, resume=True)
    answered(second)
    last = second.requests[-1].text
    assert "again-rd42" in last
    # What the first read gave may be in the resumed history (Gemini CLI replays that
    # tool result twice); what came after the second prompt (the second read's
    # result) holds no memory of the file.
    assert OPENED_FACT not in last.split("again-rd42", 1)[1]
    assert OTHER_FACT not in second.sent
