"""What Codex's hooks send on stdin, checked before anything opens it; what they may print.

Codex runs command hooks with a JSON object on stdin (reference §1.5, [C8]):
``Stop`` sends ``{session_id, transcript_path (string|null), cwd,
hook_event_name, model, permission_mode, turn_id, stop_hook_active,
last_assistant_message}``; ``SessionEnd`` (newer builds) the same envelope.
memloom's capture hook (``memloom hook notify --agent codex``) only queues the
rollout: :func:`parse_hook_payload` turns the payload into a
:class:`~memloom.agents.base.HookEvent` whose ``transcript_path`` is the rollout,
which must resolve inside the Codex home's ``sessions/`` or
``archived_sessions/``. A null ``transcript_path`` (Codex sends null when it has
no rollout path to give) is looked up by ``session_id``: the newest
``sessions/Y/M/D/rollout-*-<id>.jsonl`` -- or refused.

Prompt-time recall answers through Codex's output contract:
``UserPromptSubmit``, ``SessionStart`` and ``PostToolUse`` hooks print
``{"hookSpecificOutput": {"hookEventName": <event>, "additionalContext": <text>}}``
(:func:`context_output`; for PostToolUse, codex-rs/hooks ``post_tool_use.rs``: the
context goes to the model after the tool's output).

**Reads.** Codex has no read tool: its model reads a file with a shell command, and
``PostToolUse`` sends (0.169.0, tests/fixtures/hooks/reads/codex-*) ``{session_id,
turn_id, transcript_path, cwd, hook_event_name: "PostToolUse", model,
permission_mode, tool_name: "Bash", tool_input: {command}, tool_response, tool_use_id}``
whatever the model's tool (``exec_command``); ``cwd`` is the command's directory (its
``workdir`` when the model gave one). :func:`read_path` is the one file a simple
read command opens (:func:`memloom.agents.shellread.read_target`). The response is
the output's text alone, with no exit status: a failed ``cat`` names a file that the
caller finds missing.

Standard library only: the hook fast path imports this module.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path

from memloom.agents.codex.home import ARCHIVED_DIR, SESSIONS_DIR, codex_home
from memloom.agents.events import HookEvent
from memloom.agents.files import check_transcript_path
from memloom.errors import NotificationRefused

TYPE_CHECKING = False  # typing's, without loading typing (~3 ms): the hooks load this module
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "CONTEXT_EVENTS",
    "NAME",
    "SHELL_TOOLS",
    "context_output",
    "find_rollout",
    "parse_hook_payload",
    "read_path",
    "validate_transcript",
]

NAME = "codex"
#: Events whose stdout may carry additionalContext.
CONTEXT_EVENTS = ("UserPromptSubmit", "SessionStart", "PostToolUse")
#: What PostToolUse names a shell command's tool (every shell tool Codex offers).
SHELL_TOOLS = ("Bash",)
#: A thread id: a UUID in every real rollout; letters, digits, ``-`` and ``_`` at most.
_SESSION_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")
#: Date folders searched for a rollout by id (newest first): about a year of days.
MAX_DAY_DIRS = 400


def validate_transcript(path_text: Any, env: Mapping[str, str] | None = None) -> Path:
    """The resolved rollout path, or NotificationRefused saying why not.

    An absolute, existing regular ``.jsonl`` or ``.jsonl.zst`` file that resolves
    inside ``<codex home>/sessions`` or ``<codex home>/archived_sessions`` (see
    :func:`memloom.agents.files.check_transcript_path` for the other checks).
    """
    home = codex_home(env)
    path = check_transcript_path(path_text, home, suffixes=(".jsonl", ".zst"), folder="Codex home")
    if path.suffix == ".zst" and not path.name.endswith(".jsonl.zst"):
        raise NotificationRefused(f"not a .jsonl/.jsonl.zst rollout: {path}")
    for sub in (SESSIONS_DIR, ARCHIVED_DIR):
        if path.is_relative_to((home / sub).resolve()):
            return path
    raise NotificationRefused(
        f"outside the Codex sessions folders {home / SESSIONS_DIR} and {home / ARCHIVED_DIR}: "
        f"{path}"
    )


def _dirs_newest_first(d: str, pattern: re.Pattern[str]) -> list[str]:
    try:
        with os.scandir(d) as it:
            names = [e.name for e in it if pattern.match(e.name) and e.is_dir()]
    except OSError:
        return []
    return [os.path.join(d, n) for n in sorted(names, reverse=True)]


_YEAR = re.compile(r"^\d{4}$")
_TWO = re.compile(r"^\d{2}$")


def find_rollout(session_id: Any, env: Mapping[str, str] | None = None) -> Path | None:
    """The newest live rollout of thread ``session_id`` under ``sessions/Y/M/D/``, if any.

    Only a plain id is searched for (no glob characters reach the file system);
    the date folders are listed newest first and the search stops at the first
    match, or after :data:`MAX_DAY_DIRS` days.
    """
    if not isinstance(session_id, str) or not _SESSION_ID_RE.match(session_id):
        return None
    tail = f"-{session_id}.jsonl"
    tail_lower = tail.lower()
    days = 0
    root = os.fspath(codex_home(env) / SESSIONS_DIR)
    for year in _dirs_newest_first(root, _YEAR):
        for month in _dirs_newest_first(year, _TWO):
            for day in _dirs_newest_first(month, _TWO):
                days += 1
                if days > MAX_DAY_DIRS:
                    return None
                try:
                    with os.scandir(day) as it:
                        names = sorted(
                            (e.name for e in it if e.name.startswith("rollout-")),
                            reverse=True,
                        )
                except OSError:
                    continue
                for name in names:
                    if name.lower().endswith(tail_lower):
                        return Path(day) / name
    return None


def parse_hook_payload(
    payload: Mapping[str, Any], env: Mapping[str, str] | None = None
) -> HookEvent:
    """A Codex ``Stop``/``SessionEnd`` payload as a checked event (NotificationRefused if not)."""
    path_text = payload.get("transcript_path")
    session_id = payload.get("session_id")
    if path_text is None:
        found = find_rollout(session_id, env)
        if found is None:
            raise NotificationRefused(
                "transcript_path is null and no rollout of session "
                f"{session_id!r} was found under {codex_home(env) / SESSIONS_DIR}"
            )
        path_text = os.fspath(found)
    path = validate_transcript(path_text, env)
    return HookEvent(
        agent=NAME,
        transcript_path=path,
        session_id=session_id,
        cwd=payload.get("cwd"),
        reason=payload.get("reason") or payload.get("hook_event_name"),
    )


def context_output(event: str, text: str) -> str:
    """What a ``UserPromptSubmit``/``SessionStart`` hook prints to add ``text`` to the context.

    ``""`` for no text (Codex then adds nothing). ``event`` must be one of
    :data:`CONTEXT_EVENTS`: Codex checks ``hookEventName`` against the event run.
    """
    if event not in CONTEXT_EVENTS:
        raise ValueError(f"{event!r} cannot add context (only {', '.join(CONTEXT_EVENTS)})")
    if not text:
        return ""
    body = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}
    return json.dumps(body, ensure_ascii=False)


def read_path(payload: Mapping[str, Any]) -> str | None:
    """The file a ``PostToolUse`` of a shell command read (relative to the payload's
    ``cwd``, or absolute), None unless the command is clearly one read of one file."""
    if (
        payload.get("hook_event_name") != "PostToolUse"
        or payload.get("tool_name") not in SHELL_TOOLS
    ):
        return None
    tool_input = payload.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if not isinstance(command, str):
        return None
    from memloom.agents.shellread import read_target

    return read_target(command)
