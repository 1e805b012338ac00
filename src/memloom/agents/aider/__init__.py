"""The Aider adapter: ``.aider.chat.history.md`` in project roots; no hooks.

:mod:`.discover` (the histories at the known project roots, or named with
``--path``), :mod:`.parse` (one file, many sessions, as line-numbered units).

Aider has no home folder and no hook API (reference §6), so:

* where to look comes from the caller: :attr:`Aider.roots` (constructor argument,
  or set on the registry's instance) -- the project roots memloom knows from other
  agents' sessions -- plus ``DiscoverOptions.root`` when given, plus ``--path``;
* capture is the daemon's periodic sweep: :meth:`Aider.install_hooks` refuses
  with a ``SettingsError`` that says so, :meth:`Aider.installed_hooks` is ``{}``.

Ledger identity: the history file's path (one file holds many sessions and is
only appended to, so the byte watermark resumes it). Each unit names its own
session (``Unit.session_id = "aider:<file>:<header timestamp>"``). Project: the
file's folder (the repository root).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
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
from memloom.agents.files import open_regular
from memloom.errors import NotificationRefused, SettingsError

__all__ = ["NO_HOOKS", "Aider"]

NO_HOOKS = (
    "Aider has no hooks: memloom cannot connect to it. The daemon's periodic sweep "
    "imports Aider chat histories (.aider.chat.history.md) from the project roots memloom "
    "knows; `memloom import sessions --agent aider --path <repo>` imports one now."
)


class Aider:
    """:class:`memloom.agents.base.Agent` for Aider."""

    name = "aider"
    rereads_whole = False
    key = "aider"

    def __init__(self, roots: Iterable[str | os.PathLike[str]] | None = None) -> None:
        #: Project roots to look in (folders; a history sits at a root or its git root).
        self.roots: list[Path] = [Path(r) for r in roots or ()]

    def _roots(self, extra: Path | None = None) -> list[Path]:
        return [*self.roots, *([Path(extra)] if extra is not None else [])]

    def home(self, env: Env | None = None) -> Path:
        """Aider has no home folder: the user's home directory (nothing is read there)."""
        configured = (os.environ if env is None else env).get("HOME")
        return Path(configured) if configured else Path.home()

    def found(self, env: Env | None = None) -> bool:
        """Whether any known project root has a chat history."""
        from memloom.agents.aider.discover import candidates

        return any(p.is_file() for p in candidates(self._roots()))

    def discover(self, options: DiscoverOptions) -> Discovery:
        from memloom.agents.aider import discover as found

        if options.paths:
            return found.discover_paths([Path(p) for p in options.paths], project=options.project)
        # ``DiscoverOptions.roots`` if the protocol grows it; else the adapter's own.
        given = getattr(options, "roots", None)
        roots = [*(Path(r) for r in given or ()), *self._roots(options.root)]
        return found.discover(
            roots,
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
        from memloom.agents.aider.parse import parse_history

        return parse_history(
            path, start_offset=start_offset, start_line=start_line, final=final, seen=seen
        )

    def read_bytes(self, data: bytes, *, first_line: int = 1, final: bool = True) -> ParseResult:
        from memloom.agents.aider.parse import parse_bytes

        return parse_bytes(data, first_line=first_line, final=final)

    def open(self, path: Path) -> Any:
        """The raw file (watermarks are over its bytes); never blocks on a FIFO."""
        return open_regular(path)

    def recognises(self, path: Path) -> bool:
        """Whether ``path`` is an Aider chat history by its first bytes (for ``--path``)."""
        from memloom.agents.aider.discover import recognizes
        from memloom.agents.files import read_head

        return recognizes(read_head(path))

    def format_context(self, event: str, text: str) -> str:
        """Aider runs no hooks; nothing is ever injected through one."""
        return ""

    def use_project_roots(self, roots: Sequence[Path]) -> None:
        """Look for histories in these project folders from now on."""
        self.roots = [Path(r) for r in roots]

    def ledger_identity(self, file: SessionFile) -> str:
        """The history's path: append-only, never moved by Aider."""
        return str(file.path)

    def project_of(self, path: Path) -> str | None:
        """The folder the history is in (Aider writes it at the repository root)."""
        return str(Path(path).absolute().parent)

    def transcripts_root(self, env: Env | None = None) -> Path:
        """No agent folder: histories live in project roots (nothing posts Aider paths)."""
        return self.home(env)

    def settings_path(self, env: Env | None = None) -> Path:
        """``~/.aider.conf.yml``, where a user can add ``read:`` files; memloom never edits it."""
        return self.home(env) / ".aider.conf.yml"

    def install_hooks(
        self, command: str, *, recall: bool = True, env: Env | None = None
    ) -> HooksChange:
        raise SettingsError(NO_HOOKS)

    def remove_hooks(self, env: Env | None = None) -> HooksChange:
        """Nothing was installed, so nothing changes (``disconnect --all`` stays quiet)."""
        return HooksChange(self.settings_path(env), None, False, [])

    def installed_hooks(self, env: Env | None = None) -> dict[str, bool]:
        return {}

    def parse_hook_payload(self, payload: Mapping[str, Any], env: Env | None = None) -> HookEvent:
        raise NotificationRefused(NO_HOOKS)

    def __repr__(self) -> str:
        return f"Aider(roots={[str(r) for r in self.roots]!r})"
