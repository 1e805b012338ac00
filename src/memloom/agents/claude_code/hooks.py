"""Installing memloom's hooks into Claude Code's settings.json, and taking them out.

The merge keeps every other key and hook, writes a one-time backup, is
idempotent, refuses a file it cannot parse (leaving it untouched) and
replaces the file atomically.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memloom.agents import hookfile
from memloom.agents.base import HooksChange
from memloom.agents.claude_code.home import settings_path
from memloom.errors import SettingsError

__all__ = [
    "NOTIFY_EVENT",
    "NOTIFY_TIMEOUT",
    "READ_EVENT",
    "READ_MATCHER",
    "RECALL_EVENT",
    "RECALL_TIMEOUT",
    "START_EVENT",
    "install",
    "installed",
    "is_memloom_hook",
    "remove",
]

NOTIFY_EVENT = "SessionEnd"
RECALL_EVENT = "UserPromptSubmit"
START_EVENT = "SessionStart"
#: After Claude Code's own Read tool opened a file (matcher ``Read``): the memories
#: anchored to that file (:mod:`memloom.capture.reads`).
READ_EVENT = "PostToolUse"
READ_MATCHER = "Read"
NOTIFY_TIMEOUT = 10
RECALL_TIMEOUT = 5
#: memloom's hook commands, by what ``installed`` calls them.
_KINDS = {
    " hook notify": "notify",
    " hook prompt-recall": "prompt_recall",
    " hook session-start": "session_start",
    " hook read": "read",
}


def is_memloom_hook(handler: Any) -> bool:
    if not isinstance(handler, dict):
        return False
    command = str(handler.get("command", ""))
    return command.endswith(tuple(_KINDS)) and "memloom" in command


def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    raw = path.read_text(encoding="utf-8")
    return hookfile.parse_settings(path, raw) if raw.strip() else {}


def _handlers(data: dict[str, Any]) -> dict[str, list[Any]]:
    """memloom's handlers in the settings, by event."""
    return hookfile.memloom_handlers(dict(data.get("hooks") or {}), is_memloom_hook)


def install(
    command: str, *, recall: bool = True, env: Mapping[str, str] | None = None
) -> HooksChange:
    """Add the SessionEnd (notify) and, with ``recall``, the UserPromptSubmit
    (prompt-time recall), SessionStart (the project's digest) and PostToolUse on
    ``Read`` (the memories anchored to the file read) hooks."""
    path = settings_path(env)
    data = _load(path)
    wanted = {NOTIFY_EVENT: (f"{command} hook notify", NOTIFY_TIMEOUT, {"matcher": ""})}
    if recall:
        wanted[RECALL_EVENT] = (f"{command} hook prompt-recall", RECALL_TIMEOUT, {})
        wanted[START_EVENT] = (f"{command} hook session-start", RECALL_TIMEOUT, {"matcher": ""})
        wanted[READ_EVENT] = (f"{command} hook read", RECALL_TIMEOUT, {"matcher": READ_MATCHER})
    handlers = {
        event: [{"type": "command", "command": cmd, "timeout": timeout}]
        for event, (cmd, timeout, _) in wanted.items()
    }
    if _handlers(data) == handlers:
        return HooksChange(path, None, False, list(wanted))  # already exactly so
    hooks = hookfile.strip_handlers(dict(data.get("hooks") or {}), is_memloom_hook)
    for event, (cmd, timeout, extra) in wanted.items():
        group = {**extra, "hooks": [{"type": "command", "command": cmd, "timeout": timeout}]}
        hooks[event] = [*hooks.get(event, []), group]
    new = {**data, "hooks": hooks}
    if new == data:
        return HooksChange(path, None, False, list(wanted))
    return hookfile.write_installed(path, new, wanted)


def remove(env: Mapping[str, str] | None = None) -> HooksChange:
    """Take out exactly memloom's handlers; everything else stays as it was."""
    path = settings_path(env)
    data = _load(path)
    if "hooks" not in data:
        return HooksChange(path, None, False, [])
    hooks = hookfile.strip_handlers(data["hooks"], is_memloom_hook)
    new = dict(data)
    if hooks:
        new["hooks"] = hooks
    else:
        new.pop("hooks")
    changed = new != data
    if changed and not hookfile.restore_backup(path, new, hookfile.parse_settings):
        hookfile.write_json(path, new)
    return HooksChange(path, None, changed, [])


def installed(env: Mapping[str, str] | None = None) -> dict[str, bool]:
    """Which of memloom's hooks settings.json holds (False when unreadable)."""
    try:
        data = _load(settings_path(env))
    except SettingsError:
        return {**dict.fromkeys(_KINDS.values(), False), "readable": False}
    found = {**dict.fromkeys(_KINDS.values(), False), "readable": True}
    for handlers in _handlers(data).values():
        for h in handlers:
            kind = next(k for end, k in _KINDS.items() if h["command"].endswith(end))
            found[kind] = True
    return found
