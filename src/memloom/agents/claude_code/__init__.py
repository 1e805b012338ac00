"""The Claude Code adapter: transcripts under ``projects/``, hooks in ``settings.json``.

:mod:`.home` (the one ``claude_root``), :mod:`.discover` (which transcripts to
import), :mod:`.parse` (a transcript as line-numbered units, and its traps),
:mod:`.hooks` (the settings.json merge), :mod:`.payload` (the SessionEnd payload).
The submodules load when first used, so the hook fast path reads only what it needs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memloom.agents.claude_code import home as _home

if TYPE_CHECKING:  # the hook fast path never loads the protocol module
    from memloom.agents.base import (
        DiscoverOptions,
        Discovery,
        Env,
        HookEvent,
        HooksChange,
        ParseResult,
        SessionFile,
    )

__all__ = ["ClaudeCode"]

#: Record types of a Claude Code transcript (reference: claude-code-transcripts.md).
_RECORD_TYPES = frozenset(
    {"user", "assistant", "summary", "system", "queue-operation", "file-history-snapshot"}
)


class ClaudeCode:
    """:class:`memloom.agents.base.Agent` for Claude Code."""

    name = "claude-code"
    rereads_whole = False

    def home(self, env: Env | None = None) -> Path:
        return _home.claude_root(env)

    def found(self, env: Env | None = None) -> bool:
        return self.home(env).is_dir()

    def discover(self, options: DiscoverOptions) -> Discovery:
        from memloom.agents.claude_code import discover as found

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
        from memloom.agents.claude_code.parse import parse_transcript

        return parse_transcript(
            path, start_offset=start_offset, start_line=start_line, seen_uuids=seen, final=final
        )

    def read_bytes(self, data: bytes, *, first_line: int = 1, final: bool = True) -> ParseResult:
        from memloom.agents.claude_code.parse import parse_bytes

        return parse_bytes(data, first_line=first_line, final=final)

    def format_context(self, event: str, text: str) -> str:
        """Claude Code adds a UserPromptSubmit or SessionStart hook's plain stdout
        to the context as it is."""
        return text

    def recognises(self, path: Path) -> bool:
        """A Claude Code transcript: JSON lines of its record types carrying its ids."""
        from memloom.agents.files import head_records, read_head

        return any(
            isinstance(kind := r.get("type"), str)
            and kind in _RECORD_TYPES
            and ("sessionId" in r or "uuid" in r or "leafUuid" in r)
            for r in head_records(read_head(path))
        )

    def open(self, path: Path) -> Any:
        """The transcript's raw bytes (Claude Code never compresses a session)."""
        from memloom.agents.files import open_regular

        return open_regular(path)

    def use_project_roots(self, roots: Sequence[Path]) -> None:
        """Sessions live in the agent's home, not in projects: nothing to do."""

    def ledger_identity(self, file: SessionFile) -> str:
        """The transcript's path: Claude Code never moves or renames a session file."""
        return str(file.path)

    def project_of(self, path: Path) -> str | None:
        from memloom.agents.claude_code.discover import session_project

        return session_project(path)

    def transcripts_root(self, env: Env | None = None) -> Path:
        return _home.projects_dir(env)

    def settings_path(self, env: Env | None = None) -> Path:
        return _home.settings_path(env)

    def install_hooks(
        self, command: str, *, recall: bool = True, env: Env | None = None
    ) -> HooksChange:
        from memloom.agents.claude_code.hooks import install

        return install(command, recall=recall, env=env)

    def remove_hooks(self, env: Env | None = None) -> HooksChange:
        from memloom.agents.claude_code.hooks import remove

        return remove(env)

    def installed_hooks(self, env: Env | None = None) -> dict[str, bool]:
        from memloom.agents.claude_code.hooks import installed

        return installed(env)

    def parse_hook_payload(self, payload: Mapping[str, Any], env: Env | None = None) -> HookEvent:
        from memloom.agents.claude_code.payload import parse_hook_payload

        return parse_hook_payload(payload, env)

    def __repr__(self) -> str:
        return "ClaudeCode()"
