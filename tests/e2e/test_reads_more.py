"""After the real agent's own read opens a file, that file's memories reach the model.

Codex 0.169.0 (no read tool: its model runs ``cat``/``sed -n``, and PostToolUse names
the shell command), Copilot CLI 1.0.102 (``view``; postToolUse's top-level
``additionalContext``) and OpenCode 1.18.33 (memloom's plugin: ``tool.execute.after``
of ``read`` appends to the tool's output), each connected with ``memloom connect``.
The scripted model makes the agent read file A of a git repository; memloom holds one
memory anchored to A and one anchored to B:

* A's memory is in the model's next request (the one that brings the read's result
  back), and was in none before it; B's is in none;
* a second read of A, later in the same session, adds nothing: A's memory is in the
  history once;
* a read of B then brings B's memory, once.
"""

from __future__ import annotations

import subprocess

import pytest

from tests.e2e.drivers import DRIVERS
from tests.e2e.harness import Driver, Run, Sandbox
from tests.e2e.model import ToolCall
from tests.e2e.test_agents import answered, connected
from tests.e2e.test_plugins import clone as clone_fixture  # noqa: F401 (a fixture)
from tests.e2e.test_plugins import install_plugin, prepare

#: Each memory's words, none of them in the files, the prompts or the other memory.
ABOUT_A = "Payment retries stop after seven attempts, then the order goes to manual review"
ABOUT_B = "Invoice numbers restart at one every January for the tax office"
FILE_A = "src/payments.py"
FILE_B = "src/invoices.py"


def read_call(driver: Driver, sb: Sandbox, rel: str) -> ToolCall:
    """The agent's own way to read ``rel``: Codex a shell ``sed -n`` (its habit; a
    relative path), Copilot ``view`` and OpenCode ``read`` (absolute paths)."""
    if driver.name == "codex":
        return ToolCall.shell(f"sed -n '1,80p' {rel}")
    if driver.name == "copilot":
        return ToolCall.named("view", path=str(sb.project / rel))
    return ToolCall.read(sb.project / rel)


def git_project(sb: Sandbox) -> None:
    """The sandbox's project as a repository holding A and B (anchors are paths in it)."""
    (sb.project / "src").mkdir()
    (sb.project / FILE_A).write_text("def charge(order):\n    return order.total\n")
    (sb.project / FILE_B).write_text("def number(invoice):\n    return invoice.seq\n")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "shop"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
            cwd=sb.project,
            check=True,
            capture_output=True,
        )


def anchored(sb: Sandbox, text: str, rel: str) -> None:
    doc = sb.memloom("save", text, "--project", str(sb.project), "--file", rel, "--json")
    shown = sb.memloom("show", doc["id"], "--json")
    assert [a["path"] for a in shown["anchors"]] == [rel], shown


def read_in_session(driver: Driver, sb: Sandbox, rel: str, when: str, *, resume: bool) -> Run:
    sb.model.script(read_call(driver, sb, rel), when=when)
    run = driver.run(sb, f"please {when} now", resume=resume)
    answered(run)
    return run


def after_the_read(run: Run, when: str) -> tuple[list[str], str]:
    """The requests of ``run`` before the read's result came back, and the one after."""
    texts = [r.text for r in run.requests if when in r.text and "title generator" not in r.text]
    assert len(texts) >= 2, f"the agent did not call its read tool: {len(texts)} request(s)"
    return texts[:-1], texts[-1]


AGENTS = [DRIVERS[name] for name in ("codex", "copilot", "opencode") if name in DRIVERS]


@pytest.mark.parametrize("driver", AGENTS, ids=lambda d: d.name)
def test_a_read_brings_that_file_s_memories_once(driver: Driver, sandbox: Sandbox):
    connected(driver, sandbox)
    git_project(sandbox)
    anchored(sandbox, ABOUT_A, FILE_A)
    anchored(sandbox, ABOUT_B, FILE_B)

    first = read_in_session(driver, sandbox, FILE_A, "zq-open-alpha", resume=False)
    before, after = after_the_read(first, "zq-open-alpha")
    assert all(ABOUT_A not in text for text in before), "A's memory came before the read"
    assert after.count(ABOUT_A) == 1, "A's memory did not reach the request after the read"
    assert ABOUT_B not in first.sent, "B's memory came with a read of A"

    again = read_in_session(driver, sandbox, FILE_A, "zq-open-again", resume=True)
    _, after = after_the_read(again, "zq-open-again")
    assert after.count(ABOUT_A) == 1, "a second read of A added its memory again"
    assert ABOUT_B not in again.sent

    other = read_in_session(driver, sandbox, FILE_B, "zq-open-beta", resume=True)
    _, after = after_the_read(other, "zq-open-beta")
    assert after.count(ABOUT_B) == 1, "B's memory did not come with a read of B"
    assert after.count(ABOUT_A) == 1


PLUGIN_AGENTS = [DRIVERS[name] for name in ("codex", "copilot") if name in DRIVERS]


@pytest.mark.parametrize("driver", PLUGIN_AGENTS, ids=lambda d: d.name)
def test_the_plugin_s_read_hook_brings_that_file_s_memories(
    driver: Driver, sandbox: Sandbox, request: pytest.FixtureRequest
):
    """The same through memloom's plugin, installed with the agent's own command
    (tests/e2e/test_plugins.py), no ``memloom connect``: Codex's hooks/codex.json
    (``PostToolUse``, ``^Bash$``), Copilot CLI's PascalCase ``PostToolUse`` group of the
    shared hooks/hooks.json (its ``view`` is ``Read`` there)."""
    prepare(sandbox, driver)
    clone = request.getfixturevalue("clone_fixture")  # the repository as a clone has it
    for proc in install_plugin(sandbox, driver, clone):
        assert proc.returncode == 0, f"{proc.args}: {proc.stdout[-800:]} {proc.stderr[-800:]}"
    git_project(sandbox)
    anchored(sandbox, ABOUT_A, FILE_A)
    anchored(sandbox, ABOUT_B, FILE_B)
    run = read_in_session(driver, sandbox, FILE_A, "zq-plugin-read", resume=False)
    before, after = after_the_read(run, "zq-plugin-read")
    assert all(ABOUT_A not in text for text in before)
    assert after.count(ABOUT_A) == 1, "the plugin's read hook did not bring A's memory"
    assert ABOUT_B not in run.sent
