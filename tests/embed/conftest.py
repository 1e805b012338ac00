"""Shared fixtures: one real LocalEmbedder per test session (loading costs ~0.4 s)."""

from __future__ import annotations

import pytest

from memloom.embed import LocalEmbedder


@pytest.fixture(scope="session")
def local_embedder() -> LocalEmbedder:
    emb = LocalEmbedder()
    emb.load()
    return emb
