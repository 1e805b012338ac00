"""Installing memloom's hooks into Codex's ``hooks.json`` (and its feature flag), and out again.

Codex reads Claude-Code-style hooks from ``<CODEX_HOME>/hooks.json`` (reference
§1.5, [C6][C7])::

    {"hooks": {
      "Stop": [{"hooks": [{"type": "command", "timeout": 10,
                           "command": "<memloom> hook notify --agent codex"}]}],
      "UserPromptSubmit": [{"hooks": [{… "<memloom> hook prompt-recall --agent codex"}]}],
      "SessionStart": [{"hooks": [{… "<memloom> hook session-start --agent codex"}]}],
      "PostToolUse": [{"matcher": "^Bash$",
                       "hooks": [{… "<memloom> hook read --agent codex"}]}]}}

``timeout`` is in seconds. ``Stop`` fires after every turn: the hook only queues
the rollout (the worker imports it once the session has been quiet).
``UserPromptSubmit``/``SessionStart`` answer with ``hookSpecificOutput.additionalContext``
(:func:`memloom.agents.codex.payload.context_output`), and so does ``PostToolUse``
after a shell command (Codex's model reads files with ``cat``/``sed -n``: the
memories anchored to the file it read, :mod:`memloom.capture.reads`); its group's
``matcher`` keeps it to shell commands. ``recall=False`` installs ``Stop`` alone.
memloom's handlers are recognised by their command (:func:`is_memloom_hook`), so
removing takes out exactly those.

**Feature flag.** Codex turns hooks on by default ([features] ``hooks``), and
0.169.0 prints ``deprecated: [features].codex_hooks is deprecated`` on every run
while ``config.toml`` still sets the old name, so memloom no longer writes a flag.
Installs that an older memloom made (it added ``codex_hooks = true`` and recorded
that in ``hooks.json.memloom-state``) lose that flag on the next ``install`` and
on ``remove``, put back byte for byte from the backup when nothing else changed.
A flag the user set is never touched: ``false`` (either name) carries a note that
the hooks will not run, the deprecated name a note to rename it.

**Trust.** Codex runs a new or changed hook only after the user trusts it in
``/hooks`` and skips an untrusted one silently, so every install whose memloom
hooks are not all trusted carries :data:`TRUST_NOTE`; :func:`trust` reads the
trust Codex recorded in ``config.toml`` (:mod:`memloom.agents.codex.trust`), and
``remove`` takes out of it the ``[hooks.state]`` entries that trust memloom's
removed handlers (only those whose ``trusted_hash`` is the handler's).

The merge keeps every other key and hook, writes a one-time backup of each file
it changes (``<file>.memloom-backup``), is idempotent, refuses a file it cannot
parse (leaving both files untouched) and replaces files atomically. ``remove``
restores a file byte for byte from its backup when what is left equals it;
a file memloom created is deleted when nothing else is left in it.

Standard library only at import time; ``tomlkit`` is imported inside
:func:`install` and :func:`remove` (to take out the legacy flag).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memloom.agents import hookfile
from memloom.agents.base import HooksChange
from memloom.agents.codex.home import config_path, hooks_path
from memloom.errors import SettingsError

__all__ = [
    "EVENTS",
    "FEATURE_KEY",
    "MATCHERS",
    "STATE_SUFFIX",
    "TRUST_NOTE",
    "CodexHooksChange",
    "install",
    "installed",
    "is_memloom_hook",
    "remove",
    "trust",
]

STATE_SUFFIX = ".memloom-state"
#: event -> (hook subcommand, timeout in seconds, report key)
EVENTS: dict[str, tuple[str, int, str]] = {
    "Stop": ("notify", 10, "notify"),
    "UserPromptSubmit": ("prompt-recall", 5, "prompt_recall"),
    "SessionStart": ("session-start", 5, "session_start"),
    "PostToolUse": ("read", 5, "read"),
}
RECALL_EVENTS = ("UserPromptSubmit", "SessionStart", "PostToolUse")
#: event -> its group's matcher (a regex on the tool's name, for tool events).
MATCHERS: dict[str, str] = {"PostToolUse": "^Bash$"}
AGENT_ARG = "--agent codex"
#: The flag an older memloom added (deprecated by Codex); ``hooks`` is the current name.
FEATURE_KEY = "codex_hooks"
FEATURE_KEYS = ("hooks", "codex_hooks")
TRUST_NOTE = (
    "Codex skips hooks you have not trusted, without saying so: memloom's hooks do "
    "nothing until you start Codex (the interactive TUI), type /hooks and trust each "
    "memloom hook. Do it again whenever memloom's hook command changes. `memloom status` "
    "shows whether they are trusted."
)
LEGACY_FLAG_NOTE = (
    "took out [features] codex_hooks = true, which an older memloom added: Codex "
    "enables hooks by default and reports that flag as deprecated on every run."
)
_SUFFIXES = tuple(f" hook {sub} {AGENT_ARG}" for sub, _, _ in EVENTS.values())


@dataclass
class CodexHooksChange(HooksChange):
    """A :class:`HooksChange` plus what Codex needs besides ``hooks.json``."""

    config_path: Path | None = None
    config_backup: Path | None = None
    config_changed: bool = False
    #: things the user must know or do (trust the hooks in /hooks, a disabled flag)
    notes: list[str] = field(default_factory=list)


def is_memloom_hook(handler: Any) -> bool:
    """A handler memloom installed: its command runs memloom's Codex hook entry points."""
    if not isinstance(handler, dict):
        return False
    command = handler.get("command")
    return isinstance(command, str) and "memloom" in command and command.endswith(_SUFFIXES)


