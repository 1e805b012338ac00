"""The agents' own memory folders as the pinned CLIs wrote them
(tests/fixtures/native, ``python scripts/regen_native_fixtures.py``), read by each
adapter and imported by the engine: every memory the model wrote is one memloom
memory, of the right type and project, and nothing else is."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from memloom.agents import get_agent
from memloom.agents.markup import native_tag

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "native"
AGENTS = ["claude-code", "qwen", "gemini", "codex"]


def fixture(agent: str) -> dict:
    return json.loads((FIXTURES / agent / "fixture.json").read_text())


@pytest.fixture
def home_of(tmp_path, monkeypatch):
    """A copy of an agent's fixture HOME, as this process's HOME."""

    def make(agent: str) -> Path:
        home = tmp_path / "home"
        shutil.copytree(FIXTURES / agent / "home", home, symlinks=True)
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
        for name in ("CLAUDE_CONFIG_DIR", "QWEN_HOME", "QWEN_RUNTIME_DIR", "GEMINI_CLI_HOME"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv("CLAUDE_COWORK_MEMORY_PATH_OVERRIDE", raising=False)
        return home

    return make


def _body(written: str) -> str:
    """The body of a note as the model wrote it (after any frontmatter)."""
    return re.sub(r"\A---\n.*?\n---\n", "", written, flags=re.S).strip()


def _first_sentence(written: str) -> str:
    """The first line of the note that is not a heading, as a memory's text has it."""
    line = next(x for x in _body(written).splitlines() if x.strip() and not x.startswith("#"))
    return line.lstrip("- ").replace("**", "").strip()


@pytest.mark.parametrize("agent", AGENTS)
def test_each_adapter_finds_its_folders_with_their_project(agent, home_of):
    home = home_of(agent)
    doc = fixture(agent)
    folders = get_agent(agent).native_folders()
    found = {str(f.path.relative_to(home)): f for f in folders}
    assert set(found) == set(doc["memory_dirs"])
    for rel, folder in found.items():
        assert folder.skip is None, (rel, folder)
        if folder.scope == "project":
            assert folder.project == doc["project"]
        else:  # Qwen's user folder, Codex's memories: every project's
            assert folder.project is None


@pytest.mark.parametrize("agent", AGENTS)
def test_every_memory_the_model_wrote_is_read_and_nothing_else(agent, home_of):
    home = home_of(agent)
    doc = fixture(agent)
    adapter = get_agent(agent)
    notes = {}
    for folder in adapter.native_folders():
        listed, left_out = adapter.native_files(folder)
        assert not any(left_out.skipped.values()), left_out.skipped
        for path, _ in listed:
            notes[str(path.relative_to(home.parent))] = adapter.read_native(
                folder, path, path.read_text()
            )
    for mem in doc["memories"]:
        read = notes.get(mem["path"], [])
        if mem.get("index"):
            # An index's pointer lines are its files'; only lines that are notes count.
            assert all("](" not in n.text or not n.text.startswith("[") for n in read)
            continue
        assert read, mem["path"]
        assert any(_first_sentence(mem["written"]) in n.text for n in read), (mem, read)
        for n in read:
            assert "**" not in n.text and "[[" not in n.text
            assert "---" not in n.text.splitlines()[0]


def test_claude_code_types_why_and_how_to_apply(home_of):
    home_of("claude-code")
    adapter = get_agent("claude-code")
    [folder] = adapter.native_folders()
    by_name = {}
    for path, _ in adapter.native_files(folder)[0]:
        for note in adapter.read_native(folder, path, path.read_text()):
            by_name[path.name] = note
    assert set(by_name) == {"prefer-pnpm.md", "staging-deploys.md", "deploy-runbook.md"}
    pnpm = by_name["prefer-pnpm.md"]
    assert (pnpm.kind, pnpm.native_type) == ("preference", "feedback")
    assert "Why: the user said npm rewrites the pnpm lockfile" in pnpm.text
    assert "How to apply: run `pnpm install`" in pnpm.text
    assert pnpm.text.endswith("See staging-deploys.")  # [[link]] as its words
    assert pnpm.title == "prefer-pnpm"
    assert by_name["staging-deploys.md"].kind == "fact"
    assert by_name["deploy-runbook.md"].native_type == "reference"


@pytest.mark.parametrize("agent", AGENTS)
def test_the_engine_imports_each_fixture_and_a_second_run_does_nothing(agent, home_of, engine):
    home_of(agent)
    doc = fixture(agent)
    report = engine.import_native([agent])
    assert report.calls["llm"] == 0 and report.skipped == {}
    written = [m for m in doc["memories"] if not m.get("index")]
    mems = engine.list({"limit": 100}).memories
    assert len(mems) >= len(written) - report.merged
    # Each file the model wrote is the provenance of a memory (its own, or the one it
    # merged into: Codex's summary restates its notes).
    cited = {p.path for m in mems for p in engine.get(m.id).provenance}
    for mem in written:
        assert any(path.endswith(mem["path"].removeprefix("home/")) for path in cited), mem
        if not report.merged:
            assert any(_first_sentence(mem["written"]) in m.text for m in mems), mem["path"]
    source = get_agent(agent).name
    for m in mems:
        assert m.source == source and native_tag(source) in m.tags
        assert m.project in (doc["project"], None)
    again = engine.import_native([agent])
    assert (again.changed, again.added, again.versioned) == (0, 0, 0)


def test_codex_summary_sections_and_the_index_section_left_out(home_of, engine):
    home_of("codex")
    engine.import_native(["codex"])
    texts = {m.text: m.type for m in engine.list({"limit": 100}).memories}
    assert texts["A developer working on the shop repository (/repo) from the terminal."] == (
        "preference"
    )
    assert not any("extensions/ad_hoc/notes/" in t for t in texts)  # "What's in Memory"
    assert {m.project for m in engine.list({"limit": 100}).memories} == {None}
