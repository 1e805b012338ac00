"""After an agent compacts its context, the project's digest comes back once.

The hooks run as real processes, fed the payloads the pinned agents sent around a
compaction (tests/fixtures/hooks/compaction): Claude Code's SessionStart with
``source: compact``, Gemini CLI's PreCompress (``trigger: manual`` for ``/compress``;
``auto`` comes before every turn and means nothing). Both backends: on PostgreSQL the
hooks keep what each session was shown in the shared capture queue.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memloom.capture.hooks_cli import DIGEST_DUE_ID
from memloom.capture.plugin import UPGRADE_NOTE_ID
from memloom.capture.queue import CaptureQueue
from tests.capture.test_capture import memloom, save_json

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hooks" / "compaction"
ACME = "/home/dev/acme"
PINNED = "The release branch is cut every Thursday"
FACT = "The staging database listens on port 5433"
ASK = "which port does staging use?"


def payload(name: str, **changes: object) -> dict:
    """A captured payload, moved to the test's project (and session, if given)."""
    return {**json.loads((FIXTURES / name).read_text()), "cwd": ACME, **changes}


@pytest.fixture
def seeded(tmp_path, backend, monkeypatch):
    """A data folder holding a pinned memory and a fact of the project, Claude Code
    connected; on the PostgreSQL run every hook finds the shared store."""
    home, claude = tmp_path / "home", tmp_path / "claude"
    (claude / "projects").mkdir(parents=True)
    if backend.startswith("postgresql"):
        monkeypatch.setenv("MEMLOOM_DATABASE_URL", backend)
    memloom(home, claude, "connect", "claude-code", "--all")
    pinned = save_json(home, claude, PINNED, "--project", ACME)
    assert memloom(home, claude, "pin", pinned["id"]).returncode == 0
    save_json(home, claude, FACT, "--project", ACME)
    return home, claude


def run(where: tuple[Path, Path], *args: str, doc: object) -> str:
    home, claude = where
    stdin = doc if isinstance(doc, str) else json.dumps(doc)
    res = memloom(home, claude, "hook", *args, stdin=stdin)
    assert (res.returncode, res.stderr) == (0, ""), res.stderr
    return res.stdout


def test_claude_code_s_compaction_brings_the_digest_back_once(seeded):
    compact = payload("claude-code-2.1.328.SessionStart-compact.json")
    sid = compact["session_id"]
    start = {**compact, "source": "startup"}
    ask = {**compact, "hook_event_name": "UserPromptSubmit", "prompt": ASK}
    del ask["source"]

    assert PINNED in run(seeded, "session-start", doc=start)
    assert FACT in run(seeded, "prompt-recall", doc=ask)
    resumed = payload("claude-code-2.1.328.SessionStart-resume.json", cwd=ACME)
    assert run(seeded, "session-start", doc=resumed) == ""  # a resume keeps its history

    after = run(seeded, "session-start", doc=compact)
    assert after.count(PINNED) == 1 and FACT not in after  # the digest, once, not the rest
    assert run(seeded, "session-start", doc=resumed) == ""
    # The summary replaced what the prompt hook gave: a prompt it fits gets it once more.
    assert FACT in run(seeded, "prompt-recall", doc=ask)
    for _ in range(2):  # and every later prompt nothing of either
        assert run(seeded, "prompt-recall", doc=ask) == ""
    assert PINNED in run(seeded, "session-start", doc=compact)  # the next compaction: again
    other = {**start, "session_id": f"other-{sid}"}
    assert PINNED in run(seeded, "session-start", doc=other)  # another session: its own


def test_the_plugin_s_note_is_not_said_again_after_a_compaction(seeded):
    """The upgrade note is for the user, once a session: a compaction keeps it said."""
    home, claude = seeded
    assert memloom(home, claude, "disconnect", "claude-code").returncode == 0  # else it defers
    compact = payload("claude-code-2.1.328.SessionStart-compact.json")
    start = {**compact, "source": "startup"}
    first = run(seeded, "session-start", "--plugin", "99.0.0", doc=start)
    assert "99.0.0" in first and PINNED in first
    after = run(seeded, "session-start", "--plugin", "99.0.0", doc=compact)
    assert PINNED in after and "99.0.0" not in after


