"""The chunker's promises, over generated conversations: chunks within the limit, every
new line once and in order, and the context re-read on resume capped at a share of a
chunk without ever costing a chunk of its own."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memloom.agents.base import Unit
from memloom.sessions.chunk import (
    CONTEXT_SHARE,
    LINE_OVERHEAD,
    MAX_CHUNK_CHARS,
    MIN_CONTEXT_CUT,
    chunk_units,
)


def units(sizes: list[int]) -> list[Unit]:
    return [
        Unit(
            role="user" if i % 2 == 0 else "assistant",
            text=f"{i}:" + "x" * size,
            start_line=i + 1,
            end_line=i + 1,
            uuid=None,
            timestamp=None,
        )
        for i, size in enumerate(sizes)
    ]


def cost(unit: Unit) -> int:
    return len(unit.text) + LINE_OVERHEAD


SIZES = st.lists(st.integers(0, 30_000), min_size=0, max_size=60)


@settings(max_examples=300, deadline=None)
@given(before=SIZES, after=SIZES)
def test_context_is_capped_and_never_costs_a_chunk(before, after):
    old, new = units(before + after)[: len(before)], units(before + after)[len(before) :]
    alone, cut = chunk_units(new)
    chunks, cut_too = chunk_units([*old, *new], context=len(old))
    assert cut_too == cut  # context lines are never counted as truncated content
    assert len(chunks) == len(alone)  # resuming costs exactly the new lines' calls
    assert all(c.chars <= MAX_CHUNK_CHARS for c in chunks)
    assert all(c.context == 0 for c in chunks[1:])
    sent = [u.start_line for c in chunks for u in c.new_units]
    assert sent == [u.start_line for u in new]  # every new line once, in order
    if not chunks:
        return
    context = chunks[0].units[: chunks[0].context]
    assert sum(cost(u) for u in context) <= MAX_CHUNK_CHARS * CONTEXT_SHARE
    # The context is the lines just before the new ones, the oldest possibly cut.
    lines = [u.start_line for u in context]
    assert lines == list(range(len(before) - len(lines) + 1, len(before) + 1))
    for u in context[1:]:
        assert u.text == old[u.start_line - 1].text


def test_the_overlap_alone_would_fill_more_than_a_chunk():
    # 40 lines of 1,000 characters before the watermark, 20 new ones of 700.
    old, new = units([1_000] * 40 + [700] * 20)[:40], units([1_000] * 40 + [700] * 20)[40:]
    chunks, _ = chunk_units([*old, *new], context=len(old))
    assert sum(cost(u) for u in old) > MAX_CHUNK_CHARS
    assert len(chunks) == len(chunk_units(new)[0]) == 1
    context = chunks[0].units[: chunks[0].context]
    budget = int(MAX_CHUNK_CHARS * CONTEXT_SHARE)
    assert [u.start_line for u in context] == [35, 36, 37, 38, 39, 40]
    # Five whole lines, and the sixth (the oldest) cut to the room left.
    assert all(u.text == old[u.start_line - 1].text for u in context[1:])
    whole = sum(cost(u) for u in context[1:])
    assert cost(context[0]) == budget - whole and "characters cut" in context[0].text


def test_a_long_line_just_before_is_cut_to_fit_and_a_sliver_is_not_sent():
    old, new = units([20_000, 100])[:1], units([20_000, 100])[1:]
    (chunk,), _ = chunk_units([*old, *new], context=1)
    (lead,) = chunk.units[: chunk.context]
    assert cost(lead) == int(MAX_CHUNK_CHARS * CONTEXT_SHARE)
    assert lead.text.startswith("0:xx") and "characters cut" in lead.text
    # A new line that leaves less room than a worthwhile cut gets no context.
    room = MAX_CHUNK_CHARS - (MIN_CONTEXT_CUT - 1) - 2 * LINE_OVERHEAD
    old, new = units([5_000, room - 2])[:1], units([5_000, room - 2])[1:]
    (chunk,), _ = chunk_units([*old, *new], context=1)
    assert chunk.context == 0 and chunk.chars <= MAX_CHUNK_CHARS


@settings(max_examples=200, deadline=None)
@given(SIZES, st.data())
def test_a_resumed_run_cuts_the_new_lines_where_an_uninterrupted_run_does(sizes, data):
    """Resuming after any finished chunk of an uninterrupted run, with the lines before
    as context: the new lines fall into the same chunks as in that run (so the calls,
    and the per-chunk item cap, are the same), and the context stays within the limit."""
    every = units(sizes)
    clean, _ = chunk_units(every)
    if len(clean) < 2:
        return
    k = data.draw(st.integers(1, len(clean) - 1))
    done = sum(len(c.units) for c in clean[:k])
    resumed, _ = chunk_units(every, context=done)
    assert [[u.start_line for u in c.new_units] for c in resumed] == [
        [u.start_line for u in c.units] for c in clean[k:]
    ]
    assert all(c.chars <= MAX_CHUNK_CHARS for c in resumed)
    assert all(c.context == 0 for c in resumed[1:])