# --------------------------------------------------------------------------- files


def _read_text(path: Path) -> str | None:
    """The file's text exactly (no newline translation), None if it does not exist."""
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"cannot read {path}: {exc}; memloom has not changed it") from exc


def _load_json(path: Path) -> tuple[dict[str, Any], str | None]:
    raw = _read_text(path)
    if raw is None or not raw.strip():
        return {}, raw
    return hookfile.parse_settings(path, raw), raw


def _json_text(data: dict[str, Any], indent: int | str = 2) -> str:
    return json.dumps(data, indent=indent, ensure_ascii=False) + "\n"


def _state_path(env: Mapping[str, str] | None) -> Path:
    hp = hooks_path(env)
    return hp.with_name(hp.name + STATE_SUFFIX)


def _load_state(env: Mapping[str, str] | None) -> dict[str, Any]:
    try:
        data = json.loads(_state_path(env).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------- hooks.json


def _strip(hooks: dict[str, Any]) -> dict[str, Any]:
    """``hooks`` without memloom's handlers (emptied groups and events removed)."""
    return hookfile.strip_handlers(hooks, is_memloom_hook)


def _memloom_handlers(hooks: dict[str, Any]) -> dict[str, list[Any]]:
    return hookfile.memloom_handlers(hooks, is_memloom_hook)


def _wanted(command: str, recall: bool) -> dict[str, list[dict[str, Any]]]:
    return {
        event: [{"type": "command", "command": f"{command} hook {sub} {AGENT_ARG}", "timeout": t}]
        for event, (sub, t, _) in EVENTS.items()
        if recall or event not in RECALL_EVENTS
    }


# --------------------------------------------------------------------------- config.toml


def _parse_toml(path: Path, text: str | None) -> Any:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        doc = tomlkit.parse(text or "")
    except TOMLKitError as exc:
        raise SettingsError(
            f"{path} is not valid TOML ({exc}); memloom has not changed it"
        ) from exc
    features = doc.get("features")
    if features is not None and not isinstance(features, dict):
        raise SettingsError(f"'features' in {path} is not a table; memloom has not changed it")
    return doc


def _flag_state(features: Any) -> bool | None:
    """True/False if ``[features]`` sets hooks on/off (either key), None if it says nothing."""
    if not isinstance(features, dict):
        return None
    values = [features[k] for k in FEATURE_KEYS if k in features]
    if not values:
        return None
    return all(v is True for v in values)


def _unwrap(doc: Any) -> Any:
    return doc.unwrap() if hasattr(doc, "unwrap") else doc


# --------------------------------------------------------------------------- install / remove


def _notes(doc: Any, hooks: dict[str, Any], hpath: Path, cpath: Path) -> list[str]:
    """What the user must know: untrusted hooks, hooks turned off, a deprecated flag,
    hooks in config.toml as well."""
    from memloom.agents.codex.trust import TRUSTED, memloom_trust

    notes: list[str] = []
    trust_by_event = memloom_trust(hooks, hpath, cpath, is_memloom_hook)
    if any(v != TRUSTED for v in trust_by_event.values()):
        notes.append(TRUST_NOTE)
    features = doc.get("features")
    if _flag_state(features) is False:
        notes.append(
            f"{cpath} turns Codex hooks off ([features] {' / '.join(FEATURE_KEYS)} = false): "
            "memloom's hooks will not run until you enable them."
        )
    elif isinstance(features, dict) and FEATURE_KEY in features:
        notes.append(
            f"{cpath} sets [features] {FEATURE_KEY}, which Codex reports as deprecated "
            "on every run: rename it to hooks (memloom leaves your settings alone)."
        )
    inline = doc.get("hooks")
    if isinstance(inline, dict) and any(k != "state" for k in inline):
        notes.append(
            f"{cpath} defines hooks too; Codex warns when one layer has hooks in both "
            "files: consider moving them to hooks.json."
        )
    return notes


def install(
    command: str, *, recall: bool = True, env: Mapping[str, str] | None = None
) -> CodexHooksChange:
    """Add memloom's hooks (``Stop``; with ``recall`` also ``UserPromptSubmit`` and
    ``SessionStart``) and take out the flag an older memloom added. Checks both
    files before changing either."""
    hpath, cpath = hooks_path(env), config_path(env)
    data, hraw = _load_json(hpath)
    ctext = _read_text(cpath)
    doc = _parse_toml(cpath, ctext)
    state = _load_state(env)
    wanted = _wanted(command, recall)

    current = dict(data.get("hooks") or {})
    hooks_changed = _memloom_handlers(current) != wanted
    hooks = current
    backup = None
    if hooks_changed:
        hooks = _strip(current)
        for event, handlers in wanted.items():
            matcher = {"matcher": MATCHERS[event]} if event in MATCHERS else {}
            hooks[event] = [*hooks.get(event, []), {**matcher, "hooks": handlers}]
        if "hooks_json" not in state:  # what hooks.json was before memloom first touched it
            state["hooks_json"] = {
                "created": hraw is None,
                "original_sha256": None if hraw is None else _sha(hraw),
            }
        backup = hookfile.backup_once(hpath)
        indent = hookfile.json_indent(hraw)
        hookfile.write_atomic(hpath, _json_text({**data, "hooks": hooks}, indent))

    config_changed = _remove_flag(cpath, state)  # an older memloom's flag
    migrated = "config" in state
    state.pop("config", None)
    if config_changed:
        doc = _parse_toml(cpath, _read_text(cpath))
    if hooks_changed or migrated:
        hookfile.write_atomic(_state_path(env), _json_text(state))
    notes = _notes(doc, hooks, hpath, cpath)
    if config_changed:
        notes.append(LEGACY_FLAG_NOTE)
    return CodexHooksChange(
        settings_path=hpath,
        backup_path=backup,
        changed=hooks_changed or config_changed,
        events=list(wanted),
        config_path=cpath,
        config_backup=None,
        config_changed=config_changed,
        notes=notes,
    )


def _write_or_restore(path: Path, new_text: str, original_sha: Any, same: Any) -> None:
    """Write ``new_text`` -- or the backup's exact bytes, when the backup is the file as
    memloom first found it (``original_sha``) and ``same(backup_text)`` says its content
    equals what is left: byte-identical after a round trip, whatever the formatting."""
    backup = path.with_name(path.name + hookfile.BACKUP_SUFFIX)
    if _sha(new_text) != original_sha and isinstance(original_sha, str):
        try:
            old = _read_text(backup)
        except SettingsError:
            old = None
        if old is not None and _sha(old) == original_sha and same(old):
            tmp = path.with_name(path.name + ".memloom-tmp")
            shutil.copy2(backup, tmp)
            os.replace(tmp, path)
            return
    hookfile.write_atomic(path, new_text)


def _remove_hooks_json(path: Path, state: dict[str, Any]) -> bool:
    data, raw = _load_json(path)
    if raw is None or "hooks" not in data:
        return False
    hooks = _strip(data["hooks"])
    if hooks == data["hooks"]:
        return False
    new = dict(data)
    if hooks:
        new["hooks"] = hooks
    else:
        new.pop("hooks")
    info = state.get("hooks_json") if isinstance(state.get("hooks_json"), dict) else {}
    if not new and info.get("created"):
        path.unlink()
        return True

    def same(old: str) -> bool:
        try:
            before = json.loads(old) if old.strip() else {}
        except ValueError:
            return False
        return before == new or (not hooks and before == {**new, "hooks": {}})

    new_text = _json_text(new, hookfile.json_indent(raw))
    _write_or_restore(path, new_text, info.get("original_sha256"), same)
    return True


def _remove_flag(path: Path, state: dict[str, Any]) -> bool:
    """Take out the feature flag memloom added (if it is still there, still true)."""
    import tomlkit

    info = state.get("config")
    if not isinstance(info, dict) or info.get("added_key") not in FEATURE_KEYS:
        return False
    text = _read_text(path)
    if text is None:
        return False
    key = info["added_key"]
    doc = _parse_toml(path, text)
    features = doc.get("features")
    if not isinstance(features, dict) or features.get(key) is not True:
        return False  # the user changed it since: theirs now
    del features[key]
    if info.get("created_table") and not features:
        del doc["features"]
    new_text = tomlkit.dumps(doc)
    if info.get("created_file") and not new_text.strip():
        path.unlink()
        return True
    left = _unwrap(doc)

    def same(old: str) -> bool:
        try:
            return _unwrap(tomlkit.parse(old)) == left
        except Exception:  # an unparsable backup: just write the edited text
            return False

    _write_or_restore(path, new_text, info.get("original_sha256"), same)
    return True


def _trusted_entries(hpath: Path) -> list[tuple[str, int, int, str]]:
    """memloom's handlers in hooks.json, as :func:`memloom.agents.codex.trust.memloom_handlers`."""
    from memloom.agents.codex.trust import memloom_handlers

    try:
        data, _ = _load_json(hpath)
    except SettingsError:
        return []
    hooks = data.get("hooks")
    return list(memloom_handlers(hooks, is_memloom_hook)) if isinstance(hooks, dict) else []


def _forget_trust(hpath: Path, cpath: Path, entries: list[tuple[str, int, int, str]]) -> bool:
    """Take out of config.toml the trust Codex recorded for memloom's removed handlers
    (``[hooks.state."<key>"]`` whose ``trusted_hash`` is that handler's): nothing of
    them is left behind, and a later hook at the same place is not trusted by it."""
    import tomlkit

    from memloom.agents.codex.trust import state_key

    text = _read_text(cpath) if entries else None
    if text is None:
        return False
    doc = _parse_toml(cpath, text)
    hooks = doc.get("hooks")
    states = hooks.get("state") if isinstance(hooks, dict) else None
    if not isinstance(states, dict):
        return False
    gone = set()
    for event, g, h, digest in entries:
        key = state_key(states, hpath, event, g, h)
        entry = states.get(key) if key is not None else None
        if isinstance(entry, dict) and entry.get("trusted_hash") == digest:
            gone.add(key)
    if not gone:
        return False
    for key in gone:
        del states[key]
    if not states:
        del hooks["state"]
    if not hooks:
        del doc["hooks"]
    new_text = tomlkit.dumps(doc)
    if new_text.endswith("\n\n"):  # the blank line that stood before the tables taken out
        new_text = new_text.rstrip("\n") + "\n"
    hookfile.write_atomic(cpath, new_text)
    return True


def remove(env: Mapping[str, str] | None = None) -> CodexHooksChange:
    """Take out exactly memloom's handlers, the trust Codex recorded for them, and the
    feature flag only if memloom added it."""
    hpath, cpath = hooks_path(env), config_path(env)
    state = _load_state(env)
    entries = _trusted_entries(hpath)
    hooks_changed = _remove_hooks_json(hpath, state)
    config_changed = _remove_flag(cpath, state)
    if hooks_changed:
        config_changed = _forget_trust(hpath, cpath, entries) or config_changed
    spath = _state_path(env)
    if spath.exists():
        spath.unlink()
    return CodexHooksChange(
        settings_path=hpath,
        backup_path=None,
        changed=hooks_changed or config_changed,
        events=[],
        config_path=cpath,
        config_changed=config_changed,
    )


def installed(env: Mapping[str, str] | None = None) -> dict[str, bool]:
    """Which of memloom's hooks ``hooks.json`` holds, per event, and the flag's state.

    ``readable`` is False when hooks.json cannot be parsed; ``feature_disabled``
    is True when config.toml turns hooks off (they would not run).
    """
    import tomllib

    found = {key: False for _, _, key in EVENTS.values()}
    try:
        data, _ = _load_json(hooks_path(env))
    except SettingsError:
        return {**found, "readable": False, "feature_disabled": False}
    for event, handlers in _memloom_handlers(dict(data.get("hooks") or {})).items():
        if event in EVENTS and handlers:
            found[EVENTS[event][2]] = True
    disabled = False
    try:
        conf = tomllib.loads(config_path(env).read_text(encoding="utf-8"))
        disabled = _flag_state(conf.get("features")) is False
    except (OSError, ValueError, UnicodeDecodeError):
        disabled = False
    return {**found, "readable": True, "feature_disabled": disabled}


def trust(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Per Codex event holding one of memloom's hooks, whether Codex will run it:
    ``trusted``, ``untrusted``, ``modified`` (trusted before it changed) or
    ``disabled`` (:func:`memloom.agents.codex.trust.memloom_trust`); ``{}`` when
    none is installed or hooks.json cannot be read."""
    from memloom.agents.codex.trust import memloom_trust

    try:
        data, _ = _load_json(hooks_path(env))
    except SettingsError:
        return {}
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return {}
    return memloom_trust(hooks, hooks_path(env), config_path(env), is_memloom_hook)
