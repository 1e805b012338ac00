"""Distill's memory test-suite (``pkg/memory/*_test.go``), ported to memloom's library API.

Embeddings are 2-d unit vectors built from angles, so every distance is known:
the cosine distance between ``vec(0)`` and ``vec(a)`` is ``1 - cos(a)``, and with a
``query_embedding`` the recalled ``similarity`` is exactly that cosine (up to the
float32 the store keeps vectors in). Every test passes its own embeddings: the
local embedding model must never load here (the ``_model_must_not_load`` guard).
"""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import ValidationError

import memloom
from memloom.store.base import ConflictStateError, DimensionError, NotFoundError
from tests.support.backdoor import set_created_at

# Distill's distance bands (cosine distance): below DEDUP the same memory, below
# CONFLICT a possible conflict, otherwise unrelated.
DEDUP = 0.15
CONFLICT = 0.35
#: Well above float32 rounding (~6e-8) so the side of a band edge is unambiguous.
EPS = 1e-6
SIM_TOL = 1e-6  # similarities come back from float32 vectors, rounded to 6 places


def vec(angle: float) -> list[float]:
    """Unit vector at ``angle`` radians: cosine distance to vec(0) is 1 - cos(angle)."""
    return [math.cos(angle), math.sin(angle)]


def angle_for(distance: float) -> float:
    return math.acos(1.0 - distance)


def at_distance(distance: float) -> list[float]:
    """A vector at exactly ``distance`` (cosine) from vec(0)."""
    return vec(angle_for(distance))


def put(m: memloom.Memloom, text: str, embedding: list[float], **fields: Any) -> str:
    """Store one entry that must be stored as a new memory; returns its id."""
    resp = m.store({"entries": [{"text": text, "embedding": embedding, **fields}]})
    assert resp.stored == 1, resp
    return resp.ids[0]


def recall_ids(m: memloom.Memloom, **request: Any) -> list[str]:
    return [mem.id for mem in m.recall(request).memories]


def backdate(m: memloom.Memloom, memory_id: str, *, hours: float, created: bool = False) -> float:
    """Back door: move a memory's last_referenced (and optionally created_at) into the past.

    The public API has no way to age a memory; the database is written directly.
    Returns the timestamp written.
    """
    when = time.time() - hours * 3600
    with m.backend.transaction():
        m.backend.update(memory_id, last_referenced=when)
        if created:  # created_at is not updatable through the backend API
            set_created_at(m.backend, memory_id, when)
    return when


def _classify_available() -> bool:
    try:
        from memloom.detect import classify  # noqa: F401
    except ImportError:
        return False
    return True


needs_detect = pytest.mark.skipif(
    not _classify_available(),
    reason="memloom.detect.classify is not importable yet (the detector is being written)",
)


@pytest.fixture(autouse=True)
def _model_must_not_load(engine, monkeypatch):
    """Fail loudly if anything here would load the ONNX embedding model."""

    def refuse(*_args: Any, **_kwargs: Any) -> None:
        raise AssertionError("the embedding model must not load in the Distill tests")

    if hasattr(engine.embedder, "_load"):
        monkeypatch.setattr(engine.embedder, "_load", refuse)
    monkeypatch.setattr(engine.embedder, "embed", refuse)
    monkeypatch.setattr(engine.embedder, "embed_query", refuse)


# ---------------------------------------------------------------- store and recall


def test_store_then_recall_ranks_closest_embedding_first(engine):
    resp = engine.store(
        {
            "session_id": "s1",
            "entries": [
                {
                    "text": "auth service signs JWT with RS256",
                    "embedding": vec(0),
                    "source": "code_review",
                    "tags": ["auth"],
                },
                {
                    "text": "payments go through Stripe",
                    "embedding": vec(math.pi / 2),
                    "source": "docs",
                    "tags": ["payments"],
                },
            ],
        }
    )
    assert (resp.stored, resp.merged, resp.deduplicated, resp.total_memories) == (2, 0, 0, 2)
    assert len(resp.ids) == 2 and resp.ids[0] != resp.ids[1]
    assert resp.conflicts == []

    out = engine.recall({"query_embedding": vec(0.05), "max_results": 5})
    assert [m.id for m in out.memories] == resp.ids
    first, second = out.memories
    assert first.source == "code_review" and first.tags == ["auth"]
    assert first.similarity == pytest.approx(math.cos(0.05), abs=SIM_TOL)
    assert second.similarity == pytest.approx(math.cos(math.pi / 2 - 0.05), abs=SIM_TOL)
    # recency_weight defaults to 0: the score is the similarity.
    assert first.relevance == pytest.approx(first.similarity, abs=SIM_TOL)
    assert engine.get(resp.ids[0]).session_id == "s1"


def test_recall_orders_all_candidates_by_similarity(engine):
    angles = [0.0, 0.9, 1.8, 2.7]  # neighbours 1 - cos(0.9) = 0.378 apart: no bands
    names = ["alpha", "bravo", "charlie", "delta"]
    ids = [put(engine, f"a note on {names[i]}", vec(a)) for i, a in enumerate(angles)]
    out = engine.recall({"query_embedding": vec(2.7)})
    assert [m.id for m in out.memories] == list(reversed(ids))
    assert [m.similarity for m in out.memories] == pytest.approx(
        [math.cos(2.7 - a) for a in reversed(angles)], abs=SIM_TOL
    )


