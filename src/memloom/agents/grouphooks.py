"""memloom's hooks in a JSON-with-comments settings file of Claude-shaped hook groups.

Gemini CLI and Qwen Code (its fork) keep hooks in ``settings.json``, which they read
after stripping comments::

    {"hooks": {"<Event>": [{"matcher"?: …, "hooks": [
        {"type": "command", "command": "…", "name": "…", "timeout": …}]}]}}

A :class:`HookSet` is one agent's part of such a file: which events get which
``memloom hook …`` command (each ending in ``--agent <name>``), under which handler
names, with which timeouts. memloom adds one group per event. The file is edited as
text (:mod:`memloom.agents.jsonc`): comments, key order, indentation and every other
hook keep their bytes, and removing memloom's entries gives back the file as it was.
A one-time backup (``settings.json.memloom-backup``) is written before the first
change; installing twice changes nothing; a file that does not parse is refused with
``SettingsError`` and left untouched; the file is replaced atomically.

Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memloom.agents import hookfile, jsonc
from memloom.agents.base import HooksChange
from memloom.errors import SettingsError

__all__ = ["BoundHooks", "Hook", "HookSet"]


@dataclass(frozen=True)
class Hook:
    """One of memloom's handlers: on ``event`` run ``hook <sub>``, named ``name``, with
    ``timeout`` in the agent's unit; ``recall``: only when recall is on; ``key``: what
    :meth:`HookSet.installed` calls it; ``matcher``: its group's, instead of the set's."""

    event: str
    sub: str
    name: str
    timeout: int
    recall: bool
    key: str
    matcher: str | None = None


@dataclass(frozen=True)
class HookSet:
    """One agent's hooks (``agent``: its registry name); ``legacy_names``: handler names
    of earlier installs, still recognised (and so removed); ``matcher``: the group's
    matcher, None for none."""

    agent: str
    hooks: tuple[Hook, ...]
    legacy_names: frozenset[str] = frozenset()
    matcher: str | None = "*"
    _names: frozenset[str] = field(init=False, repr=False)
    _command_re: re.Pattern[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        names = frozenset(h.name for h in self.hooks) | self.legacy_names
        subs = "notify|prompt-recall|session-start|compacted|read"
        pattern = rf"\bhook (?:{subs}) --agent {re.escape(self.agent)}\s*$"
        object.__setattr__(self, "_names", names)
        object.__setattr__(self, "_command_re", re.compile(pattern))

    @property
    def agent_arg(self) -> str:
        return f"--agent {self.agent}"

    def is_memloom_hook(self, handler: Any) -> bool:
        """A handler memloom installed: one of its names, or its command line."""
        if not isinstance(handler, dict):
            return False
        if handler.get("name") in self._names:
            return True
        command = handler.get("command")
        return (
            isinstance(command, str)
            and "memloom" in command
            and bool(self._command_re.search(command))
        )

    def _handler(self, command: str, hook: Hook) -> dict[str, Any]:
        return {
            "type": "command",
            "command": f"{command} hook {hook.sub} {self.agent_arg}",
            "name": hook.name,
            "timeout": hook.timeout,
        }

    def _group(self, command: str, hook: Hook) -> dict[str, Any]:
        matcher = hook.matcher or self.matcher
        group: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
        return {**group, "hooks": [self._handler(command, hook)]}

    # ----------------------------------------------------------------------- file

    def _memloom_entries(self, root: jsonc.Node) -> dict[str, list[Any]]:
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
                    if self.is_memloom_hook(h.value):
                        out.setdefault(m.key, []).append(h.value)
        return out

    def _remove_one(self, text: str, root: jsonc.Node) -> str | None:
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
                    if not self.is_memloom_hook(h.value):
                        continue
                    if any(not self.is_memloom_hook(o.value) for o in handlers.items):
                        return jsonc.remove_item(text, handlers, hi)  # shared group: the handler
                    if len(arr.items) > 1:
                        return jsonc.remove_item(text, arr, gi)
                    if len(hooks.members) > 1:
                        return jsonc.remove_member(text, hooks, ei)
                    return jsonc.remove_member(text, root, hooks_at[0])
        return None

    def _strip(self, path: Path, text: str) -> str:
        for _ in range(10_000):
            out = self._remove_one(text, _parse(path, text))
            if out is None:
                return text
            text = out
        raise SettingsError(f"{path}: too many memloom hooks to remove")  # pragma: no cover

    def _add(self, path: Path, text: str, command: str, hooks: list[Hook]) -> str:
        root = _parse(path, text)
        unit = jsonc.indent_unit(text, root)
        if _hooks_node(root) is None:
            value = {h.event: [self._group(command, h)] for h in hooks}
            return jsonc.insert_member(text, root, "hooks", value, unit)
        for hook in hooks:
            node = _hooks_node(_parse(path, text))
            assert node is not None
            found = node.member(hook.event)
            group = self._group(command, hook)
            if found is None:
                text = jsonc.insert_member(text, node, hook.event, [group], unit)
            elif found[1].value.kind == "array":
                text = jsonc.append_item(text, found[1].value, group, unit)
            else:
                raise SettingsError(
                    f"'hooks.{hook.event}' in {path} is not a list; memloom has not changed it"
                )
        return text

    def install(self, path: Path, command: str, *, recall: bool = True) -> HooksChange:
        """Add memloom's capture hooks and, with ``recall``, its context hooks."""
        original = hookfile.read_settings(path)
        text = original if original is not None and original.strip() else "{}\n"
        root = _parse(path, text)
        hooks = [h for h in self.hooks if recall or not h.recall]
        events = [h.event for h in hooks]
        wanted = {h.event: [self._handler(command, h)] for h in hooks}
        if original is not None and self._memloom_entries(root) == wanted:
            return HooksChange(path, None, False, events)  # already exactly so
        new = self._add(path, self._strip(path, text), command, hooks)
        if new == original:
            return HooksChange(path, None, False, events)
        backup = hookfile.backup_once(path) if original is not None else None
        hookfile.write_atomic(path, new)
        return HooksChange(path, backup, True, events)

    def remove(self, path: Path) -> HooksChange:
        """Take out exactly memloom's handlers; every other byte stays as it was."""
        original = hookfile.read_settings(path)
        if original is None or not original.strip():
            return HooksChange(path, None, False, [])
        new = self._strip(path, original)
        if new != original:
            hookfile.write_atomic(path, new)
        return HooksChange(path, None, new != original, [])

    def installed(self, path: Path) -> dict[str, bool]:
        """Which of memloom's hooks the file holds (all False when unreadable)."""
        found = {h.key: False for h in self.hooks}
        try:
            text = hookfile.read_settings(path)
            root = _parse(path, text) if text is not None and text.strip() else None
        except SettingsError:
            return {**found, "readable": False}
        entries = self._memloom_entries(root) if root is not None else {}
        for h in self.hooks:
            found[h.key] = h.event in entries
        return {**found, "readable": True}


@dataclass(frozen=True)
class BoundHooks:
    """A :class:`HookSet` at its agent's settings file (``where(env)``): the ``install``,
    ``remove`` and ``installed`` an adapter's ``hooks.py`` exports."""

    hooks: HookSet
    where: Callable[[Mapping[str, str] | None], Path]

    def install(
        self, command: str, *, recall: bool = True, env: Mapping[str, str] | None = None
    ) -> HooksChange:
        """Add memloom's capture hooks and, with ``recall``, its context hooks."""
        return self.hooks.install(self.where(env), command, recall=recall)

    def remove(self, env: Mapping[str, str] | None = None) -> HooksChange:
        """Take out exactly memloom's handlers; every other byte stays as it was."""
        return self.hooks.remove(self.where(env))

    def installed(self, env: Mapping[str, str] | None = None) -> dict[str, bool]:
        """Which of memloom's hooks the settings file holds (all False when unreadable)."""
        return self.hooks.installed(self.where(env))


def _parse(path: Path, text: str) -> jsonc.Node:
    return jsonc.parse_settings(path, text, "hooks")


def _hooks_node(root: jsonc.Node) -> jsonc.Node | None:
    found = root.member("hooks")
    return found[1].value if found is not None else None
