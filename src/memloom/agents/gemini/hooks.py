"""Installing memloom's hooks into Gemini CLI's ``~/.gemini/settings.json``, and taking them out.

Gemini's hook shape (reference §2.4)::

    {"hooks": {"<Event>": [{"matcher": "*", "hooks": [
        {"type": "command", "command": "…", "name": "…", "timeout": <milliseconds>}]}]}}

memloom adds one group per event: ``AfterAgent`` (once per turn) and
``SessionEnd`` (not awaited by Gemini: a backstop) run ``hook notify``;
with recall, ``BeforeAgent`` runs ``hook prompt-recall``, which also gives the
session's digest with its first prompt. No ``SessionStart`` hook: Gemini drops
a message that starts with ``<hook_context>`` from a resumed session's history,
and in headless mode it puts SessionStart's context in front of the typed prompt,
so the user's first prompt went with it (Gemini CLI 0.61.0). An older install's
``SessionStart`` entry is still recognised, and removed on the next connect.
Every command ends in ``--agent gemini``.

The file is edited as text (:mod:`.jsonc`): comments, key order, indentation
and every other hook keep their bytes, and removing memloom's entries gives
back the file as it was. A one-time backup (``settings.json.memloom-backup``)
is written before the first change; installing twice changes nothing; a file
that does not parse is refused with ``SettingsError`` and left untouched; the
file is replaced atomically. Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memloom.agents import hookfile, jsonc
from memloom.agents.base import HooksChange
from memloom.agents.gemini.home import settings_path
from memloom.errors import SettingsError

__all__ = [
    "AGENT_ARG",
    "BACKUP_SUFFIX",
    "HOOKS",
    "NOTIFY_TIMEOUT_MS",
    "RECALL_TIMEOUT_MS",
    "install",
    "installed",
    "is_memloom_hook",
    "remove",
]

BACKUP_SUFFIX = hookfile.BACKUP_SUFFIX
AGENT_ARG = "--agent gemini"
#: Gemini's hook timeouts are milliseconds (default 60 000).
NOTIFY_TIMEOUT_MS = 10_000
RECALL_TIMEOUT_MS = 5_000

#: event -> (memloom subcommand, hook name, timeout in ms, needs recall, installed_hooks key)
HOOKS: dict[str, tuple[str, str, int, bool, str]] = {
    "AfterAgent": ("notify", "memloom-notify", NOTIFY_TIMEOUT_MS, False, "notify"),
    "SessionEnd": ("notify", "memloom-session-end", NOTIFY_TIMEOUT_MS, False, "session_end"),
    "BeforeAgent": (
        "prompt-recall",
        "memloom-prompt-recall",
        RECALL_TIMEOUT_MS,
        True,
        "prompt_recall",
    ),
}
#: Handler names of earlier installs (taken out by connect and disconnect).
LEGACY_NAMES = frozenset({"memloom-session-start"})
_NAMES = frozenset(spec[1] for spec in HOOKS.values()) | LEGACY_NAMES
_COMMAND_RE = re.compile(r"\bhook (?:notify|prompt-recall|session-start) --agent gemini\s*$")


def is_memloom_hook(handler: Any) -> bool:
    """A handler memloom installed: one of its names, or its command line."""
    if not isinstance(handler, dict):
        return False
    if handler.get("name") in _NAMES:
        return True
    command = handler.get("command")
    return isinstance(command, str) and "memloom" in command and bool(_COMMAND_RE.search(command))


def _handler(command: str, event: str) -> dict[str, Any]:
    sub, name, timeout, _, _ = HOOKS[event]
    return {
        "type": "command",
        "command": f"{command} hook {sub} {AGENT_ARG}",
        "name": name,
        "timeout": timeout,
    }


def _group(command: str, event: str) -> dict[str, Any]:
    return {"matcher": "*", "hooks": [_handler(command, event)]}


# --------------------------------------------------------------------------- file


def _parse(path: Path, text: str) -> jsonc.Node:
    try:
        root = jsonc.parse(text)
    except jsonc.JsoncError as exc:
        raise SettingsError(
            f"{path} is not valid JSON ({exc}); fix it and run again - memloom has not changed it"
        ) from exc
    if root.kind != "object":
        raise SettingsError(f"{path} does not hold a JSON object; memloom has not changed it")
    found = root.member("hooks")
    if found is not None and found[1].value.kind != "object":
        raise SettingsError(f"'hooks' in {path} is not an object; memloom has not changed it")
    return root


def _hooks_node(root: jsonc.Node) -> jsonc.Node | None:
    found = root.member("hooks")
    return found[1].value if found is not None else None


def _memloom_entries(root: jsonc.Node) -> dict[str, list[Any]]:
    """event -> memloom's handlers found there (as values)."""
    out: dict[str, list[Any]] = {}
    hooks = _hooks_node(root)
    for m in hooks.members if hooks is not None else []:
        if m.value.kind != "array":
            continue
        for group in m.value.items:
            inner = group.member("hooks") if group.kind == "object" else None
            if inner is None or inner[1].value.kind != "array":
                continue
            for h in inner[1].value.items:
                if is_memloom_hook(h.value):
                    out.setdefault(m.key, []).append(h.value)
    return out


