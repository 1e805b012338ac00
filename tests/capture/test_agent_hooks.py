"""Each agent's installed hooks as real processes, fed the agent's documented stdin.

``memloom hook notify --agent A`` must queue the right session file, and
``hook prompt-recall --agent A`` must print the agent's own output contract. With
the daemon down both take their fallback, and whatever goes wrong they exit 0 and
print nothing the agent would misread.
"""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from memloom.capture.background import wait_settled
from memloom.capture.queue import CaptureQueue
from tests.support.processes import run_python
from tests.support.seed import remember

CODEX_SID = "019ab730-0000-7000-8000-0000000000ab"


def hook(
    home: Path, env: dict[str, str], *args: str, payload: object
) -> subprocess.CompletedProcess:
    res = run_python(
        ["-m", "memloom._entry", "hook", *args], payload, **{**env, "MEMLOOM_HOME": str(home)}
    )
    # A notify queues in the background after the hook returned (capture/background.py):
    # read the queue as memloom's own readers do, once that settled.
    assert wait_settled(home)
    return res


def queued(home: Path) -> list[str]:
    queue = CaptureQueue(home)
    try:
        out = []
        while (job := queue.claim()) is not None:
            out.append(job.transcript_path)
        return out
    finally:
        queue.close()


def codex_rollout(root: Path) -> Path:
    path = (
        root / "sessions" / "2025" / "11" / "24" / f"rollout-2025-11-24T12-46-26-{CODEX_SID}.jsonl"
    )
    path.parent.mkdir(parents=True)
    meta = {"type": "session_meta", "payload": {"id": CODEX_SID, "cwd": "/home/dev/acme"}}
    path.write_text(json.dumps({"timestamp": "2025-11-24T12:46:26.000Z", **meta}) + "\n")
    return path


def test_codex_stop_hook_queues_the_rollout(tmp_path):
    codex = tmp_path / "codex"
    rollout = codex_rollout(codex)
    payload = {  # Codex's Stop hook input (reference §1.5)
        "session_id": CODEX_SID,
        "transcript_path": str(rollout),
        "cwd": "/home/dev/acme",
        "hook_event_name": "Stop",
        "model": "gpt-5-codex",
        "permission_mode": "default",
        "turn_id": "t1",
        "stop_hook_active": False,
        "last_assistant_message": "done",
    }
    res = hook(
        tmp_path / "home", {"CODEX_HOME": str(codex)}, "notify", "--agent", "codex", payload=payload
    )
    assert res.stdout == ""
    assert queued(tmp_path / "home") == [str(rollout.resolve())]


def test_copilot_session_end_hook_finds_the_session_by_id(tmp_path):
    copilot = tmp_path / "copilot"
    sid = str(uuid.uuid4())
    events = copilot / "session-state" / sid / "events.jsonl"
    events.parent.mkdir(parents=True)
    start = {"type": "session.start", "data": {"sessionId": sid}, "id": "e1"}
    events.write_text(json.dumps(start) + "\n")
    payload = {
        "sessionId": sid,
        "timestamp": 1764000000000,
        "cwd": "/home/dev/acme",
        "reason": "complete",
    }
    res = hook(
        tmp_path / "home",
        {"COPILOT_HOME": str(copilot)},
        "notify",
        "--agent",
        "copilot",
        payload=payload,
    )
    assert res.stdout == ""
    assert queued(tmp_path / "home") == [str(events.resolve())]


def test_a_payload_outside_the_agents_folder_is_refused_and_nothing_is_queued(tmp_path):
    codex = tmp_path / "codex"
    codex_rollout(codex)
    stray = tmp_path / "elsewhere" / f"rollout-x-{CODEX_SID}.jsonl"
    stray.parent.mkdir()
    stray.write_text("{}\n")
    payload = {"session_id": CODEX_SID, "transcript_path": str(stray), "hook_event_name": "Stop"}
    res = hook(
        tmp_path / "home", {"CODEX_HOME": str(codex)}, "notify", "--agent", "codex", payload=payload
    )
    assert res.stdout == "" and queued(tmp_path / "home") == []