def test_store_keeps_every_field_of_the_entry(engine):
    expires = datetime.now(UTC) + timedelta(days=3)
    mid = put(
        engine,
        "the API listens on port 8080",
        vec(0),
        source="docs/dev.md",
        tags=["config", "port"],
        metadata={"line": 12},
        type="procedure",
        project="acme",
        expires_at=expires,
        sensitivity=2,
    )
    doc = engine.get(mid)
    assert doc.text == "the API listens on port 8080"
    assert doc.source == "docs/dev.md"
    assert doc.tags == ["config", "port"]
    assert doc.metadata == {"line": 12}
    assert doc.type == "procedure"
    assert doc.project == "acme"
    assert doc.sensitivity == 2
    assert doc.status == "active"
    assert doc.access_count == 0
    assert doc.superseded_by is None
    assert abs(doc.expires_at - expires) < timedelta(milliseconds=1)


def test_recall_stats_count_candidates_returned_and_tokens(engine):
    texts = ["a" * 10, "b" * 7, "c" * 4]  # 3 + 2 + 1 tokens (ceil(len / 4))
    for text, angle in zip(texts, (0.0, 1.0, 2.0), strict=True):
        put(engine, text, vec(angle))
    out = engine.recall({"query_embedding": vec(0), "max_results": 2})
    assert out.stats.candidates == 3
    assert out.stats.returned == 2
    assert out.stats.token_count == 3 + 2
    assert [m.text for m in out.memories] == texts[:2]


def test_recall_tag_filter_keeps_only_tagged_memories(engine):
    auth1 = put(engine, "auth uses JWT", vec(0), tags=["auth"])
    put(engine, "payments use Stripe", vec(math.pi / 2), tags=["payments"])
    auth2 = put(engine, "auth also uses OAuth", vec(math.pi), tags=["auth", "oauth"])
    out = engine.recall({"query_embedding": vec(0), "tags": ["auth"]})
    assert [m.id for m in out.memories] == [auth1, auth2]
    assert out.stats.candidates == 2


def test_recall_touches_only_the_returned_memories(engine):
    near = put(engine, "near memory", vec(0))
    far = put(engine, "far memory", vec(2.0))
    old = backdate(engine, near, hours=5)
    old_far = backdate(engine, far, hours=5)  # each memory against its own backdate
    before = time.time()
    assert recall_ids(engine, query_embedding=vec(0), max_results=1) == [near]
    touched, untouched = engine.get(near), engine.get(far)
    assert touched.access_count == 1
    # timestamps round-trip through datetime (microseconds): allow 1 ms
    assert touched.last_referenced.timestamp() >= before - 1e-3 > old
    assert untouched.access_count == 0
    assert untouched.last_referenced.timestamp() == pytest.approx(old_far, abs=1e-3)


# ---------------------------------------------------------------- write-time dedup


def test_exact_text_is_merged_into_the_existing_memory(engine):
    first = put(engine, "Run the tests with make check", vec(0), tags=["ci"])
    resp = engine.store(
        {
            "entries": [
                {"text": "Run the tests with make check", "embedding": vec(0), "tags": ["make"]}
            ]
        }
    )
    assert (resp.stored, resp.merged, resp.deduplicated) == (0, 1, 0)
    assert resp.ids == [first]
    assert resp.total_memories == 1
    assert resp.conflicts == []
    doc = engine.get(first)
    assert doc.tags == ["ci", "make"]
    assert doc.access_count == 1


def test_exact_text_match_ignores_case_and_spacing(engine):
    first = put(engine, "Deploy with  Make", vec(0))
    resp = engine.store({"entries": [{"text": "  deploy WITH make\n", "embedding": vec(0)}]})
    assert (resp.stored, resp.merged, resp.ids) == (0, 1, [first])
    assert engine.get(first).text == "Deploy with  Make"


def test_near_duplicate_is_folded_into_the_existing_memory(engine):
    first = put(engine, "JWT uses RS256 for signing", vec(0), source="docs", tags=["auth"])
    old_ref = backdate(engine, first, hours=10)
    started = time.time()
    resp = engine.store(
        {
            "entries": [
                {
                    "text": "tokens are signed with RS256",
                    "embedding": at_distance(0.05),
                    "source": "code",
                    "tags": ["jwt", "auth"],
                    "metadata": {"pr": 7},
                }
            ]
        }
    )
    assert (resp.stored, resp.merged, resp.deduplicated) == (0, 0, 1)
    assert resp.ids == [first]
    assert resp.total_memories == 1
    assert resp.conflicts == []
    doc = engine.get(first)
    assert doc.text == "JWT uses RS256 for signing"  # the existing memory wins
    assert doc.tags == ["auth", "jwt"]  # union, existing order first
    assert doc.access_count == 1
    assert doc.last_referenced.timestamp() >= started - 1e-3 > old_ref
    assert doc.source == "docs"
    assert doc.metadata == {"pr": 7, "also_sources": ["code"]}


def test_distance_just_below_dedup_threshold_is_a_duplicate(engine):
    first = put(engine, "alpha", vec(0))
    resp = engine.store({"entries": [{"text": "bravo", "embedding": at_distance(DEDUP - EPS)}]})
    assert (resp.stored, resp.deduplicated, resp.ids, resp.conflicts) == (0, 1, [first], [])