def _remove_one(text: str, root: jsonc.Node) -> str | None:
    """``text`` less one memloom handler (or its group, event, hooks key); None if none."""
    hooks_at = root.member("hooks")
    if hooks_at is None:
        return None
    hooks = hooks_at[1].value
    for ei, event in enumerate(hooks.members):
        arr = event.value
        if arr.kind != "array":
            continue
        for gi, group in enumerate(arr.items):
            inner_at = group.member("hooks") if group.kind == "object" else None
            if inner_at is None or inner_at[1].value.kind != "array":
                continue
            handlers = inner_at[1].value
            for hi, h in enumerate(handlers.items):
                if not is_memloom_hook(h.value):
                    continue
                if any(not is_memloom_hook(o.value) for o in handlers.items):
                    return jsonc.remove_item(text, handlers, hi)  # a shared group: the handler only
                if len(arr.items) > 1:
                    return jsonc.remove_item(text, arr, gi)
                if len(hooks.members) > 1:
                    return jsonc.remove_member(text, hooks, ei)
                return jsonc.remove_member(text, root, hooks_at[0])
    return None


def _strip(path: Path, text: str) -> str:
    for _ in range(10_000):
        out = _remove_one(text, _parse(path, text))
        if out is None:
            return text
        text = out
    raise SettingsError(f"{path}: too many memloom hooks to remove")  # pragma: no cover


def _add(path: Path, text: str, command: str, events: list[str]) -> str:
    root = _parse(path, text)
    unit = jsonc.indent_unit(text, root)
    hooks = _hooks_node(root)
    if hooks is None:
        value = {event: [_group(command, event)] for event in events}
        return jsonc.insert_member(text, root, "hooks", value, unit)
    for event in events:
        root = _parse(path, text)
        hooks = _hooks_node(root)
        assert hooks is not None
        found = hooks.member(event)
        if found is None:
            text = jsonc.insert_member(text, hooks, event, [_group(command, event)], unit)
        elif found[1].value.kind == "array":
            text = jsonc.append_item(text, found[1].value, _group(command, event), unit)
        else:
            raise SettingsError(
                f"'hooks.{event}' in {path} is not a list; memloom has not changed it"
            )
    return text


def install(
    command: str, *, recall: bool = True, env: Mapping[str, str] | None = None
) -> HooksChange:
    """Add memloom's capture hooks and, with ``recall``, its context hooks (module doc)."""
    path = settings_path(env)
    original = hookfile.read_settings(path)
    text = original if original is not None and original.strip() else "{}\n"
    root = _parse(path, text)
    events = [event for event, spec in HOOKS.items() if recall or not spec[3]]
    wanted = {event: [_handler(command, event)] for event in events}
    if original is not None and _memloom_entries(root) == wanted:
        return HooksChange(path, None, False, events)  # already exactly so
    new = _add(path, _strip(path, text), command, events)
    if new == original:
        return HooksChange(path, None, False, events)
    backup = hookfile.backup_once(path) if original is not None else None
    hookfile.write_atomic(path, new)
    return HooksChange(path, backup, True, events)


def remove(env: Mapping[str, str] | None = None) -> HooksChange:
    """Take out exactly memloom's handlers; every other byte stays as it was."""
    path = settings_path(env)
    original = hookfile.read_settings(path)
    if original is None or not original.strip():
        return HooksChange(path, None, False, [])
    new = _strip(path, original)
    if new != original:
        hookfile.write_atomic(path, new)
    return HooksChange(path, None, new != original, [])


def installed(env: Mapping[str, str] | None = None) -> dict[str, bool]:
    """Which of memloom's hooks settings.json holds (all False when unreadable)."""
    found = {spec[4]: False for spec in HOOKS.values()}
    path = settings_path(env)
    try:
        text = hookfile.read_settings(path)
        root = _parse(path, text) if text is not None and text.strip() else None
    except SettingsError:
        return {**found, "readable": False}
    entries = _memloom_entries(root) if root is not None else {}
    for event, spec in HOOKS.items():
        found[spec[4]] = event in entries
    return {**found, "readable": True}