def test_codex_prompt_recall_prints_additional_context_json(tmp_path, seeded_home):
    payload = {  # Codex's UserPromptSubmit input
        "session_id": CODEX_SID,
        "transcript_path": None,
        "cwd": "/home/dev/acme",
        "hook_event_name": "UserPromptSubmit",
        "model": "gpt-5-codex",
        "permission_mode": "default",
        "turn_id": "t2",
        "prompt": "where does the deploy script live?",
    }
    res = hook(
        seeded_home,
        {"CODEX_HOME": str(tmp_path / "codex")},
        "prompt-recall",
        "--agent",
        "codex",
        payload=payload,
    )
    doc = json.loads(res.stdout)  # stdout is exactly one JSON document
    out = doc["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit"
    assert "tools/deploy.sh" in out["additionalContext"]


def test_claude_code_prompt_recall_stays_plain_text(tmp_path, seeded_home):
    payload = {
        "session_id": "s",
        "cwd": "/home/dev/acme",
        "hook_event_name": "UserPromptSubmit",
        "prompt": "where does the deploy script live?",
    }
    res = hook(seeded_home, {}, "prompt-recall", payload=payload)
    assert res.stdout.startswith("<memloom-context>") and "tools/deploy.sh" in res.stdout


def test_copilot_prompt_recall_prints_a_top_level_additional_context(tmp_path, seeded_home):
    """Copilot CLI 1.0.102's userPromptSubmitted input (camelCase, tests/e2e); only a
    top-level ``additionalContext`` is injected, so that is all stdout holds."""
    payload = {
        "sessionId": "4f0a5210-3a25-4e11-ad1b-57cc61c13eaf",
        "timestamp": 1796362893693,
        "cwd": "/home/dev/acme",
        "prompt": "where does the deploy script live?",
    }
    env = {"COPILOT_HOME": str(tmp_path / "copilot")}
    res = hook(seeded_home, env, "prompt-recall", "--agent", "copilot", payload=payload)
    doc = json.loads(res.stdout)
    assert list(doc) == ["additionalContext"] and "tools/deploy.sh" in doc["additionalContext"]
    again = hook(seeded_home, env, "prompt-recall", "--agent", "copilot", payload=payload)
    assert again.stdout == ""  # once per session, keyed on sessionId


def test_two_hooks_of_one_session_at_once_show_a_memory_once(tmp_path):
    """Copilot runs sessionStart and userPromptSubmitted at the same time: both pick
    before either records. The one that records a memory first shows it; the other
    drops it (seen in tests/e2e: a pinned memory that fits the prompt went in twice)."""
    from memloom.capture import hooks_cli
    from memloom.config import load_settings

    home = tmp_path / "home"
    home.mkdir()
    settings = load_settings(home)
    payload = {"sessionId": "s-1"}
    pinned, fact = {"id": "m-pinned"}, {"id": "m-fact"}
    inner: list[list[dict]] = []

    def digest(seen: set[str]) -> list[dict]:
        assert seen == set()
        # The prompt hook runs meanwhile, sees nothing recorded yet, and records first.
        inner.append(hooks_cli._once_per_session(home, settings, payload, lambda s: [pinned]))
        return [pinned, fact]

    shown = hooks_cli._once_per_session(home, settings, payload, digest)
    assert inner == [[pinned]] and shown == [fact]
    queue = CaptureQueue(home)
    try:
        assert queue.injected("s-1") == {"m-pinned", "m-fact"}
        assert queue.record_injected("s-1", ["m-fact", "m-new"]) == {"m-new"}
        assert queue.record_injected("s-2", ["m-fact"]) == {"m-fact"}  # another session
    finally:
        queue.close()


@pytest.mark.parametrize(
    "args",
    [
        ("notify", "--agent", "nope"),  # an agent memloom does not know
        ("prompt-recall", "--agent", "nope"),
        ("notify", "--agent", "codex"),  # garbage on stdin
        ("session-start", "--agent", "codex"),
    ],
)
def test_hooks_fail_open(tmp_path, args):
    res = hook(
        tmp_path / "home", {"CODEX_HOME": str(tmp_path / "codex")}, *args, payload="{not json"
    )
    assert res.stdout == ""


GEMINI_SID = "5e2b9c1a-0000-4000-8000-00000000cafe"


def gemini_session(gemini_home: Path) -> Path:
    chats = gemini_home / ".gemini" / "tmp" / "acme" / "chats"
    chats.mkdir(parents=True)
    path = chats / "session-2026-04-01T10-00-5e2b9c1a.jsonl"
    meta = {"sessionId": GEMINI_SID, "projectHash": "0" * 64, "startTime": "2026-04-01T10:00:00Z"}
    path.write_text(json.dumps(meta) + "\n")
    return path


def test_gemini_after_agent_hook_queues_the_recording(tmp_path):
    session = gemini_session(tmp_path / "g")
    payload = {  # Gemini CLI's AfterAgent input (reference §2.4)
        "session_id": GEMINI_SID,
        "transcript_path": str(session),
        "cwd": "/home/dev/acme",
        "hook_event_name": "AfterAgent",
        "timestamp": "2026-04-01T10:05:00.000Z",
        "prompt": "fix the build",
        "prompt_response": "done",
        "stop_hook_active": False,
    }
    env = {"GEMINI_CLI_HOME": str(tmp_path / "g")}
    res = hook(tmp_path / "home", env, "notify", "--agent", "gemini", payload=payload)
    assert res.stdout == ""
    assert queued(tmp_path / "home") == [str(session.resolve())]


def test_gemini_before_agent_prints_additional_context_json(tmp_path, seeded_home):
    payload = {
        "session_id": GEMINI_SID,
        "transcript_path": "",
        "cwd": "/home/dev/acme",
        "hook_event_name": "BeforeAgent",
        "timestamp": "2026-04-01T10:05:00.000Z",
        "prompt": "where does the deploy script live?",
    }
    env = {"GEMINI_CLI_HOME": str(tmp_path / "g")}
    res = hook(seeded_home, env, "prompt-recall", "--agent", "gemini", payload=payload)
    out = json.loads(res.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "BeforeAgent"
    assert "tools/deploy.sh" in out["additionalContext"]


def test_another_agents_session_reaches_the_running_daemon(tmp_path):
    """With the daemon up, a Codex Stop hook queues the rollout (no request to the
    daemon), the daemon's worker picks it up from the queue, and the HTTP route takes a
    Codex session by the agent's name (not refused as outside Claude Code's folder)."""
    from tests.server.conftest import start_daemon, stop

    codex = tmp_path / "codex"
    rollout = codex_rollout(codex)
    home = tmp_path / "home"
    daemon = start_daemon(home, tmp_path / "claude", env={"CODEX_HOME": str(codex)})
    try:
        payload = {
            "session_id": CODEX_SID,
            "transcript_path": str(rollout),
            "cwd": "/home/dev/acme",
            "hook_event_name": "Stop",
        }
        env = {"CODEX_HOME": str(codex), "CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}
        assert hook(home, env, "notify", "--agent", "codex", payload=payload).stdout == ""
        queue = CaptureQueue(home)
        try:
            assert queue.last_event("hook_wake_failed", "hook_refused") is None
            assert queue.last_event("hook_notify")[1] == str(rollout.resolve())
            deadline = time.monotonic() + 30  # the daemon polls the queue every 2 s
            while time.monotonic() < deadline:
                jobs = [j for j in queue.recent_jobs() if j.transcript_path == str(rollout)]
                if jobs and jobs[0].status not in ("queued", "running"):
                    break
                time.sleep(0.2)
            # Not connected, so the worker skips it -- but it took it off the queue.
            assert jobs and jobs[0].status == "skipped", jobs
        finally:
            queue.close()
        with daemon.client() as api:  # the HTTP route takes the agent by name
            res = api.post("/v1/capture/notify", json={**payload, "agent": "codex"})
            assert res.status_code == 202, res.text
            bad = api.post("/v1/capture/notify", json={**payload, "agent": "nope"})
            assert bad.status_code == 400 and "unknown agent" in bad.text
    finally:
        stop(daemon)


#: A digest another hook's SessionStart gave (Gemini puts it before the prompt, headless):
#: more than the 32 terms a recall query keeps, none about the deploy script.
OTHER_DIGEST = " ".join(f"invoice{i} billing{i}" for i in range(30))


def test_gemini_prompt_recall_queries_the_typed_prompt_not_the_hook_context(tmp_path, seeded_home):
    """Gemini CLI 0.61.0 headless: BeforeAgent's ``prompt`` is the SessionStart context in
    ``<hook_context>`` and then the typed prompt; the recall query is the typed prompt."""
    typed = "where does the deploy script live?"
    payload = {
        "session_id": GEMINI_SID,
        "transcript_path": "",
        "cwd": "/home/dev/acme",
        "hook_event_name": "BeforeAgent",
        "prompt": f"<hook_context>{OTHER_DIGEST}</hook_context>\n\n{typed}",
    }
    env = {"GEMINI_CLI_HOME": str(tmp_path / "g")}
    res = hook(seeded_home, env, "prompt-recall", "--agent", "gemini", payload=payload)
    assert "tools/deploy.sh" in json.loads(res.stdout)["hookSpecificOutput"]["additionalContext"]
    only_context = {**payload, "session_id": "other", "prompt": "<hook_context>x</hook_context>"}
    res = hook(seeded_home, env, "prompt-recall", "--agent", "gemini", payload=only_context)
    assert res.stdout == ""  # nothing typed: no recall


def test_gemini_gets_the_digest_with_its_first_prompt_once(tmp_path, seeded_home):
    """Gemini keeps no session-start context in a resumed session (and headless it put
    it before the typed prompt): the session-start hook prints nothing, the first
    BeforeAgent gives the digest and the memories, a later one neither again."""
    remember(seeded_home, {"text": "Always run make lint before a commit", "type": "preference"})
    env = {"GEMINI_CLI_HOME": str(tmp_path / "g")}
    base = {"session_id": GEMINI_SID, "transcript_path": "", "cwd": "/home/dev/acme"}
    start = {**base, "hook_event_name": "SessionStart", "source": "startup"}
    assert hook(seeded_home, env, "session-start", "--agent", "gemini", payload=start).stdout == ""
    prompt = {
        **base,
        "hook_event_name": "BeforeAgent",
        "prompt": "where does the deploy script live?",
    }
    res = hook(seeded_home, env, "prompt-recall", "--agent", "gemini", payload=prompt)
    out = json.loads(res.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "BeforeAgent"
    text = out["additionalContext"]
    assert "make lint" in text and "tools/deploy.sh" in text
    assert text.index("make lint") < text.index("tools/deploy.sh")  # the digest first
    assert text.count("<memloom-context>") == 2
    again = hook(seeded_home, env, "prompt-recall", "--agent", "gemini", payload=prompt)
    assert again.stdout == ""  # each memory once per session
    claude_start = {**start, "session_id": "claude-session"}
    claude = hook(seeded_home, {}, "session-start", payload=claude_start)  # others: unchanged
    assert "make lint" in claude.stdout


def test_an_agents_own_memory_is_not_shown_back_to_it_but_to_every_other_agent(tmp_path):
    """No echo: a memory read from Claude Code's own memory (tag native:claude-code) is
    left out of Claude Code's prompt block and session digest, and reaches Codex's."""
    from memloom.agents.markup import native_tag

    home = tmp_path / "home"
    remember(
        home,
        {
            "text": "Always use pnpm, never npm, for the acme deploy script",
            "type": "preference",
            "project": "/home/dev/acme",
            "tags": [native_tag("claude-code")],
            "source": "claude-code",
        },
    )
    prompt = "how do I run the acme deploy script, npm or pnpm?"
    base = {"cwd": "/home/dev/acme", "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    claude = hook(home, {}, "prompt-recall", payload={**base, "session_id": "c1"})
    assert claude.stdout == ""
    digest = hook(
        home, {}, "session-start", payload={**base, "session_id": "c2", "source": "startup"}
    )
    assert "pnpm" not in digest.stdout
    codex = hook(
        home,
        {"CODEX_HOME": str(tmp_path / "codex")},
        "prompt-recall",
        "--agent",
        "codex",
        payload={**base, "session_id": CODEX_SID, "turn_id": "t1"},
    )
    assert "pnpm" in json.loads(codex.stdout)["hookSpecificOutput"]["additionalContext"]
