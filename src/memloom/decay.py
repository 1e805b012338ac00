"""Decay: full text -> summary -> keywords -> evicted, as a memory goes unused.

Each pass moves a memory at most one level. The original text stays in the row
until eviction, so a decayed memory can be restored. Pinned memories never
decay; often-recalled ones age more slowly.
"""

from __future__ import annotations

import re

from memloom.config import DecaySettings

_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"[\w./:-]+", re.UNICODE)
_STOP = frozenset(
    [
        "that",
        "this",
        "with",
        "from",
        "have",
        "been",
        "were",
        "they",
        "their",
        "which",
        "would",
        "there",
        "about",
        "could",
        "other",
        "into",
        "more",
        "some",
        "than",
        "them",
        "very",
        "when",
        "what",
        "your",
        "also",
        "each",
        "does",
        "will",
        "just",
        "should",
        "because",
        "these",
        "the",
        "and",
        "for",
        "are",
        "was",
        "not",
        "but",
        "you",
        "all",
        "any",
        "can",
        "had",
        "her",
        "his",
        "its",
        "our",
        "out",
    ]
)


def summarize(text: str) -> str:
    """Keep about a fifth of the sentences (at least the first), in order."""
    sentences = [s for s in _SENTENCE.split(text.strip()) if s]
    if len(sentences) <= 2:
        if len(text) <= 200:
            return text
        return text[:200].rsplit(" ", 1)[0] + " …"
    keep = max(2, len(sentences) // 5)
    head = max(1, keep // 2)
    tail = keep - head
    parts = sentences[:head] + (sentences[-tail:] if tail else [])
    return " ".join(parts)


def keywords(text: str, limit: int = 20) -> str:
    """Distinct significant words: identifiers, numbers and long words survive."""
    seen: dict[str, None] = {}
    for raw in _WORD.findall(text):
        word = raw.strip(".,;:!?\"'()[]{}-/")
        low = word.lower()
        if len(low) < 4 and not any(c.isdigit() for c in low):
            continue
        if low in _STOP or low in seen:
            continue
        seen[low] = None
        if len(seen) >= limit:
            break
    return ", ".join(seen) if seen else text[:80]


def age_factor(access_count: int, settings: DecaySettings) -> float:
    """How much longer than the base age a memory needs before it decays."""
    return 1.0 + access_count / settings.resist_access_count


LEVEL_AGES = ("summary_after_hours", "keywords_after_hours", "evict_after_hours")


def threshold_hours(level: int, settings: DecaySettings) -> float:
    """Hours without reference before a memory at ``level`` moves on."""
    return float(getattr(settings, LEVEL_AGES[level]))
