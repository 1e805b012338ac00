"""The parsers on the real agents' own session files (tests/fixtures/agents/<agent>/e2e-<version>/).

Those files were written by the pinned agents themselves, run headless against the
scripted model with memloom connected (``scripts/regen_agent_fixtures.py``; each
folder's README and ``fixture.json`` say how): one session of three typed prompts,
one of which made the model call a tool, after memloom's hooks had put a project
memory and a pinned one in front of them, in the agent's own markup. Read back:

* each typed prompt is a user unit, as typed, and the model's answers are assistant units;
* tool records are left out (the ``ls`` output never shows in a unit);
* what memloom injected is in no unit (it would be distilled again as the user's words).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memloom.agents import agent_for_file, get_agent

ROOT = Path(__file__).resolve().parents[1] / "fixtures" / "agents"
CASES = sorted(ROOT.glob("*/e2e-*/fixture.json"))


def case_id(path: Path) -> str:
    return f"{path.parent.parent.name}-{path.parent.name[4:]}"


@pytest.fixture(params=CASES, ids=case_id)
def case(request) -> dict:
    doc = json.loads(request.param.read_text())
    doc["paths"] = [request.param.parent / name for name in doc["files"]]
    # A file of many sessions (an OpenCode store) names them: ``<store>#<session id>``.
    doc["sessions"] = [request.param.parent / name for name in doc.get("sessions", doc["files"])]
    return doc


def units(doc: dict) -> list:
    agent = get_agent(doc["agent"])
    out = []
    for path in doc["sessions"]:
        out += agent.read(path, final=True).units
    return out


def raw_text(case: dict) -> str:
    """The files' bytes as text (an SQLite store holds its text as UTF-8 too)."""
    return "".join(path.read_bytes().decode("utf-8", "replace") for path in case["paths"])


def test_there_are_real_fixtures_for_claude_code_and_aider():
    agents = {path.parent.parent.name for path in CASES}
    assert {"claude-code", "aider"} <= agents, agents


def test_the_files_are_recognised_as_their_agent_s(case):
    for path in case["paths"]:
        assert agent_for_file(path) == case["agent"], path


def test_the_typed_prompts_come_out_as_user_units(case):
    read = units(case)
    said = [u.text.strip() for u in read if u.role == "user"]
    assert said == case["prompts"], said
    answers = [u.text.strip() for u in read if u.role == "assistant"]
    assert answers and set(answers) == {case["answer"]}, answers


def test_tool_records_are_left_out(case):
    raw = raw_text(case)
    if case["tool_call"]:
        assert case["tool_output"] in raw, "the fixture holds no tool result: regenerate it"
    for unit in units(case):
        assert case["tool_output"] not in unit.text, (unit.role, unit.text[:300])


def test_memloom_s_injected_context_is_in_no_unit(case):
    raw = raw_text(case)
    injected = [word for word in case["injected"] if word in raw]
    # Aider has no hooks: nothing was injected. OpenCode's injection is system text,
    # which it does not store: none of it may be in the store.
    if case.get("injection_stored", case["agent"] != "aider"):
        assert injected, "memloom's injection is not in the fixture: regenerate it"
    elif case["agent"] == "opencode":
        assert not injected, injected
    for unit in units(case):
        for word in (*case["injected"], "memloom-context"):
            assert word not in unit.text, (unit.role, word, unit.text[:300])
