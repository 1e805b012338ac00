"""Cut a conversation into LLM-sized pieces on unit boundaries.

A chunk holds at most ``max_chars`` characters of text plus a small per-line
allowance for the JSON around each line. A single unit longer than a chunk
keeps its head and its tail around a marker that says how much was cut.

On resume, the lines re-read before the watermark go along as context, but at
most :data:`CONTEXT_SHARE` of a chunk of them, and only in the room the first
chunk has left: the new lines are cut into chunks exactly where an uninterrupted
run cuts them (greedy packing from the watermark, which is where that run's chunk
ended too), so a resumed run makes exactly the calls its new lines need and each
call holds the same new lines (the per-chunk item cap falls the same way).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from memloom.agents.base import Unit

MAX_CHUNK_CHARS = 24_000
#: JSON around one line in the request: {"line": N, "role": "assistant", "text": ""}.
LINE_OVERHEAD = 48
#: The most of a chunk the context re-read on resume may take (line overhead counted).
CONTEXT_SHARE = 0.25
#: A context line that does not fit whole is cut to the room left, if at least this much.
MIN_CONTEXT_CUT = 200


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

    The first ``context`` units are earlier lines re-read for context. The last of
    them go along in the first chunk, within :data:`CONTEXT_SHARE` of ``max_chars``
    and the room that chunk has left, never moving where the other units are cut; a
    chunk made only of them is never produced (there is nothing new to distill).
    """
    per_unit = max_chars - LINE_OVERHEAD
    fitted: list[Unit] = []
    truncated = 0
    for unit in units[context:]:
        if len(unit.text) > per_unit:
            unit = replace(unit, text=cut_middle(unit.text, per_unit))
            truncated += 1
        fitted.append(unit)
    chunks = _pack(fitted, max_chars)
    if not chunks or not context:
        return chunks, truncated
    first = chunks[0]
    room = min(int(max_chars * CONTEXT_SHARE), max_chars - first.chars)
    lead = _context_tail(units[:context], room)
    if lead:
        first.units[:0] = lead
        first.chars += sum(len(u.text) + LINE_OVERHEAD for u in lead)
        first.context = len(lead)
    return chunks, truncated


def _context_tail(units: Sequence[Unit], budget: int) -> list[Unit]:
    """The last ``units`` within ``budget`` characters, line overhead counted; going
    back, the first one that does not fit whole is cut to the room left (if worth it)."""
    taken: list[Unit] = []
    room = budget
    for unit in reversed(units):
        cost = len(unit.text) + LINE_OVERHEAD
        if cost <= room:
            taken.append(unit)
            room -= cost
            continue
        if room - LINE_OVERHEAD >= MIN_CONTEXT_CUT:
            taken.append(replace(unit, text=cut_middle(unit.text, room - LINE_OVERHEAD)))
        break
    return taken[::-1]


def _pack(units: Sequence[Unit], max_chars: int) -> list[Chunk]:
    """Greedy: each unit joins the current chunk unless that would pass ``max_chars``."""
    chunks: list[Chunk] = []
    current = Chunk()
    for unit in units:
        cost = len(unit.text) + LINE_OVERHEAD
        if current.units and current.chars + cost > max_chars:
            chunks.append(current)
            current = Chunk()
        current.units.append(unit)
        current.chars += cost
    if current.units:
        chunks.append(current)
    return chunks
