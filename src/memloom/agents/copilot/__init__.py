"""The GitHub Copilot CLI adapter: sessions under ``session-state/``, hooks in ``hooks/hooks.json``.

:mod:`.home` (the one ``copilot_home``: ``$COPILOT_HOME``, else ``~/.copilot``),
:mod:`.discover` (which sessions to import; ``session.shutdown`` ends one),
:mod:`.parse` (events.jsonl and the legacy one-JSON files as line-numbered units),
:mod:`.hooks` (the hooks.json merge), :mod:`.payload` (the hook payloads; the
top-level ``additionalContext`` that sessionStart and userPromptSubmitted print).
Submodules load when first used, so the hook fast path reads only what it needs.

Registered as ``copilot``; memories' ``source`` (:attr:`CopilotCLI.name`) is
``copilot-cli``. Ledger identity: ``copilot:<sessionId>`` (``copilot-legacy:<sessionId>``
for a legacy file, so the two formats of one session never share a ledger row).
Project: ``session.start`` ``context.gitRoot``, else ``context.cwd``, else
``workspace.yaml``; legacy files record none (global).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from memloom.agents.adapter import AgentAdapter

TYPE_CHECKING = False  # typing's, without loading typing (~3 ms): the hooks load this module
if TYPE_CHECKING:
    from typing import Any

    from memloom.agents.base import SessionFile

__all__ = ["CopilotCLI"]


class CopilotCLI(AgentAdapter):
    """:class:`memloom.agents.base.Agent` for GitHub Copilot CLI.

    ``transcripts_root`` is the Copilot home: sessions are in ``session-state/`` and
    ``history-session-state/``.
    """

    name = "copilot-cli"
    #: The registry key (``memloom.agents.get_agent("copilot")``, ``--agent copilot``).
    key = "copilot"
    home_at = "home:copilot_home"
    settings_at = "home:hooks_path"
    reader = "parse:parse_session"

    def recognises(self, path: Path) -> bool:
        """Whether ``path`` is a Copilot session by its first bytes (for ``--path``)."""
        from memloom.agents.copilot.discover import recognizes
        from memloom.agents.files import read_head

        return recognizes(read_head(path))

    def ledger_identity(self, file: SessionFile) -> str:
        """``copilot:<sessionId>``: the session, wherever its file is."""
        prefix = "copilot-legacy" if Path(file.path).suffix == ".json" else "copilot"
        return f"{prefix}:{file.session_id}"

    def read_path(self, payload: Mapping[str, Any]) -> str | None:
        """The file Copilot's ``view`` tool opened: :func:`.payload.read_path`."""
        from memloom.agents.copilot.payload import read_path

        return read_path(payload)

    def format_context(self, event: str, text: str) -> str:
        """A hook's stdout for ``text``, for sessionStart, userPromptSubmitted and
        postToolUse (``read``) alike:
        ``{"additionalContext": …}`` at the top level, the only form Copilot CLI
        (1.0.102) injects; it ignores plain text and Claude's ``hookSpecificOutput``."""
        from memloom.agents.copilot.payload import recall_output

        return recall_output(text)
