"""Scoring recall candidates: hybrid similarity, the recall score, the token budget.

The score is Distill's: ``(1 - w) * similarity + w * recency + 0.1 (boost tag)
+ 0.05 (source in task context)``, capped at 1. What memloom adds is the
similarity itself: cosine from the embedding, lifted by keyword coverage so an
exact identifier the embedding model does not know (``ECONNREFUSED``,
``settings.py``) still finds its memory.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from functools import lru_cache

TYPE_CHECKING = False  # typing's, without loading typing (~3 ms): the hooks load this module
if TYPE_CHECKING:
    from typing import Any, TypeVar

    T = TypeVar("T")

#: How far a full keyword match lifts the vector similarity toward 1.
KEYWORD_WEIGHT = 0.7
#: A memory's BM25 share counts in full toward its keyword evidence only when the memory
#: holds at least this IDF-weighted share of the query's words, and in proportion below:
#: the share is relative (the best candidate's BM25 is 1, however weak a match it is),
#: so without this gate a memory matching one word of an unrelated prompt scored as a
#: strong keyword match (issue 16, docs/benchmarks.md "Prompt-recall injection").
BM25_FULL_COVERAGE = 0.5
#: The weight of a memory's best conversational neighbour in its score (its own is 1).
CONTEXT_WEIGHT = 0.3
#: Share of a conversation turn's similarity taken from its window (the turns
#: before and after it with it) rather than from the turn alone.
WINDOW_WEIGHT = 0.5
#: Weight of each neighbour's embedding in the window's embedding (the turn's is 1).
WINDOW_NEIGHBOUR_WEIGHT = 0.5
#: ``min_relevance: "auto"``: below this a memory is not relevant to the query. Chosen on
#: LoCoMo dev by ``bench/injection.py`` (docs/benchmarks.md says how): questions asked of
#: another conversation's store must find nothing, of their own the evidence, both for
#: turns stored with their session and for turns stored alone.
AUTO_MIN_RELEVANCE = 0.57

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)

STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "being",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "ours",
        "she",
        "should",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "too",
        "us",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "about",
        "also",
        "just",
        "any",
        "some",
        "tell",
        "know",
        # what is left of a clitic once the apostrophe splits a word
        # ("John's", "don't", "I'll", "we've", "you're", "I'm", "I'd")
        "s",
        "t",
        "ll",
        "ve",
        "re",
        "m",
        "d",
    ]
)


def recency(last_referenced: float, now: float) -> float:
    hours = max(0.0, (now - last_referenced) / 3600.0)
    return 1.0 / (1.0 + hours / 24.0)


def relevance(
    similarity: float,
    recency_score: float,
    recency_weight: float,
    *,
    boosted: bool = False,
    task_hit: bool = False,
) -> float:
    score = (1.0 - recency_weight) * similarity + recency_weight * recency_score
    if boosted:
        score += 0.1
    if task_hit:
        score += 0.05
    # Within [0, 1] always: a caller's query_embedding can give a negative cosine.
    return max(0.0, min(1.0, score))


def estimate_tokens(text: str) -> int:
    """About four characters a token: close enough for a context budget."""
    return max(1, math.ceil(len(text) / 4))


def within_budget(
    items: Iterable[T], text_of: Callable[[T], str], max_results: int, max_tokens: int | None
) -> tuple[list[T], int]:
    """Take items in order, skipping any that would overflow the token budget."""
    chosen: list[T] = []
    used = 0
    for item in items:
        if len(chosen) >= max_results:
            break
        cost = estimate_tokens(text_of(item))
        if max_tokens is not None and used + cost > max_tokens:
            continue
        chosen.append(item)
        used += cost
    return chosen, used


def fuse(cosine: float, keyword: float, weight: float = KEYWORD_WEIGHT) -> float:
    """Soft OR of the two arms: equals the cosine when no keyword matches."""
    c = min(1.0, max(0.0, cosine))
    return c + (1.0 - c) * weight * keyword


def keyword_evidence(bm25_share: float, coverage: float) -> float:
    """A memory's keyword evidence in [0, 1]: half its BM25 score as a share of the
    best candidate's, scaled down while it covers less than ``BM25_FULL_COVERAGE`` of
    the query; half its :meth:`KeywordScorer.coverage` of the query."""
    gate = min(1.0, coverage / BM25_FULL_COVERAGE) if BM25_FULL_COVERAGE > 0 else 1.0
    return 0.5 * bm25_share * gate + 0.5 * coverage


def with_context(own: float, best_neighbour: float, weight: float = CONTEXT_WEIGHT) -> float:
    """A conversation turn's score: its own, averaged with its best neighbour's (that
    one weighing ``weight``). An average, not a bonus: the score stays on the scale
    of a memory stored on its own, where one relevance threshold applies."""
    return (own + weight * best_neighbour) / (1.0 + weight)


def window_mix(alone: float, in_window: float, weight: float = WINDOW_WEIGHT) -> float:
    """A turn's similarity: its own, blended with its conversation window's."""
    return (1.0 - weight) * alone + weight * in_window


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    """Porter, the algorithm FTS5's porter tokenizer uses (loaded on first use: the
    prompt hook budgets its block with this module and may never stem a word).
    snowballstemmer hands it to PyStemmer's C code when that is installed (a
    dependency): the same stems, without importing thirty pure-Python languages."""
    import snowballstemmer

    return snowballstemmer.stemmer("porter")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    return _stemmer().stemWord(word)


def tokens(text: str) -> list[str]:
    return [t.casefold() for t in _TOKEN.findall(text)]


@lru_cache(maxsize=16384)
def stem_set(text: str) -> frozenset[str]:
    """The distinct stems of a text (cached: recall scores the same memories often)."""
    return frozenset(stem(t) for t in tokens(text))


def query_terms(query: str) -> list[str]:
    """Distinct informative words of a query (all words if every one is a stopword)."""
    words = tokens(query)
    kept = [w for w in words if w not in STOPWORDS] or words
    seen: dict[str, None] = {}
    for w in kept:
        seen.setdefault(w, None)
    return list(seen)


#: A term in more than this share of memories finds candidates the vector arm
#: already has; searching its long posting list only costs time.
COMMON_TERM_SHARE = 0.2


def selective_terms(
    terms: Sequence[str], doc_freq: dict[str, int], total_docs: int, keep: int = 2
) -> list[str]:
    """The terms worth a keyword search: rare ones, or the ``keep`` rarest if none is rare."""
    if total_docs < 1000:
        return list(terms)
    limit = COMMON_TERM_SHARE * total_docs
    rare = [t for t in terms if doc_freq.get(stem(t), 0) <= limit]
    if rare:
        return rare
    return sorted(terms, key=lambda t: doc_freq.get(stem(t), 0))[:keep]


class KeywordScorer:
    """IDF-weighted share of the query's stems that a text contains, in [0, 1].
    (A plain class: the prompt hook loads this module, see :mod:`memloom.values`.)"""

    def __init__(self, weights: dict[str, float]) -> None:
        self.weights = weights

    @classmethod
    def build(
        cls, terms: Sequence[str], doc_freq: dict[str, int], total_docs: int
    ) -> KeywordScorer:
        weights: dict[str, float] = {}
        n = max(total_docs, 1)
        for term in terms:
            s = stem(term)
            df = doc_freq.get(s, 0)
            weights[s] = max(weights.get(s, 0.0), math.log(1.0 + (n - df + 0.5) / (df + 0.5)))
        return cls(weights)

    @property
    def stems(self) -> list[str]:
        return list(self.weights)

    def coverage(self, text: str) -> float:
        return self.coverage_of(stem_set(text))

    def coverage_of(self, present: AbstractSet[str]) -> float:
        """:meth:`coverage` for a text already reduced to its :func:`stem_set`."""
        total = sum(self.weights.values())
        if total <= 0:
            return 0.0
        return sum(w for s, w in self.weights.items() if s in present) / total
