"""The real agents read a file with their own tool; memloom's import anchors the memory
of that turn to the file (``via: tool``) and to nothing the session did not touch.

Per agent, one run of the pinned CLI against the scripted model, which makes the
agent read ``svc/retry.py`` with its own read tool (Codex: a shell ``cat``, it has no
read tool); then ``memloom import sessions --agent NAME --path SESSION`` with the
scripted distiller citing the whole turn. The transcript each agent wrote is parsed
as it is (``ParseResult.touched``), and the memory's anchors are read back. Aider,
which has no tool calls, is given the file on its command line and edits it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from memloom.agents import get_agent
from memloom.agents.base import DiscoverOptions
from tests.e2e.drivers import DRIVERS
from tests.e2e.harness import Sandbox
from tests.e2e.model import ToolCall

PROMPT = "REMEMBER: retries stop after `MAX_RETRIES` attempts; check svc retry module"
UNRELATED = "svc/unrelated.py"

#: Each agent's own read tool (Copilot's ``view``), planned for the scripted model.
READS: dict[str, ToolCall] = {
    "claude-code": ToolCall.read("{file}"),
    "gemini": ToolCall.read("{file}"),
    "qwen": ToolCall.read("{file}"),
    "opencode": ToolCall.read("{file}"),
    "copilot": ToolCall(("view",), {"path": "{file}"}),
    "codex": ToolCall.shell("cat svc/retry.py"),
}


def planned(call: ToolCall, file: Path) -> ToolCall:
    values = {k: v.replace("{file}", str(file)) for k, v in call.values.items()}
    return ToolCall(call.tools, values)


@pytest.mark.parametrize("name", sorted(READS))
def test_an_imported_memory_is_anchored_to_the_file_the_agent_read(sandbox: Sandbox, name: str):
    if name not in DRIVERS:
        pytest.skip(f"no {name} driver")
    driver = DRIVERS[name]
    driver.configure(sandbox)
    driver.seed_user_config(sandbox)  # the user's own settings (offline, the model's URL)
    svc = sandbox.project / "svc"
    svc.mkdir()
    target = svc / "retry.py"
    target.write_text('"""Retries."""\n\nMAX_RETRIES = 3\n')
    (sandbox.project / UNRELATED).write_text("MAX_RETRIES = 99\n")
    sandbox.model.script(planned(READS[name], target), when="MAX_RETRIES")
    run = driver.run(sandbox, PROMPT)
    assert run.returncode == 0, run.stderr[-2000:]
    # The agent's read tool ran: its result reached the model.
    assert "MAX_RETRIES = 3" in run.sent, f"{name} never read the file"

    (session,) = driver.session_files(sandbox)[-1:]
    agent = get_agent(name)
    # Its sessions, as discovery names them (OpenCode: one store, ``<db>#<id>``).
    found = agent.discover(DiscoverOptions(paths=[session], days=None, quiet_seconds=0))
    parsed = agent.read(found.files[0].path, final=True)
    paths = {Path(p).name for _, p, _ in parsed.touched}
    assert "retry.py" in paths and "unrelated.py" not in paths, parsed.touched

    sandbox.memloom_llm.through_reply = True
    try:
        report = sandbox.memloom(
            "import", "sessions", "--agent", name, "--path", str(session), "--no-native", "--json"
        )
    finally:
        sandbox.memloom_llm.through_reply = False
    recalled = sandbox.memloom("recall", "MAX_RETRIES retries", "--json")
    texts = [m for m in recalled["memories"] if "MAX_RETRIES" in m["text"]]
    assert texts, json.dumps(report)[:2000]
    shown = sandbox.memloom("show", texts[0]["id"], "--json")
    tool = [a for a in shown["anchors"] if a["via"] == "tool"]
    assert [(a["path"], a["symbols"]) for a in tool] == [("svc/retry.py", ["MAX_RETRIES"])]
    assert not any(a["path"] == UNRELATED for a in shown["anchors"])


#: Aider's "whole" edit format: the file's path, then its new content fenced.
WHOLE = 'svc/retry.py\n```python\n"""Retries."""\n\nMAX_RETRIES = 4\n```\n'


def test_aider_files_added_to_the_chat_and_edited_anchor_the_memory(sandbox: Sandbox):
    """Aider has no tool calls: the file given on its command line is "Added … to the
    chat", and the scripted answer's whole-file edit is "Applied edit to …". In a git
    repository, as Aider is used: it names files from the repository's top (with
    ``--no-git`` it names them from the common folder of the chat's files: ``retry.py``,
    which is no path from the history's folder and is not anchored)."""
    if "aider" not in DRIVERS:
        pytest.skip("no aider driver")
    base = DRIVERS["aider"]

    class WithFile(type(base)):  # type: ignore[misc]
        def command(self, sb: Sandbox, prompt: str, *, resume: bool = False) -> list[str]:
            argv = [a for a in super().command(sb, prompt, resume=resume) if a != "--no-git"]
            return [*argv, "--no-auto-commits", "--map-tokens", "0", "svc/retry.py"]

    driver = WithFile()
    driver.configure(sandbox)
    driver.seed_user_config(sandbox)
    (sandbox.project / "svc").mkdir()
    target = sandbox.project / "svc" / "retry.py"
    target.write_text('"""Retries."""\n\nMAX_RETRIES = 3\n')
    (sandbox.project / UNRELATED).write_text("MAX_RETRIES = 99\n")
    subprocess.run(["git", "init", "-q", str(sandbox.project)], check=True, env=sandbox.env())
    sandbox.model.script(when="MAX_RETRIES", answer=WHOLE)
    run = driver.run(sandbox, PROMPT)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "MAX_RETRIES = 4" in target.read_text()  # Aider applied the edit

    (history,) = driver.session_files(sandbox)
    parsed = get_agent("aider").read(history, final=True)
    assert [(p, k) for _, p, k in parsed.touched] == [
        ("svc/retry.py", "read"),
        ("svc/retry.py", "edit"),
    ], history.read_text()

    sandbox.memloom_llm.through_reply = True
    try:
        sandbox.memloom(
            "import",
            "sessions",
            "--agent",
            "aider",
            "--path",
            str(history),
            "--no-native",
            "--json",
        )
    finally:
        sandbox.memloom_llm.through_reply = False
    recalled = sandbox.memloom("recall", "MAX_RETRIES retries", "--json")
    (memory,) = [m for m in recalled["memories"] if "MAX_RETRIES" in m["text"]]
    shown = sandbox.memloom("show", memory["id"], "--json")
    assert [(a["path"], a["symbols"], a["via"]) for a in shown["anchors"]] == [
        ("svc/retry.py", ["MAX_RETRIES"], "tool")  # the edit after its reply
    ]
