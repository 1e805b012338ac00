"""Text embeddings for memloom: a local default and an OpenAI-compatible option.

Importing this package is cheap: onnxruntime, tokenizers and httpx are loaded
only when an embedder first embeds something.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from .base import Embedder, EmbedderMismatchError, EmbeddingError, l2_normalise
from .local import LocalEmbedder
from .openai import OpenAIEmbedder

__all__ = [
    "DEFAULT_OPENAI_BASE_URL",
    "DEFAULT_OPENAI_MODEL",
    "EMBEDDER_KINDS",
    "Embedder",
    "EmbedderMismatchError",
    "EmbeddingError",
    "LocalEmbedder",
    "OpenAIEmbedder",
    "check_fingerprint",
    "embedder_from_env",
    "l2_normalise",
    "make_embedder",
]

EMBEDDER_KINDS = ("local", "openai")
DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"
DEFAULT_OPENAI_MODEL = "text-embedding-3-small"
_LOCAL_MODELS = frozenset(
    {None, "", "all-MiniLM-L6-v2", "all-MiniLM-L6-v2-int8", LocalEmbedder.name}
)


def make_embedder(
    kind: str = "local",
    *,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    dimensions: int | None = None,
) -> Embedder:
    """Build the configured embedder; nothing is loaded or called yet."""
    kind = (kind or "local").strip().lower()
    if kind == "local":
        if model not in _LOCAL_MODELS:
            raise ValueError(
                f"the local embedder only runs all-MiniLM-L6-v2, not {model!r}; "
                "use kind='openai' with an OpenAI-compatible server for other models"
            )
        if dimensions not in (None, 384):
            raise ValueError("the local embedder's dimension is fixed at 384")
        return LocalEmbedder()
    if kind == "openai":
        return OpenAIEmbedder(
            base_url or DEFAULT_OPENAI_BASE_URL,
            model or DEFAULT_OPENAI_MODEL,
            api_key=api_key,
            dimensions=dimensions,
        )
    raise ValueError(f"unknown embedder kind {kind!r}; allowed: {', '.join(EMBEDDER_KINDS)}")


def embedder_from_env(env: Mapping[str, str] | None = None) -> Embedder:
    """Build the embedder from MEMLOOM_EMBEDDER, MEMLOOM_EMBED_MODEL, MEMLOOM_EMBED_BASE_URL,
    MEMLOOM_EMBED_API_KEY (falls back to OPENAI_API_KEY) and MEMLOOM_EMBED_DIMENSIONS."""
    env = os.environ if env is None else env
    raw_dim = env.get("MEMLOOM_EMBED_DIMENSIONS", "").strip()
    try:
        dimensions = int(raw_dim) if raw_dim else None
    except ValueError:
        raise ValueError(f"MEMLOOM_EMBED_DIMENSIONS must be an integer, not {raw_dim!r}") from None
    return make_embedder(
        env.get("MEMLOOM_EMBEDDER", "local"),
        model=env.get("MEMLOOM_EMBED_MODEL") or None,
        base_url=env.get("MEMLOOM_EMBED_BASE_URL") or None,
        api_key=env.get("MEMLOOM_EMBED_API_KEY") or env.get("OPENAI_API_KEY") or None,
        dimensions=dimensions,
    )


def check_fingerprint(stored: str | None, embedder: Embedder) -> None:
    """Refuse to mix vectors: raise EmbedderMismatchError if the store used another embedder.

    ``stored`` is None for a store that has no vectors yet; anything goes then.
    """
    if stored is None:
        return
    configured = embedder.fingerprint
    if stored != configured:
        raise EmbedderMismatchError(stored, configured)
