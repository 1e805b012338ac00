"""The OpenCode adapter: sessions in its SQLite store (and the older JSON files), a plugin.

:mod:`.home` (the store, config and plugin paths; Kilo Code's store beside OpenCode's),
:mod:`.store` (read-only reading, and the rendering the watermark is over),
:mod:`.parse` (a rendering as line-numbered units), :mod:`.discover`, :mod:`.hooks`
(the plugin file and the MCP entry in opencode.json), :mod:`.payload` (what the
plugin sends the hook commands).

Registered as ``opencode``, also the memories' ``source``. Ledger identity:
``opencode:<session id>`` (the store's session and a legacy file of the same session
share it). A session's path is ``<store>#<session id>``; its lines are messages.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from memloom.agents.adapter import AgentAdapter

TYPE_CHECKING = False  # typing's, without loading typing (~3 ms): the hooks load this module
if TYPE_CHECKING:
    from typing import Any

    from memloom.agents.base import Env

__all__ = ["OpenCode"]


class OpenCode(AgentAdapter):
    """:class:`memloom.agents.base.Agent` for OpenCode (and Kilo Code's store)."""

    name = "opencode"
    key = "opencode"
    home_at = "home:data_home"
    settings_at = "home:settings_path"
    reader = "parse:read_session"
    ledger_prefix = "opencode"
    #: A message already read that OpenCode changes in place (a revert, a compaction)
    #: makes the session read again from its start: the message ids already distilled
    #: are then not sent again (tests/agents/test_opencode.py).
    rereads_whole = True
    #: The plugin asks once per prompt; the digest comes with the first (module doc of .hooks).
    digest_with_prompt = True

    def found(self, env: Env | None = None) -> bool:
        """Whether a store or a JSON layout of OpenCode or Kilo Code exists."""
        from memloom.agents.opencode import home

        return any(p.is_file() for p in home.stores(env)) or any(
            p.is_dir() for p in home.legacy_roots(env)
        )

    def transcripts_root(self, env: Env | None = None) -> Path:
        """The data folder; the plugin's payload names the store (checked in :mod:`.payload`)."""
        return self.home(env)

    def session_folders(self, env: Env | None = None) -> list[Path]:
        """OpenCode's and Kilo Code's data folders, and the folders of the stores they name."""
        from memloom.agents.opencode import home

        places = [home.data_home(env), home.data_home(env, "kilo")]
        return list(dict.fromkeys([*places, *(p.parent for p in home.stores(env))]))

    def read_path(self, payload: Mapping[str, Any]) -> str | None:
        """The file OpenCode's ``read`` tool opened (the plugin's ``tool.execute.after``):
        :func:`.payload.read_path`."""
        from memloom.agents.opencode.payload import read_path

        return read_path(payload)

    def open(self, path: Path) -> Any:
        """The session's rendering (:func:`.store.render_session`): what watermarks are over."""
        import io

        from memloom.agents.opencode.store import render_session

        return io.BytesIO(render_session(path))

    def recognises(self, path: Path) -> bool:
        """A store, one session of one (``<store>#<id>``) or a legacy session file."""
        from memloom.agents.opencode.discover import recognizes

        return recognizes(path)
