"""The GitHub Copilot CLI adapter: sessions under ``session-state/``, hooks in ``hooks/hooks.json``.

:mod:`.home` (the one ``copilot_home``: ``$COPILOT_HOME``, else ``~/.copilot``),
:mod:`.discover` (which sessions to import; ``session.shutdown`` ends one),
:mod:`.parse` (events.jsonl and the legacy one-JSON files as line-numbered units),
:mod:`.hooks` (the hooks.json merge), :mod:`.payload` (the sessionEnd payload; the
sessionStart ``additionalContext`` output). Submodules load when first used, so
the hook fast path reads only what it needs.

Registered as ``copilot``; memories' ``source`` (:attr:`CopilotCLI.name`) is
``copilot-cli``. Ledger identity: ``copilot:<sessionId>`` (``copilot-legacy:<sessionId>``
for a legacy file, so the two formats of one session never share a ledger row).
Project: ``session.start`` ``context.gitRoot``, else ``context.cwd``, else
``workspace.yaml``; legacy files record none (global).
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
from memloom.agents.copilot import home as _home
from memloom.agents.files import open_regular

__all__ = ["CopilotCLI"]


class CopilotCLI:
    """:class:`memloom.agents.base.Agent` for GitHub Copilot CLI."""

    name = "copilot-cli"
    rereads_whole = False
    #: The registry key (``memloom.agents.get_agent("copilot")``, ``--agent copilot``).
    key = "copilot"

    def home(self, env: Env | None = None) -> Path:
        return _home.copilot_home(env)

    def found(self, env: Env | None = None) -> bool:
        return self.home(env).is_dir()

    def discover(self, options: DiscoverOptions) -> Discovery:
        from memloom.agents.copilot import discover as found

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
        from memloom.agents.copilot.parse import parse_session

        return parse_session(
            path, start_offset=start_offset, start_line=start_line, seen=seen, final=final
        )

    def read_bytes(self, data: bytes, *, first_line: int = 1, final: bool = True) -> ParseResult:
        from memloom.agents.copilot.parse import parse_bytes

        return parse_bytes(data, first_line=first_line, final=final)

    def open(self, path: Path) -> Any:
        """The raw file (watermarks are over its bytes); never blocks on a FIFO."""
        return open_regular(path)

    def recognises(self, path: Path) -> bool:
        """Whether ``path`` is a Copilot session by its first bytes (for ``--path``)."""
        from memloom.agents.copilot.discover import recognizes
        from memloom.agents.files import read_head

        return recognizes(read_head(path))

    def use_project_roots(self, roots: Sequence[Path]) -> None:
        """Sessions live in the agent's home, not in projects: nothing to do."""

    def ledger_identity(self, file: SessionFile) -> str:
        """``copilot:<sessionId>``: the session, wherever its file is."""
        prefix = "copilot-legacy" if Path(file.path).suffix == ".json" else "copilot"
        return f"{prefix}:{file.session_id}"

    def project_of(self, path: Path) -> str | None:
        from memloom.agents.copilot.discover import session_project

        return session_project(path)

    def transcripts_root(self, env: Env | None = None) -> Path:
        """The Copilot home: sessions are in ``session-state/`` and ``history-session-state/``."""
        return self.home(env)

    def settings_path(self, env: Env | None = None) -> Path:
        return _home.hooks_path(env)

    def install_hooks(
        self, command: str, *, recall: bool = True, env: Env | None = None
    ) -> HooksChange:
        from memloom.agents.copilot.hooks import install

        return install(command, recall=recall, env=env)

    def remove_hooks(self, env: Env | None = None) -> HooksChange:
        from memloom.agents.copilot.hooks import remove

        return remove(env)

    def installed_hooks(self, env: Env | None = None) -> dict[str, bool]:
        from memloom.agents.copilot.hooks import installed

        return installed(env)

    def parse_hook_payload(self, payload: Mapping[str, Any], env: Env | None = None) -> HookEvent:
        from memloom.agents.copilot.payload import parse_hook_payload

        return parse_hook_payload(payload, env)

    def format_context(self, event: str, text: str) -> str:
        """The sessionStart hook's stdout for ``text``: ``{"additionalContext": …}``
        (Copilot drops prompt-time hooks' output, so only session start injects)."""
        from memloom.agents.copilot.payload import recall_output

        return recall_output(text)

    def __repr__(self) -> str:
        return "CopilotCLI()"
