"""The real agents write their own ("native") memories when the scripted model tells
them to, where ../shared/reference/agents-native-memory.md says and in its format,
and load them themselves in the next session (read from the request bodies).

Each test is one agent in one sandbox: write, next session, edit, delete (each run
costs the agent's start-up, 0.5-5 s). tests/e2e/native.py has the folders and calls.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.e2e import native
from tests.e2e.harness import Run, Sandbox
from tests.e2e.model import ToolCall


@pytest.fixture
def sb(sandbox: Sandbox) -> Sandbox:
    return sandbox


ok = native.ok


def scripted(name: str, sb: Sandbox, prompt: str, *calls: ToolCall, hold: float = 0.0) -> Run:
    sb.model.clear_scripts()
    sb.model.script(*calls, when=prompt, hold=hold)
    return ok(native.NATIVE[name].run(sb, prompt))


def claude_doc(name: str, description: str, kind: str, body: str) -> str:
    return (
        f"---\nname: {name}\ndescription: {description}\nmetadata:\n  type: {kind}\n---\n\n{body}"
    )


def test_claude_code_writes_its_auto_memory_and_loads_the_index(sb: Sandbox):
    native.enable("claude-code", sb)
    mem = native.claude_memory_dir(sb)
    assert mem.name == "memory" and mem.parent.name == re.sub(r"[^A-Za-z0-9]", "-", str(sb.project))
    topic = mem / "prefer-pnpm.md"
    body = (
        "Use pnpm, never npm.\n**Why:** npm breaks the lockfile.\n**How to apply:** pnpm install.\n"
    )
    line = "- [Prefer pnpm](prefer-pnpm.md) — pnpm, never npm"
    run = scripted(
        "claude-code",
        sb,
        "we use pnpm here, never npm: remember that",
        ToolCall.write(topic, claude_doc("prefer-pnpm", "use pnpm not npm", "feedback", body)),
        ToolCall.write(mem / "MEMORY.md", line + "\n"),
    )
    system = json.dumps(run.requests[0].body.get("system"))
    assert f"persistent file-based memory at `{mem}/`" in system
    text = topic.read_text()
    assert re.search(
        r"^metadata:\n  node_type: memory\n  type: feedback\n"
        r"  originSessionId: [0-9a-f-]{36}\n  modified: \S+Z\n---\n",
        text,
        re.M,
    ), text
    assert text.endswith(body)
    assert (mem / "MEMORY.md").read_text() == line + "\n"

    nxt = ok(native.CLAUDE.run(sb, "which package manager?"))
    first = nxt.requests[0].body["messages"][0]["content"]
    texts = [c["text"] for c in first if isinstance(c, dict) and "text" in c]
    reminder = next(t for t in texts if "(user's auto-memory, persists across conversations)" in t)
    assert reminder.startswith("<system-reminder>") and f"Contents of {mem}/MEMORY.md" in reminder
    assert line in reminder and "Use pnpm, never npm." not in nxt.sent  # the index, not the file

    # An edit: Write over the file (a memory file needs no Read first), a new stamp.
    edited = claude_doc(
        "prefer-pnpm", "use pnpm 9 not npm", "feedback", body.replace("pnpm,", "pnpm 9,")
    )
    scripted("claude-code", sb, "actually it is pnpm 9", ToolCall.write(topic, edited))
    again = topic.read_text()
    assert "use pnpm 9 not npm" in again and again != text and "Use pnpm 9, never npm." in again

    # A deletion: Bash rm, which -p refuses unless the settings allow it.
    refused = scripted("claude-code", sb, "forget the pnpm rule", native.delete(topic))
    assert topic.exists() and "requires approval" in refused.requests[-1].text
    native.allow_claude_rm(sb)
    scripted("claude-code", sb, "forget the pnpm rule now", native.delete(topic))
    assert not topic.exists() and (mem / "MEMORY.md").exists()


def qwen_doc(name: str, description: str, kind: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {kind}\n---\n\n{body}"


def test_qwen_code_writes_its_managed_memory_and_appends_the_indexes(sb: Sandbox):
    native.enable("qwen", sb)
    proj, user = native.qwen_project_memory_dir(sb), native.qwen_user_memory_dir(sb)
    assert proj.parent.name == re.sub(r"[^A-Za-z0-9]", "-", str(sb.project))
    topic = proj / "feedback" / "pnpm.md"
    doc = qwen_doc("prefer pnpm", "use pnpm not npm", "feedback", "Use pnpm, never npm.\n")
    role = qwen_doc("user role", "backend developer", "user", "The user is a backend developer.\n")
    pline, uline = (
        "- [prefer pnpm](feedback/pnpm.md) — use pnpm not npm",
        "- [user role](role.md) — backend",
    )
    scripted(
        "qwen",
        sb,
        "we use pnpm here, never npm: remember that",
        ToolCall.write(topic, doc),
        ToolCall.write(proj / "MEMORY.md", pline + "\n"),
        ToolCall.write(user / "role.md", role),
        ToolCall.write(user / "MEMORY.md", uline + "\n"),
    )
    assert topic.read_text() == doc and (user / "role.md").read_text() == role  # as written

    sb.model.clear_scripts()
    prompt = "which package manager do we use?"
    sb.model.script(
        ToolCall.named("respond_in_schema", selected_memories=[str(topic)]), when=prompt
    )
    nxt = ok(native.QWEN.run(sb, prompt))
    main = [
        r
        for r in nxt.requests
        if any(t["function"]["name"] == "write_file" for t in r.body.get("tools") or [])
    ]
    system = main[0].body["messages"][0]["content"]
    system = system if isinstance(system, str) else "".join(p.get("text", "") for p in system)
    assert (
        system.endswith(f"## {proj}/MEMORY.md\n\n{pline}")
        or f"## {proj}/MEMORY.md\n\n{pline}" in system
    )
    assert f"## {user}/MEMORY.md\n\n{uline}" in system
    picked = [r for r in nxt.requests if "You are selecting memories" in r.text]
    assert picked and "[feedback] " + str(topic) in picked[0].text
    assert "## Relevant memory" in main[0].text and "Use pnpm, never npm." in main[0].text

    # An edit: write_file alone is refused (the session has not read the file) ...
    new = doc.replace("never npm", "never npm or yarn")
    refused = scripted("qwen", sb, "and never yarn either", ToolCall.write(topic, new))
    assert (
        topic.read_text() == doc
        and "has not been read in this session" in refused.requests[-1].text
    )
    # ... read_file first, then write_file.
    scripted("qwen", sb, "and never yarn either, really", *native.edit(topic, new))
    assert topic.read_text() == new

    scripted("qwen", sb, "forget the pnpm rule", native.delete(topic))
    assert not topic.exists()


def test_gemini_cli_writes_its_project_memory_and_loads_it_in_the_system_instruction(sb: Sandbox):
    native.enable("gemini", sb)
    mem = native.gemini_memory_dir(sb)
    index = (
        "# Project Memory\n\n- The user prefers pnpm over npm here; see [deploys.md](deploys.md).\n"
    )
    note = "# Deploys\n\nStaging deploys go through ArgoCD on Fridays.\n"
    run = scripted(
        "gemini",
        sb,
        "we use pnpm here, never npm: remember that",
        ToolCall.write(mem / "MEMORY.md", index),
        ToolCall.write(mem / "deploys.md", note),
    )
    assert f"**Private Project Memory** (`{mem}/MEMORY.md`)" in run.requests[0].text
    assert (mem / "MEMORY.md").read_text() == index and (mem / "deploys.md").read_text() == note
    registry = json.loads((sb.home / ".gemini" / "projects.json").read_text())
    assert registry == {"projects": {str(sb.project): mem.parent.name}}
    assert (mem.parent / ".project_root").read_text().strip() == str(sb.project)

    nxt = ok(native.GEMINI.run(sb, "which package manager?"))
    system = "".join(p.get("text", "") for p in nxt.requests[-1].body["systemInstruction"]["parts"])
    loaded = system[system.index("<loaded_context>") :]
    assert f"--- Context from: {mem}/MEMORY.md ---\n{index.rstrip()}" in loaded
    assert "<user_project_memory>" in loaded and "ArgoCD" not in loaded  # the index, not the note

    scripted(
        "gemini",
        sb,
        "thursdays now",
        ToolCall.write(mem / "deploys.md", note.replace("Fri", "Thurs")),
    )
    assert "Thursdays" in (mem / "deploys.md").read_text()
    scripted("gemini", sb, "forget the deploys note", native.delete(mem / "deploys.md"))
    assert not (mem / "deploys.md").exists()


SUMMARY = """\
v1
## User Profile
A developer of the shop.

