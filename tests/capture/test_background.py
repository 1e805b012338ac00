"""A session-end hook returns once it has read its payload; the queueing finishes in
the background, and memloom's readers wait for it (capture/background.py)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memloom.capture.background import LOCK_NAME, wait_settled
from memloom.capture.queue import CaptureQueue
from tests.support.processes import run_python


def notify(home: Path, claude: Path, payload: dict) -> tuple[subprocess.CompletedProcess, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMLOOM_", "CLAUDE_"))}
    env.update(MEMLOOM_HOME=str(home), CLAUDE_CONFIG_DIR=str(claude), MEMLOOM_LLM="offline")
    started = time.monotonic()
    res = subprocess.run(
        [sys.executable, "-m", "memloom._entry", "hook", "notify"],
        input=json.dumps(payload),
        env=env,
        capture_output=True,  # returns only once every holder of the pipes closed them
        text=True,
        timeout=60,
    )
    return res, time.monotonic() - started


@pytest.fixture
def session(tmp_path: Path) -> tuple[Path, Path, dict]:
    home, claude = tmp_path / "memloom", tmp_path / "claude"
    path = claude / "projects" / "-home-dev-shop" / "5f0c.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text('{"type":"user","message":{"role":"user","content":"hi"}}\n')
    payload = {
        "session_id": "5f0c",
        "transcript_path": str(path),
        "cwd": "/home/dev/shop",
        "hook_event_name": "SessionEnd",
        "reason": "exit",
    }
    return home, claude, payload


def jobs(home: Path) -> list[str]:
    queue = CaptureQueue(home)
    try:
        return [job.transcript_path for job in queue.recent_jobs()]
    finally:
        queue.close()


def test_the_hook_returns_while_its_session_is_still_being_queued(session):
    home, claude, payload = session
    CaptureQueue(home).close()  # the queue exists; now hold it so queueing must wait
    blocker = sqlite3.connect(str(home / "capture.db"), isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        res, elapsed = notify(home, claude, payload)
        assert res.returncode == 0 and res.stdout == "" and res.stderr == ""
        # The child is stuck behind the lock (busy timeout 5 s), yet the hook returned,
        # and its pipes closed: the agent is not kept waiting.
        assert not wait_settled(home, timeout=0.2), "nothing was queueing in the background"
        assert elapsed < 4.0
    finally:
        blocker.execute("COMMIT")
        blocker.close()
    assert wait_settled(home), "the background queueing never finished"
    assert jobs(home) == [payload["transcript_path"]]


def test_status_and_run_once_see_a_session_queued_just_before(session):
    home, claude, payload = session
    res, _ = notify(home, claude, payload)
    assert res.returncode == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMLOOM_", "CLAUDE_"))}
    env.update(MEMLOOM_HOME=str(home), CLAUDE_CONFIG_DIR=str(claude), MEMLOOM_LLM="offline")
    out = subprocess.run(
        [sys.executable, "-m", "memloom._entry", "status", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert json.loads(out.stdout)["capture"]["queued"] == 1


def test_a_data_folder_that_cannot_be_made_queues_nothing_and_still_exits_0(session, tmp_path):
    _, claude, payload = session
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    home = blocker / "memloom"  # even root cannot make this folder
    res, _ = notify(home, claude, payload)
    assert res.returncode == 0 and res.stdout == "" and res.stderr == ""
    assert not home.exists()


def test_wait_settled_returns_at_once_where_no_hook_ever_ran(tmp_path):
    started = time.monotonic()
    assert wait_settled(tmp_path / "never")
    assert time.monotonic() - started < 0.5


def test_a_caller_passing_argv_is_served_in_the_foreground(session):
    """memloom._entry.main(argv) from another program (the crash harness, tests) must
    not fork that program: the notify is done when main returns."""
    home, claude, payload = session
    script = (
        "import sys\nfrom memloom import _entry\n"
        "try:\n    _entry.main(['hook', 'notify'])\nexcept SystemExit:\n    pass\n"
        "import os\nprint(os.getpid())\n"
    )
    res = run_python(["-c", script], payload, MEMLOOM_HOME=str(home), CLAUDE_CONFIG_DIR=str(claude))
    assert len(res.stdout.split()) == 1, "the calling program was forked"
    assert not (home / LOCK_NAME).exists()
    assert jobs(home) == [payload["transcript_path"]]


@pytest.mark.parametrize("stdin", [b"\xff\xfe not utf-8 {", None], ids=["not-utf-8", "no-stdin"])
def test_a_payload_it_cannot_read_is_logged_and_the_hook_exits_0(session, stdin):
    """The payload is read before the fork, outside the hook's error handling: what
    cannot be read still exits 0 and is recorded, never a traceback."""
    home, claude, _ = session
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMLOOM_", "CLAUDE_"))}
    env.update(MEMLOOM_HOME=str(home), CLAUDE_CONFIG_DIR=str(claude))
    res = subprocess.run(
        [sys.executable, "-m", "memloom._entry", "hook", "notify"],
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
        env=env,
        capture_output=True,
        timeout=60,
    )
    assert res.returncode == 0 and res.stdout == b"" and res.stderr == b""
    assert wait_settled(home)
    with sqlite3.connect(home / "capture.db") as db:
        kinds = [k for (k,) in db.execute("SELECT kind FROM events")]
    assert kinds and all("refused" in k or "error" in k for k in kinds), kinds
    assert jobs(home) == []
