"""memloom's own distillation calls through an agent's CLI are never distilled: a
session the call's CLI saved anyway is recognised by the folder it ran in or by the
marker its prompt opens with, skipped, and recorded so no later run reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from memloom.agents.markup import LLM_CALL_MARKER, is_llm_call
from tests.sessions.test_importer import active, ledger, m, model, session_path, write_session

__all__ = ["m", "model"]  # fixtures, re-used


@pytest.mark.parametrize(
    ("cwd", "text", "own"),
    [
        ("/tmp/memloom-llm-codex-a1b2c3d4", None, True),
        ("/private/var/folders/x/T/memloom-llm-gemini-9z_k2m4q/", "hello", True),
        ("C:\\Users\\me\\AppData\\Local\\Temp\\memloom-llm-qwen-code-1x2y3z4w", None, True),
        ("/home/dev/acme", f"{LLM_CALL_MARKER}\nYou extract memories...", True),
        ("/home/dev/memloom-llm-notes", "a user's own folder named so", False),
        ("/home/dev/memloom-llm-my-notes", None, False),
        ("/home/dev/acme", "Tell me about memloom-llm- folders", False),
        (None, None, False),
        ("/home/dev/acme", "x" * 3000 + LLM_CALL_MARKER, False),
    ],
)
def test_is_llm_call(cwd: str | None, text: str | None, own: bool) -> None:
    assert is_llm_call(cwd, text) is own


def test_a_call_session_is_skipped_for_good_and_the_users_session_is_not(
    m, model, tmp_path: Path
) -> None:
    root = tmp_path / "claude"
    call = write_session(
        session_path(root, "-tmp-memloom-llm-claude-code-x1k2m3n4"),
        [("user", f'{LLM_CALL_MARKER}\n{{"lines": []}}'), ("assistant", '{"memories": []}')],
        cwd="/tmp/memloom-llm-claude-code-x1k2m3n4",
    )
    marked = write_session(
        session_path(root, "-home-dev-acme"),
        [("user", f"{LLM_CALL_MARKER}\nREMEMBER: the API listens on port 9000")],
        cwd="/home/dev/acme",
    )
    user = write_session(
        session_path(root, "-home-dev-acme"),
        [("user", "REMEMBER: the API listens on port 8080"), ("assistant", "Noted.")],
        cwd="/home/dev/acme",
    )
    report = m.import_sessions([call, marked, user])
    assert report.skipped["memloom_calls"] == 2
    assert report.sessions == 1
    calls = model.payloads.get("memloom_distill", [])
    sent = "\n".join(line["text"] for p in calls for line in p["lines"])
    assert "8080" in sent and "9000" not in sent and LLM_CALL_MARKER not in sent
    for path in (call, marked):
        row = ledger(m, path)
        assert row.status == "complete" and row.memories == 0
        assert row.offset == path.stat().st_size
    # A later run (forced or not) reads neither again: no call, no memory from them.
    before = len(calls)
    again = m.import_sessions([call, marked, user])
    assert again.skipped["up_to_date"] == 3
    assert len(model.payloads.get("memloom_distill", [])) == before
    assert all("9000" not in mem.text for mem in active(m))


def test_a_dry_run_skips_a_call_session_and_writes_nothing(m, model, tmp_path: Path) -> None:
    call = write_session(
        session_path(tmp_path / "claude", "-tmp-memloom-llm-codex-q1w2e3r4"),
        [("user", "anything")],
        cwd="/tmp/memloom-llm-codex-q1w2e3r4",
    )
    report = m.import_sessions([call], dry_run=True)
    assert report.skipped["memloom_calls"] == 1 and report.sessions == 0
    assert m.backend.ledger_get_many([str(call)]) == {}
