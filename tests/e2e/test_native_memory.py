"""One memory for every agent: what an agent keeps in its own memory reaches the others.

The real agents, headless against the scripted model (tests/e2e/model.py), in one
sandbox HOME whose project is a git repository, all connected to memloom:

1. Claude Code writes an auto-memory file with its own ``Write`` tool (the scripted
   model makes the call, as ../shared/reference/agents-native-memory.md describes);
   ``memloom import native`` reads it; the fact then reaches the model request of a
   Codex, a Gemini CLI and a Qwen Code prompt in the same repository, and is not put a
   second time into Claude Code's (whose own index shows it). Claude edits the file:
   capture's sweep makes the memory's next version, which the others now get; Claude
   deletes it: the memory expires, and the others stop getting it.
2. The same from Qwen Code's memory (written with ``--approval-mode yolo``) to Claude
   Code, and not back into Qwen Code.
"""

from __future__ import annotations

import html
import re

import pytest

from tests.e2e import native
from tests.e2e.drivers import DRIVERS
from tests.e2e.harness import Run, Sandbox
from tests.e2e.model import ToolCall

BLOCK = re.compile(r"<memloom-context>(.*?)</memloom-context>", re.S)
QUESTION = "how do I change the shop's feature flags?"
FACT = "Feature flags of the shop live in flags/prod.yaml; change them only with flagctl."
EDITED = "Feature flags of the shop live in flags/prod.yaml; change them only with flagctl2."
#: A memory of the same topic from elsewhere: proves Claude's prompt hook did inject.
OTHER = "Feature flag changes of the shop are announced in the releases channel."


@pytest.fixture
def sb(sandbox: Sandbox) -> Sandbox:
    return sandbox


ok = native.ok


def injected(run: Run) -> str:
    """What memloom's hooks put into the model requests of a run (its blocks only)."""
    return "\n".join(m.group(1) for r in run.requests for m in BLOCK.finditer(_unescaped(r.text)))


def _unescaped(text: str) -> str:
    """A request body's JSON text with the escapes the agents put on the block undone
    (JSON's, and Gemini CLI's HTML entities in its ``<hook_context>``)."""
    text = text.replace("\\n", "\n").replace("\\u003c", "<").replace("\\u003e", ">")
    return html.unescape(text)


def connect(sb: Sandbox, *names: str) -> None:
    for name in names:
        driver = DRIVERS[name]
        if name not in ("claude-code", "qwen"):  # native.enable configured those
            driver.configure(sb)
            driver.seed_user_config(sb)
        sb.memloom("connect", name, "--all")


def scripted(name: str, sb: Sandbox, prompt: str, *calls: ToolCall) -> Run:
    sb.model.clear_scripts()
    sb.model.script(*calls, when=prompt)
    return ok(native.NATIVE[name].run(sb, prompt))


def claude_note(body: str) -> str:
    return (
        "---\nname: feature-flags\ndescription: where the feature flags live and how to "
        f"change them\nmetadata:\n  type: project\n---\n\n{body}\n"
        "**Why:** hand edits skipped the audit log.\n**How to apply:** run flagctl set.\n"
    )


def test_claude_codes_own_memory_reaches_codex_gemini_and_qwen_and_follows_edits(sb: Sandbox):
    native.enable("claude-code", sb)
    native.enable("qwen", sb)
    connect(sb, "claude-code", "codex", "gemini", "qwen")
    sb.save(OTHER)
    memory = native.claude_memory_dir(sb)
    topic = memory / "feature-flags.md"
    scripted(
        "claude-code",
        sb,
        "remember how we change feature flags here",
        ToolCall.write(topic, claude_note(FACT)),
        ToolCall.write(memory / "MEMORY.md", "- [Feature flags](feature-flags.md) — flagctl\n"),
    )
    assert FACT in topic.read_text()
    report = sb.memloom("import", "native", "--json")
    assert report["added"] >= 1 and report["calls"]["llm"] == 0, report
    sb.model.clear_scripts()

    for name in ("codex", "gemini", "qwen"):
        run = ok(DRIVERS[name].run(sb, QUESTION))
        assert "flagctl" in injected(run), f"Claude Code's memory never reached {name}"

    claude = ok(DRIVERS["claude-code"].run(sb, QUESTION))
    shown = injected(claude)
    assert "releases channel" in shown, "Claude Code's prompt hook injected nothing"
    assert "flagctl" not in shown, "Claude Code was given its own memory a second time"
    assert "(user's auto-memory" in claude.sent  # Claude Code shows its index itself

    # An edit: the next version, through capture's sweep (continuous capture).
    scripted(
        "claude-code",
        sb,
        "flagctl was renamed flagctl2",
        ToolCall.write(topic, claude_note(EDITED)),
    )
    sb.memloom("capture", "run-once", "--json")
    found = sb.memloom("recall", "feature flags flagctl2", "--json")["memories"]
    mem = next(m for m in found if "flagctl2" in m["text"])
    history = sb.memloom("history", mem["id"], "--json")
    assert len(history["versions"]) == 2, history
    sb.model.clear_scripts()
    assert "flagctl2" in injected(ok(DRIVERS["codex"].run(sb, QUESTION)))

    # A deletion: the memory expires, and no agent is given it any more.
    native.allow_claude_rm(sb)
    scripted("claude-code", sb, "forget the feature flag note", native.delete(topic))
    assert not topic.exists()
    sb.memloom("capture", "run-once", "--json")
    assert sb.memloom("show", mem["id"], "--json")["status"] == "expired"
    sb.model.clear_scripts()
    assert "flagctl" not in injected(ok(DRIVERS["gemini"].run(sb, QUESTION)))


def test_qwen_codes_own_memory_reaches_claude_code_and_not_qwen_again(sb: Sandbox):
    native.enable("qwen", sb)
    native.enable("claude-code", sb)
    connect(sb, "qwen", "claude-code")
    sb.save(OTHER)
    memory = native.qwen_project_memory_dir(sb)
    topic = memory / "project" / "feature-flags.md"
    doc = f"---\nname: feature flags\ndescription: flagctl only\ntype: project\n---\n\n{FACT}\n"
    scripted(
        "qwen",
        sb,
        "remember how we change feature flags here",
        ToolCall.write(topic, doc),
        ToolCall.write(
            memory / "MEMORY.md", "- [feature flags](project/feature-flags.md) — flagctl\n"
        ),
    )
    assert FACT in topic.read_text()
    report = sb.memloom("import", "native", "--agent", "qwen-code", "--json")
    assert report["added"] >= 1, report
    sb.model.clear_scripts()
    claude = ok(DRIVERS["claude-code"].run(sb, QUESTION))
    assert "flagctl" in injected(claude), "Qwen Code's memory never reached Claude Code"
    qwen = ok(DRIVERS["qwen"].run(sb, QUESTION))
    shown = injected(qwen)
    assert "releases channel" in shown, "Qwen Code's prompt hook injected nothing"
    assert "flagctl" not in shown, "Qwen Code was given its own memory a second time"
