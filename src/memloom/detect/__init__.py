"""Secret, PII and internal-infrastructure detection for memloom (one rule set, two uses).

`redact(text)` masks credentials and personal data before text leaves the machine or is
stored; `classify(text)` gives every finding and the highest sensitivity level
(0 none, 1 PII, 2 internal, 3 credentials). See docs/redaction.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from .engine import MARKER_RE, Detector, marker
from .model import (
    CREDENTIALS,
    INTERNAL,
    LEVEL_NAMES,
    NONE,
    PII,
    DetectConfig,
    Hit,
    Match,
    PatternSpec,
    Redaction,
)

__all__ = [
    "CREDENTIALS",
    "INTERNAL",
    "LEVEL_NAMES",
    "MARKER_RE",
    "NONE",
    "PII",
    "DetectConfig",
    "Detector",
    "Hit",
    "Match",
    "PatternSpec",
    "Redaction",
    "analyze",
    "classify",
    "default_detector",
    "marker",
    "max_level",
    "redact",
    "redact_many",
]


@lru_cache(maxsize=1)
def default_detector() -> Detector:
    """The built-in rules, compiled once per process."""
    return Detector()


def redact(text: str) -> tuple[str, list[Hit]]:
    """Mask credentials and personal data: `(redacted_text, hits)`; see Detector.redact."""
    return default_detector().redact(text)


def classify(text: str) -> tuple[int, list[Match]]:
    """`(level, matches)` with level 0 none, 1 PII, 2 internal, 3 credentials."""
    return default_detector().classify(text)


def analyze(text: str) -> Redaction:
    """Redacted text, hits, level and matches from a single scan (what the CLI needs)."""
    return default_detector().analyze(text)


def max_level(text: str) -> int:
    """Only the sensitivity level; stops early once a credential is found."""
    return default_detector().max_level(text)


def redact_many(texts: Iterable[str]) -> list[tuple[str, list[Hit]]]:
    return default_detector().redact_many(texts)
