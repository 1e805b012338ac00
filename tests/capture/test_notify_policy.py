"""What ``memloom hook notify`` accepts from a SessionEnd payload, and what it refuses.

The payload comes from a hook, so ``transcript_path`` is untrusted: it is queued
only if it is an absolute path of sane length without ``..``, ends in
``.jsonl``, resolves (symlinks followed) inside the Claude Code projects folder,
and is an existing regular file. Symlink escapes, traversal, FIFOs (opening one
would hang the worker), devices, folders and over-long paths are refused and
logged, never queued -- and the hook itself still exits 0 in well under a second.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from memloom.agents.claude_code.payload import validate_transcript
from memloom.capture.notify import (
    MAX_PATH_CHARS,
    NotificationRefused,
    accept_notification,
)
from memloom.capture.queues import open_queue


@pytest.fixture
def claude(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "claude"
    (root / "projects" / "-home-dev-acme").mkdir(parents=True)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(root))
    return root


@pytest.fixture
def home(tmp_path) -> Path:
    return tmp_path / "home"


def session(claude: Path, name: str | None = None) -> Path:
    path = claude / "projects" / "-home-dev-acme" / (name or f"{uuid.uuid4()}.jsonl")
    path.write_text('{"type":"user","message":{"content":"hi"}}\n')
    return path


def refused(path_text: object, match: str) -> None:
    with pytest.raises(NotificationRefused, match=match):
        validate_transcript(path_text)


def queued(home: Path) -> int:
    queue = open_queue(home)
    try:
        return queue.pending()
    finally:
        queue.close()


def test_a_plain_transcript_is_accepted(claude, home):
    path = session(claude)
    assert validate_transcript(str(path)) == path.resolve()
    doc = accept_notification(home, {"transcript_path": str(path), "session_id": path.stem})
    assert doc["queued"] is True and queued(home) == 1


def test_a_symlink_inside_the_folder_to_a_transcript_inside_it_is_accepted(claude):
    target = session(claude)
    link = claude / "projects" / "-home-dev-acme" / f"{uuid.uuid4()}.jsonl"
    link.symlink_to(target)
    assert validate_transcript(str(link)) == target.resolve()


def test_symlink_escapes_are_refused(claude, tmp_path):
    outside = tmp_path / "secrets" / "notes.jsonl"
    outside.parent.mkdir()
    outside.write_text("{}\n")
    link = claude / "projects" / "-home-dev-acme" / f"{uuid.uuid4()}.jsonl"
    link.symlink_to(outside)
    refused(str(link), "outside the Claude Code projects folder")
    # A symlinked project folder pointing outside escapes just the same.
    folder = claude / "projects" / "-escape"
    folder.symlink_to(outside.parent, target_is_directory=True)
    refused(str(folder / "notes.jsonl"), "outside the Claude Code projects folder")
    # So does a link to /etc/passwd that pretends to be a transcript.
    etc = claude / "projects" / "-home-dev-acme" / "passwd.jsonl"
    etc.symlink_to("/etc/passwd")
    refused(str(etc), r"outside|not a \.jsonl")


def test_dot_dot_traversal_is_refused_even_when_it_lands_inside(claude):
    path = session(claude)
    inside_again = claude / "projects" / "-home-dev-acme" / ".." / "-home-dev-acme" / path.name
    refused(str(inside_again), r"contains '\.\.'")
    refused(str(claude / "projects" / ".." / "settings.jsonl"), r"contains '\.\.'")
    refused(str(path) + "/../" + path.name, r"contains '\.\.'")


def test_relative_missing_and_malformed_paths_are_refused(claude, monkeypatch):
    path = session(claude)
    monkeypatch.chdir(path.parent)
    refused(path.name, "not absolute")
    refused(str(path.with_name(f"{uuid.uuid4()}.jsonl")), "does not exist")
    refused(str(path.with_suffix(".txt")), r"not a \.jsonl transcript")
    refused(None, "missing")
    refused(42, "missing")
    refused("   ", "missing")
    refused(str(path) + "\x00.jsonl", "NUL")


def test_over_long_paths_are_refused(claude):
    base = str(claude / "projects" / "-home-dev-acme") + "/"
    refused(base + "a/" * (MAX_PATH_CHARS // 2) + "x.jsonl", "too long")
    refused(base + "n" * 300 + ".jsonl", "longer than 255 bytes")
    refused(base + "x" * 10_000_000, "too long")  # a 10 MB payload string


def test_fifos_devices_and_folders_are_refused_without_being_opened(claude, tmp_path):
    fifo = claude / "projects" / "-home-dev-acme" / f"{uuid.uuid4()}.jsonl"
    os.mkfifo(fifo)
    started = time.monotonic()
    refused(str(fifo), "not a regular file")
    assert time.monotonic() - started < 1  # stat only: a FIFO is never opened
    folder = claude / "projects" / "-home-dev-acme" / f"{uuid.uuid4()}.jsonl"
    folder.mkdir()
    refused(str(folder), "not a regular file")
    link = claude / "projects" / "-home-dev-acme" / "null.jsonl"
    link.symlink_to("/dev/null")
    refused(str(link), r"outside|not a \.jsonl")
    device = claude / "projects" / "-home-dev-acme" / f"{uuid.uuid4()}.jsonl"
    try:  # a character device (/dev/null's numbers) named like a transcript
        os.mknod(device, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except (PermissionError, AttributeError):
        return  # not root: creating device nodes is not allowed
    refused(str(device), "not a regular file")


def test_a_symlink_loop_is_refused(claude):
    a = claude / "projects" / "-home-dev-acme" / "a.jsonl"
    b = claude / "projects" / "-home-dev-acme" / "b.jsonl"
    a.symlink_to(b)
    b.symlink_to(a)
    with pytest.raises(NotificationRefused):
        validate_transcript(str(a))


def test_refusals_are_logged_and_nothing_is_queued(claude, home, tmp_path):
    fifo = claude / "projects" / "-home-dev-acme" / f"{uuid.uuid4()}.jsonl"
    os.mkfifo(fifo)
    outside = tmp_path / "x.jsonl"
    outside.write_text("{}\n")
    link = claude / "projects" / "-home-dev-acme" / "link.jsonl"
    link.symlink_to(outside)
    for bad in (str(fifo), str(link), str(claude / "projects" / ".." / "x.jsonl"), "a" * 5000):
        with pytest.raises(NotificationRefused):
            accept_notification(home, {"transcript_path": bad})
    queue = open_queue(home)
    try:
        assert queue.pending() == 0
        kind, detail, _ = queue.last_event("hook_refused")
        assert kind == "hook_refused" and detail
    finally:
        queue.close()


def test_the_hook_process_refuses_a_fifo_quickly_and_exits_0(claude, home):
    """End to end: the real ``memloom hook notify`` with a FIFO in the payload."""
    fifo = claude / "projects" / "-home-dev-acme" / f"{uuid.uuid4()}.jsonl"
    os.mkfifo(fifo)
    env = {
        **os.environ,
        "MEMLOOM_HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(claude),
        "MEMLOOM_LLM": "offline",
    }
    payload = json.dumps({"transcript_path": str(fifo), "hook_event_name": "SessionEnd"})
    res = subprocess.run(
        [sys.executable, "-m", "memloom._entry", "hook", "notify"],
        env=env,
        input=payload,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
    assert queued(home) == 0