def test_near_duplicates_inside_one_request_collapse(engine):
    resp = engine.store(
        {
            "entries": [
                {"text": "alpha", "embedding": vec(0), "tags": ["x"]},
                {"text": "bravo", "embedding": at_distance(0.01), "tags": ["y"]},
            ]
        }
    )
    assert (resp.stored, resp.deduplicated, resp.total_memories) == (1, 1, 1)
    assert resp.ids[0] == resp.ids[1]
    assert engine.get(resp.ids[0]).tags == ["x", "y"]


def test_tags_gained_by_dedup_filter_recall_and_forget(engine):
    first = put(engine, "alpha", vec(0), tags=["old"])
    engine.store({"entries": [{"text": "bravo", "embedding": vec(0), "tags": ["new"]}]})
    assert recall_ids(engine, query_embedding=vec(0), tags=["new"]) == [first]
    assert engine.forget({"tags": ["new"]}).removed == 1
    assert engine.stats().total_memories == 0


def test_dedup_keeps_the_higher_sensitivity(engine):
    first = put(engine, "alpha", vec(0), sensitivity=1)
    engine.store({"entries": [{"text": "bravo", "embedding": vec(0), "sensitivity": 3}]})
    assert engine.get(first).sensitivity == 3


def test_expired_memory_is_not_a_dedup_target(engine):
    old = put(engine, "original fact", vec(0))
    assert engine.expire({"ids": [old]}).expired == 1
    resp = engine.store({"entries": [{"text": "updated fact", "embedding": vec(0)}]})
    assert (resp.stored, resp.deduplicated, resp.total_memories) == (1, 0, 2)
    assert resp.ids[0] != old
    assert resp.conflicts == []


def test_expired_memory_is_not_an_exact_text_merge_target(engine):
    old = put(engine, "same words", vec(0))
    engine.expire({"ids": [old]})
    resp = engine.store({"entries": [{"text": "same words", "embedding": vec(0)}]})
    assert (resp.stored, resp.merged) == (1, 0)
    assert resp.ids[0] != old


def test_ttl_expired_memory_is_not_a_dedup_target(engine):
    past = datetime.now(UTC) - timedelta(hours=1)
    old = put(engine, "short lived", vec(0), expires_at=past)
    resp = engine.store({"entries": [{"text": "long lived", "embedding": vec(0)}]})
    assert (resp.stored, resp.deduplicated) == (1, 0)
    assert resp.ids[0] != old


def test_dedup_does_not_cross_projects(engine):
    put(engine, "alpha", vec(0), project="one")
    resp = engine.store({"entries": [{"text": "bravo", "embedding": vec(0), "project": "two"}]})
    assert (resp.stored, resp.deduplicated, resp.total_memories) == (1, 0, 2)


# ---------------------------------------------------------------- conflicts


def test_conflict_band_stores_and_reports_both_sides(engine):
    existing = put(engine, "auth uses JWT with RS256", vec(0))
    resp = engine.store(
        {"entries": [{"text": "auth uses HMAC with HS256", "embedding": at_distance(0.25)}]}
    )
    assert (resp.stored, resp.deduplicated, resp.total_memories) == (1, 0, 2)
    assert len(resp.conflicts) == 1
    c = resp.conflicts[0]
    assert c.conflict_id
    assert c.new_id == resp.ids[0] != existing
    assert c.existing_id == existing
    assert c.new_text == "auth uses HMAC with HS256"
    assert c.existing_text == "auth uses JWT with RS256"
    assert c.distance == pytest.approx(0.25, abs=SIM_TOL)
    assert engine.stats().conflicts_pending == 1


@pytest.mark.parametrize(
    ("distance", "conflict"),
    [
        (DEDUP + EPS, True),  # just past the dedup band: a conflict, not a duplicate
        (CONFLICT - EPS, True),  # just inside the conflict band
        (CONFLICT + EPS, False),  # just past it: unrelated
        (1 - math.cos(2.0), False),  # far apart
    ],
    ids=["dedup+eps", "conflict-eps", "conflict+eps", "far"],
)
def test_distance_bands_around_the_edges(engine, distance, conflict):
    existing = put(engine, "alpha", vec(0))
    resp = engine.store({"entries": [{"text": "bravo", "embedding": at_distance(distance)}]})
    assert (resp.stored, resp.deduplicated, resp.total_memories) == (1, 0, 2)
    assert [c.existing_id for c in resp.conflicts] == ([existing] if conflict else [])


def test_distance_exactly_at_dedup_threshold_is_a_conflict(engine):
    # Distill: `dist < DedupThreshold` is a duplicate, so 0.15 itself is a conflict.
    existing = put(engine, "alpha", vec(0))
    resp = engine.store({"entries": [{"text": "bravo", "embedding": at_distance(DEDUP)}]})
    assert (resp.stored, resp.deduplicated) == (1, 0)
    assert [c.existing_id for c in resp.conflicts] == [existing]
    assert resp.conflicts[0].distance == pytest.approx(DEDUP, abs=SIM_TOL)


def test_distance_exactly_at_conflict_threshold_is_not_a_conflict(engine):
    # Distill: `dist < conflictThreshold` is a conflict, so 0.35 itself is unrelated.
    put(engine, "alpha", vec(0))
    resp = engine.store({"entries": [{"text": "bravo", "embedding": at_distance(CONFLICT)}]})
    assert resp.stored == 1
    assert resp.conflicts == []


