"""Accepting a finished session: validate the path, queue it, never block."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from memloom.capture.queues import open_queue
from memloom.errors import NotificationRefused


def claude_projects(env: Any = None) -> Path:
    env = os.environ if env is None else env
    root = env.get("CLAUDE_CONFIG_DIR") or str(Path.home() / ".claude")
    return Path(root).expanduser() / "projects"


#: Longest transcript_path accepted (Linux PATH_MAX) and longest path component (NAME_MAX).
MAX_PATH_CHARS = 4096
MAX_NAME_BYTES = 255


def validate_transcript(path_text: Any, projects: Path | None = None) -> Path:
    """The resolved transcript path, or NotificationRefused saying why not.

    The path comes from a hook payload, so it is checked before anything opens
    it: an absolute path of sane length without ``..`` components, ending in
    ``.jsonl``, that resolves (symlinks followed) inside the Claude Code projects
    folder, to an existing regular file -- never a FIFO or a device, which would
    block or feed the worker endlessly. Only ``stat`` is used here; nothing is opened.
    """
    if not isinstance(path_text, str) or not path_text.strip():
        raise NotificationRefused("transcript_path is missing")
    if "\x00" in path_text:
        raise NotificationRefused("transcript_path contains a NUL byte")
    if len(path_text) > MAX_PATH_CHARS:
        raise NotificationRefused(
            f"transcript_path is too long ({len(path_text):,} characters; "
            f"at most {MAX_PATH_CHARS:,})"
        )
    given = Path(path_text).expanduser()
    if not given.is_absolute():
        raise NotificationRefused(f"transcript_path is not absolute: {path_text!r}")
    if ".." in given.parts:
        raise NotificationRefused(f"transcript_path contains '..': {path_text!r}")
    if any(len(part.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES for part in given.parts):
        raise NotificationRefused("transcript_path has a name longer than 255 bytes")
    base = (projects or claude_projects()).resolve()
    try:
        path = given.resolve()
    except (OSError, RuntimeError) as exc:  # e.g. a symlink loop
        raise NotificationRefused(f"transcript_path does not resolve: {exc}") from None
    if path.suffix != ".jsonl":
        raise NotificationRefused(f"not a .jsonl transcript: {path}")
    if not path.is_relative_to(base):
        raise NotificationRefused(f"outside the Claude Code projects folder {base}: {path}")
    try:
        mode = os.stat(path).st_mode  # resolved: the final component is no symlink
    except OSError as exc:
        raise NotificationRefused(f"transcript does not exist: {path} ({exc.strerror})") from None
    if not stat.S_ISREG(mode):
        raise NotificationRefused(f"not a regular file: {path}")
    return path


def accept_notification(home: Path, payload: dict[str, Any]) -> dict[str, Any]:
    """Queue the session; raises NotificationRefused (and logs it) for a bad path."""
    queue = open_queue(home)
    try:
        try:
            path = validate_transcript(payload.get("transcript_path"))
        except NotificationRefused as exc:
            queue.log("hook_refused", str(exc))
            raise
        job = queue.enqueue(
            str(path),
            session_id=payload.get("session_id"),
            cwd=payload.get("cwd"),
            reason=payload.get("reason"),
        )
        queue.log("hook_notify", str(path))
        return {"queued": True, "job": job, "transcript_path": str(path)}
    finally:
        queue.close()
