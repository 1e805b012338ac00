"""What a hook run by memloom's agent plugin decides before it does anything.

The repository is also each agent's plugin (``.claude-plugin/``, ``.codex-plugin/``,
``gemini-extension.json``): its hooks run ``hooks/memloom-hook``, which calls
``memloom hook <name> --agent <a> --plugin <plugin version>``. Two things differ
from the hooks ``memloom connect`` writes:

* **No double-up.** A user may have both the plugin and ``memloom connect``'s
  hooks in the agent's settings. Then the plugin's hook of that kind stands down
  (:func:`defers`): connect's hook does the work, so one hook fires once.
* **Scope.** Installing the plugin is the user's choice to capture, as
  ``memloom connect <agent> --all`` is: its first session-end hook sets that scope
  when the user has chosen none (:func:`adopt_scope`); one they chose stays.
* **Version.** The plugin's version follows memloom's; a plugin newer than the
  installed memloom gets its hooks run anyway, and the session is told once, with
  its context, to upgrade memloom (:func:`upgrade_note`).

Standard library only (the hook fast path).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memloom.capture.scope import SCOPE_FILE, Scope, save_scope

__all__ = [
    "CONNECT_NOTE",
    "UPGRADE_NOTE_ID",
    "adopt_scope",
    "defers",
    "older_than",
    "plugin_installed",
    "upgrade_note",
]

#: Which of connect's hooks (``installed_hooks`` keys) do the job of each plugin hook.
_SAME_JOB: dict[str, tuple[str, ...]] = {
    "notify": ("notify", "session_end"),
    "prompt-recall": ("prompt_recall",),
    "session-start": ("session_start",),
    "compacted": ("compacted",),
    "read": ("read",),
}
#: The note's id in the per-session "shown" records: claimed once like a memory.
UPGRADE_NOTE_ID = "memloom:upgrade-note"


def defers(agent: Any, hook: str, env: Mapping[str, str] | None = None) -> bool:
    """Whether ``memloom connect``'s hook for ``hook`` is in ``agent``'s settings
    (then the plugin's stands down). An unreadable settings file defers nothing."""
    found = agent.installed_hooks(env)
    return any(found.get(key) is True for key in _SAME_JOB.get(hook, ()))


def _parts(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", version)[:3])


def older_than(installed: str, required: str) -> bool:
    """Whether version ``installed`` is below ``required`` (numeric parts compared)."""
    return _parts(installed) < _parts(required)


def upgrade_note(installed: str, required: str) -> str:
    return (
        f"memloom {installed} is older than the memloom plugin ({required}) needs: "
        "upgrade it (`pipx upgrade memloom` or `uv tool upgrade memloom`, or install "
        "again from the plugin's repository)."
    )


def adopt_scope(home: Path) -> bool:
    """Capture every project when no scope was ever chosen (no ``capture.json``);
    whether it did."""
    if (home / SCOPE_FILE).exists():
        return False
    save_scope(home, Scope(all=True))
    return True


#: Qwen Code's extensions/memloom/ holds the manifest (``qwen extensions install``) or
#: only its install record pointing at the folder (``qwen extensions link``).
_QWEN_RECORDS = ("qwen-extension.json", ".qwen-extension-install.json")

#: What ``memloom connect`` says when the agent has memloom's plugin too.
CONNECT_NOTE = (
    "memloom's plugin is installed in this agent too: while these hooks are installed "
    "its hooks of the same kind stand down, so each fires once. `memloom disconnect "
    "{agent}` leaves it all to the plugin."
)


def _json(path: Path) -> Any:
    """A JSON file the agent manages (``//`` comment lines allowed); None if unreadable."""
    try:
        text = path.read_text(encoding="utf-8")
        lines = [line for line in text.splitlines() if not line.lstrip().startswith("//")]
        return json.loads("\n".join(lines))
    except (OSError, ValueError):
        return None


def plugin_installed(name: str, env: Mapping[str, str] | None = None) -> bool:
    """Whether agent ``name`` (as ``memloom connect`` names it) records memloom's plugin
    as installed and not disabled, where each agent keeps that record (as the pinned
    CLIs wrote it, tests/e2e)."""
    if name not in ("claude-code", "copilot", "gemini", "codex", "qwen"):
        return False  # no plugin of memloom for it yet
    if name == "qwen":  # extensions/memloom/: a copy (install) or a record (link)
        from memloom.agents.qwen.home import qwen_home

        folder = qwen_home(env) / "extensions" / "memloom"
        return any((folder / f).is_file() for f in _QWEN_RECORDS)
    from memloom.agents import get_agent

    home = get_agent(name).home(env)
    if name == "claude-code":  # settings.json: "enabledPlugins": {"memloom@<mkt>": true}
        doc = _json(home / "settings.json")
        enabled = doc.get("enabledPlugins") if isinstance(doc, dict) else None
        return isinstance(enabled, dict) and any(
            str(key).startswith("memloom@") and value is True for key, value in enabled.items()
        )
    if name == "copilot":  # config.json: "installedPlugins": [{"name", "enabled"}]
        doc = _json(home / "config.json")
        found = doc.get("installedPlugins") if isinstance(doc, dict) else None
        return isinstance(found, list) and any(
            isinstance(p, dict) and p.get("name") == "memloom" and p.get("enabled", True)
            for p in found
        )
    if name == "gemini":  # extensions/<name>/gemini-extension.json
        return (home / "extensions" / "memloom" / "gemini-extension.json").is_file()
    if name == "codex":  # plugins/cache/<marketplace>/<plugin>/<version>/
        return any((home / "plugins" / "cache").glob("*/memloom/*/.codex-plugin/plugin.json"))
    return False