## User preferences
- Uses pnpm, never npm [ad-hoc note]

## General Tips
- Tests: make check.

## What's in Memory
### shop
#### 2026-12-07
- extensions/ad_hoc/notes/2026-12-07T10-00-00-prefer-pnpm.md — the package manager
"""


def test_codex_writes_ad_hoc_notes_and_injects_only_its_consolidated_summary(sb: Sandbox):
    native.enable("codex", sb)
    notes = native.codex_memory_dir(sb) / "extensions" / "ad_hoc" / "notes"
    name = native.codex_note_name("prefer-pnpm")
    text = "The user uses pnpm, never npm, in the shop repo.\n"
    sb.model.clear_scripts()
    sb.model.script(native.codex_consolidation(SUMMARY), when=native.CODEX_CONSOLIDATION)
    prompt = "we use pnpm here, never npm: remember that"
    sb.model.script(
        ToolCall.ad_hoc_note("pnpm.md", text),  # refused: not a dated name
        ToolCall.ad_hoc_note(name, text),
        when=prompt,
        hold=native.CODEX_HOLD_S,
    )
    run = ok(native.CODEX.run(sb, prompt))
    assert "must use YYYY-MM-DDTHH-MM-SS-<slug>.md" in run.sent
    assert [p.name for p in notes.iterdir()] == [name] and (notes / name).read_text() == text
    summary = native.codex_memory_dir(sb) / "memory_summary.md"
    assert summary.read_text() == SUMMARY, "the consolidation pass did not write the summary"

    nxt = ok(native.CODEX.run(sb, "which package manager?"))
    main = nxt.requests[0].text
    block = "========= MEMORY_SUMMARY BEGINS =========\n" + SUMMARY.rstrip("\n")
    assert json.dumps(block, ensure_ascii=False)[1:-1] in main and "MEMORY_SUMMARY ENDS" in main
    assert text.strip() not in main.replace(
        json.dumps(block, ensure_ascii=False)[1:-1], ""
    )  # the note itself: not sent
