"""Which of a session's tool calls a memory was distilled from.

A memory cites the lines of the units it came from (``[start, end]``). The tool calls
behind it are those inside that span (and inside the units it overlaps, whose records
can span lines), plus the calls around a cited *reply* up to the neighbouring
messages: before it, the reads an agent makes before it answers (Claude Code writes
``text``, ``tool_use`` and the next ``text`` as separate lines, the call between the
prompt and the reply); after it, the edits it announced (Aider writes ``> Applied
edit to F`` after the reply that made it). A call before a cited *prompt* belongs to
the previous turn and is not taken.

:class:`ToolLines` sorts a session's calls and units once; each memory's question is
then a few binary searches, so a hostile transcript of a million calls costs no more
per memory than a small one.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence

from memloom.agents.base import Unit

__all__ = ["ToolLines", "paths_in_lines"]


class ToolLines:
    """A session's tool calls (``touched``: line, path, kind) and its units, for
    :meth:`paths` questions."""

    def __init__(self, touched: Sequence[tuple[int, str, str]], units: Sequence[Unit]) -> None:
        calls = sorted(touched, key=lambda t: t[0])
        self._lines = [line for line, _, _ in calls]
        self._paths = [path for _, path, _ in calls]
        self._units = sorted(units, key=lambda u: (u.start_line, u.end_line))
        self._starts = [u.start_line for u in self._units]

    def paths(self, start: int, end: int) -> list[str]:
        """The paths a memory citing ``[start, end]`` draws on, in line order, each once."""
        if not self._lines:
            return []
        units = self._units
        # The units it overlaps: from the last one starting at or before ``start``
        # (it may run on into the span) to the last one starting at or before ``end``.
        first_i = max(bisect_right(self._starts, start) - 1, 0)
        last_i = bisect_right(self._starts, end)
        near = [i for i in range(first_i, last_i) if units[i].end_line >= start]
        low, high = start, end
        if near:
            first, last = units[near[0]], units[near[-1]]
            low = min(start, first.start_line)
            high = max(end, max(units[i].end_line for i in near))
            if first.role == "assistant":  # from just after the message before it
                low = units[near[0] - 1].end_line + 1 if near[0] > 0 else 1
            if last.role == "assistant":  # to just before the message after it
                after = bisect_right(self._starts, last.end_line)
                high = self._starts[after] - 1 if after < len(units) else self._lines[-1]
        lo, hi = bisect_left(self._lines, low), bisect_right(self._lines, high)
        return list(dict.fromkeys(self._paths[lo:hi]))


def paths_in_lines(
    touched: Sequence[tuple[int, str, str]], units: Sequence[Unit], start: int, end: int
) -> list[str]:
    """:meth:`ToolLines.paths` for one question (a session's calls and units given)."""
    return ToolLines(touched, units).paths(start, end)
