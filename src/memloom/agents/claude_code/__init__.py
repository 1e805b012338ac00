"""The Claude Code adapter: transcripts under ``projects/``, hooks in ``settings.json``.

:mod:`.home` (the one ``claude_root``), :mod:`.discover` (which transcripts to
import), :mod:`.parse` (a transcript as line-numbered units, and its traps),
:mod:`.hooks` (the settings.json merge), :mod:`.payload` (the SessionEnd payload).
The submodules load when first used, so the hook fast path reads only what it needs.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from memloom.agents.adapter import AgentAdapter

TYPE_CHECKING = False  # typing's, without loading typing (~3 ms): the hooks load this module
if TYPE_CHECKING:  # the hook fast path never loads the protocol module
    from typing import Any

    from memloom.agents.base import ParseResult

__all__ = ["ClaudeCode"]

#: Record types of a Claude Code transcript (reference: claude-code-transcripts.md).
_RECORD_TYPES = frozenset(
    {"user", "assistant", "summary", "system", "queue-operation", "file-history-snapshot"}
)


class ClaudeCode(AgentAdapter):
    """:class:`memloom.agents.base.Agent` for Claude Code.

    Ledger identity: the transcript's path (Claude Code never moves or renames a
    session file). ``format_context``: Claude Code adds a UserPromptSubmit or
    SessionStart hook's plain stdout to the context as it is; a PostToolUse hook's
    context goes in JSON.
    """

    name = "claude-code"
    native_memory = True
    home_at = "home:claude_root"
    transcripts_at = "home:projects_dir"
    settings_at = "home:settings_path"

    def read_path(self, payload: Mapping[str, Any]) -> str | None:
        """PostToolUse of its ``Read`` tool: ``tool_input.file_path`` (absolute). A failed
        read runs PostToolUseFailure instead, which memloom does not hook."""
        return self.tool_file(payload, ("Read",))

    def format_context(self, event: str, text: str) -> str:
        """Plain stdout on UserPromptSubmit and SessionStart; after a tool, only
        ``hookSpecificOutput.additionalContext`` reaches the model (PostToolUse)."""
        return self.after_tool_context("PostToolUse", text) if event == "read" else text

    def read(self, path: Path, *, seen: set[str] | None = None, **watermark: Any) -> ParseResult:
        from memloom.agents.claude_code.parse import parse_transcript

        return parse_transcript(path, seen_uuids=seen, **watermark)

    def recognises(self, path: Path) -> bool:
        """A Claude Code transcript: JSON lines of its record types carrying its ids, and
        no conversation record whose ``message`` lacks Claude's ``content`` (Qwen Code
        writes the same record types and ids, its messages holding Gemini ``parts``)."""
        from memloom.agents.files import head_records, read_head

        records = head_records(read_head(path))
        return any(
            isinstance(kind := r.get("type"), str)
            and kind in _RECORD_TYPES
            and ("sessionId" in r or "uuid" in r or "leafUuid" in r)
            for r in records
        ) and not any(
            r.get("type") in ("user", "assistant")
            and isinstance(r.get("message"), dict)
            and "content" not in r["message"]
            for r in records
        )
