"""Accepting a finished session: validate the path, queue it, never block."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from memloom.capture.queue import open_queue


class NotificationRefused(ValueError):
    """The payload does not name a transcript inside the Claude Code projects folder."""


def claude_projects(env: Any = None) -> Path:
    env = os.environ if env is None else env
    root = env.get("CLAUDE_CONFIG_DIR") or str(Path.home() / ".claude")
    return Path(root).expanduser() / "projects"


def validate_transcript(path_text: Any, projects: Path | None = None) -> Path:
    """The resolved transcript path, or NotificationRefused saying why not."""
    if not isinstance(path_text, str) or not path_text.strip():
        raise NotificationRefused("transcript_path is missing")
    if "\x00" in path_text:
        raise NotificationRefused("transcript_path contains a NUL byte")
    base = (projects or claude_projects()).resolve()
    path = Path(path_text).expanduser().resolve()
    if path.suffix != ".jsonl":
        raise NotificationRefused(f"not a .jsonl transcript: {path}")
    if not path.is_relative_to(base):
        raise NotificationRefused(f"outside the Claude Code projects folder {base}: {path}")
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
