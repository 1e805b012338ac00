"""make_embedder, embedder_from_env and check_fingerprint (no model load, no network)."""

from __future__ import annotations

import pytest

from memloom.embed import (
    EmbedderMismatchError,
    EmbeddingError,
    LocalEmbedder,
    OpenAIEmbedder,
    check_fingerprint,
    embedder_from_env,
    make_embedder,
)


def test_make_local_default() -> None:
    emb = make_embedder()
    assert isinstance(emb, LocalEmbedder)
    assert emb.fingerprint == "local:all-MiniLM-L6-v2-int8@384"
    assert isinstance(make_embedder("local", model="all-MiniLM-L6-v2"), LocalEmbedder)


def test_make_local_rejects_other_model() -> None:
    with pytest.raises(ValueError, match="all-MiniLM-L6-v2"):
        make_embedder("local", model="bge-small")
    with pytest.raises(ValueError, match="384"):
        make_embedder("local", dimensions=256)


def test_make_openai_defaults() -> None:
    emb = make_embedder("openai", api_key="k", dimensions=512)
    assert isinstance(emb, OpenAIEmbedder)
    assert emb.name == "openai:text-embedding-3-small"
    assert emb.url == "https://api.openai.com/v1/embeddings"
    assert emb.fingerprint == "openai:text-embedding-3-small@512"  # known: no call


def test_unknown_kind() -> None:
    with pytest.raises(ValueError, match="local, openai"):
        make_embedder("sentence-transformers")


def test_from_env() -> None:
    assert isinstance(embedder_from_env({}), LocalEmbedder)
    emb = embedder_from_env(
        {
            "MEMLOOM_EMBEDDER": "openai",
            "MEMLOOM_EMBED_MODEL": "nomic-embed-text",
            "MEMLOOM_EMBED_BASE_URL": "http://127.0.0.1:11434/v1/",
            "OPENAI_API_KEY": "fallback-key",
            "MEMLOOM_EMBED_DIMENSIONS": "768",
        }
    )
    assert isinstance(emb, OpenAIEmbedder)
    assert emb.name == "openai:nomic-embed-text"
    assert emb.url == "http://127.0.0.1:11434/v1/embeddings"
    assert emb.dim == 768
    assert emb._api_key == "fallback-key"
    own = embedder_from_env(
        {"MEMLOOM_EMBEDDER": "openai", "MEMLOOM_EMBED_API_KEY": "own", "OPENAI_API_KEY": "x"}
    )
    assert isinstance(own, OpenAIEmbedder) and own._api_key == "own"
    with pytest.raises(ValueError, match="MEMLOOM_EMBED_DIMENSIONS"):
        embedder_from_env({"MEMLOOM_EMBED_DIMENSIONS": "big"})


def test_check_fingerprint_ok() -> None:
    emb = LocalEmbedder()
    check_fingerprint(None, emb)  # empty store
    check_fingerprint("local:all-MiniLM-L6-v2-int8@384", emb)
    assert not emb.loaded


def test_check_fingerprint_mismatch_message() -> None:
    with pytest.raises(EmbedderMismatchError) as info:
        check_fingerprint("openai:text-embedding-3-small@1536", LocalEmbedder())
    err = info.value
    assert isinstance(err, EmbeddingError)
    assert err.stored == "openai:text-embedding-3-small@1536"
    assert err.configured == "local:all-MiniLM-L6-v2-int8@384"
    msg = str(err)
    assert "built with embedder 'openai:text-embedding-3-small@1536'" in msg
    assert "'local:all-MiniLM-L6-v2-int8@384' is configured now" in msg
    assert "memloom reembed" in msg
