"""``memloom connect opencode``: memloom's plugin file, and ``memloom mcp`` in opencode.json.

OpenCode has no command hooks; it runs JS plugins in its own process. Connecting
writes ``<config>/plugins/memloom.js`` (``plugin.js`` with the command that starts
memloom filled in) and adds ``"mcp": {"memloom": {"type": "local", "command": [...,
"mcp"]}}`` to ``opencode.json``, edited as text (:mod:`memloom.agents.jsonc`: the
user's comments, order and indentation stay), with a one-time backup. Disconnecting
deletes the plugin file and takes out exactly the ``memloom`` entry (and the ``mcp``
object, when memloom's entry was all it held); a file connect created is deleted.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from memloom.agents import hookfile, jsonc
from memloom.agents.base import HooksChange
from memloom.agents.opencode.home import plugin_path, settings_path
from memloom.errors import SettingsError

__all__ = [
    "EVENTS",
    "MARKER",
    "OpenCodeHooksChange",
    "install",
    "installed",
    "plugin_text",
    "remove",
]

#: The first line of memloom's plugin: how a plugin file is known to be memloom's.
MARKER = "// memloom's OpenCode plugin"
#: What connect reports it installed.
EVENTS = [
    "session.idle",
    "chat.message",
    "experimental.chat.system.transform",
    "tool.execute.after",
    "mcp",
]
_KEY = "memloom"


@dataclass
class OpenCodeHooksChange(HooksChange):
    """A :class:`HooksChange` (opencode.json) plus the plugin file, which connect names."""

    plugin_path: Path | None = None
    notes: list[str] = field(default_factory=list)


def plugin_text(command: str, *, recall: bool = True) -> str:
    """The plugin file for ``command`` (the shell words that start memloom)."""
    template = resources.files("memloom.agents.opencode").joinpath("plugin.js").read_text("utf-8")
    argv = json.dumps(shlex.split(command))
    return template.replace("__MEMLOOM_COMMAND__", argv).replace(
        "__MEMLOOM_RECALL__", "true" if recall else "false"
    )


def _mcp_entry(command: str) -> dict[str, Any]:
    return {"type": "local", "command": [*shlex.split(command), "mcp"], "enabled": True}


def _parse(path: Path, text: str) -> jsonc.Node:
    return jsonc.parse_settings(path, text, "mcp")


def _ours(root: jsonc.Node) -> Any:
    mcp = root.member("mcp")
    entry = mcp[1].value.member(_KEY) if mcp is not None else None
    return entry[1].value.value if entry is not None else None


def _strip(path: Path, text: str) -> str:
    root = _parse(path, text)
    mcp = root.member("mcp")
    if mcp is None or mcp[1].value.member(_KEY) is None:
        return text
    node = mcp[1].value
    if len(node.members) == 1:
        return jsonc.remove_member(text, root, mcp[0])
    return jsonc.remove_member(text, node, node.member(_KEY)[0])  # type: ignore[index]


def _add(path: Path, text: str, entry: dict[str, Any]) -> str:
    root = _parse(path, text)
    unit = jsonc.indent_unit(text, root)
    mcp = root.member("mcp")
    if mcp is None:
        return jsonc.insert_member(text, root, "mcp", {_KEY: entry}, unit)
    return jsonc.insert_member(text, mcp[1].value, _KEY, entry, unit)


def _is_ours(path: Path) -> bool:
    try:
        return path.read_text("utf-8").startswith(MARKER)
    except (OSError, UnicodeDecodeError):
        return False


def install(
    command: str, *, recall: bool = True, env: Mapping[str, str] | None = None
) -> HooksChange:
    """Write the plugin and add the MCP entry (module doc); idempotent."""
    path = settings_path(env)
    plugin = plugin_path(env)
    if plugin.exists() and not _is_ours(plugin):
        raise SettingsError(f"{plugin} is not memloom's plugin; memloom has not changed it")
    original = hookfile.read_settings(path)
    text = original if original is not None and original.strip() else "{}\n"
    entry = _mcp_entry(command)
    changed = False
    if original is None or _ours(_parse(path, text)) != entry:
        new = _add(path, _strip(path, text), entry)
        if original is not None:
            hookfile.backup_once(path)
        hookfile.write_atomic(path, new)
        changed = True
    wanted = plugin_text(command, recall=recall)
    if not plugin.exists() or plugin.read_text("utf-8") != wanted:
        hookfile.write_atomic(plugin, wanted)
        changed = True
    backup = path.with_name(path.name + hookfile.BACKUP_SUFFIX)
    note = f"memloom's plugin is {plugin}; OpenCode loads it when it next starts"
    return OpenCodeHooksChange(
        path, backup if backup.exists() else None, changed, list(EVENTS), plugin, [note]
    )


def remove(env: Mapping[str, str] | None = None) -> HooksChange:
    """Delete memloom's plugin and take out exactly its MCP entry; every other byte stays."""
    path = settings_path(env)
    plugin = plugin_path(env)
    changed = False
    if plugin.exists() and _is_ours(plugin):
        plugin.unlink()
        changed = True
    original = hookfile.read_settings(path)
    if original is not None and original.strip():
        new = _strip(path, original)
        if new != original:
            backup = path.with_name(path.name + hookfile.BACKUP_SUFFIX)
            if not backup.exists() and not _parse(path, new).members:
                path.unlink()  # connect created the file: nothing of the user's in it
            else:
                hookfile.write_atomic(path, new)
            changed = True
    return HooksChange(path, None, changed, [])


def installed(env: Mapping[str, str] | None = None) -> dict[str, bool]:
    """Whether memloom's plugin file and its MCP entry are in place."""
    plugin = plugin_path(env)
    path = settings_path(env)
    try:
        text = hookfile.read_settings(path)
        mcp = text is not None and text.strip() != "" and _ours(_parse(path, text)) is not None
    except SettingsError:
        return {"plugin": _is_ours(plugin), "mcp": False, "readable": False}
    return {"plugin": _is_ours(plugin), "mcp": bool(mcp), "readable": True}
