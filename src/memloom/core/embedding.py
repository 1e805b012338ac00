"""Text to vectors for this store: the configured embedder, or the caller's own vectors.

A store takes its dimension from its first vector; when callers filled it with
vectors of another dimension, memloom stops embedding (keyword-only) instead of
mixing geometries.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memloom.core.context import CoreContext
from memloom.errors import DimensionError, ValidationError
from memloom.models import StoreEntry


def normalize(vec: Sequence[float] | np.ndarray) -> np.ndarray:
    """A caller's vector at unit length (cosine = dot product everywhere else)."""
    arr = np.asarray(vec, dtype=np.float32)
    norm = float(np.linalg.norm(arr))
    if norm == 0.0 or not np.isfinite(norm):
        raise ValidationError("embedding must be a non-zero finite vector")
    return arr / norm


class Embedding:
    """Embeds texts and queries, stamping a fresh store with the embedder's fingerprint."""

    def __init__(self, ctx: CoreContext) -> None:
        self.ctx = ctx

    @property
    def can_embed(self) -> bool:
        """False when the store holds vectors of another dimension (caller-supplied)."""
        dim = self.ctx.store.dimension
        return dim is None or dim == self.ctx.embedder.dim

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray | None:
        """Vectors for ``texts``, or None when this store cannot take the embedder's."""
        if not texts or not self.can_embed:
            return None
        store, embedder = self.ctx.store, self.ctx.embedder
        vectors = embedder.embed(list(texts))
        if store.get_meta("embedder") is None:
            with store.transaction():
                store.set_meta("embedder", embedder.fingerprint)
        return vectors

    def embed_one(self, text: str) -> np.ndarray | None:
        vectors = self.embed_texts([text])
        return None if vectors is None else vectors[0]

    def embed_query(self, text: str) -> np.ndarray | None:
        return self.ctx.embedder.embed_query(text) if self.can_embed else None

    def prepare(self, entries: Sequence[StoreEntry]) -> list[np.ndarray | None]:
        """One vector per entry: the caller's (checked and normalised) or the embedder's."""
        dim = self.ctx.store.dimension
        vectors: list[np.ndarray | None] = [None] * len(entries)
        missing: list[int] = []
        given_dim: int | None = None
        for i, entry in enumerate(entries):
            if entry.embedding is None:
                missing.append(i)
                continue
            d = len(entry.embedding)
            expected = dim if dim is not None else given_dim
            if expected is not None and d != expected:
                raise DimensionError(
                    f"entries[{i}].embedding has {d} dimensions; this store uses {expected}"
                )
            given_dim = d
            vectors[i] = normalize(entry.embedding)
        if missing:
            if dim is None and given_dim is not None and given_dim != self.ctx.embedder.dim:
                embedded = None  # the caller's dimension wins; the rest go keyword-only
            else:
                embedded = self.embed_texts([entries[i].text for i in missing])
            if embedded is not None:
                for j, i in enumerate(missing):
                    vectors[i] = embedded[j]
        return vectors
