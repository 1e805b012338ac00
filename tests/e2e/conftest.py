"""Fixtures of the end-to-end suite: the pinned agents, the scripted models, a sandbox."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e import install
from tests.e2e.harness import Sandbox, fresh_sandbox
from tests.e2e.model import AgentModel
from tests.support.scripted_llm import ScriptedModel


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/e2e/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def bins() -> dict[str, Path]:
    """The install folders' bin directories (installed on first use)."""
    return {"npm": install.npm_bin()}


@pytest.fixture(scope="session")
def agent_model() -> Iterator[AgentModel]:
    with AgentModel() as model:
        yield model


@pytest.fixture(scope="session")
def memloom_llm() -> Iterator[ScriptedModel]:
    model = ScriptedModel()
    yield model
    model.close()


@pytest.fixture
def sandbox(tmp_path, bins, agent_model, memloom_llm) -> Sandbox:
    sb = fresh_sandbox(tmp_path / "sb", agent_model, memloom_llm)
    sb.bins.update(bins)
    return sb
