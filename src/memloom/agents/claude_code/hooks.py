"""Installing memloom's hooks into Claude Code's settings.json, and taking them out.

The merge keeps every other key and hook, writes a one-time backup, is
idempotent, refuses a file it cannot parse (leaving it untouched) and
replaces the file atomically.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memloom.agents.base import HooksChange
from memloom.agents.claude_code.home import settings_path
from memloom.errors import SettingsError

__all__ = [
    "BACKUP_SUFFIX",
    "NOTIFY_EVENT",
    "NOTIFY_TIMEOUT",
    "RECALL_EVENT",
    "RECALL_TIMEOUT",
    "START_EVENT",
    "install",
    "installed",
    "is_memloom_hook",
    "remove",
]

BACKUP_SUFFIX = ".memloom-backup"
NOTIFY_EVENT = "SessionEnd"
RECALL_EVENT = "UserPromptSubmit"
START_EVENT = "SessionStart"
NOTIFY_TIMEOUT = 10
RECALL_TIMEOUT = 5
#: memloom's hook commands, by what ``installed`` calls them.
_KINDS = {
    " hook notify": "notify",
    " hook prompt-recall": "prompt_recall",
    " hook session-start": "session_start",
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
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise SettingsError(
            f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}); fix it and run again "
            "- memloom has not changed it"
        ) from exc
    if not isinstance(data, dict):
        raise SettingsError(f"{path} does not hold a JSON object; memloom has not changed it")
    if "hooks" in data and not isinstance(data["hooks"], dict):
        raise SettingsError(f"'hooks' in {path} is not an object; memloom has not changed it")
    return data


def _write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".memloom-tmp")
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    fd = os.open(tmp, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, mode)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2, ensure_ascii=False)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _strip(hooks: dict[str, Any]) -> dict[str, Any]:
    """``hooks`` without memloom's handlers (empty groups and events removed)."""
    out: dict[str, Any] = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            out[event] = groups
            continue
        kept = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                handlers = [h for h in group["hooks"] if not is_memloom_hook(h)]
                if not handlers and group["hooks"]:
                    continue
                group = {**group, "hooks": handlers}
            kept.append(group)
        if kept:
            out[event] = kept
    return out


def _memloom_handlers(hooks: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else []:
            for h in group.get("hooks", []) if isinstance(group, dict) else []:
                if is_memloom_hook(h):
                    found.setdefault(event, []).append(h)
    return found


def install(
    command: str, *, recall: bool = True, env: Mapping[str, str] | None = None
) -> HooksChange:
    """Add the SessionEnd (notify) and, with ``recall``, the UserPromptSubmit
    (prompt-time recall) and SessionStart (the project's digest) hooks."""
    path = settings_path(env)
    data = _load(path)
    wanted = {NOTIFY_EVENT: (f"{command} hook notify", NOTIFY_TIMEOUT, {"matcher": ""})}
    if recall:
        wanted[RECALL_EVENT] = (f"{command} hook prompt-recall", RECALL_TIMEOUT, {})
        wanted[START_EVENT] = (f"{command} hook session-start", RECALL_TIMEOUT, {"matcher": ""})
    handlers = {
        event: [{"type": "command", "command": cmd, "timeout": timeout}]
        for event, (cmd, timeout, _) in wanted.items()
    }
    if _memloom_handlers(dict(data.get("hooks") or {})) == handlers:
        return HooksChange(path, None, False, list(wanted))  # already exactly so
    hooks = _strip(dict(data.get("hooks") or {}))
    for event, (cmd, timeout, extra) in wanted.items():
        group = {**extra, "hooks": [{"type": "command", "command": cmd, "timeout": timeout}]}
        hooks[event] = [*hooks.get(event, []), group]
    new = {**data, "hooks": hooks}
    changed = new != data
    backup = None
    if changed:
        if path.exists():
            backup = path.with_name(path.name + BACKUP_SUFFIX)
            if not backup.exists():
                shutil.copy2(path, backup)
        _write(path, new)
    return HooksChange(path, backup, changed, list(wanted))


def remove(env: Mapping[str, str] | None = None) -> HooksChange:
    """Take out exactly memloom's handlers; everything else stays as it was."""
    path = settings_path(env)
    data = _load(path)
    if "hooks" not in data:
        return HooksChange(path, None, False, [])
    hooks = _strip(data["hooks"])
    new = dict(data)
    if hooks:
        new["hooks"] = hooks
    else:
        new.pop("hooks")
    changed = new != data
    if changed:
        _write(path, new)
    return HooksChange(path, None, changed, [])


def installed(env: Mapping[str, str] | None = None) -> dict[str, bool]:
    """Which of memloom's hooks settings.json holds (False when unreadable)."""
    try:
        data = _load(settings_path(env))
    except SettingsError:
        return {"notify": False, "prompt_recall": False, "session_start": False, "readable": False}
    found = {"notify": False, "prompt_recall": False, "session_start": False, "readable": True}
    for handlers in _memloom_handlers(dict(data.get("hooks") or {})).values():
        for h in handlers:
            kind = next(k for end, k in _KINDS.items() if h["command"].endswith(end))
            found[kind] = True
    return found
