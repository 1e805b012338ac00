"""A changed fact is never lost (issue 34): a near-duplicate that changes a value becomes
the memory's next version, on every path a distance band decides and on both backends,
with the real local embedding model (the path of a user with no API key).

``store`` keeps Distill's contract (issue 40): only the duplicate band makes a version,
and the answer names it (``versioned``); in the conflict band the pair is stored and
flagged, both active; past the bands nothing special happens. ``save`` without an LLM
still makes a version in the conflict band and a little further."""

from __future__ import annotations

import json
from typing import Any

import pytest

import memloom
from tests.test_claims import UPDATES

pytestmark = pytest.mark.slow

#: One pair per kind of value, written through store and save.
KINDS = {kind: (old, new) for kind, old, new in UPDATES}
#: Kinds whose pair the local model puts in the duplicate band (< 0.15): a version.
DUPLICATE_BAND = [
    "port",
    "version",
    "size",
    "duration",
    "url",
    "email",
    "flag",
    "time",
    "enabled",
    "negation",
]
#: Kinds whose pair it puts in the conflict band (0.15-0.35): ``store`` flags them.
CONFLICT_BAND = ["path", "ALL_CAPS", "quoted", "word swap"]


@pytest.fixture
def m(offline_engine) -> memloom.Memloom:
    return offline_engine


def open_with_llm(monkeypatch: Any, base_url: str, home: Any, backend: str) -> memloom.Memloom:
    """An engine whose LLM is the scripted server at ``base_url``."""
    monkeypatch.setenv("MEMLOOM_LLM", "openai")
    monkeypatch.setenv("MEMLOOM_LLM_BASE_URL", base_url)
    monkeypatch.setenv("MEMLOOM_LLM_MODEL", "scripted")
    monkeypatch.setenv("MEMLOOM_LLM_API_KEY", "sk-test")
    return memloom.open(home=str(home), database_url=backend)


def save_twice(
    monkeypatch: Any, home: Any, backend: str, server: Any, old: str, new: str
) -> tuple[Any, Any, list[str]]:
    """``old`` then ``new`` saved by an engine whose LLM is ``server`` (closed after):
    both answers and the active texts."""
    engine = open_with_llm(monkeypatch, server.base_url, home, backend)
    try:
        first = engine.save({"text": old})
        second = engine.save({"text": new})
        return first, second, active_texts(engine)
    finally:
        engine.close()
        server.close()


def active_texts(m: memloom.Memloom) -> list[str]:
    return sorted(doc.text for doc in m.list({"limit": 100}).memories)


def distance(m: memloom.Memloom, a: str, b: str) -> float:
    """The two texts' cosine distance with the store's own (local) embedder."""
    vectors = m.embed_texts([a, b])
    assert vectors is not None
    return 1.0 - float(vectors[0] @ vectors[1])


@pytest.mark.parametrize("kind", DUPLICATE_BAND)
def test_store_keeps_the_new_value_as_the_next_version(m, kind):
    old, new = KINDS[kind]
    assert distance(m, old, new) < 0.15, kind
    first = m.store({"entries": [{"text": old, "project": "/w/app"}]})
    second = m.store({"entries": [{"text": new, "project": "/w/app"}]})
    assert (second.stored, second.merged, second.deduplicated) == (1, 0, 0), kind
    assert second.conflicts == []
    assert second.ids[0] != first.ids[0]
    assert [v.model_dump() for v in second.versioned] == [
        {"id": second.ids[0], "old_id": first.ids[0]}
    ]
    assert active_texts(m) == [new]  # the old value is no longer what recall gives
    history = m.history(second.ids[0]).versions
    assert [(v.version, v.text, v.status) for v in history] == [
        (2, new, "active"),
        (1, old, "stale"),
    ]
    found = m.recall({"query": new, "project": "/w/app"}).memories
    assert found and found[0].text == new


@pytest.mark.parametrize("kind", CONFLICT_BAND)
def test_store_flags_a_changed_value_in_the_conflict_band(m, kind):
    """Distill's contract: stored and flagged, both active, until the caller settles it."""
    old, new = KINDS[kind]
    first = m.store({"entries": [{"text": old}]})
    second = m.store({"entries": [{"text": new}]})
    assert (second.stored, second.merged, second.deduplicated) == (1, 0, 0), kind
    assert second.versioned == []
    (conflict,) = second.conflicts
    assert (conflict.new_id, conflict.existing_id) == (second.ids[0], first.ids[0])
    assert 0.15 <= conflict.distance < 0.35, kind
    assert active_texts(m) == sorted([old, new])
    assert m.conflicts("pending").total == 1


@pytest.mark.parametrize("kind", ["port", "version", "enabled", "negation", "word swap"])
def test_save_without_an_llm_answers_versioned(m, kind):
    old, new = KINDS[kind]
    first = m.save({"text": old, "tags": ["ops"]})
    second = m.save({"text": new, "tags": ["infra"]})
    assert second.outcome == "versioned" and second.id != first.id
    doc = m.get(second.id)
    assert doc.text == new and sorted(doc.tags) == ["infra", "ops"]  # the belief's rest kept
    assert [v.version for v in doc.versions] == [2, 1]
    assert m.get(first.id).status == "stale" and m.get(first.id).superseded_by == second.id


def test_a_paraphrase_still_merges(m):
    m.store({"entries": [{"text": "The staging database listens on port 5433"}]})
    again = m.store({"entries": [{"text": "Staging DB listens on port 5433"}]})
    assert (again.stored, again.deduplicated) == (0, 1)
    assert active_texts(m) == ["The staging database listens on port 5433"]


