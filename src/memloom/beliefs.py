"""How a new statement relates to what is already believed.

Two paths decide. The Distill path (``store``; ``save`` with no LLM) uses cosine
distance bands: below 0.15 the same belief, 0.15-0.35 a possible conflict. The
belief pipeline (import; ``save`` with an LLM) asks a classifier instead,
because embeddings barely separate "uses X" from "does not use X".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from memloom.store.base import MemoryRow

DEDUP_DISTANCE = 0.15
CONFLICT_DISTANCE = 0.35
#: The belief pipeline looks at neighbours at least this similar.
CANDIDATE_SIMILARITY = 0.5
MAX_CANDIDATES = 5

Band = Literal["duplicate", "conflict", "distinct"]
Label = Literal["identical", "complementary", "contradictory"]


@dataclass
class Neighbour:
    row: MemoryRow
    similarity: float

    @property
    def distance(self) -> float:
        # Rounded as reported: float32 noise must not move a memory across a band edge.
        return round(max(0.0, 1.0 - self.similarity), 6)


def band(distance: float) -> Band:
    if distance < DEDUP_DISTANCE:
        return "duplicate"
    if distance < CONFLICT_DISTANCE:
        return "conflict"
    return "distinct"


@dataclass
class Classification:
    index: int
    label: Label
    reason: str = ""


class BeliefClassifier(Protocol):
    """Labels each candidate against the new text (an LLM task: ``memloom_classify``)."""

    def classify(self, new_text: str, candidates: Sequence[str]) -> list[Classification]: ...


def merge_tags(old: Sequence[str], new: Sequence[str]) -> list[str]:
    out = list(old)
    out.extend(t for t in new if t not in out)
    return out


def merge_metadata(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Keep every key the caller sent; the first value of a key wins."""
    merged = dict(old)
    for key, value in new.items():
        merged.setdefault(key, value)
    return merged


def later_expiry(a: float | None, b: float | None) -> float | None:
    """The later of two expiries; no expiry is the latest of all."""
    if a is None or b is None:
        return None
    return max(a, b)
