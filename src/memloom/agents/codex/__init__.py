"""The Codex CLI adapter: rollouts under ``sessions/`` and ``archived_sessions/``, hooks in
``hooks.json``.

:mod:`.home` (the one ``codex_home``), :mod:`.stream` (plain or ``.zst`` content
as one stream), :mod:`.discover` (which rollouts to import; sub-agent rollouts
are sidecars), :mod:`.parse` (a rollout as line-numbered units: typed text only,
each message once), :mod:`.hooks` (the hooks.json merge and the feature flag),
:mod:`.payload` (the Stop payload; the additionalContext output). Submodules load
when first used, so the hook fast path reads only what it needs.

Ledger identity: ``codex:<thread id>`` -- a rollout that Codex moves to
``archived_sessions/`` or compresses to ``.jsonl.zst`` keeps its row, its
watermark and its seen records. Watermarks and the ledger's prefix hash are
over the decompressed content (:meth:`Codex.open`).

Project: the session's cwd normalised to its git root (``parse.project_root``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from memloom.agents.base import (
    DiscoverOptions,
    Discovery,
    Env,
    HookEvent,
    HooksChange,
    ParseResult,
    SessionFile,
)
from memloom.agents.codex import home as _home

__all__ = ["Codex"]


class Codex:
    """:class:`memloom.agents.base.Agent` for OpenAI Codex CLI."""

    name = "codex"
    rereads_whole = False

    def home(self, env: Env | None = None) -> Path:
        return _home.codex_home(env)

    def found(self, env: Env | None = None) -> bool:
        return self.home(env).is_dir()

    def discover(self, options: DiscoverOptions) -> Discovery:
        from memloom.agents.codex import discover as found

        if options.paths:
            return found.discover_paths([Path(p) for p in options.paths], project=options.project)
        return found.discover(
            options.root,
            days=options.days,
            max_sessions=options.max_sessions,
            project=options.project,
            quiet_seconds=options.quiet_seconds,
            now=options.now,
        )

    def read(
        self,
        path: Path,
        *,
        start_offset: int = 0,
        start_line: int = 0,
        final: bool = False,
        seen: set[str] | None = None,
    ) -> ParseResult:
        from memloom.agents.codex.parse import parse_rollout

        return parse_rollout(
            path, start_offset=start_offset, start_line=start_line, seen=seen, final=final
        )

    def read_bytes(self, data: bytes, *, first_line: int = 1, final: bool = True) -> ParseResult:
        from memloom.agents.codex.parse import parse_bytes

        return parse_bytes(data, first_line=first_line, final=final)

    def open(self, path: Path) -> Any:
        """The session's content as a binary file object: decompressed for ``.jsonl.zst``.

        Offsets, line counts and the ledger's prefix hash are defined on these bytes.
        """
        from memloom.agents.codex.stream import open_session

        return open_session(path)

    def use_project_roots(self, roots: Sequence[Path]) -> None:
        """Sessions live in the agent's home, not in projects: nothing to do."""

    def ledger_identity(self, file: SessionFile) -> str:
        """``codex:<thread id>``: the same row whether the rollout is live, archived or .zst."""
        return f"codex:{file.session_id}"

    def project_of(self, path: Path) -> str | None:
        from memloom.agents.codex.discover import session_project

        return session_project(path)

    def recognises(self, path: Path) -> bool:
        """Whether ``path`` is a Codex rollout by its content (its first record is a
        ``session_meta``), for ``--path`` files of unknown origin."""
        from memloom.agents.codex.discover import read_head

        return read_head(Path(path)) is not None

    def transcripts_root(self, env: Env | None = None) -> Path:
        """``<home>/sessions``, where hook payloads point (``archived_sessions/`` is
        accepted too by :meth:`parse_hook_payload`)."""
        return _home.sessions_dir(env)

    def settings_path(self, env: Env | None = None) -> Path:
        return _home.hooks_path(env)

    def install_hooks(
        self, command: str, *, recall: bool = True, env: Env | None = None
    ) -> HooksChange:
        from memloom.agents.codex.hooks import install

        return install(command, recall=recall, env=env)

    def remove_hooks(self, env: Env | None = None) -> HooksChange:
        from memloom.agents.codex.hooks import remove

        return remove(env)

    def installed_hooks(self, env: Env | None = None) -> dict[str, bool]:
        from memloom.agents.codex.hooks import installed

        return installed(env)

    def parse_hook_payload(self, payload: Mapping[str, Any], env: Env | None = None) -> HookEvent:
        from memloom.agents.codex.payload import parse_hook_payload

        return parse_hook_payload(payload, env)

    def format_context(self, event: str, text: str) -> str:
        """What the recall hooks print for Codex: ``hookSpecificOutput.additionalContext``
        (``event``: memloom's ``prompt`` or ``session-start``)."""
        from memloom.agents.codex.payload import context_output

        hook = {"prompt": "UserPromptSubmit", "session-start": "SessionStart"}.get(event, event)
        return context_output(hook, text)

    def __repr__(self) -> str:
        return "Codex()"