def test_normalised_values_are_the_same_value(m):
    m.store({"entries": [{"text": "Uploads are limited to 10 MB per file"}]})
    again = m.store({"entries": [{"text": "Uploads are limited to 10MB per file"}]})
    assert again.deduplicated == 1 and again.stored == 0


def test_the_batch_path_versions_within_one_request(m):
    """Two entries of one store request: the second updates the first (a batch-mate),
    and a third entry repeating the new value merges into the new version. The answer
    names the version and the entry it replaced."""
    old, new = KINDS["port"]
    res = m.store({"entries": [{"text": old}, {"text": new}, {"text": new + "."}]})
    assert (res.stored, res.merged, res.deduplicated) == (2, 0, 1)
    assert res.ids[2] == res.ids[1] != res.ids[0]
    assert [(v.id, v.old_id) for v in res.versioned] == [(res.ids[1], res.ids[0])]
    assert active_texts(m) == [new]
    assert [v.version for v in m.history(res.ids[1]).versions] == [2, 1]


def test_the_batch_path_versions_a_stored_memory(m):
    old_port, new_port = KINDS["port"]
    old_node, new_node = KINDS["version"]
    before = m.store({"entries": [{"text": old_port}, {"text": old_node}]})
    res = m.store({"entries": [{"text": new_port}, {"text": new_node}]})
    assert (res.stored, res.deduplicated) == (2, 0)
    assert active_texts(m) == sorted([new_port, new_node])
    assert [(v.id, v.old_id) for v in res.versioned] == list(zip(res.ids, before.ids, strict=True))


def test_a_changed_value_and_more_stays_a_conflict(m):
    """Near by distance, a value changed and other words too: both kept, flagged."""
    first = m.store({"entries": [{"text": "The billing service runs on port 8081 in staging"}]})
    other = "The billing service runs on port 9090 in staging behind the nginx proxy"
    res = m.store({"entries": [{"text": other}]})
    assert res.stored == 1 and res.deduplicated == 0
    assert len(res.conflicts) == 1 and res.conflicts[0].existing_id == first.ids[0]
    assert len(active_texts(m)) == 2
    assert m.conflicts("pending").total == 1


def test_the_belief_pipeline_falls_back_to_the_same_rule(tmp_path, monkeypatch, backend):
    """With an LLM whose classifier call fails, the bands decide, and a changed value is
    still a new version."""
    from tests.support.openai_server import ScriptedOpenAI

    # A reply that is no JSON document: a failed call (not retried), as a broken model's.
    bad = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "no JSON"}}]}
    server = ScriptedOpenAI(dim=64, default=(200, bad, {}))
    engine = open_with_llm(monkeypatch, server.base_url, tmp_path, backend)
    try:
        old, new = KINDS["port"]
        engine.save({"text": old})
        second = engine.save({"text": new})
        assert second.outcome == "versioned"
        assert any(r.path.endswith("/chat/completions") for r in server.requests)
        assert engine.conflicts("pending").total == 0
    finally:
        engine.close()
        server.close()


@pytest.mark.parametrize("label", ["contradictory", "complementary", "identical"])
def test_the_classifier_is_held_to_a_changed_value_being_an_update(
    tmp_path, monkeypatch, backend, label
):
    """A scripted model labels a changed port as ``label``: its prompt says a changed
    value is identical (an update), and whatever it answers, the pair becomes a new
    version, not a conflict and not an added duplicate."""
    from tests.support.openai_server import ScriptedOpenAI

    seen: list[dict[str, Any]] = []

    def chat(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        seen.append(body)
        payload = json.loads(body["messages"][1]["content"])
        labels = [
            {"index": c["index"], "label": label, "reason": "scripted"}
            for c in payload["candidates"]
        ]
        reply = {"labels": labels}
        return 200, {
            "id": "x",
            "object": "chat.completion",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": json.dumps(reply)}}
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10},
        }

    old, new = KINDS["port"]
    server = ScriptedOpenAI(dim=64, chat=chat)
    first, second, _ = save_twice(monkeypatch, tmp_path, backend, server, old, new)
    assert seen, "the classifier was not asked"
    system = seen[0]["messages"][0]["content"]
    assert "value changed" in system and "update of the memory" in system
    assert second.outcome == "versioned" and second.conflicts == []
    with memloom.open(home=str(tmp_path), database_url=backend) as engine:
        assert engine.get(first.id).status == "stale"
        assert [v.text for v in engine.history(second.id).versions] == [new, old]


def test_a_name_swapped_past_the_bands_is_still_an_update_for_save(m):
    """0.54 apart (past the conflict band): ``save`` still reads the nearest neighbour,
    and a name swapped for a name makes the next version; a plain fact far away is not."""
    first = m.save({"text": "The payments project uses Sentry"})
    second = m.save({"text": "The payments project uses Rollbar"})
    assert (second.outcome, second.conflicts) == ("versioned", [])
    assert m.get(first.id).superseded_by == second.id
    assert active_texts(m) == ["The payments project uses Rollbar"]
    other = m.save({"text": "The payments team meets on Mondays"})
    assert other.outcome == "added"
    assert len(active_texts(m)) == 2


def test_store_flags_a_name_swapped_past_the_bands(m):
    """The same pair through ``store``: past the conflict band it is no version (only the
    duplicate band versions, Distill's contract), but the caller is told of it."""
    old, new = "The payments project uses Sentry", "The payments project uses Rollbar"
    assert 0.35 <= distance(m, old, new) < 0.6
    first = m.store({"entries": [{"text": old}]})
    res = m.store({"entries": [{"text": new}]})
    assert (res.stored, res.versioned) == (1, [])
    assert [c.existing_id for c in res.conflicts] == first.ids
    assert active_texts(m) == sorted([old, new])
