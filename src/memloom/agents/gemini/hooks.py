"""Installing memloom's hooks into Gemini CLI's ``~/.gemini/settings.json``, and taking them out.

Gemini's hook shape (reference §2.4)::

    {"hooks": {"<Event>": [{"matcher": "*", "hooks": [
        {"type": "command", "command": "…", "name": "…", "timeout": <milliseconds>}]}]}}

memloom adds one group per event: ``AfterAgent`` (once per turn) and
``SessionEnd`` (not awaited by Gemini: a backstop) run ``hook notify``;
with recall, ``BeforeAgent`` runs ``hook prompt-recall``, which also gives the
session's digest with its first prompt; ``PreCompress`` (matcher ``manual``: a
``/compress``) runs ``hook compacted``, so the first prompt after it gives the digest
again; ``AfterTool`` (matcher ``read_file``) runs ``hook read``: the memories anchored
to the file its read tool opened go into the tool's result. No ``SessionStart`` hook: Gemini drops
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

from typing import Any

from memloom.agents.gemini.home import settings_path
from memloom.agents.grouphooks import BoundHooks, Hook, HookSet

__all__ = [
    "AGENT_ARG",
    "HOOKS",
    "NOTIFY_TIMEOUT_MS",
    "RECALL_TIMEOUT_MS",
    "install",
    "installed",
    "is_memloom_hook",
    "remove",
]

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
    "PreCompress": ("compacted", "memloom-compacted", RECALL_TIMEOUT_MS, True, "compacted"),
    "AfterTool": ("read", "memloom-read", RECALL_TIMEOUT_MS, True, "read"),
}
#: Gemini matches a PreCompress group's matcher against its ``trigger`` exactly. Only
#: ``manual`` (``/compress``) means a compression: Gemini CLI 0.61.0 fires ``auto`` before
#: every turn's request once the chat has a history, before it checks its threshold.
#: AfterTool's matcher is a pattern over the tool's name: its own ``read_file`` only.
MATCHERS = {"PreCompress": "manual", "AfterTool": "read_file"}
#: Handler names of earlier installs (taken out by connect and disconnect).
LEGACY_NAMES = frozenset({"memloom-session-start"})
_SET = HookSet(
    "gemini",
    tuple(Hook(event, *spec, matcher=MATCHERS.get(event)) for event, spec in HOOKS.items()),
    legacy_names=LEGACY_NAMES,
)


def is_memloom_hook(handler: Any) -> bool:
    """A handler memloom installed: one of its names, or its command line."""
    return _SET.is_memloom_hook(handler)


_AT = BoundHooks(_SET, settings_path)
install = _AT.install
remove = _AT.remove
installed = _AT.installed
