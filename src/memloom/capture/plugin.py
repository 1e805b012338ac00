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

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memloom.capture.scope import SCOPE_FILE, Scope, save_scope

__all__ = ["UPGRADE_NOTE_ID", "adopt_scope", "defers", "older_than", "upgrade_note"]

#: Which of connect's hooks (``installed_hooks`` keys) do the job of each plugin hook.
_SAME_JOB: dict[str, tuple[str, ...]] = {
    "notify": ("notify", "session_end"),
    "prompt-recall": ("prompt_recall",),
    "session-start": ("session_start",),
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
