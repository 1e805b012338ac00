"""The Distill ``store`` keeps its contract (issue 40), on both backends.

Only the duplicate band (distance < 0.15) makes a changed value the next version, and
the answer says so (``versioned: [{"id", "old_id"}]``, the new id counted in ``stored``
and returned in ``ids``); a ``supersede(old_id, id)`` after it is a no-op that answers
``superseded: true``. In the conflict band (0.15-0.35) the entry is stored and the pair
flagged, both active, until the caller settles it. Past the bands an entry is stored.

Pairs the local model does not put in the band under test carry their own embeddings
(as a Distill client's entries do): three-dimensional unit vectors ``deg`` degrees apart.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

import memloom
from memloom.errors import ConflictStateError, NotFoundError
from tests.core.test_value_updates import distance

RS256 = "Auth uses JWT with RS256"
HS256 = "Auth uses HMAC with HS256"
PORT_8080 = "the api listens on port 8080"
PORT_9090 = "the api listens on port 9090"


def vec(deg: float, lift: float = 0.0) -> list[float]:
    """A unit vector ``deg`` degrees round the first plane, tilted ``lift`` degrees out of it."""
    r, z = math.radians(deg), math.radians(lift)
    return [math.cos(r) * math.cos(z), math.sin(r) * math.cos(z), math.sin(z)]


def entry(text: str, deg: float, lift: float = 0.0, **more: Any) -> dict[str, Any]:
    return {"text": text, "embedding": vec(deg, lift), **more}


def statuses(m: memloom.Memloom, *ids: str) -> list[str]:
    return [m.get(i).status for i in ids]


# ---------------------------------------------------------------- the conflict band


def test_the_seed_example_is_stored_and_flagged_both_active(engine):
    """RS256 then HS256 at distance 0.234: ``stored: 1``, the pair in ``conflicts``, both
    active until the caller supersedes one."""
    first = engine.store({"entries": [entry(RS256, 0)]})
    res = engine.store({"entries": [entry(HS256, 40)]})
    assert (res.stored, res.merged, res.deduplicated, res.versioned) == (1, 0, 0, [])
    (conflict,) = res.conflicts
    assert (conflict.new_id, conflict.existing_id) == (res.ids[0], first.ids[0])
    assert (conflict.new_text, conflict.existing_text) == (HS256, RS256)
    assert conflict.distance == pytest.approx(1 - math.cos(math.radians(40)), abs=1e-5)
    assert 0.15 <= conflict.distance < 0.35
    assert statuses(engine, first.ids[0], res.ids[0]) == ["active", "active"]

    assert engine.supersede({"old_id": first.ids[0], "new_id": res.ids[0]}).superseded
    old = engine.get(first.ids[0])
    assert (old.status, old.superseded_by) == ("expired", res.ids[0])


def test_a_changed_value_in_the_conflict_band_is_not_a_version(engine):
    """The port changed and nothing else, 0.234 apart: ``save``'s rule would make it the
    next version; ``store`` stores it and flags the pair."""
    first = engine.store({"entries": [entry(PORT_8080, 0)]})
    res = engine.store({"entries": [entry(PORT_9090, 40)]})
    assert (res.stored, res.versioned) == (1, [])
    assert [(c.new_id, c.existing_id) for c in res.conflicts] == [(res.ids[0], first.ids[0])]
    assert statuses(engine, first.ids[0], res.ids[0]) == ["active", "active"]
    assert len(engine.history(res.ids[0]).versions) == 1
    assert engine.conflicts("pending").total == 1


def test_past_the_bands_store_flags_a_changed_value_for_the_caller(engine):
    """0.5 apart, the port changed: stored, not a version, both active, and the pair
    reported in ``conflicts`` so that the caller, told of it, may supersede."""
    first = engine.store({"entries": [entry(PORT_8080, 0)]})
    res = engine.store({"entries": [entry(PORT_9090, 60)]})
    assert (res.stored, res.versioned) == (1, [])
    assert [(c.new_id, c.existing_id) for c in res.conflicts] == [(res.ids[0], first.ids[0])]
    assert statuses(engine, first.ids[0], res.ids[0]) == ["active", "active"]
    engine.supersede({"old_id": first.ids[0], "new_id": res.ids[0]})
    assert statuses(engine, first.ids[0], res.ids[0]) == ["expired", "active"]


def test_past_the_bands_another_fact_is_not_flagged(engine):
    """0.5 apart and not the same statement with a value changed: nothing flagged."""
    first = engine.store({"entries": [entry("The billing team meets on Mondays", 0)]})
    res = engine.store({"entries": [entry("The search index is rebuilt nightly", 60)]})
    assert (res.stored, res.conflicts, res.versioned) == (1, [], [])
    assert statuses(engine, first.ids[0], res.ids[0]) == ["active", "active"]


# ---------------------------------------------------------------- the duplicate band


def test_a_changed_value_in_the_duplicate_band_is_reported_as_versioned(engine):
    """0.015 apart: the next version, counted in ``stored``, its id in ``ids``, and named
    with the id it replaced; a supersede of the pair after it changes nothing."""
    first = engine.store({"entries": [entry(PORT_8080, 0, tags=["api"])]})
    old_id = first.ids[0]
    res = engine.store({"entries": [entry(PORT_9090, 10)]})
    assert (res.stored, res.merged, res.deduplicated, res.conflicts) == (1, 0, 0, [])
    new_id = res.ids[0]
    assert res.model_dump()["versioned"] == [{"id": new_id, "old_id": old_id}]
    assert [(v.version, v.status) for v in engine.history(new_id).versions] == [
        (2, "active"),
        (1, "stale"),
    ]
    before = engine.get(old_id)
    assert (before.status, before.superseded_by) == ("stale", new_id)

    # The caller settles it as Distill's contract has it: already done, so a no-op.
    assert engine.supersede({"old_id": old_id, "new_id": new_id}).superseded is True
    after = engine.get(old_id)
    assert after.model_dump() == before.model_dump()
    assert engine.get(new_id).status == "active"
    assert engine.supersede({"old_id": old_id, "new_id": new_id}).superseded is True


def test_supersede_of_an_older_version_by_a_newer_one_is_a_no_op(engine):
    """v1 is stale, pointing to v2; v3 is newer still: supersede(v1, v3) is done already.
    Other pairs keep their errors: a stale version by an unrelated memory, an older
    version or an unknown id (409), an unknown old id (404), an expired memory (409)."""
    v1 = engine.store({"entries": [entry(PORT_8080, 0)]}).ids[0]
    v2 = engine.store({"entries": [entry(PORT_9090, 10)]}).ids[0]
    third = engine.store({"entries": [entry("the api listens on port 9091", 12)]})
    v3 = third.ids[0]
    assert [(v.id, v.old_id) for v in third.versioned] == [(v3, v2)]
    assert engine.supersede({"old_id": v1, "new_id": v3}).superseded is True
    assert statuses(engine, v1, v2, v3) == ["stale", "stale", "active"]
    assert engine.get(v1).superseded_by == v2

    other = engine.store({"entries": [entry("the cache is Redis", 90, 60)]}).ids[0]
    with pytest.raises(ConflictStateError):
        engine.supersede({"old_id": v1, "new_id": other})
    with pytest.raises(ConflictStateError):
        engine.supersede({"old_id": v2, "new_id": v1})
    with pytest.raises(ConflictStateError):
        engine.supersede({"old_id": v1, "new_id": "0" * 16})  # stale: 409 first, as before
    with pytest.raises(NotFoundError):
        engine.supersede({"old_id": "0" * 16, "new_id": v3})
    engine.supersede({"old_id": other, "new_id": v3})
    with pytest.raises(ConflictStateError):
        engine.supersede({"old_id": other, "new_id": v3})  # expired, not versioned
    assert statuses(engine, v1, v2, v3, other) == ["stale", "stale", "active", "expired"]


def test_a_batch_reports_the_version_one_of_its_entries_made(engine):
    """One request: its second entry updates a stored memory, its third the request's own
    first entry (both in the duplicate band). Each version is named with what it
    replaced."""
    stored = engine.store({"entries": [entry("the worker runs 4 threads", 90, 45)]}).ids[0]
    res = engine.store(
        {
            "entries": [
                entry(PORT_8080, 0),
                entry("the worker runs 8 threads", 90, 50),
                entry(PORT_9090, 8),
            ]
        }
    )
    assert (res.stored, res.merged, res.deduplicated, res.conflicts) == (3, 0, 0, [])
    assert [(v.id, v.old_id) for v in res.versioned] == [
        (res.ids[1], stored),
        (res.ids[2], res.ids[0]),
    ]
    assert statuses(engine, stored, *res.ids) == ["stale", "stale", "active", "active"]


# ---------------------------------------------------------------- the local model


@pytest.mark.slow
def test_where_the_local_model_puts_the_examples(offline_engine):
    """With the model a user without an API key has: the seed's RS256 → HS256 pair is
    past the bands (0.45), so ``store`` stores it and flags nothing (the explicit
    embeddings above place it where Distill's example has it); "port 8080" → "port
    9090" is in the conflict band (0.22): stored and flagged, both active."""
    local = offline_engine
    assert distance(local, RS256, HS256) >= 0.35
    local.store({"entries": [{"text": RS256}]})
    res = local.store({"entries": [{"text": HS256}]})
    assert (res.stored, res.conflicts, res.versioned) == (1, [], [])

    assert 0.15 <= distance(local, PORT_8080, PORT_9090) < 0.35
    first = local.store({"entries": [{"text": PORT_8080, "project": "p"}]})
    res = local.store({"entries": [{"text": PORT_9090, "project": "p"}]})
    assert (res.stored, res.versioned) == (1, [])
    assert [(c.new_id, c.existing_id) for c in res.conflicts] == [(res.ids[0], first.ids[0])]
    assert statuses(local, first.ids[0], res.ids[0]) == ["active", "active"]
