"""The Codex CLI adapter: rollouts under ``sessions/`` and ``archived_sessions/``, hooks in
``hooks.json``.

:mod:`.home` (the one ``codex_home``), :mod:`.stream` (plain or ``.zst`` content
as one stream), :mod:`.discover` (which rollouts to import; sub-agent rollouts
are sidecars), :mod:`.parse` (a rollout as line-numbered units: typed text only,
each message once), :mod:`.hooks` (the hooks.json merge; an older memloom's
feature flag taken out), :mod:`.trust` (whether Codex trusts memloom's hooks),
:mod:`.payload` (the Stop payload; the additionalContext output). Submodules load
when first used, so the hook fast path reads only what it needs.

Ledger identity: ``codex:<thread id>`` -- a rollout that Codex moves to
``archived_sessions/`` or compresses to ``.jsonl.zst`` keeps its row, its
watermark and its seen records. Watermarks and the ledger's prefix hash are
over the decompressed content (:meth:`Codex.open`).

Project: the session's cwd normalised to its git root (``parse.project_root``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from memloom.agents.adapter import AgentAdapter

TYPE_CHECKING = False  # typing's, without loading typing (~3 ms): the hooks load this module
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Codex"]


class Codex(AgentAdapter):
    """:class:`memloom.agents.base.Agent` for OpenAI Codex CLI.

    ``transcripts_root`` is ``<home>/sessions``, where hook payloads point
    (``archived_sessions/`` is accepted too by :meth:`parse_hook_payload`).
    """

    name = "codex"
    native_memory = True
    home_at = "home:codex_home"
    transcripts_at = "home:sessions_dir"
    settings_at = "home:hooks_path"
    reader = "parse:parse_rollout"
    #: ``codex:<thread id>``: the same row whether the rollout is live, archived or .zst.
    ledger_prefix = "codex"

    def open(self, path: Path) -> Any:
        """The session's content as a binary file object: decompressed for ``.jsonl.zst``.

        Offsets, line counts and the ledger's prefix hash are defined on these bytes.
        """
        from memloom.agents.codex.stream import open_session

        return open_session(path)

    def recognises(self, path: Path) -> bool:
        """Whether ``path`` is a Codex rollout by its content (its first record is a
        ``session_meta``), for ``--path`` files of unknown origin."""
        from memloom.agents.codex.discover import read_head

        return read_head(Path(path)) is not None

    def hook_trust(self, env: Mapping[str, str] | None = None) -> dict[str, str]:
        """Per event holding a memloom hook, whether Codex will run it (``trusted``,
        ``untrusted``, ``modified``, ``disabled``): Codex skips untrusted hooks silently."""
        return self.part("hooks:trust")(env)

    def read_path(self, payload: Mapping[str, Any]) -> str | None:
        """The file a shell read command opened (Codex has no read tool):
        :func:`memloom.agents.codex.payload.read_path`."""
        from memloom.agents.codex.payload import read_path

        return read_path(payload)

    def format_context(self, event: str, text: str) -> str:
        """What the recall hooks print for Codex: ``hookSpecificOutput.additionalContext``
        (``event``: memloom's ``prompt``, ``session-start`` or ``read``)."""
        from memloom.agents.codex.payload import context_output

        hook = {
            "prompt": "UserPromptSubmit",
            "session-start": "SessionStart",
            "read": "PostToolUse",
        }.get(event, event)
        return context_output(hook, text)
