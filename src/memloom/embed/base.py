"""The embedder contract shared by the local and remote backends.

Stores keep an embedder's ``fingerprint`` next to the vectors so that a store
built with one model is never queried with another (the vectors would not be
comparable and search would silently return noise).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from memloom.errors import EmbedderMismatchError, EmbeddingError

__all__ = [
    "Embedder",
    "EmbedderMismatchError",
    "EmbeddingError",
    "as_text_list",
    "l2_normalise",
]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension."""

    name: str

    @property
    def dim(self) -> int: ...

    @property
    def fingerprint(self) -> str:
        """``f"{name}@{dim}"``: what a store records to detect a model change."""
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 array of shape ``(len(texts), dim)``, rows L2-normalised."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """float32 array of shape ``(dim,)``, L2-normalised."""
        ...


def as_text_list(texts: Sequence[str]) -> list[str]:
    """Validate ``embed()`` input; a bare ``str`` would otherwise embed char by char."""
    if isinstance(texts, str | bytes):
        raise TypeError("embed() takes a sequence of strings; use embed_query() for one text")
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise TypeError(f"embed() input {i} is {type(t).__name__}, expected str")
    return out


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    """Row-wise L2 normalisation as ``torch.nn.functional.normalize`` does it (eps 1e-12)."""
    v = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(v, axis=-1, keepdims=True)
    return (v / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)
