"""memloom.agents.qwen.payload: the hooks' stdin, checked before the session is queued;
and what the adapter makes of the prompt hook's payload and output."""

from __future__ import annotations

import pytest

from memloom.agents import get_agent
from memloom.agents.qwen.payload import parse_hook_payload
from memloom.errors import NotificationRefused
from tests.agents.qwen_records import SID, conversation, session


def stop(path: object) -> dict:
    return {
        "session_id": SID,
        "transcript_path": str(path),
        "cwd": "/home/dev/shop",
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        "last_assistant_message": "There is a Makefile.",
    }


def test_a_stop_payload_becomes_a_queued_event(tmp_path):
    env = {"QWEN_HOME": str(tmp_path / ".qwen")}
    path = session(tmp_path / ".qwen", conversation())
    event = parse_hook_payload(stop(path), env)
    assert event.agent == "qwen" and event.transcript_path == path.resolve()
    assert (event.session_id, event.cwd, event.reason) == (SID, "/home/dev/shop", "Stop")


@pytest.mark.parametrize(
    "where",
    [
        None,
        "relative/x.jsonl",
        "{root}/projects/-p/chats/../../../etc/passwd.jsonl",
        "{root}/projects/-p/other/x.jsonl",  # not in chats/
        "{root}/projects/-p/chats/sub/x.jsonl",
        "{root}/projects/-p/chats/x.json",
        "{tmp}/elsewhere.jsonl",
        "{root}/projects/-p/chats/fifo.jsonl",
        "{root}/projects/-p/chats/missing.jsonl",
    ],
)
def test_bad_transcript_paths_are_refused(tmp_path, where):
    import os

    root = tmp_path / ".qwen"
    for rel in (
        "projects/-p/other/x.jsonl",
        "projects/-p/chats/sub/x.jsonl",
        "projects/-p/chats/x.json",
    ):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("{}\n")
    (tmp_path / "elsewhere.jsonl").write_text("{}\n")
    os.mkfifo(root / "projects/-p/chats/fifo.jsonl")
    text = where.format(root=root, tmp=tmp_path) if where else None
    with pytest.raises(NotificationRefused):
        parse_hook_payload(stop(text), {"QWEN_HOME": str(root)})


def test_prompt_text_and_plain_output():
    agent = get_agent("qwen")
    payload = {"prompt": "how do I deploy?", "submitted_prompt": "how do I deploy?"}
    assert agent.prompt_text(payload) == "how do I deploy?"
    assert agent.prompt_text({"prompt": ""}) == ""  # a tool result going back: no recall
    assert agent.format_context("prompt", "<memloom-context>x</memloom-context>") == (
        "<memloom-context>x</memloom-context>"
    )
    assert agent.digest_each_start and not agent.digest_with_prompt


def test_the_hook_path_is_standard_library_only():
    import json
    import subprocess
    import sys

    code = (
        "import sys, json\n"
        "import memloom.agents.qwen.payload, memloom.agents.qwen.hooks\n"
        "from memloom.agents import get_agent\n"
        "get_agent('qwen').parse_hook_payload\n"
        "heavy = ('numpy', 'pydantic', 'httpx', 'typer')\n"
        "print(json.dumps(sorted(m for m in heavy if m in sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []
