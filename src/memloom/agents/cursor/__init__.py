"""The Cursor adapter: agent transcripts under ``projects/<slug>/agent-transcripts/``,
hooks in ``~/.cursor/hooks.json``.

:mod:`.home` (the one ``cursor_home``), :mod:`.discover` (which transcripts to import,
the workspace slug), :mod:`.parse` (JSONL and plain-text transcripts as line-numbered
units), :mod:`.hooks` (the hooks.json merge), :mod:`.payload` (the hook payloads; the
``additional_context`` that sessionStart prints). Submodules load when first used, so
the hook fast path reads only what it needs.

Cursor is closed source and its CLI could not be run here: everything is built from
its published hook docs and what public tools found in its transcripts. What could not
be checked against a running Cursor is listed in ``docs/agents.md`` (*Cursor*).

Registered as ``cursor``, also the ``source`` of its memories. Ledger identity:
``cursor:<id>`` for a JSONL transcript, ``cursor-txt:<id>`` for a plain-text one (the
two forms of one conversation never share a ledger row).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from memloom.agents.adapter import AgentAdapter

TYPE_CHECKING = False  # typing's, without loading typing (~3 ms): the hooks load this module
if TYPE_CHECKING:
    from typing import Any

    from memloom.agents.base import SessionFile

__all__ = ["Cursor"]


class Cursor(AgentAdapter):
    """:class:`memloom.agents.base.Agent` for Cursor (its IDE agent and ``cursor-agent``)."""

    name = "cursor"
    #: Cursor appends to a transcript, but nothing documents that it never rewrites one
    #: (an edited or restored conversation may be): each unit's id is its line, role and
    #: text, so a transcript read again from its start sends only lines that changed.
    rereads_whole = True
    home_at = "home:cursor_home"
    transcripts_at = "home:projects_dir"
    settings_at = "home:hooks_path"
    reader = "parse:parse_transcript"

    def recognises(self, path: Path) -> bool:
        """A Cursor transcript by its first bytes (for ``--path`` and the capture worker)."""
        from memloom.agents.cursor.discover import recognizes
        from memloom.agents.files import read_head

        return recognizes(read_head(path))

    def ledger_identity(self, file: SessionFile) -> str:
        prefix = "cursor-txt" if Path(file.path).suffix == ".txt" else "cursor"
        return f"{prefix}:{file.session_id}"

    def hook_cwd(self, payload: Mapping[str, Any]) -> Any:
        """The workspace (``workspace_roots[0]``, else ``$CURSOR_PROJECT_DIR``): Cursor's
        payloads carry no ``cwd``, and user-level hooks run in ``~/.cursor``."""
        from memloom.agents.cursor.payload import workspace_of

        return workspace_of(payload)

    def read_path(self, payload: Mapping[str, Any]) -> str | None:
        """The file Cursor's ``Read`` tool opened: :func:`.payload.read_path`."""
        from memloom.agents.cursor.payload import read_path

        return read_path(payload)

    def format_context(self, event: str, text: str) -> str:
        """``{"additional_context": …}``, the documented output of sessionStart and of
        postToolUse (``read``)."""
        from memloom.agents.cursor.payload import session_start_output

        return session_start_output(text)
