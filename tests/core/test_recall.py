"""Recall's relevance is a score one threshold can be applied to: always within [0, 1],
and ``min_relevance: "auto"`` keeps only what passes the calibrated threshold."""

from __future__ import annotations

import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memloom
from memloom import ranking

DIM = 8
WORDS = ["deploy", "staging", "port", "tests", "redis", "vite", "make", "ci", "docs", "lint"]

vectors = st.lists(
    st.floats(min_value=-1, max_value=1, allow_nan=False, width=32), min_size=DIM, max_size=DIM
).filter(lambda v: float(np.linalg.norm(v)) > 1e-3)
texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)
entries = st.lists(
    st.fixed_dictionaries(
        {
            "text": texts,
            "embedding": vectors,
            "tags": st.lists(st.sampled_from(["a", "b", "c"]), max_size=2, unique=True),
            "source": st.sampled_from(["codex", "claude-code", "docs/dev.md"]),
        }
    ),
    min_size=1,
    max_size=12,
)
options = st.fixed_dictionaries(
    {
        "max_results": st.integers(1, 20),
        "recency_weight": st.floats(0, 1),
        "boost_tags": st.lists(st.sampled_from(["a", "b", "c"]), max_size=3),
        "task_context": st.one_of(st.none(), st.sampled_from(["codex", "editing docs/dev.md"])),
        "min_relevance": st.one_of(st.none(), st.floats(0, 1), st.just("auto")),
        "mode": st.sampled_from(["hybrid", "vector", "keyword"]),
    }
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(stored=entries, query=vectors, words=texts, opts=options, by_text=st.booleans())
def test_every_relevance_is_within_zero_and_one(stored, query, words, opts, by_text):
    with tempfile.TemporaryDirectory() as home:
        m = memloom.open(home=home, database_url=f"{home}/m.db")
        try:
            m.store({"entries": stored})
            if by_text:  # a caller's embeddings store, keyword arm only for a text query
                request = {**opts, "query": words, "mode": "keyword"}
            else:
                request = {**opts, "query_embedding": query}
            res = m.recall(request)
            for mem in res.memories:
                assert 0.0 <= mem.relevance <= 1.0, (mem, request)
            floor = ranking.AUTO_MIN_RELEVANCE if opts["min_relevance"] == "auto" else None
            if floor is not None:
                assert all(mem.relevance >= floor for mem in res.memories)
        finally:
            m.close()


def test_a_negative_cosine_is_relevance_zero(engine):
    v = np.zeros(DIM)
    v[0] = 1.0
    engine.store({"entries": [{"text": "staging listens on port 5433", "embedding": v.tolist()}]})
    (mem,) = engine.recall({"query_embedding": (-v).tolist()}).memories
    assert mem.relevance == 0.0 and mem.similarity == pytest.approx(-1.0)


def test_auto_abstains_on_an_unrelated_prompt_and_answers_a_related_one(engine):
    engine.store(
        {
            "entries": [
                {"text": "The sound recorder app saves WAV files into ~/Recordings"},
                {"text": "The recorder's waveform view is drawn on a canvas"},
                {"text": "Run the recorder's tests with npm test"},
            ]
        }
    )
    unrelated = engine.recall({"query": "what is the capital of Mongolia", "min_relevance": "auto"})
    assert unrelated.memories == []
    related = engine.recall(
        {"query": "where does the sound recorder save WAV files?", "min_relevance": "auto"}
    )
    assert related.memories and "WAV" in related.memories[0].text
    everything = engine.recall({"query": "what is the capital of Mongolia"})
    assert len(everything.memories) == 3  # without a threshold recall still ranks all


def test_auto_abstains_when_a_prompt_shares_one_word_with_a_memory(engine):
    """The best keyword hit of an unrelated prompt matches one of its words: its BM25
    share is 1 (shares are relative to the best hit), which must not make it relevant."""
    engine.store(
        {
            "entries": [
                {"text": "The sound recorder app saves WAV files into ~/Recordings"},
                {"text": "The recorder's waveform view is drawn on a canvas"},
                {"text": "Run the recorder's tests with npm test"},
                {"text": "Release builds are signed with the key in ci/keys"},
            ]
        }
    )
    prompt = "which painter drew the famous canvas of starry night?"
    (best,) = engine.recall({"query": prompt, "max_results": 1}).memories
    assert "canvas" in best.text  # the one shared word makes it the best candidate
    assert engine.recall({"query": prompt, "min_relevance": "auto"}).memories == []
    related = engine.recall({"query": "how are release builds signed?", "min_relevance": "auto"})
    assert [m.text for m in related.memories][:1] == [
        "Release builds are signed with the key in ci/keys"
    ]


def test_auto_is_accepted_by_every_interface_and_other_strings_are_not(engine):
    with pytest.raises(ValueError):
        engine.recall({"query": "x", "min_relevance": "high"})
    with pytest.raises(ValueError):
        engine.recall({"query": "x", "min_relevance": 1.5})
