"""Scoring pieces: fusion, the Distill score, the budget, keyword coverage."""

from __future__ import annotations

import pytest

from memloom import ranking


def test_fusion_equals_cosine_without_keywords_and_lifts_with_them():
    assert ranking.fuse(0.4, 0.0) == pytest.approx(0.4)
    assert ranking.fuse(0.4, 1.0) == pytest.approx(0.4 + 0.6 * ranking.KEYWORD_WEIGHT)
    assert ranking.fuse(-0.3, 0.0) == 0.0
    assert 0.0 <= ranking.fuse(1.0, 1.0) <= 1.0


def test_relevance_formula_and_cap():
    assert ranking.relevance(0.5, 1.0, 0.2) == pytest.approx(0.8 * 0.5 + 0.2)
    assert ranking.relevance(0.5, 0.0, 0.0, boosted=True) == pytest.approx(0.6)
    assert ranking.relevance(0.5, 0.0, 0.0, task_hit=True) == pytest.approx(0.55)
    assert ranking.relevance(0.97, 0.0, 0.0, boosted=True, task_hit=True) == 1.0


def test_recency_halves_after_a_day():
    now = 1_000_000.0
    assert ranking.recency(now, now) == 1.0
    assert ranking.recency(now - 24 * 3600, now) == pytest.approx(0.5)
    assert ranking.recency(now + 60, now) == 1.0  # clock skew never exceeds 1


def test_budget_skips_what_does_not_fit_and_keeps_going():
    items = ["x" * 400, "y" * 40, "z" * 4000, "w" * 40]  # 100, 10, 1000, 10 tokens
    chosen, used = ranking.within_budget(items, lambda s: s, 10, 120)
    assert chosen == ["x" * 400, "y" * 40, "w" * 40]
    assert used == 120
    chosen, _ = ranking.within_budget(items, lambda s: s, 2, None)
    assert len(chosen) == 2


def test_query_terms_drop_stopwords_but_never_everything():
    assert ranking.query_terms("What is the port of the API server?") == ["port", "api", "server"]
    assert ranking.query_terms("what is it") == ["what", "is", "it"]
    assert ranking.query_terms("ECONNREFUSED in settings_local.py") == [
        "econnrefused",
        "settings",
        "local",
        "py",
    ]


def test_keyword_coverage_weights_rare_terms():
    scorer = ranking.KeywordScorer.build(["econnrefused", "error"], {"error": 900}, 1000)
    assert scorer.coverage("got ECONNREFUSED from redis") > 0.9
    assert scorer.coverage("an error happened") < 0.1
    assert scorer.coverage("nothing relevant") == 0.0
    assert scorer.coverage("Errors and ECONNREFUSED") == pytest.approx(1.0)


def test_common_terms_are_left_out_of_the_keyword_search_in_large_stores():
    df = {"memori": 9000, "number": 8000, "econnrefus": 3}
    terms = ["memory", "number", "econnrefused"]
    assert ranking.selective_terms(terms, df, 10_000) == ["econnrefused"]  # 90% and 80%: common
    assert ranking.selective_terms(["memory", "number"], df, 10_000, keep=1) == ["number"]
    assert ranking.selective_terms(terms, df, 500) == terms  # small stores search everything


def test_query_terms_drop_what_is_left_of_clitics():
    # "John's" and "don't" split at the apostrophe; the fragments are not words
    assert ranking.query_terms("What is John's team? I don't know") == ["john", "team", "don"]
    assert ranking.query_terms("s") == ["s"]  # never everything


def test_coverage_of_a_stem_set_equals_coverage_of_the_text():
    scorer = ranking.KeywordScorer.build(["redis", "timeouts"], {"redi": 2, "timeout": 40}, 100)
    text = "Redis timeout after the deploy"
    assert ranking.stem_set(text) == frozenset({"redi", "timeout", "after", "the", "deploi"})
    assert scorer.coverage_of(ranking.stem_set(text)) == pytest.approx(scorer.coverage(text))
    # a window of turns is the union of their stems: words split across turns count
    window = ranking.stem_set("Which store?") | ranking.stem_set("Redis, it timed out")
    assert scorer.coverage_of(window) > scorer.coverage("Which store?")


def test_window_mix_blends_a_turn_with_its_window():
    assert ranking.window_mix(0.4, 0.8) == pytest.approx(
        (1 - ranking.WINDOW_WEIGHT) * 0.4 + ranking.WINDOW_WEIGHT * 0.8
    )
    assert ranking.window_mix(0.4, 0.8, weight=0.0) == pytest.approx(0.4)


def test_keyword_evidence_counts_the_bm25_share_in_proportion_to_coverage():
    full = ranking.BM25_FULL_COVERAGE
    assert 0.0 < full < 1.0
    # a memory holding every query word: both halves in full
    assert ranking.keyword_evidence(1.0, 1.0) == pytest.approx(1.0)
    # at or above the full-coverage share the BM25 share is not scaled
    assert ranking.keyword_evidence(0.6, full) == pytest.approx(0.5 * 0.6 + 0.5 * full)
    # the best BM25 hit (share 1) holding a tenth of the query's weight is a weak match,
    # not the half-strong one a relative share alone would make it
    weak = ranking.keyword_evidence(1.0, 0.1)
    assert weak == pytest.approx(0.5 * (0.1 / full) + 0.05)
    assert weak < 0.5 * 1.0 + 0.5 * 0.1
    assert ranking.keyword_evidence(0.0, 0.0) == 0.0
    # monotone in both: more coverage or a larger share never lowers the evidence
    grid = [i / 10 for i in range(11)]
    for share in grid:
        values = [ranking.keyword_evidence(share, c) for c in grid]
        assert values == sorted(values)
        assert all(0.0 <= v <= 1.0 for v in values)
    for cov in grid:
        values = [ranking.keyword_evidence(s, cov) for s in grid]
        assert values == sorted(values)
