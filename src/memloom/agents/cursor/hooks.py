"""Installing memloom's hooks into Cursor's ``~/.cursor/hooks.json``, and taking them out.

The file's documented shape is ``{"version": 1, "hooks": {"<event>": [{"command": "…"},
…]}}`` (cursor.com/docs/agent/hooks; an entry may also carry ``matcher``, ``timeout``,
``loop_limit``, ``failClosed``). Installed (``command`` starts memloom):

* ``stop`` and ``sessionEnd`` -> ``<command> hook notify --agent cursor``: queue the
  transcript the payload names. ``stop`` ends every agent turn (Cursor writes the
  transcript before it fires); ``sessionEnd`` the conversation. The ledger makes the
  repeated queueing cheap: an unchanged transcript is skipped, a grown one resumed.
* with ``recall``: ``sessionStart`` -> ``<command> hook session-start --agent cursor``,
  whose ``{"additional_context": …}`` carries the project's digest. No prompt hook:
  ``beforeSubmitPrompt`` can only allow or block a prompt, never add to it (so its
  docs; newer builds are reported to take ``additional_context`` there: UNVERIFIED).
* with ``recall``: ``postToolUse`` with ``matcher: "^Read$"`` -> ``<command> hook read
  --agent cursor``: after Cursor's ``Read`` tool, the memories anchored to the file
  it read, as ``{"additional_context": …}``, which Cursor adds after the tool's
  result (docs: postToolUse output ``additional_context``; the matcher is a regular
  expression on ``tool_name``). Not run against a real Cursor: see
  :mod:`memloom.agents.cursor.payload`.

No ``timeout`` is written: public examples disagree on its unit (seconds or
milliseconds), and memloom's hooks bound their own time (exit 0 whatever happens).

The merge keeps every other key, event and entry (other tools' hooks included),
writes a one-time backup (``hooks.json.memloom-backup``) before the first change to
an existing file, is idempotent, refuses a file it cannot parse (leaving it as it
is) and writes atomically. Removal takes out exactly memloom's entries; when what
is left is what the backup holds, the backup's bytes are put back (formatting
included), and a file memloom created is deleted once nothing else is in it.

Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memloom.agents import hookfile
from memloom.agents.base import HooksChange
from memloom.agents.cursor.home import hooks_path
from memloom.errors import SettingsError

__all__ = [
    "AGENT_FLAG",
    "NOTIFY_EVENTS",
    "READ_EVENT",
    "READ_MATCHER",
    "START_EVENT",
    "install",
    "installed",
    "is_memloom_hook",
    "remove",
]

AGENT_FLAG = "--agent cursor"
NOTIFY_EVENTS = ("stop", "sessionEnd")
START_EVENT = "sessionStart"
#: After Cursor's Read tool (the matcher is a regular expression on ``tool_name``).
READ_EVENT = "postToolUse"
READ_MATCHER = "^Read$"
_HOOK_RE = re.compile(
    r"\shook\s+(notify|session-start|prompt-recall|read)\s+--agent\s+cursor(?:\s|$)"
)


def is_memloom_hook(entry: Any) -> bool:
    """An entry memloom installed: a ``command`` running ``… hook <name> --agent cursor``."""
    if not isinstance(entry, dict):
        return False
    cmd = entry.get("command")
    return (
        isinstance(cmd, str)
        and "memloom" in cmd
        and AGENT_FLAG in cmd
        and bool(_HOOK_RE.search(cmd))
    )


def _parse(path: Path, raw: str) -> dict[str, Any]:
    """The hook file as an object whose ``hooks`` maps events to lists; SettingsError if not."""
    data = hookfile.parse_settings(path, raw)
    for event, entries in (data.get("hooks") or {}).items():
        if not isinstance(entries, list):
            raise SettingsError(
                f"'hooks.{event}' in {path} is not a list; memloom has not changed it"
            )
    return data


def _load(path: Path) -> dict[str, Any]:
    raw = hookfile.read_settings(path)
    return _parse(path, raw) if raw is not None and raw.strip() else {}


def _mine(data: dict[str, Any]) -> dict[str, list[Any]]:
    """memloom's entries, by event."""
    found: dict[str, list[Any]] = {}
    for event, entries in (data.get("hooks") or {}).items():
        for entry in entries:
            if is_memloom_hook(entry):
                found.setdefault(event, []).append(entry)
    return found


