"""Installing memloom's hooks into Qwen Code's ``~/.qwen/settings.json``, and taking them out.

Qwen Code keeps Claude-Code-shaped hook groups in its Gemini-style settings file
(comments allowed), so the edit is :mod:`memloom.agents.grouphooks`' (text-preserving,
one-time backup, exact removal). memloom adds, each command ending in ``--agent qwen``:

* ``Stop`` -> ``hook notify`` (every turn): the session is queued for capture. Qwen
  Code 0.24.4 fires no SessionEnd in headless runs, so Stop is the only end signal;
  the capture ledger makes a repeated Stop import only what the session grew by.
* with recall: ``SessionStart`` -> ``hook session-start`` (the digest; Qwen puts a
  hook's plain stdout into the system prompt, on a resume too) and
  ``UserPromptSubmit`` -> ``hook prompt-recall`` (a part of the user message), and
  ``PostToolUse`` (matcher ``read_file``) -> ``hook read`` (the memories anchored to
  the file its read tool opened, as ``additionalContext``).

Timeouts are seconds (Qwen reads a command hook's ``timeout`` of 1000 or more as
milliseconds). Groups carry no matcher but PostToolUse's: Qwen's SessionStart matcher
is a regex over the start source, and UserPromptSubmit and Stop take none.

Qwen itself rewrites this file on start when it lacks ``"$version"`` (it adds the key,
keeping the rest): removal takes out exactly memloom's entries from the file as it is.
Standard library only.
"""

from __future__ import annotations

from memloom.agents.grouphooks import BoundHooks, Hook, HookSet
from memloom.agents.qwen.home import settings_path

__all__ = [
    "HOOKS",
    "NOTIFY_TIMEOUT_S",
    "READ_MATCHER",
    "RECALL_TIMEOUT_S",
    "install",
    "installed",
    "remove",
]

NOTIFY_TIMEOUT_S = 10
RECALL_TIMEOUT_S = 5
#: PostToolUse's matcher is a pattern over the tool's name: its own ``read_file`` only.
READ_MATCHER = "read_file"
HOOKS = HookSet(
    "qwen",
    (
        Hook("Stop", "notify", "memloom-notify", NOTIFY_TIMEOUT_S, False, "notify"),
        Hook(
            "SessionStart",
            "session-start",
            "memloom-session-start",
            RECALL_TIMEOUT_S,
            True,
            "session_start",
        ),
        Hook(
            "UserPromptSubmit",
            "prompt-recall",
            "memloom-prompt-recall",
            RECALL_TIMEOUT_S,
            True,
            "prompt_recall",
        ),
        Hook(
            "PostToolUse",
            "read",
            "memloom-read",
            RECALL_TIMEOUT_S,
            True,
            "read",
            matcher=READ_MATCHER,
        ),
    ),
    matcher=None,
)
_AT = BoundHooks(HOOKS, settings_path)
install = _AT.install
remove = _AT.remove
installed = _AT.installed