def test_one_entry_can_conflict_with_several_memories(engine):
    west = put(engine, "deploy to us-west-2", vec(0))
    east = put(engine, "deploy to us-east-1", vec(1.2))  # 0.638 from west: unrelated
    resp = engine.store({"entries": [{"text": "deploy to gcp central", "embedding": vec(0.6)}]})
    assert resp.stored == 1
    assert sorted(c.existing_id for c in resp.conflicts) == sorted([west, east])
    assert {c.new_id for c in resp.conflicts} == {resp.ids[0]}
    assert len({c.conflict_id for c in resp.conflicts}) == 2
    for c in resp.conflicts:
        assert c.distance == pytest.approx(1 - math.cos(0.6), abs=SIM_TOL)
    assert engine.stats().conflicts_pending == 2


def test_conflict_does_not_block_the_store(engine):
    mysql = put(engine, "use MySQL", vec(0))
    # distance 0.235, and more than one name changed: a conflict (issue 34)
    postgres = put(engine, "use Postgres for new services", vec(0.7))
    out = engine.recall({"query_embedding": vec(0.35)})
    assert sorted(m.id for m in out.memories) == sorted([mysql, postgres])


def test_expired_memory_raises_no_conflict(engine):
    old = put(engine, "old decision", vec(0))
    engine.expire({"ids": [old]})
    resp = engine.store({"entries": [{"text": "new decision", "embedding": vec(0.7)}]})
    assert resp.stored == 1
    assert resp.conflicts == []


def test_entry_without_embedding_raises_no_conflict(engine):
    # The store holds 2-d caller vectors, so the 384-d local model is never used:
    # the entry is stored keyword-only and cannot be compared by distance.
    put(engine, "some fact", vec(0))
    resp = engine.store({"entries": [{"text": "a related fact"}]})
    assert (resp.stored, resp.total_memories, resp.conflicts) == (1, 2, [])


# ---------------------------------------------------------------- expiry and TTL


def test_expire_hides_memory_unless_include_expired(engine):
    arch = put(engine, "use Postgres for persistence", vec(0), tags=["arch"])
    auth = put(engine, "auth uses JWT", vec(1.0), tags=["auth"])
    assert engine.expire({"ids": [arch]}).expired == 1
    assert recall_ids(engine, query_embedding=vec(0)) == [auth]
    assert recall_ids(engine, query_embedding=vec(0), include_expired=True) == [arch, auth]
    doc = engine.get(arch)
    assert doc.status == "expired" and doc.expired_at is not None


def test_expire_counts_only_active_known_ids(engine):
    a = put(engine, "alpha", vec(0))
    b = put(engine, "bravo", vec(1.0))
    c = put(engine, "charlie", vec(2.0))
    assert engine.expire({"ids": [a, b, "no-such-id"]}).expired == 2
    assert engine.expire({"ids": [a]}).expired == 0  # already expired
    assert engine.expire({"ids": [a, c]}).expired == 1
    assert engine.stats().active_count == 0


def test_expire_needs_at_least_one_id(engine):
    # Distill answers an empty expire with 0; memloom rejects the request instead.
    with pytest.raises(ValidationError):
        engine.expire({"ids": []})


def test_past_ttl_is_excluded_from_recall(engine):
    past = datetime.now(UTC) - timedelta(hours=1)
    resp = engine.store(
        {
            "entries": [
                {"text": "already expired by TTL", "embedding": vec(0), "expires_at": past},
                {"text": "still valid", "embedding": vec(1.0)},
            ]
        }
    )
    gone, valid = resp.ids
    assert resp.stored == 2
    out = engine.recall({"query_embedding": vec(0)})
    assert [m.text for m in out.memories] == ["still valid"]
    assert recall_ids(engine, query_embedding=vec(0), include_expired=True) == [gone, valid]
    assert engine.get(gone).status == "expired"


def test_future_ttl_is_recalled_rfc3339(engine):
    future = (datetime.now(UTC) + timedelta(hours=24)).replace(microsecond=0)
    mid = put(
        engine, "valid for a day", vec(0), expires_at=future.isoformat().replace("+00:00", "Z")
    )
    assert recall_ids(engine, query_embedding=vec(0)) == [mid]
    doc = engine.get(mid)
    assert doc.status == "active"
    assert doc.expires_at == future


def test_stats_count_expired_memories(engine):
    past = datetime.now(UTC) - timedelta(minutes=5)
    active = put(engine, "active entry", vec(0))
    explicit = put(engine, "will expire", vec(1.0))
    put(engine, "ttl entry", vec(2.0), expires_at=past)
    engine.expire({"ids": [explicit]})
    stats = engine.stats()
    assert (stats.total_memories, stats.active_count, stats.expired_count) == (3, 1, 2)
    assert stats.stale_count == 0
    assert recall_ids(engine, query_embedding=vec(0)) == [active]


# ---------------------------------------------------------------- supersede


def test_supersede_unknown_old_id_is_not_found(engine):
    with pytest.raises(NotFoundError):
        engine.supersede({"old_id": "nonexistent"})


