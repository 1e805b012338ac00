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

The file is edited as text, as :mod:`memloom.agents.grouphooks` does for every
agent with this settings shape: comments, key order, indentation and every other
hook keep their bytes, and removing memloom's entries gives back the file as it
was; a one-time backup, idempotent, a file that does not parse refused and left
untouched. Standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memloom.agents import hookfile
from memloom.agents.base import HooksChange
from memloom.agents.gemini.home import settings_path
from memloom.agents.grouphooks import Hook, HookSet

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
_SET = HookSet(
    "gemini",
    tuple(Hook(event, *spec) for event, spec in HOOKS.items()),
    legacy_names=LEGACY_NAMES,
)


def is_memloom_hook(handler: Any) -> bool:
    """A handler memloom installed: one of its names, or its command line."""
    return _SET.is_memloom_hook(handler)


def install(
    command: str, *, recall: bool = True, env: Mapping[str, str] | None = None
) -> HooksChange:
    """Add memloom's capture hooks and, with ``recall``, its context hooks (module doc)."""
    return _SET.install(settings_path(env), command, recall=recall)


def remove(env: Mapping[str, str] | None = None) -> HooksChange:
    """Take out exactly memloom's handlers; every other byte stays as it was."""
    return _SET.remove(settings_path(env))


def installed(env: Mapping[str, str] | None = None) -> dict[str, bool]:
    """Which of memloom's hooks settings.json holds (all False when unreadable)."""
    return _SET.installed(settings_path(env))
