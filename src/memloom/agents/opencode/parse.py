"""Read an OpenCode session (its rendering, :mod:`.store`) as line-numbered units.

Line 1 is the header (session id, directory); every other line is one complete
message: its role, and the text parts the user typed or the model answered. Tool,
reasoning, step, file, patch and other parts were left out when it was rendered and
are counted here (``dropped["part_<type>"]``), as are synthetic text parts (text
OpenCode adds itself: ``part_synthetic``) and messages with no text left
(``no_text``). A unit's ``uuid`` is its message id: what the ledger records as read.
The files a message's ``read``/``edit``/``write``/``patch`` tools named (the rendering's
``tools``) go to ``ParseResult.touched`` at the message's line.
"""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Unpack

from memloom.agents.base import ParseResult, Unit
from memloom.agents.reading import (
    LineReader,
    Resume,
    Watermark,
    clean_text,
    read_bytes,
    read_from,
)
from memloom.agents.touched import EDIT, READ, from_args

__all__ = ["MAX_LINE_BYTES", "parse_bytes", "read_session"]

#: A message longer than this (its text, rendered) is skipped unread (``oversized``).
MAX_LINE_BYTES = 32 << 20
BLOCK_SIZE = 1 << 20


def _iso(ms: Any) -> str | None:
    if not isinstance(ms, int | float) or ms <= 0:
        return None
    return datetime.fromtimestamp(ms / 1000.0, UTC).isoformat().replace("+00:00", "Z")


class _Session(LineReader):
    #: memloom wrote the rendering: the rest of a line that does not decode is lost
    #: (the default ``recover``).
    bytes_first = True

    def __init__(self, seen: set[str] | None) -> None:
        self.res = ParseResult()
        self.seen = seen

    def _drop(self, reason: str, count: int = 1) -> None:
        self.res.dropped[reason] = self.res.dropped.get(reason, 0) + count

    def record(self, o: dict[str, Any], line: int) -> None:
        self.res.records += 1
        if "opencode_session" in o:
            self.res.session_id = o.get("opencode_session") or self.res.session_id
            self.res.cwd = o.get("directory") or self.res.cwd
            return
        for kind, count in (o.get("left_out") or {}).items():
            if isinstance(count, int):
                self._drop(f"part_{kind}", count)
        role = o.get("role")
        mid = o.get("id") if isinstance(o.get("id"), str) else None
        for item in o.get("tools") or ():
            if isinstance(item, list) and len(item) == 2 and item[0] in (READ, EDIT):
                path = from_args({"p": item[1]}, ("p",), item[0])
                self.res.touched.extend((line, p, k) for p, k in path)
        if role not in ("user", "assistant"):
            self._drop("other_role")
            return
        texts = [p.get("text") for p in o.get("parts") or () if isinstance(p, dict)]
        text = "\n\n".join(t for t in (clean_text(t) for t in texts if isinstance(t, str)) if t)
        if not text:
            self._drop("no_text")
            return
        if mid is not None and self.seen is not None:
            if mid in self.seen:
                self._drop("duplicate_id")
                return
            self.seen.add(mid)
        self.res.units.append(Unit(role, text, line, line, mid, _iso(o.get("created"))))


def parse_bytes(data: bytes, *, first_line: int = 1, final: bool = True) -> ParseResult:
    """A rendering already in memory (re-read context, cited lines)."""
    return read_bytes(
        _Session(None), data, limit=MAX_LINE_BYTES, first_line=first_line, final=final
    )


def read_session(path: Path, **resume: Unpack[Resume]) -> ParseResult:
    """Read the session at ``path`` (``<store>#<id>``, or a legacy session file) from a
    watermark over its rendering. ``OSError`` (:class:`~.store.StoreUnreadable`) when the
    store is locked, corrupt or gone; ``ValueError`` for an offset past the end."""
    from memloom.agents.opencode.store import render_session

    at = Watermark(**{**resume, "final": True})  # only complete messages are rendered
    data = render_session(path)
    res = read_from(
        _Session(at.seen), io.BytesIO(data), path, at, block_size=BLOCK_SIZE, limit=MAX_LINE_BYTES
    )
    if res.cwd is None or res.session_id is None:  # resumed past the header
        head = parse_bytes(data[: data.find(b"\n") + 1])
        res.cwd = res.cwd or head.cwd
        res.session_id = res.session_id or head.session_id
    return res