def test_gemini_s_compress_gives_the_digest_with_the_next_prompt(seeded):
    manual = payload("gemini-0.61.0.PreCompress-manual.json")
    auto = payload("gemini-0.61.0.PreCompress-auto.json")
    ask = {**manual, "hook_event_name": "BeforeAgent", "prompt": ASK}
    del ask["trigger"]

    def context(out: str) -> str:
        return json.loads(out)["hookSpecificOutput"]["additionalContext"] if out else ""

    first = context(run(seeded, "prompt-recall", "--agent", "gemini", doc=ask))
    assert PINNED in first and FACT in first  # Gemini's digest goes with the first prompt
    assert run(seeded, "prompt-recall", "--agent", "gemini", doc=ask) == ""
    # "auto" comes before every turn, compressing or not: nothing is forgotten for it.
    assert run(seeded, "compacted", "--agent", "gemini", doc=auto) == ""
    assert run(seeded, "prompt-recall", "--agent", "gemini", doc=ask) == ""

    assert run(seeded, "compacted", "--agent", "gemini", doc=manual) == ""  # prints nothing
    again = context(run(seeded, "prompt-recall", "--agent", "gemini", doc=ask))
    assert again.count(PINNED) == 1 and FACT in again
    assert run(seeded, "prompt-recall", "--agent", "gemini", doc=ask) == ""


def test_a_compaction_mark_puts_the_digest_in_the_next_prompt_only(seeded):
    """``hook compacted`` for an agent whose digest comes at its session start: the
    next prompt gives the digest (then prompt memories), and only that one prompt."""
    start = payload("claude-code-2.1.328.SessionStart-compact.json", source="startup")
    ask = {**start, "hook_event_name": "UserPromptSubmit", "prompt": ASK}
    assert PINNED in run(seeded, "session-start", doc=start)
    assert FACT in run(seeded, "prompt-recall", doc=ask)
    pre = payload("claude-code-2.1.328.PreCompact-manual.json")
    assert run(seeded, "compacted", doc=pre) == ""
    shown = run(seeded, "prompt-recall", doc=ask)
    assert shown.index(PINNED) < shown.index(FACT)  # digest first, then what fits
    assert run(seeded, "prompt-recall", doc=ask) == ""
    assert run(seeded, "prompt-recall", doc={**ask, "prompt": "and the release branch?"}) == ""


#: What a compacted hook may be fed by a broken or hostile agent.
HOSTILE = [
    "[1, 2]",
    "not json",
    {"session_id": ["s"], "cwd": ACME},
    {"session_id": "", "cwd": ACME},
    {"sessionId": None, "cwd": ACME},
    {"session_id": "x" * 100_000, "cwd": ACME},
    {"session_id": "s' OR 1=1 --", "cwd": ACME},
]


@pytest.mark.security
def test_a_hostile_compacted_payload_forgets_nothing_of_other_sessions(seeded):
    """Whatever a compacted hook is fed, it exits 0, prints nothing, and forgets nothing
    but what the session it names was shown. (One store per backend for all of them:
    each payload gets a session of its own to watch.)"""
    compact = payload("claude-code-2.1.328.SessionStart-compact.json", source="startup")
    for i, doc in enumerate(HOSTILE):
        start = {**compact, "session_id": f"watched-{i}"}
        assert PINNED in run(seeded, "session-start", doc=start), doc
        assert run(seeded, "compacted", doc=doc) == "", doc
        assert run(seeded, "session-start", doc={**start, "source": "resume"}) == "", doc


def test_the_sqlite_queue_forgets_a_session_and_takes_a_mark_once(tmp_path):
    q = CaptureQueue(tmp_path)
    try:
        q.record_injected("s-1", ["m-1", "m-2", UPGRADE_NOTE_ID, DIGEST_DUE_ID])
        q.record_injected("s-2", ["m-1"])
        assert q.forget_injected("s-1", frozenset({UPGRADE_NOTE_ID, DIGEST_DUE_ID})) == 2
        assert q.injected("s-1") == {UPGRADE_NOTE_ID, DIGEST_DUE_ID}
        assert q.injected("s-2") == {"m-1"}  # another session keeps its records
        assert q.take_injected("s-1", DIGEST_DUE_ID) is True
        assert q.take_injected("s-1", DIGEST_DUE_ID) is False  # taken once
        assert q.forget_injected("s-1") == 1 and q.injected("s-1") == set()
        assert q.forget_injected("no-such-session") == 0
    finally:
        q.close()
