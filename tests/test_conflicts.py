"""Resolving and reverting conflicts, through the library contract."""

from __future__ import annotations

import math

import pytest

from memloom.engine import ValidationError
from memloom.store.base import ConflictStateError, NotFoundError
from tests.test_engine import vec

#: Negated, and more besides: a conflict (the negation alone is a new version, issue 34).
NEW = "deploys never run on Fridays during a release freeze"


@pytest.fixture
def m(engine):
    """A fresh engine on each backend (tests/conftest.py's ``engine``)."""
    return engine


@pytest.fixture
def conflict(m):
    """Two memories 40 degrees apart: cosine distance 0.234, in the conflict band."""
    old = m.store({"entries": [{"text": "deploys run on Fridays", "embedding": vec(0)}]}).ids[0]
    res = m.store({"entries": [{"text": NEW, "embedding": vec(40)}]})
    assert len(res.conflicts) == 1
    return old, res.ids[0], res.conflicts[0].conflict_id


def active_texts(m) -> set[str]:
    return {d.text for d in m.list({"limit": 100}).memories}


def test_pending_conflict_is_listed_with_both_sides(m, conflict):
    old, new, cid = conflict
    listed = m.conflicts()
    assert listed.total == 1
    doc = listed.conflicts[0]
    assert (doc.id, doc.new.id, doc.existing.id, doc.status) == (cid, new, old, "pending")
    assert doc.distance == pytest.approx(1 - math.cos(math.radians(40)), abs=1e-5)
    assert m.conflicts("resolved").total == 0


@pytest.mark.parametrize(
    ("action", "survivor"),
    [("keep_new", NEW), ("keep_existing", "deploys run on Fridays")],
)
def test_keep_one_side_then_revert(m, conflict, action, survivor):
    old, new, cid = conflict
    doc = m.resolve(cid, {"action": action})
    assert (doc.status, doc.resolution) == ("resolved", action)
    assert active_texts(m) == {survivor}
    loser = old if action == "keep_new" else new
    assert m.get(loser).superseded_by == (new if action == "keep_new" else old)

    reverted = m.revert(cid)
    assert reverted.status == "pending" and reverted.resolution is None
    assert active_texts(m) == {"deploys run on Fridays", NEW}
    assert m.get(loser).superseded_by is None


def test_keep_both_changes_no_memory(m, conflict):
    _, _, cid = conflict
    m.resolve(cid, {"action": "keep_both"})
    assert len(active_texts(m)) == 2
    assert m.stats().conflicts_pending == 0


def test_merge_writes_a_new_version_and_revert_removes_it(m, conflict):
    old, new, cid = conflict
    doc = m.resolve(cid, {"action": "merge", "text": "deploys run on Fridays except in December"})
    assert active_texts(m) == {"deploys run on Fridays except in December"}
    history = m.history(old).versions
    assert [v.version for v in history] == [2, 1]
    assert m.get(new).status == "expired"
    assert doc.resolution == "merge" and doc.resolved_by == "user"
    assert doc.merged_id == history[0].id

    m.revert(cid)
    assert active_texts(m) == {"deploys run on Fridays", NEW}
    assert [v.version for v in m.history(old).versions] == [1]


def test_resolution_errors(m, conflict):
    _, _, cid = conflict
    with pytest.raises(NotFoundError):
        m.resolve("nope", {"action": "keep_both"})
    with pytest.raises(ValidationError):
        m.resolve(cid, {"action": "keep_both", "candidate_id": "someone-else"})
    with pytest.raises(Exception, match="merged text"):
        m.resolve(cid, {"action": "merge"})
    with pytest.raises(ConflictStateError):
        m.revert(cid)
    m.resolve(cid, {"action": "keep_both"})
    with pytest.raises(ConflictStateError):
        m.resolve(cid, {"action": "keep_new"})


# ---------------------------------------------------------------- settled as both true

OLD = "deploys run on Fridays"


def test_a_pair_kept_both_is_not_flagged_again(m, conflict):
    """Resolved as both true, the two beliefs are not flagged again: not when both are
    stored again, nor when the new one's words come back (after it expired) beside the
    other's next version. A third statement in the band is still flagged."""
    old, new, cid = conflict
    m.resolve(cid, {"action": "keep_both"})
    twice = m.store(
        {"entries": [{"text": OLD, "embedding": vec(0)}, {"text": NEW, "embedding": vec(40)}]}
    )
    assert (twice.merged, twice.conflicts) == (2, [])

    version = m.store({"entries": [{"text": f"{OLD} at 10:00", "embedding": vec(5)}]})
    assert [(v.id, v.old_id) for v in version.versioned] == [(version.ids[0], old)]
    m.expire({"ids": [new]})
    back = m.store({"entries": [{"text": NEW, "embedding": vec(40)}]})  # 0.18 from the version
    assert (back.stored, back.conflicts) == (1, [])
    assert m.conflicts("pending").total == 0

    other = "deploys are rolled back by the on-call engineer"
    third = m.store({"entries": [{"text": other, "embedding": vec(-30)}]})
    assert [(c.new_id, c.existing_id) for c in third.conflicts] == [(third.ids[0], version.ids[0])]
    assert m.conflicts("pending").total == 1


@pytest.mark.parametrize("action", ["keep_existing", "keep_new"])
def test_only_keep_both_settles_the_pair_for_later_writes(m, conflict, action):
    """One side chosen over the other: the loser's words said again contradict the
    winner again, and are flagged again."""
    old, new, cid = conflict
    m.resolve(cid, {"action": action})
    loser_text, loser_vec, winner = (NEW, vec(40), old)
    if action == "keep_new":
        loser_text, loser_vec, winner = (OLD, vec(0), new)
    back = m.store({"entries": [{"text": loser_text, "embedding": loser_vec}]})
    assert [(c.new_id, c.existing_id) for c in back.conflicts] == [(back.ids[0], winner)]


def test_reverting_keep_both_lets_the_pair_be_flagged_again(m, conflict):
    old, new, cid = conflict
    m.resolve(cid, {"action": "keep_both"})
    m.revert(cid)
    m.expire({"ids": [new]})
    back = m.store({"entries": [{"text": NEW, "embedding": vec(40)}]})
    assert [(c.new_id, c.existing_id) for c in back.conflicts] == [(back.ids[0], old)]


#: Another port and more besides, 0.29 apart with the local model: a conflict on every
#: path (``save`` too: not just a value changed).
BILLING = "The billing service runs on port 8081 in staging"
BILLING_NGINX = "The billing service runs on port 9090 in staging behind the nginx proxy"


@pytest.mark.slow
def test_save_does_not_flag_a_pair_kept_both_again(offline_engine):
    local = offline_engine
    first = local.save({"text": BILLING})
    second = local.save({"text": BILLING_NGINX})
    assert second.outcome == "conflict"
    local.resolve(second.conflicts[0].conflict_id, {"action": "keep_both"})
    assert local.save({"text": BILLING_NGINX}).outcome == "merged"
    local.expire({"ids": [second.id]})
    again = local.save({"text": BILLING_NGINX})
    assert (again.outcome, again.conflicts) == ("added", [])
    assert local.get(first.id).status == "active"
    assert local.conflicts("pending").total == 0