def test_supersede_unknown_new_id_is_not_found(engine):
    old = put(engine, "use MySQL", vec(0))
    with pytest.raises(NotFoundError):
        engine.supersede({"old_id": old, "new_id": "also-nonexistent"})
    assert engine.get(old).status == "active"


def test_supersede_already_expired_is_a_state_conflict(engine):
    old = put(engine, "old decision", vec(0))
    new = put(engine, "new decision", vec(1.5))
    engine.expire({"ids": [old]})
    with pytest.raises(ConflictStateError):
        engine.supersede({"old_id": old, "new_id": new})


def test_supersede_twice_is_a_state_conflict(engine):
    old = put(engine, "old decision", vec(0))
    new = put(engine, "new decision", vec(1.5))
    assert engine.supersede({"old_id": old, "new_id": new}).superseded is True
    with pytest.raises(ConflictStateError):
        engine.supersede({"old_id": old, "new_id": new})


def test_supersede_hides_old_and_points_to_new(engine):
    old = put(engine, "use MySQL for persistence", vec(0), tags=["arch"])
    new = put(engine, "use Postgres for persistence", vec(1.5), tags=["arch"])
    assert engine.supersede({"old_id": old, "new_id": new}).superseded is True
    assert recall_ids(engine, query_embedding=vec(0)) == [new]
    assert recall_ids(engine, query_embedding=vec(0), include_expired=True) == [old, new]
    doc = engine.get(old)
    assert doc.status == "expired"
    assert doc.superseded_by == new
    assert doc.expired_at is not None
    stats = engine.stats()
    assert (stats.active_count, stats.expired_count) == (1, 1)


def test_supersede_without_replacement(engine):
    old = put(engine, "obsolete", vec(0))
    assert engine.supersede({"old_id": old}).superseded is True
    doc = engine.get(old)
    assert (doc.status, doc.superseded_by) == ("expired", None)


# ---------------------------------------------------------------- forget


def test_forget_by_ids_counts_only_existing(engine):
    a = put(engine, "alpha", vec(0))
    b = put(engine, "bravo", vec(1.0))
    c = put(engine, "charlie", vec(2.0))
    resp = engine.forget({"ids": [a, c, "no-such-id"]})
    assert (resp.removed, resp.total_memories) == (2, 1)
    with pytest.raises(NotFoundError):
        engine.get(a)
    assert engine.get(b).id == b


def test_forget_by_tags(engine):
    engine.store(
        {
            "entries": [
                {"text": "old deprecated info", "embedding": vec(0), "tags": ["deprecated"]},
                {"text": "current auth info", "embedding": vec(1.0), "tags": ["auth"]},
                {
                    "text": "another stale item",
                    "embedding": vec(2.0),
                    "tags": ["deprecated", "misc"],
                },
            ]
        }
    )
    resp = engine.forget({"tags": ["deprecated"]})
    assert (resp.removed, resp.total_memories) == (2, 1)
    assert [m.text for m in engine.recall({"query_embedding": vec(0)}).memories] == [
        "current auth info"
    ]


def test_forget_before_removes_only_older_memories(engine):
    old = put(engine, "old memory", vec(0))
    recent = put(engine, "recent memory", vec(1.0))
    backdate(engine, old, hours=48, created=True)
    resp = engine.forget({"before": datetime.now(UTC) - timedelta(hours=24)})
    assert (resp.removed, resp.total_memories) == (1, 1)
    assert recall_ids(engine, query_embedding=vec(0), include_expired=True) == [recent]


def test_forget_older_than_is_an_alias_of_before(engine):
    old = put(engine, "old memory", vec(0))
    put(engine, "recent memory", vec(1.0))
    backdate(engine, old, hours=48, created=True)
    cutoff = (datetime.now(UTC) - timedelta(hours=24)).isoformat().replace("+00:00", "Z")
    resp = engine.forget({"older_than": cutoff})
    assert (resp.removed, resp.total_memories) == (1, 1)


def test_forget_before_and_older_than_must_agree(engine):
    now = datetime.now(UTC)
    with pytest.raises(ValidationError):
        engine.forget({"before": now, "older_than": now - timedelta(hours=1)})


def test_forget_combined_tags_and_before_narrow(engine):
    old_dep = put(engine, "old deprecated", vec(0), tags=["deprecated"])
    put(engine, "new deprecated", vec(1.0), tags=["deprecated"])
    old_kept = put(engine, "old but current", vec(2.0), tags=["auth"])
    backdate(engine, old_dep, hours=48, created=True)
    backdate(engine, old_kept, hours=48, created=True)
    resp = engine.forget({"tags": ["deprecated"], "before": datetime.now(UTC) - timedelta(hours=1)})
    assert (resp.removed, resp.total_memories) == (1, 2)
    with pytest.raises(NotFoundError):
        engine.get(old_dep)


def test_forget_combined_ids_and_tags_narrow(engine):
    a = put(engine, "alpha", vec(0), tags=["x"])
    b = put(engine, "bravo", vec(1.0), tags=["y"])
    resp = engine.forget({"ids": [a, b], "tags": ["x"]})
    assert (resp.removed, resp.total_memories) == (1, 1)
    assert engine.get(b).id == b


def test_forget_without_criteria_removes_nothing(engine):
    put(engine, "alpha", vec(0))
    put(engine, "bravo", vec(1.0))
    resp = engine.forget({})
    assert (resp.removed, resp.total_memories) == (0, 2)


