"""No fact hidden (issue 40): a statement about another subject is kept beside a
look-alike, on every path the distance bands decide (store, a store batch, save, the
import's pipeline with no LLM, the classifier's fallback), on both backends, with the
real local embedding model; with an LLM, a one-word swap is the classifier's to place."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

import memloom
from memloom.core.beliefs import NewBelief
from tests.core.test_value_updates import save_twice

pytestmark = pytest.mark.slow

#: Two statements true at once: the swapped word is what each is about.
PAIRS = [
    (
        "The frontend uses pnpm for package management",
        "The backend uses pnpm for package management",
    ),
    ("Unit tests run on every push", "Integration tests run on every push"),
    ("The orders table is partitioned by month", "The events table is partitioned by month"),
    ("The signup flow sends a welcome email", "The checkout flow sends a welcome email"),
    ("Run the unit tests with pytest -x", "Run the integration tests with pytest -x"),
]


@pytest.fixture
def m(tmp_path, backend, monkeypatch) -> Iterator[memloom.Memloom]:
    monkeypatch.setenv("MEMLOOM_LLM", "offline")
    engine = memloom.open(home=str(tmp_path), database_url=backend)
    try:
        yield engine
    finally:
        engine.close()


def active(m: memloom.Memloom, project: str | None = None) -> list[str]:
    query: dict[str, Any] = {"limit": 100}
    if project is not None:
        query["project"] = project
    return sorted(d.text for d in m.list(query).memories)


@pytest.mark.parametrize(("first", "second"), PAIRS, ids=[p[0][:24] for p in PAIRS])
def test_store_keeps_both(m, first, second):
    m.store({"entries": [{"text": first}]})
    res = m.store({"entries": [{"text": second}]})
    assert res.stored == 1 and res.merged == 0 and res.deduplicated == 0
    assert active(m) == sorted([first, second])


def test_a_store_batch_keeps_both(m):
    entries = [{"text": t, "project": f"p{i}"} for i, pair in enumerate(PAIRS) for t in pair]
    res = m.store({"entries": entries})
    assert res.stored == len(entries)
    for i, pair in enumerate(PAIRS):
        assert active(m, f"p{i}") == sorted(pair)


@pytest.mark.parametrize(("first", "second"), PAIRS, ids=[p[0][:24] for p in PAIRS])
def test_save_keeps_both(m, first, second):
    m.save({"text": first})
    out = m.save({"text": second})
    assert out.outcome in ("added", "conflict")
    assert active(m) == sorted([first, second])
    for c in out.conflicts:  # flagged for review at most, both texts shown
        assert {c.new_text, c.existing_text} == {first, second}


def test_the_import_pipeline_without_an_llm_keeps_both(m):
    """What an offline import writes through (the pipeline's band path)."""
    first, second = PAIRS[0]
    pipeline = m.belief_pipeline(None)
    for text in (first, second):
        vec = m.embed_texts([text])[0]
        pipeline.write(NewBelief(text=text, vec=vec, type="fact", project=None, sensitivity=0))
    assert active(m) == sorted([first, second])


def test_a_changed_value_is_still_an_update(m):
    """The other side of the rule: the object swapped, the same subject."""
    m.save({"text": "The frontend uses npm for package management"})
    out = m.save({"text": "The frontend uses pnpm for package management"})
    assert out.outcome == "versioned"
    assert active(m) == ["The frontend uses pnpm for package management"]


def _classifier(label_for: dict[str, str], seen: list[dict[str, Any]]):
    """A scripted model's chat handler: each candidate labelled by its text."""

    def chat(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        seen.append(body)
        payload = json.loads(body["messages"][1]["content"])
        labels = [
            {"index": c["index"], "label": label_for[c["text"]], "reason": "scripted"}
            for c in payload["candidates"]
        ]
        content = json.dumps({"labels": labels})
        return 200, {
            "id": "x",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10},
        }

    return chat


@pytest.mark.parametrize(
    ("old", "new", "label", "outcome"),
    [
        # The classifier places a one-word swap, whichever way it answers.
        (*PAIRS[0], "complementary", "added"),
        ("The app uses Sentry", "The app uses Rollbar", "identical", "versioned"),
        ("The app uses Sentry", "The app uses Rollbar", "complementary", "added"),
    ],
)
def test_with_an_llm_the_classifier_places_a_one_word_swap(
    tmp_path, monkeypatch, backend, old, new, label, outcome
):
    from tests.support.openai_server import ScriptedOpenAI

    seen: list[dict[str, Any]] = []
    server = ScriptedOpenAI(dim=64, chat=_classifier({old: label}, seen))
    _, out, texts = save_twice(monkeypatch, tmp_path, backend, server, old, new)
    assert seen, "the classifier was not asked"
    system = seen[0]["messages"][0]["content"]
    assert "what the sentence is about" in system and "complementary" in system
    assert json.loads(seen[0]["messages"][1]["content"])["new"]["text"] == new
    assert out.outcome == outcome
    assert texts == ([new] if outcome == "versioned" else sorted([old, new]))


def test_the_classifiers_fallback_keeps_both(tmp_path, monkeypatch, backend):
    """The classifier's call fails: the bands decide, by the same rule."""
    from tests.support.openai_server import ScriptedOpenAI

    bad = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "no JSON"}}]}
    server = ScriptedOpenAI(dim=64, default=(200, bad, {}))
    first, second = PAIRS[2]
    _, out, texts = save_twice(monkeypatch, tmp_path, backend, server, first, second)
    assert any(r.path.endswith("/chat/completions") for r in server.requests)
    assert out.outcome in ("added", "conflict")
    assert texts == sorted([first, second])
