"""The shared JSON Lines decoding: how deep a record may nest is the module's rule, not
the caller's stack."""

from __future__ import annotations

import sys

import pytest

from memloom.agents.reading import MAX_NESTING, decode_line, nested_too_deep


def _never(s: str, i: int, failures: int) -> tuple[list, int]:
    return [], len(s)


def _object(depth: int) -> bytes:
    return b'{"a":' * depth + b"1" + b"}" * depth


def test_brackets_inside_strings_do_not_count() -> None:
    inside = b'{"text": "' + b"[{" * 2 * MAX_NESTING + b'", "n": 1}'
    assert not nested_too_deep(inside)
    escaped = b'{"text": "\\"' + b"[" * 2 * MAX_NESTING + b'\\""}'
    assert not nested_too_deep(escaped)
    assert decode_line(inside, _never) == ([{"text": "[{" * 2 * MAX_NESTING, "n": 1}], 0)


@pytest.mark.parametrize("bytes_first", [False, True])
def test_a_record_at_the_bound_decodes_and_one_past_it_is_corrupt(bytes_first: bool) -> None:
    values, bad = decode_line(_object(MAX_NESTING - 1), _never, bytes_first=bytes_first)
    assert bad == 0 and isinstance(values[0], dict)
    assert decode_line(_object(MAX_NESTING + 1), _never, bytes_first=bytes_first) == ([], 1)
    assert decode_line(b"[" * (MAX_NESTING + 1), _never, bytes_first=bytes_first) == ([], 1)


def test_the_verdict_does_not_depend_on_the_caller_s_stack() -> None:
    """A line nested 900 deep: Python's parser reads it from a shallow stack and fails
    from a deep one; memloom calls it corrupt from both."""
    line = _object(900)

    def nested(levels: int) -> tuple[list, int]:
        return nested(levels - 1) if levels else decode_line(line, _never)

    shallow = decode_line(line, _never)
    deep = nested(sys.getrecursionlimit() - 200)
    assert shallow == deep == ([], 1)
