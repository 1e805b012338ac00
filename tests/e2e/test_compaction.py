"""After the real agent compacts its context, memloom's project digest comes back once.

Headless, each pinned agent compacts a session on its own command: Claude Code
``claude -p --continue /compact`` (its SessionStart hook then says ``source:
compact``), Gemini CLI ``gemini --resume latest -p /compress`` (PreCompress with
``trigger: manual``; the digest goes with the next prompt), Qwen Code ``qwen
--continue -p /compress`` (SessionStart ``source: compact``, as Claude Code's). Codex
has no headless command: it compacts on its own before a turn once the last one used
more tokens than ``model_auto_compact_token_limit``, and keeps the user's messages
but no developer message (memloom's context) -- its SessionStart then fires again,
``source: compact``. The scripted model writes the summary, so what memloom gave
before the compaction is gone from the history: a pinned memory in the next request
is the digest given again. The prompts after that one add nothing: the resumed
history holds the digest once.
"""

from __future__ import annotations

import json

import pytest

from tests.e2e.drivers import DRIVERS
from tests.e2e.harness import Driver, Sandbox
from tests.e2e.test_agents import FACT, PINNED, QUESTION, answered, connected

#: Each agent's own command that compacts the session, run as a headless prompt.
COMPACT = {"claude-code": "/compact", "gemini": "/compress", "qwen": "/compress"}
#: The first prompt's word no summary written by the scripted model holds.
KICKOFF = "kickoff-qz17"
#: Notes long enough that the summary is always the smaller history: Gemini CLI keeps
#: the old history when its estimate of the new one (its environment context, whose
#: folder listing and paths vary from run to run, plus the summary) is the larger.
NOTES = " ".join(f"note {n}: the build runs ruff, the tests and lint-imports." for n in range(60))


@pytest.mark.parametrize(
    "driver", [DRIVERS[name] for name in COMPACT if name in DRIVERS], ids=lambda d: d.name
)
def test_the_digest_comes_back_once_after_a_compaction(driver: Driver, sandbox: Sandbox):
    connected(driver, sandbox)
    sandbox.save(FACT)
    sandbox.save(PINNED, pin=True)
    if driver.name == "gemini":
        # Headless, Gemini CLI starts the compression, sends "/compress" as a prompt
        # too, and exits when that turn ends: its answer waits for the compacted history.
        sandbox.model.script(
            when=COMPACT["gemini"], hold=60, until=lambda: _rewritten(driver, sandbox)
        )
    first = driver.run(sandbox, f"hello, {KICKOFF}. {NOTES}")
    answered(first)
    assert first.requests[-1].text.count(PINNED) == 1  # the digest of the session start
    compaction = driver.run(sandbox, COMPACT[driver.name], resume=True)
    assert compaction.returncode == 0, compaction.stderr[-1500:]
    assert any(KICKOFF in r.text for r in compaction.requests), "no summary was asked for"

    after = driver.run(sandbox, "what should I do before committing?", resume=True)
    answered(after)
    history = after.requests[-1].text
    assert KICKOFF not in history, f"the history was not compacted: {compaction.stdout[-800:]}"
    assert history.count(PINNED) == 1, "the digest did not come back after the compaction"

    later = driver.run(sandbox, QUESTION, resume=True)
    answered(later)
    assert later.requests[-1].text.count(PINNED) == 1, "the digest was given again"
    again = driver.run(sandbox, "and in production?", resume=True)
    answered(again)
    assert again.requests[-1].text.count(PINNED) == 1


def _rewritten(driver: Driver, sandbox: Sandbox) -> bool:
    """Whether Gemini CLI's session file holds the compacted history: a ``$set`` of
    messages without the first prompt, the record its compression appends."""
    for path in driver.session_files(sandbox):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            update = record.get("$set") if isinstance(record, dict) else None
            messages = update.get("messages") if isinstance(update, dict) else None
            if messages is not None and KICKOFF not in json.dumps(messages):
                return True
    return False


def test_codex_s_auto_compaction_brings_the_digest_back_once(sandbox: Sandbox):
    driver = DRIVERS["codex"]
    connected(driver, sandbox)
    sandbox.save(FACT)
    sandbox.save(PINNED, pin=True)
    first = driver.run(sandbox, f"hello, {KICKOFF}")
    answered(first)
    [given] = [i for i in first.requests[-1].body["input"] if PINNED in json.dumps(i)]
    assert given["role"] == "developer"  # the session start's digest

    # The scripted model reports 110 tokens a turn: over this limit, the next turn
    # starts with a compaction.
    config = driver.config(sandbox)
    plain = config.read_text()
    config.write_text("model_auto_compact_token_limit = 50\n" + plain)
    after = driver.run(sandbox, "what should I do before committing?", resume=True)
    answered(after)
    assert any("CONTEXT CHECKPOINT COMPACTION" in r.text for r in after.requests), (
        "Codex did not compact"
    )
    history = after.requests[-1]
    assert given["id"] not in history.text, "the compaction kept memloom's first digest"
    assert history.text.count(PINNED) == 1, "the digest did not come back after the compaction"

    config.write_text(plain)  # no more compactions: the digest stays, once
    later = driver.run(sandbox, QUESTION, resume=True)
    answered(later)
    assert not any("CONTEXT CHECKPOINT COMPACTION" in r.text for r in later.requests)
    assert later.requests[-1].text.count(PINNED) == 1, "the digest was given again"
