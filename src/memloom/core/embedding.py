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
    return normalize_many([vec])[0]


def normalize_many(vecs: Sequence[Sequence[float] | np.ndarray]) -> np.ndarray:
    """Same-length vectors at unit length, as one float32 matrix (one conversion, one
    finiteness check)."""
    if not vecs:
        return np.zeros((0, 0), dtype=np.float32)
    mat = np.asarray(vecs, dtype=np.float32)
    norms = np.linalg.norm(mat, axis=1)
    if not np.all(np.isfinite(norms) & (norms > 0.0)):
        raise ValidationError("embedding must be a non-zero finite vector")
    return mat / norms[:, None]


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
        """One vector per entry: the caller's (checked and normalised) or the embedder's.

        The caller's vectors are converted, checked and normalised together: one
        numpy conversion and one finiteness check per batch, not per entry.
        """
        dim = self.ctx.store.dimension
        vectors: list[np.ndarray | None] = [None] * len(entries)
        given = [i for i, e in enumerate(entries) if e.embedding is not None]
        missing = [i for i, e in enumerate(entries) if e.embedding is None]
        given_dim: int | None = None
        if given:
            dims = [len(entries[i].embedding or ()) for i in given]
            expected = dim if dim is not None else dims[0]
            wrong = next((j for j, d in enumerate(dims) if d != expected), None)
            checked = given if wrong is None else given[:wrong]
            # Entry by entry, the first bad vector before the first wrong dimension wins.
            unit = normalize_many([entries[i].embedding or () for i in checked])
            if wrong is not None:
                raise DimensionError(
                    f"entries[{given[wrong]}].embedding has {dims[wrong]} dimensions; "
                    f"this store uses {expected}"
                )
            for j, i in enumerate(given):
                vectors[i] = unit[j]
            given_dim = expected
        if missing:
            if dim is None and given_dim is not None and given_dim != self.ctx.embedder.dim:
                embedded = None  # the caller's dimension wins; the rest go keyword-only
            else:
                embedded = self.embed_texts([entries[i].text for i in missing])
            if embedded is not None:
                for j, i in enumerate(missing):
                    vectors[i] = embedded[j]
        return vectors