def test_forget_drops_conflicts_of_removed_memories(engine):
    put(engine, "alpha", vec(0))
    resp = engine.store({"entries": [{"text": "bravo", "embedding": at_distance(0.25)}]})
    assert engine.stats().conflicts_pending == 1
    engine.forget({"ids": resp.ids})
    assert engine.stats().conflicts_pending == 0


# ---------------------------------------------------------------- relevance


def test_boost_tags_add_a_tenth(engine):
    # The query lies halfway between the two memories, so only the boost separates them.
    auth = put(engine, "auth uses JWT", vec(0), tags=["auth"])
    db = put(engine, "db uses Postgres", vec(1.0), tags=["database"])
    out = engine.recall({"query_embedding": vec(0.5), "boost_tags": ["database", "unused"]})
    assert [m.id for m in out.memories] == [db, auth]
    boosted, plain = out.memories
    assert boosted.relevance == pytest.approx(math.cos(0.5) + 0.1, abs=SIM_TOL)
    assert plain.relevance == pytest.approx(math.cos(0.5), abs=SIM_TOL)
    assert boosted.similarity == pytest.approx(plain.similarity, abs=SIM_TOL)


def test_boost_tags_that_match_nothing_change_nothing(engine):
    a = put(engine, "entry a", vec(0), tags=["a"])
    b = put(engine, "entry b", vec(0.6), tags=["b"])
    out = engine.recall({"query_embedding": vec(0), "boost_tags": ["zzz"]})
    assert [m.id for m in out.memories] == [a, b]
    assert [m.relevance for m in out.memories] == pytest.approx([1.0, math.cos(0.6)], abs=SIM_TOL)


def test_min_relevance_filters_low_scores(engine):
    high = put(engine, "highly relevant", vec(0))
    mid = put(engine, "a note on another topic", vec(0.6))  # cos 0.825
    put(engine, "not relevant", vec(2.0))
    out = engine.recall({"query_embedding": vec(0), "min_relevance": 0.8})
    assert [m.id for m in out.memories] == [high, mid]
    assert out.stats.candidates == 2
    assert recall_ids(engine, query_embedding=vec(0), min_relevance=0.9) == [high]


def test_min_relevance_applies_to_the_boosted_score(engine):
    tagged = put(engine, "tagged entry", vec(math.acos(0.75)), tags=["hot"])
    assert recall_ids(engine, query_embedding=vec(0), min_relevance=0.8) == []
    out = engine.recall({"query_embedding": vec(0), "min_relevance": 0.8, "boost_tags": ["hot"]})
    assert [m.id for m in out.memories] == [tagged]
    assert out.memories[0].relevance == pytest.approx(0.85, abs=SIM_TOL)


def test_without_min_relevance_a_negative_similarity_is_kept_at_relevance_zero(engine):
    # Issue 16: relevance is always within [0, 1]; the similarity stays the cosine.
    a = put(engine, "entry a", vec(0))
    b = put(engine, "entry b", vec(2.0))  # similarity cos(2.0) = -0.416
    out = engine.recall({"query_embedding": vec(0)})
    assert [m.id for m in out.memories] == [a, b]
    assert out.memories[1].relevance == 0.0
    assert out.memories[1].similarity == pytest.approx(math.cos(2.0), abs=SIM_TOL)


def test_min_relevance_zero_keeps_everything(engine):
    # Distill: `if req.MinRelevance > 0 && relevance < req.MinRelevance { skip }`.
    a = put(engine, "entry a", vec(0))
    b = put(engine, "entry b", vec(2.0))  # negative similarity
    assert recall_ids(engine, query_embedding=vec(0), min_relevance=0.0) == [a, b]


def test_task_context_boosts_a_matching_source(engine):
    docs = put(engine, "JWT token format", vec(0), source="docs")
    review = put(engine, "JWT validation logic", vec(1.0), source="code_review")
    out = engine.recall(
        {"query_embedding": vec(0.5), "task_context": "reviewing code_review findings"}
    )
    assert [m.id for m in out.memories] == [review, docs]
    assert out.memories[0].relevance == pytest.approx(math.cos(0.5) + 0.05, abs=SIM_TOL)
    assert out.memories[1].relevance == pytest.approx(math.cos(0.5), abs=SIM_TOL)


def test_task_context_source_match_is_case_insensitive(engine):
    put(engine, "JWT validation logic", vec(0), source="Code_Review")
    out = engine.recall(
        {
            "query_embedding": vec(0),
            "recency_weight": 0.0,
            "task_context": "While REVIEWING CODE_REVIEW notes",
        }
    )
    # similarity 1 plus the boost, capped
    assert out.memories[0].relevance == 1.0
    out = engine.recall({"query_embedding": vec(0.5), "task_context": "CODE_review"})
    assert out.memories[0].relevance == pytest.approx(math.cos(0.5) + 0.05, abs=SIM_TOL)


def test_task_context_boost_is_for_the_source_only(engine):
    # Distill also adds 0.05 when the memory's *text* contains the task context;
    # memloom's contract boosts on the source alone.
    put(engine, "deploy with terraform apply", vec(0), source="docs")
    out = engine.recall({"query_embedding": vec(0.5), "task_context": "terraform"})
    assert out.memories[0].relevance == pytest.approx(math.cos(0.5), abs=SIM_TOL)


