"""Which of a session's tool calls a memory was distilled from.

A memory cites the lines of the units it came from (``[start, end]``). The tool calls
behind it are those inside that span (and inside the units it overlaps, whose records
can span lines), plus the calls around a cited *reply* up to the neighbouring
messages: before it, the reads an agent makes before it answers (Claude Code writes
``text``, ``tool_use`` and the next ``text`` as separate lines, the call between the
prompt and the reply); after it, the edits it announced (Aider writes ``> Applied
edit to F`` after the reply that made it). A call before a cited *prompt* belongs to
the previous turn and is not taken.
"""

from __future__ import annotations

from collections.abc import Sequence

from memloom.agents.base import Unit

__all__ = ["paths_in_lines"]


def paths_in_lines(
    touched: Sequence[tuple[int, str, str]], units: Sequence[Unit], start: int, end: int
) -> list[str]:
    """The paths of ``touched`` (line, path, kind) a memory citing ``[start, end]``
    draws on, in line order, each once; ``units`` are the session's units read."""
    if not touched:
        return []
    near = [u for u in units if u.end_line >= start and u.start_line <= end]
    low, high = start, max([end, *(u.end_line for u in near)])
    if near:
        first = min(near, key=lambda u: u.start_line)
        last = max(near, key=lambda u: u.end_line)
        low = min(low, first.start_line)
        if first.role == "assistant":
            before = [u.end_line for u in units if u.end_line < first.start_line]
            low = max(before) + 1 if before else 1
        if last.role == "assistant":
            after = [u.start_line for u in units if u.start_line > last.end_line]
            high = min(after) - 1 if after else max(line for line, _, _ in touched)
    ordered = sorted(touched, key=lambda t: t[0])
    return list(dict.fromkeys(path for line, path, _ in ordered if low <= line <= high))
