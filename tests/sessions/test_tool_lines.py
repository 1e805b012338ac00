"""memloom.sessions.tool_lines: which tool calls a memory citing [start, end] drew on."""

from __future__ import annotations

from memloom.agents.base import Unit
from memloom.sessions.tool_lines import ToolLines, paths_in_lines


def unit(role: str, start: int, end: int | None = None) -> Unit:
    return Unit(role, "x", start, end or start, None, None)  # type: ignore[arg-type]


# 1 user, 2-3 reads, 4 reply (its record runs on to 6, an edit at 5), 7 a read
# after the reply, 8 user, 9 a read, 10 reply (the last unit read).
UNITS = [unit("user", 1), unit("assistant", 4, 6), unit("user", 8), unit("assistant", 10)]
TOUCHED = [
    (2, "a.py", "read"),
    (3, "b.py", "read"),
    (5, "c.py", "edit"),
    (7, "d.py", "read"),
    (9, "e.py", "read"),
    (3, "a.py", "read"),
]


def test_a_turn_takes_the_calls_inside_it_and_after_its_reply():
    assert paths_in_lines(TOUCHED, UNITS, 1, 4) == ["a.py", "b.py", "c.py", "d.py"]
    assert paths_in_lines(TOUCHED, UNITS, 1, 10) == ["a.py", "b.py", "c.py", "d.py", "e.py"]


def test_a_reply_takes_the_calls_that_led_to_it_and_followed_it():
    assert paths_in_lines(TOUCHED, UNITS, 4, 4) == ["a.py", "b.py", "c.py", "d.py"]
    assert paths_in_lines(TOUCHED, UNITS, 10, 10) == ["e.py"]
    late = [*TOUCHED, (12, "f.py", "edit")]  # after the last reply read: its edit
    assert paths_in_lines(late, UNITS, 10, 10) == ["e.py", "f.py"]


def test_a_prompt_alone_takes_none_of_the_calls_around_it():
    assert paths_in_lines(TOUCHED, UNITS, 8, 8) == []
    assert paths_in_lines(TOUCHED, UNITS, 1, 1) == []
    assert paths_in_lines(TOUCHED, UNITS, 8, 9) == ["e.py"]  # unless it cites them


def test_a_first_reply_takes_the_calls_from_the_start_and_none_is_none():
    first = [unit("assistant", 4), unit("user", 8)]
    assert paths_in_lines(TOUCHED, first, 4, 4) == ["a.py", "b.py", "c.py", "d.py"]
    assert paths_in_lines([], UNITS, 1, 10) == []


def test_a_million_calls_cost_each_memory_a_few_searches():
    """A hostile transcript: one call a line, a unit every other line."""
    import time

    n = 1_000_000
    touched = [(line, f"f{line % 97}.py", "read") for line in range(1, n + 1)]
    units = [unit("user" if i % 4 else "assistant", i) for i in range(2, n, 2)]
    tools = ToolLines(touched, units)
    started = time.perf_counter()
    for start in range(2, 20_002, 20):  # a thousand memories
        assert tools.paths(start, start + 2)
    assert time.perf_counter() - started < 1.0
