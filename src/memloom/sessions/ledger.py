"""Where each transcript's import stands, and what to do with it next.

The ledger keeps, per file, the byte offset of the last line fully processed
(the watermark), the number of lines before it and a SHA-256 of every byte
before it. An unchanged file costs one dictionary look-up (size and mtime
match); a grown one resumes from the watermark after checking that the bytes
it already read are still the same; anything else starts over.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from memloom.agents.files import open_regular
from memloom.store.base import LedgerRow

CONTEXT_LINES = 40
_BLOCK = 1 << 20

Action = Literal["skip", "resume", "full"]


@dataclass
class Plan:
    action: Action
    #: up_to_date | new | grown | partial | rewritten | truncated | forced
    reason: str
    offset: int = 0
    lines: int = 0


#: Opens a session's content as a binary file object (``Agent.open``; default: the raw
#: file, never blocking on a FIFO swapped in).
Opener = Callable[[Path], Any]


def hash_prefix(path: Path, length: int, opener: Opener = open_regular) -> str:
    """SHA-256 of the first ``length`` bytes (fewer if the file is shorter)."""
    return prefix_digest(path, length, opener).hexdigest()


def prefix_digest(path: Path, length: int, opener: Opener = open_regular) -> Any:
    """A SHA-256 object fed the first ``length`` bytes: the importer goes on feeding it."""
    digest = hashlib.sha256()
    remaining = length
    with opener(path) as fh:
        while remaining > 0:
            block = fh.read(min(_BLOCK, remaining))
            if not block:
                break
            digest.update(block)
            remaining -= len(block)
    return digest


def plan(
    path: Path,
    size: int,
    mtime: float,
    row: LedgerRow | None,
    *,
    force: bool,
    opener: Opener = open_regular,
) -> Plan:
    if force:
        return Plan("full", "forced")
    if row is None:
        return Plan("full", "new")
    if row.status == "complete" and row.size == size and row.mtime == mtime:
        return Plan("skip", "up_to_date", row.offset, row.lines)
    if size < row.offset:
        return Plan("full", "truncated")
    if hash_prefix(path, row.offset, opener) != row.hash:
        return Plan("full", "rewritten")
    if size == row.offset and row.status == "complete":
        # Touched but not changed (same bytes): nothing to read.
        return Plan("skip", "up_to_date", row.offset, row.lines)
    return Plan("resume", "partial" if row.status == "partial" else "grown", row.offset, row.lines)


def context_start(
    path: Path,
    offset: int,
    lines: int,
    want: int = CONTEXT_LINES,
    opener: Opener = open_regular,
) -> tuple[int, int]:
    """Byte offset and line count where the last ``want`` lines before ``offset`` begin."""
    if offset <= 0 or lines <= 0:
        return 0, 0
    window = min(offset, 4 * _BLOCK)
    with opener(path) as fh:
        fh.seek(offset - window)
        data = fh.read(window)
    # data ends with the newline of line ``lines``; find the newline ending line lines - want.
    end = len(data) - 1
    found = 0
    pos = end
    while found < want:
        pos = data.rfind(b"\n", 0, pos)
        if pos < 0:
            break
        found += 1
    if pos < 0:
        if window == offset:  # reached the start of the file
            return 0, 0
        # Lines longer than the window: take what fits, from the next line start.
        first_nl = data.find(b"\n")
        taken = data.count(b"\n", first_nl + 1)
        return offset - window + first_nl + 1, lines - taken
    return offset - window + pos + 1, lines - found
