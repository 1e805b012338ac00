"""BM25's statistics on PostgreSQL, for the whole store and per owner.

FTS5 keeps documents per term, documents and tokens in its index; here tables do,
updated by each write transaction once, just before it commits. The whole
store's (``term_stats``, ``meta``'s ``kw_docs`` / ``kw_tokens``) rank for the
unscoped store exactly as SQLite does. The per-owner ones (``owner_term_stats``,
``owner_counts``) give a principal the statistics of the rows it may read, so
another owner's writes never move its scores (a side channel on what they hold).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["PendingStats", "keyword_stats"]


@dataclass
class PendingStats:
    """Statistics a write transaction changes, written once when it ends."""

    terms: dict[str, int] = field(default_factory=dict)
    docs: int = 0
    tokens: int = 0
    #: Rows per owner; documents per (owner, term) and tokens per owner: a principal's
    #: BM25 statistics are the sum over the owners it may read.
    owners: dict[str, int] = field(default_factory=dict)
    owner_terms: dict[tuple[str, str], int] = field(default_factory=dict)
    owner_tokens: dict[str, int] = field(default_factory=dict)

    def count_terms(self, docs: Sequence[tuple[str, dict[str, int], int]], sign: int) -> None:
        """Add (sign=1) or remove (sign=-1) ``(owner, term counts, length)`` documents."""
        for owner, counts, length in docs:
            for term in counts:
                self.terms[term] = self.terms.get(term, 0) + sign
                key = (owner, term)
                self.owner_terms[key] = self.owner_terms.get(key, 0) + sign
            self.docs += sign
            self.tokens += sign * length
            self.owner_tokens[owner] = self.owner_tokens.get(owner, 0) + sign * length

    def count_rows(self, owner: str, delta: int) -> None:
        self.owners[owner] = self.owners.get(owner, 0) + delta

    def flush(self, conn: Any) -> None:
        """Write the transaction's statistics in a few statements, just before it commits."""
        terms = sorted(t for t, d in self.terms.items() if d)
        if terms:
            conn.execute(
                "INSERT INTO term_stats (term, docs) "
                "SELECT * FROM unnest(%s::text[], %s::bigint[]) "
                "ON CONFLICT (term) DO UPDATE SET docs = term_stats.docs + excluded.docs",
                (terms, [self.terms[t] for t in terms]),
            )
            gone = [t for t in terms if self.terms[t] < 0]
            if gone:
                conn.execute("DELETE FROM term_stats WHERE term = ANY(%s) AND docs <= 0", (gone,))
        if self.docs or self.tokens:
            conn.execute(
                "UPDATE meta SET value = (value::bigint + CASE key WHEN 'kw_docs' THEN %s "
                "ELSE %s END)::text WHERE key IN ('kw_docs', 'kw_tokens')",
                (self.docs, self.tokens),
            )
        keys = sorted(k for k, d in self.owner_terms.items() if d)
        if keys:
            conn.execute(
                "INSERT INTO owner_term_stats (owner, term, docs) "
                "SELECT * FROM unnest(%s::text[], %s::text[], %s::bigint[]) "
                "ON CONFLICT (owner, term) DO UPDATE SET docs = owner_term_stats.docs "
                "+ excluded.docs",
                ([k[0] for k in keys], [k[1] for k in keys], [self.owner_terms[k] for k in keys]),
            )
            gone_keys = [k for k in keys if self.owner_terms[k] < 0]
            if gone_keys:
                conn.execute(
                    "DELETE FROM owner_term_stats WHERE (owner, term) IN "
                    "(SELECT * FROM unnest(%s::text[], %s::text[])) AND docs <= 0",
                    ([k[0] for k in gone_keys], [k[1] for k in gone_keys]),
                )
        owners = sorted(
            o
            for o in {*self.owners, *self.owner_tokens}
            if self.owners.get(o) or self.owner_tokens.get(o)
        )
        if owners:
            conn.execute(
                "INSERT INTO owner_counts (owner, memories, tokens) "
                "SELECT * FROM unnest(%s::text[], %s::bigint[], %s::bigint[]) "
                "ON CONFLICT (owner) DO UPDATE SET memories = owner_counts.memories "
                "+ excluded.memories, tokens = owner_counts.tokens + excluded.tokens",
                (
                    owners,
                    [self.owners.get(o, 0) for o in owners],
                    [self.owner_tokens.get(o, 0) for o in owners],
                ),
            )


def keyword_stats(
    conn: Any, readable: Sequence[str] | None, stems: Sequence[str]
) -> tuple[dict[str, int], int, int]:
    """Documents holding each stem, documents, tokens: over the rows of the
    ``readable`` owners (the sum of their counts: an index lookup per owner and
    stem, never a scan of the memories), or the whole store's when None."""
    if readable is None:
        rows = conn.execute(
            "SELECT term, docs FROM term_stats WHERE term = ANY(%s)", (list(stems),)
        ).fetchall()
        sizes = dict(
            conn.execute(
                "SELECT key, value FROM meta WHERE key IN ('kw_docs', 'kw_tokens')"
            ).fetchall()
        )
        n_docs, n_tokens = int(sizes.get("kw_docs", 0)), int(sizes.get("kw_tokens", 0))
    else:
        rows = conn.execute(
            "SELECT term, SUM(docs) FROM owner_term_stats "
            "WHERE owner = ANY(%s) AND term = ANY(%s) GROUP BY term",
            (list(readable), list(stems)),
        ).fetchall()
        n_docs, n_tokens = conn.execute(
            "SELECT COALESCE(SUM(memories), 0), COALESCE(SUM(tokens), 0) "
            "FROM owner_counts WHERE owner = ANY(%s)",
            (list(readable),),
        ).fetchone()
    return {r[0]: int(r[1]) for r in rows if int(r[1]) > 0}, int(n_docs), int(n_tokens)
