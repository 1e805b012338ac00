"""Shared fixtures for the whole test-suite."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import memloom

#: Environment variables that would point a test engine at a user's real setup.
_MEMLOOM_ENV = (
    "MEMLOOM_HOME",
    "MEMLOOM_DATABASE_URL",
    "MEMLOOM_EMBEDDER",
    "MEMLOOM_EMBED_MODEL",
    "MEMLOOM_EMBED_DIMENSIONS",
    "MEMLOOM_LLM",
    "MEMLOOM_LLM_MODEL",
    "MEMLOOM_LLM_BASE_URL",
    "MEMLOOM_LLM_API_KEY",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "CLAUDE_CONFIG_DIR",
    "MEMLOOM_DAILY_CAP",
    "MEMLOOM_EMBED_BASE_URL",
    "MEMLOOM_EMBED_API_KEY",
    "MEMLOOM_ANN_THRESHOLD",
)


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch) -> None:
    """No test may read or write the user's real memloom or Claude Code setup."""
    for name in _MEMLOOM_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def engine(tmp_path, monkeypatch) -> Iterator[memloom.Memloom]:
    """A fresh engine on a SQLite file under ``tmp_path``; closed after the test.

    The local embedder loads lazily, so a test that always passes its own
    embeddings never loads the model.
    """
    for name in _MEMLOOM_ENV:
        monkeypatch.delenv(name, raising=False)
    m = memloom.open(home=str(tmp_path))
    try:
        yield m
    finally:
        m.close()
