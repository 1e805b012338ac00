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

from memloom.agents.adapter import AgentAdapter
from memloom.errors import NotificationRefused, SettingsError

TYPE_CHECKING = False  # typing's, without loading typing (~3 ms): the hooks load this module
if TYPE_CHECKING:
    from typing import Any

    from memloom.agents.base import DiscoverOptions, Env, HookEvent, HooksChange

__all__ = ["NO_HOOKS", "Aider"]

NO_HOOKS = (
    "Aider has no hooks: memloom cannot connect to it. The daemon's periodic sweep "
    "imports Aider chat histories (.aider.chat.history.md) from the project roots memloom "
    "knows; `memloom import sessions --agent aider --path <repo>` imports one now."
)


class Aider(AgentAdapter):
    """:class:`memloom.agents.base.Agent` for Aider.

    Ledger identity: the history's path (append-only, never moved by Aider).
    """

    name = "aider"
    key = "aider"
    reader = "parse:parse_history"

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

    def discover_root(self, options: DiscoverOptions) -> list[Path]:
        """The known project roots, plus ``options.root`` when given."""
        # ``DiscoverOptions.roots`` if the protocol grows it; else the adapter's own.
        given = getattr(options, "roots", None)
        return [*(Path(r) for r in given or ()), *self._roots(options.root)]

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

    def project_of(self, path: Path) -> str | None:
        """The folder the history is in (Aider writes it at the repository root)."""
        return str(Path(path).absolute().parent)

    def transcripts_root(self, env: Env | None = None) -> Path:
        """No agent folder: histories live in project roots (nothing posts Aider paths)."""
        return self.home(env)

    def session_folders(self, env: Env | None = None) -> list[Path]:
        """The home folder and the known project roots (histories sit in repositories)."""
        return list(dict.fromkeys([self.home(env), *self.roots]))

    def settings_path(self, env: Env | None = None) -> Path:
        """``~/.aider.conf.yml``, where a user can add ``read:`` files; memloom never edits it."""
        return self.home(env) / ".aider.conf.yml"

    def install_hooks(
        self, command: str, *, recall: bool = True, env: Env | None = None
    ) -> HooksChange:
        raise SettingsError(NO_HOOKS)

    def remove_hooks(self, env: Env | None = None) -> HooksChange:
        """Nothing was installed, so nothing changes (``disconnect --all`` stays quiet)."""
        from memloom.agents.base import HooksChange

        return HooksChange(self.settings_path(env), None, False, [])

    def installed_hooks(self, env: Env | None = None) -> dict[str, bool]:
        return {}

    def parse_hook_payload(self, payload: Mapping[str, Any], env: Env | None = None) -> HookEvent:
        raise NotificationRefused(NO_HOOKS)

    def __repr__(self) -> str:
        return f"Aider(roots={[str(r) for r in self.roots]!r})"