def test_relevance_is_capped_at_one(engine):
    put(engine, "perfect match", vec(0), tags=["auth"], source="auth")
    out = engine.recall({"query_embedding": vec(0), "boost_tags": ["auth"], "task_context": "auth"})
    assert out.memories[0].relevance == 1.0
    assert out.memories[0].similarity == pytest.approx(1.0, abs=SIM_TOL)


def test_recency_weight_blends_in_recency(engine):
    stale = put(engine, "stale but exact", vec(0))
    fresh = put(engine, "fresh but further", vec(math.acos(0.8)))
    backdate(engine, stale, hours=48)  # recency 1 / (1 + 48/24) = 1/3
    out = engine.recall({"query_embedding": vec(0), "recency_weight": 0.5})
    assert [m.id for m in out.memories] == [fresh, stale]
    assert out.memories[0].relevance == pytest.approx(0.5 * 0.8 + 0.5 * 1.0, abs=1e-4)
    assert out.memories[1].relevance == pytest.approx(0.5 * 1.0 + 0.5 / 3, abs=1e-4)


def test_without_recency_weight_age_does_not_matter(engine):
    stale = put(engine, "stale but exact", vec(0))
    fresh = put(engine, "fresh but further", vec(math.acos(0.8)))
    backdate(engine, stale, hours=48)
    out = engine.recall({"query_embedding": vec(0)})
    assert [m.id for m in out.memories] == [stale, fresh]
    assert [m.relevance for m in out.memories] == pytest.approx([1.0, 0.8], abs=SIM_TOL)


def test_full_recency_weight_scores_by_recency_alone(engine):
    stale = put(engine, "stale", vec(0))
    backdate(engine, stale, hours=72)  # 1 / (1 + 3) = 0.25
    out = engine.recall({"query_embedding": vec(math.pi / 2), "recency_weight": 1.0})
    assert out.memories[0].relevance == pytest.approx(0.25, abs=1e-4)


# ---------------------------------------------------------------- token budget and limits


def test_token_budget_skips_what_does_not_fit_and_keeps_going(engine):
    # Distill stops at the first entry that overflows the budget; memloom skips it
    # and still takes later, smaller entries.
    small = put(engine, "s" * 8, vec(0))  # 2 tokens, best match
    big = put(engine, "b" * 100, vec(0.9))  # 25 tokens: cannot fit
    medium = put(engine, "m" * 20, vec(1.8))  # 5 tokens: fits (2 + 5 = 7)
    put(engine, "t" * 16, vec(2.7))  # 4 tokens: 7 + 4 > 10, skipped
    out = engine.recall({"query_embedding": vec(0), "max_tokens": 10})
    assert [m.id for m in out.memories] == [small, medium]
    assert out.stats.token_count == 7
    assert out.stats.returned == 2
    assert out.stats.candidates == 4
    assert engine.get(big).access_count == 0


def test_token_budget_may_be_filled_exactly(engine):
    a = put(engine, "a" * 12, vec(0))  # 3 tokens
    b = put(engine, "b" * 13, vec(1.0))  # ceil(13 / 4) = 4 tokens
    out = engine.recall({"query_embedding": vec(0), "max_tokens": 7})
    assert [m.id for m in out.memories] == [a, b]
    assert out.stats.token_count == 7
    assert recall_ids(engine, query_embedding=vec(0), max_tokens=6) == [a]


def test_max_results_limits_the_answer(engine):
    ids = [
        put(engine, f"a note on {w}", vec(a)) for w, a in zip("xyz", (0.0, 0.9, 1.8), strict=True)
    ]
    out = engine.recall({"query_embedding": vec(0), "max_results": 2})
    assert [m.id for m in out.memories] == ids[:2]
    assert (out.stats.candidates, out.stats.returned) == (3, 2)


# ---------------------------------------------------------------- sensitivity


def test_explicit_sensitivity_is_reported(engine):
    mid = put(engine, "Q3 pricing: customer A at $120k", vec(0), sensitivity=2)
    out = engine.recall({"query_embedding": vec(0)})
    assert out.memories[0].sensitivity == 2
    assert out.max_sensitivity == 2
    assert [(c.chunk_id, c.sensitivity) for c in out.sensitive_chunks] == [(mid, 2)]


def test_max_sensitivity_across_several_memories(engine):
    put(engine, "normal architecture notes", vec(0))
    pii = put(engine, "contact bob at his office", vec(1.5), sensitivity=1)
    cred = put(engine, "the deploy key lives in vault", vec(3.0), sensitivity=3)
    out = engine.recall({"query_embedding": vec(0.5)})
    assert out.max_sensitivity == 3
    assert {(c.chunk_id, c.sensitivity) for c in out.sensitive_chunks} == {(pii, 1), (cred, 3)}


def test_plain_memories_have_no_sensitive_chunks(engine):
    put(engine, "the service uses REST", vec(0))
    out = engine.recall({"query_embedding": vec(0)})
    assert out.max_sensitivity == 0
    assert out.sensitive_chunks == []


def test_sensitivity_does_not_change_ranking(engine):
    secret = put(engine, "highly relevant auth info", vec(0), sensitivity=3)
    plain = put(engine, "less relevant payment info", vec(1.5))
    out = engine.recall({"query_embedding": vec(0)})
    assert [m.id for m in out.memories] == [secret, plain]
    assert out.memories[0].relevance == pytest.approx(1.0, abs=SIM_TOL)


