"""The Qwen Code adapter: sessions under ``projects/<slug>/chats/``, hooks in ``settings.json``.

Registered as ``qwen``; its memories' ``source`` is ``qwen``. :mod:`.home` (the home
and runtime folders), :mod:`.discover` (which sessions to import), :mod:`.parse` (a
session as line-numbered units, Qwen's hook markup left out), :mod:`.hooks` (the
settings.json merge), :mod:`.payload` (the hooks' stdin). Submodules load when first
used; this module and the hook path are standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from memloom.agents.adapter import AgentAdapter

TYPE_CHECKING = False  # typing's, without loading typing (~3 ms): the hooks load this module
if TYPE_CHECKING:
    from typing import Any

__all__ = ["QwenCode"]


class QwenCode(AgentAdapter):
    """:class:`memloom.agents.base.Agent` for Qwen Code (a Gemini CLI fork with
    Claude-Code-shaped hooks).

    Ledger identity: the session file's path (Qwen appends to it and never moves it).
    Context (checked against the real Qwen Code 0.24.4, tests/e2e): a hook's plain
    stdout is taken as it is on SessionStart (into the system prompt, inside
    ``<qwen:session-start-context>``) and UserPromptSubmit (a part of the user
    message, inside ``<qwen:user-prompt-submit-context>``), so the base's
    :meth:`format_context` serves there (PostToolUse wants JSON). The prompt hook's
    ``prompt`` is what was typed
    (``""`` on a tool call's continuation, which recalls nothing). The digest is
    given on every start (:attr:`digest_each_start`): a resume keeps the user message
    parts of earlier prompts, not the system prompt that held the digest.
    """

    name = "qwen"
    native_memory = True
    home_at = "home:qwen_home"
    transcripts_at = "home:projects_dir"
    settings_at = "home:settings_path"
    reader = "parse:parse_session"
    #: SessionStart context goes into the system prompt, which a resumed session
    #: rebuilds: on ``source`` ``resume`` (``clear``, ``compact``) the digest goes again.
    digest_each_start = True

    def read_path(self, payload: Mapping[str, Any]) -> str | None:
        """PostToolUse of ``read_file``: its ``file_path`` argument (a failed call runs
        PostToolUseFailure instead)."""
        return self.tool_file(payload, ("read_file",))

    def format_context(self, event: str, text: str) -> str:
        """Plain stdout on SessionStart and UserPromptSubmit; after a tool plain stdout is
        only a system message: ``hookSpecificOutput.additionalContext`` (PostToolUse)."""
        return self.after_tool_context("PostToolUse", text) if event == "read" else text

    def recognises(self, path: Path) -> bool:
        """Whether ``path`` is a Qwen Code session by its content (``--path`` files)."""
        from memloom.agents.base import SNIFF_BYTES
        from memloom.agents.files import read_head
        from memloom.agents.qwen.discover import looks_like_session

        return looks_like_session(read_head(path, SNIFF_BYTES))