def _without_mine(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` without memloom's entries; an event they alone filled goes."""
    if "hooks" not in data:
        return dict(data)
    hooks: dict[str, Any] = {}
    for event, entries in data["hooks"].items():
        kept = [e for e in entries if not is_memloom_hook(e)]
        if kept or not entries:
            hooks[event] = kept
    return {**data, "hooks": hooks}


def _as_found(new: dict[str, Any]) -> list[dict[str, Any]]:
    """What the file may have held before memloom: ``new``, without the ``version`` memloom
    adds to a file lacking it and without the ``hooks`` object it adds (once empty)."""
    versions = [new, {k: v for k, v in new.items() if k != "version"}]
    out = []
    for doc in versions:
        out.append(doc)
        if doc.get("hooks") == {}:
            out.append({k: v for k, v in doc.items() if k != "hooks"})
    return out


def _wanted(command: str, recall: bool) -> dict[str, dict[str, Any]]:
    wanted = {e: {"command": f"{command} hook notify {AGENT_FLAG}"} for e in NOTIFY_EVENTS}
    if recall:
        wanted[START_EVENT] = {"command": f"{command} hook session-start {AGENT_FLAG}"}
        wanted[READ_EVENT] = {
            "command": f"{command} hook read {AGENT_FLAG}",
            "matcher": READ_MATCHER,
        }
    return wanted


def install(
    command: str, *, recall: bool = True, env: Mapping[str, str] | None = None
) -> HooksChange:
    """Add the stop and sessionEnd (notify) hooks and, with ``recall``, sessionStart and
    the postToolUse read hook."""
    path = hooks_path(env)
    data = _load(path)
    wanted = _wanted(command, recall)
    if _mine(data) == {e: [v] for e, v in wanted.items()} and "version" in data:
        return HooksChange(path, None, False, list(wanted))
    base = _without_mine(data)
    hooks = {e: list(v) for e, v in (base.get("hooks") or {}).items()}
    for event, entry in wanted.items():
        hooks[event] = [*hooks.get(event, []), entry]
    new = {"version": 1, **base, "hooks": hooks}  # Cursor reads only a versioned file
    return hookfile.write_installed(path, new, wanted)


def remove(env: Mapping[str, str] | None = None) -> HooksChange:
    """Take out exactly memloom's entries; the rest stays, the backup's bytes when they match."""
    path = hooks_path(env)
    data = _load(path)
    if not _mine(data):
        return HooksChange(path, None, False, [])
    new = _without_mine(data)
    earlier = _as_found(new)
    if any(hookfile.restore_backup(path, doc, _parse) for doc in earlier):
        return HooksChange(path, None, True, [])
    backup = path.with_name(path.name + hookfile.BACKUP_SUFFIX)
    before = hookfile.read_settings(backup)
    if before is not None and not before.strip() and {} in earlier:
        hookfile.write_atomic(path, before)  # the file was empty: empty again
    elif before is None and {} in earlier:
        path.unlink()  # memloom created the file and nothing else is in it
    else:
        hookfile.write_json(path, new)
    return HooksChange(path, None, True, [])


def installed(env: Mapping[str, str] | None = None) -> dict[str, bool]:
    """Which of memloom's hooks the file holds (all False, ``readable`` False, if unreadable).

    ``notify``: on stop or sessionEnd; ``session_start``: the sessionStart digest;
    ``read``: the postToolUse hook after a Read.
    """
    found = {"notify": False, "session_start": False, "read": False, "readable": True}
    try:
        data = _load(hooks_path(env))
    except SettingsError:
        return {**found, "readable": False}
    for entries in _mine(data).values():
        for entry in entries:
            name = _HOOK_RE.search(entry["command"])
            if name and name.group(1) == "notify":
                found["notify"] = True
            elif name and name.group(1) == "session-start":
                found["session_start"] = True
            elif name and name.group(1) == "read":
                found["read"] = True
    return found