def test_recall_max_sensitivity_excludes_more_sensitive_memories(engine):
    plain = put(engine, "plain", vec(0))
    pii = put(engine, "personal", vec(1.0), sensitivity=1)
    put(engine, "credential", vec(2.0), sensitivity=3)
    out = engine.recall({"query_embedding": vec(0), "max_sensitivity": 1})
    assert [m.id for m in out.memories] == [plain, pii]
    assert out.max_sensitivity == 1
    assert [c.chunk_id for c in out.sensitive_chunks] == [pii]


def _credential_text() -> str:
    # Assembled at run time so the source file holds no scannable secret.
    # AWS's documented AKIAIOSFODNN7EXAMPLE is deliberately ignored by the detector.
    key_id = "AKIA" + "J3Q5ZL7MXW2RT4YP"
    secret = "kR8vXq2LmZ9pT4wN" + "7bYc3HdF6gJs1QeU5aVtK0oE"
    return f"aws_access_key_id = {key_id}\naws_secret_access_key = {secret}"


@needs_detect
def test_auto_classify_detects_credentials(engine):
    mid = put(engine, _credential_text(), vec(0), auto_classify=True)
    assert engine.get(mid).sensitivity == 3
    out = engine.recall({"query_embedding": vec(0)})
    assert out.max_sensitivity == 3
    assert [(c.chunk_id, c.sensitivity) for c in out.sensitive_chunks] == [(mid, 3)]


@needs_detect
def test_auto_classify_takes_the_max_of_explicit_and_detected(engine):
    detected = put(engine, _credential_text(), vec(0), auto_classify=True, sensitivity=1)
    explicit = put(
        engine, "normal text with no patterns", vec(1.5), auto_classify=True, sensitivity=3
    )
    plain = put(engine, "the service uses REST APIs", vec(3.0), auto_classify=True)
    assert engine.get(detected).sensitivity == 3
    assert engine.get(explicit).sensitivity == 3
    assert engine.get(plain).sensitivity == 0


def test_without_auto_classify_a_credential_keeps_its_explicit_level(engine):
    mid = put(engine, _credential_text(), vec(0), sensitivity=1)
    assert engine.get(mid).sensitivity == 1


# ---------------------------------------------------------------- stats


def test_empty_store_stats(engine):
    stats = engine.stats()
    assert (stats.total_memories, stats.active_count, stats.expired_count) == (0, 0, 0)
    assert stats.conflicts_pending == 0
    assert stats.by_source == {}


def test_stats_group_by_source_and_type(engine):
    engine.store(
        {
            "entries": [
                {"text": "from code review", "embedding": vec(0), "source": "code_review"},
                {"text": "from docs", "embedding": vec(1.0), "source": "docs", "type": "procedure"},
                {"text": "another review", "embedding": vec(2.0), "source": "code_review"},
            ]
        }
    )
    stats = engine.stats()
    assert stats.total_memories == 3
    assert stats.by_source == {"code_review": 2, "docs": 1}
    assert stats.by_type == {"fact": 2, "procedure": 1}
    assert stats.dimension == 2


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize("text", ["", "   \n\t"])
def test_empty_text_is_rejected(engine, text):
    # Distill silently skips empty entries; memloom rejects the whole request.
    with pytest.raises(ValidationError):
        engine.store(
            {
                "entries": [
                    {"text": text, "embedding": vec(0)},
                    {"text": "valid entry", "embedding": vec(1.0)},
                ]
            }
        )
    assert engine.stats().total_memories == 0


@pytest.mark.parametrize("request_", [{}, {"query": ""}, {"query": "   "}, {"max_results": 3}])
def test_recall_needs_a_query_or_an_embedding(engine, request_):
    with pytest.raises(ValidationError):
        engine.recall(request_)


def test_query_embedding_of_another_dimension_is_rejected(engine):
    put(engine, "two dimensional", vec(0))
    with pytest.raises(DimensionError):
        engine.recall({"query_embedding": [1.0, 0.0, 0.0]})


def test_stored_embedding_of_another_dimension_is_rejected(engine):
    put(engine, "two dimensional", vec(0))
    with pytest.raises(DimensionError):
        engine.store({"entries": [{"text": "three dimensional", "embedding": [1.0, 0.0, 0.0]}]})
    assert engine.stats().total_memories == 1


def test_mixed_dimensions_in_one_request_are_rejected(engine):
    with pytest.raises(DimensionError):
        engine.store(
            {
                "entries": [
                    {"text": "two", "embedding": vec(0)},
                    {"text": "three", "embedding": [0.0, 1.0, 0.0]},
                ]
            }
        )
    assert engine.stats().total_memories == 0


def test_recall_with_touch_false_leaves_use_counts_alone(engine):
    mid = engine.store({"entries": [{"text": "browse me", "embedding": [1.0, 0.0]}]}).ids[0]
    before = engine.get(mid)
    engine.recall({"query_embedding": [1.0, 0.0], "touch": False})
    after = engine.get(mid)
    assert (after.access_count, after.last_referenced) == (
        before.access_count,
        before.last_referenced,
    )
    engine.recall({"query_embedding": [1.0, 0.0]})
    assert engine.get(mid).access_count == before.access_count + 1
