"""Keyword terms exactly as SQLite's FTS5 ``porter unicode61`` tokenizer makes them.

The PostgreSQL store computes BM25 itself; to give the same scores as the
SQLite store it must see the same terms. Rather than re-implement FTS5's
tokenizer and stemmer (and drift from it), this asks FTS5 itself, in a private
in-memory database per thread.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

TOKENIZE = "porter unicode61 remove_diacritics 2"
_local = threading.local()


@dataclass(frozen=True)
class DocTerms:
    """One text's stems with their counts, and its length in tokens (BM25's ``dl``)."""

    counts: dict[str, int]
    length: int


def _db() -> sqlite3.Connection:
    db: sqlite3.Connection | None = getattr(_local, "db", None)
    if db is None:
        db = sqlite3.connect(":memory:", isolation_level=None)
        db.execute(f"CREATE VIRTUAL TABLE docs USING fts5 (text, tokenize='{TOKENIZE}')")
        db.execute("CREATE VIRTUAL TABLE terms USING fts5vocab (docs, 'instance')")
        _local.db = db
    return db


def analyse_many(texts: Sequence[str]) -> list[DocTerms]:
    """Stems and lengths of many texts in one pass through FTS5."""
    if not texts:
        return []
    db = _db()
    db.execute("BEGIN")
    try:
        db.executemany(
            "INSERT INTO docs (rowid, text) VALUES (?, ?)", list(enumerate(texts, start=1))
        )
        counts: list[Counter[str]] = [Counter() for _ in texts]
        for term, doc in db.execute("SELECT term, doc FROM terms"):
            counts[doc - 1][term] += 1
    finally:
        db.execute("ROLLBACK")
    return [DocTerms(dict(c), sum(c.values())) for c in counts]


def analyse(text: str) -> DocTerms:
    return analyse_many([text])[0]


def query_stems(terms: Sequence[str]) -> list[str]:
    """The stems FTS5 would match for each query term, in order (duplicates kept:
    FTS5 scores a repeated phrase once per occurrence)."""
    out: list[str] = []
    for doc in analyse_many(list(terms)):
        out.extend(sorted(doc.counts))
    return out
