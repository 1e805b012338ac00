"""Cut a conversation into LLM-sized pieces on unit boundaries.

A chunk holds at most ``max_chars`` characters of text plus a small per-line
allowance for the JSON around each line. A single unit longer than a chunk
keeps its head and its tail around a marker that says how much was cut.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from memloom.agents.base import Unit

MAX_CHUNK_CHARS = 24_000
#: JSON around one line in the request: {"line": N, "role": "assistant", "text": ""}.
LINE_OVERHEAD = 48


@dataclass
class Chunk:
    units: list[Unit] = field(default_factory=list)
    chars: int = 0
    #: Units at the front that were already imported (context re-read on resume).
    context: int = 0

    @property
    def first_line(self) -> int:
        return self.units[0].start_line

    @property
    def last_line(self) -> int:
        return max(u.end_line for u in self.units)

    @property
    def new_units(self) -> list[Unit]:
        return self.units[self.context :]


def cut_middle(text: str, limit: int) -> str:
    """Keep the head and the tail of ``text`` within ``limit`` characters."""
    if len(text) <= limit:
        return text
    cut = len(text) - limit
    marker = f"\n[… {cut:,} characters cut …]\n"
    keep = max(0, limit - len(marker))
    head = keep * 2 // 3
    tail = keep - head
    return text[:head] + marker + (text[-tail:] if tail else "")


def chunk_units(
    units: Sequence[Unit], *, context: int = 0, max_chars: int = MAX_CHUNK_CHARS
) -> tuple[list[Chunk], int]:
    """Chunks in order, and how many units were truncated to fit.

    The first ``context`` units are earlier lines re-read for context; a chunk
    made only of them is never produced (there is nothing new to distill).
    """
    per_unit = max_chars - LINE_OVERHEAD
    chunks: list[Chunk] = []
    current = Chunk()
    truncated = 0
    for i, unit in enumerate(units):
        if len(unit.text) > per_unit:
            unit = replace(unit, text=cut_middle(unit.text, per_unit))
            truncated += 1
        cost = len(unit.text) + LINE_OVERHEAD
        if current.units and current.chars + cost > max_chars:
            chunks.append(current)
            current = Chunk()
        current.units.append(unit)
        current.chars += cost
        if i < context:
            current.context += 1
    if current.units:
        chunks.append(current)
    return [c for c in chunks if c.context < len(c.units)], truncated
