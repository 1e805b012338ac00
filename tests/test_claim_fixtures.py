"""The held-out claim pairs of ``tests/fixtures/claims/`` (issue 40): the look-alikes
(two facts true at once, another subject) and the written updates (a value changed) are
what ``bench/updates.py`` writes with its default seed (``--dump-fixture`` makes them),
and are well formed. What the rule does with them is for the claim tests."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from bench.updates import DEFAULT_SEED, WRITTEN_UPDATES, all_pairs

FIXTURES = Path(__file__).parent / "fixtures" / "claims"


def load(name: str) -> list[dict[str, str]]:
    return json.loads((FIXTURES / name).read_text())


def test_the_lookalikes_are_the_benchs_of_the_default_seed():
    rows = [(r["kind"], r["first"], r["second"]) for r in load("lookalikes.json")]
    assert rows == all_pairs(DEFAULT_SEED)[2]


def test_the_updates_are_the_benchs_written_updates():
    rows = [(r["kind"], r["old"], r["new"]) for r in load("updates.json")]
    assert rows == WRITTEN_UPDATES


def test_at_least_120_lookalikes_over_10_kinds_each_pair_once_and_two_texts():
    rows = load("lookalikes.json")
    kinds = Counter(r["kind"] for r in rows)
    assert len(rows) >= 120 and len(kinds) >= 10
    assert all(r["first"] != r["second"] for r in rows)
    pairs = [frozenset((r["first"], r["second"])) for r in rows]
    assert len(set(pairs)) == len(pairs)


def test_no_update_pair_is_also_a_lookalike():
    ups = {frozenset((r["old"], r["new"])) for r in load("updates.json")}
    looks = {frozenset((r["first"], r["second"])) for r in load("lookalikes.json")}
    assert len(ups) == len(load("updates.json")) >= 50
    assert not ups & looks
