"""What memloom's OpenCode plugin sends its hook commands on stdin, checked before use.

The plugin (``plugin.js``) sends ``{"session_id", "cwd", "db", "prompt"?}``: the
session's id (``ses_…``), OpenCode's directory, and the store OpenCode writes
(``$OPENCODE_DB``, else ``$XDG_DATA_HOME/opencode/opencode.db``, worked out in
OpenCode's own process). The store must be one of the stores memloom knows
(:func:`.home.stores`) or lie in OpenCode's or Kilo Code's data folder, and exist; the
queued path is ``<store>#<session id>``. Without a store, a legacy session file
``storage/session/*/<id>.json`` is looked for.

After OpenCode's ``read`` tool (``tool.execute.after``; 1.18.33 hands the plugin
``{tool: "read", sessionID, callID, args: {filePath}}`` and the tool's output, only
when the read succeeded: tests/fixtures/hooks/reads/opencode-*), the plugin sends
``memloom hook read`` ``{"session_id", "cwd", "db", "tool", "args"}`` (OpenCode's own
names); :func:`read_path` is the ``filePath`` read. A folder's listing is a ``read``
too: the caller finds it is not a file.

Standard library only: ``memloom hook … --agent opencode`` runs this.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from memloom.agents.events import HookEvent
from memloom.agents.files import check_transcript_path
from memloom.agents.opencode import home
from memloom.errors import NotificationRefused

TYPE_CHECKING = False  # typing's, without loading typing (~3 ms): the hooks load this module
if TYPE_CHECKING:
    from typing import Any

__all__ = ["NAME", "READ_TOOL", "parse_hook_payload", "read_path"]

#: The registry name the capture queue keys on.
NAME = "opencode"
_SAFE_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")
#: OpenCode's file-reading tool.
READ_TOOL = "read"


def _store(text: Any, env: Mapping[str, str] | None) -> Path:
    known = [p for p in home.stores(env)]
    given = text if isinstance(text, str) and text.strip() else str(known[0])
    for base in [*(p.parent for p in known), home.data_home(env), home.data_home(env, "kilo")]:
        try:
            return check_transcript_path(
                given, base, suffixes=(".db",), folder="OpenCode data folder"
            )
        except NotificationRefused as exc:
            refusal = exc
    raise refusal


def parse_hook_payload(
    payload: Mapping[str, Any], env: Mapping[str, str] | None = None
) -> HookEvent:
    """The plugin's ``session.idle`` payload as a checked event, or NotificationRefused."""
    sid = payload.get("session_id") or payload.get("sessionID")
    if not isinstance(sid, str) or not _SAFE_ID_RE.match(sid.strip()):
        raise NotificationRefused(f"session_id is not an OpenCode session id: {str(sid)[:80]!r}")
    sid = sid.strip()
    try:
        db = _store(payload.get("db"), env)
    except NotificationRefused:
        for storage in home.legacy_roots(env):
            legacy = next((storage / "session").glob(f"*/{sid}.json"), None)
            if legacy is not None:
                path = check_transcript_path(
                    str(legacy), storage, suffixes=(".json",), folder="OpenCode storage"
                )
                return HookEvent(
                    agent=NAME, transcript_path=path, session_id=sid, cwd=payload.get("cwd")
                )
        raise
    path = Path(f"{db}#{sid}")
    return HookEvent(
        agent=NAME, transcript_path=path, session_id=sid, cwd=payload.get("cwd"), reason="idle"
    )


def read_path(payload: Mapping[str, Any]) -> str | None:
    """The ``filePath`` OpenCode's ``read`` tool opened, as the plugin passed it on;
    None for another tool or arguments without one."""
    args = payload.get("args")
    path = args.get("filePath") if isinstance(args, dict) else None
    if payload.get("tool") != READ_TOOL or not isinstance(path, str) or not path.strip():
        return None
    return path
