"""Fixtures of the end-to-end suite: the pinned agents, the scripted models, a sandbox."""

from __future__ import annotations

import os
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
            # One worker runs the agents, one after the other (pytest -n 2 --dist
            # loadgroup): they share .e2e/ and its results file.
            item.add_marker(pytest.mark.xdist_group("agents"))


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
def sandbox(tmp_path, bins, agent_model, memloom_llm) -> Iterator[Sandbox]:
    sb = fresh_sandbox(tmp_path / "sb", agent_model, memloom_llm)
    sb.bins.update(bins)
    yield sb
    agent_model.clear_scripts()  # a test's scripted tool calls end with it


#: Where the runs of the suite leave their matrix (agent x check: outcome, seconds);
#: ``python scripts/e2e_matrix.py`` prints it and renders docs/agents.md's table.
#: ``MEMLOOM_E2E_RESULTS`` puts them elsewhere (a worktree sharing the install folder).
RESULTS = Path(os.environ.get("MEMLOOM_E2E_RESULTS") or install.ROOT / "results.json")
_results: dict[str, dict[str, object]] = {}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    report = yield
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        check = item.originalname if isinstance(item, pytest.Function) else item.name
        params = getattr(item, "callspec", None)
        agent = "-"
        if params is not None:
            values = params.params
            driver = values.get("driver")
            agent = (
                getattr(driver, "name", None)
                or "→".join(str(values[k]) for k in ("source", "target") if k in values)
                or "-"
            )
        if agent == "-":  # tests/e2e/test_<agent>.py: that agent's own checks
            module = getattr(getattr(item, "module", None), "__name__", "")
            agent = module.rpartition(".test_")[2].replace("_", "-") or "-"
        _results[item.nodeid] = {
            "check": check,
            "agent": agent,
            "outcome": report.outcome,
            "seconds": round(report.duration, 2),
        }
    return report


def pytest_sessionfinish(session: pytest.Session) -> None:
    if not _results:
        return
    import json
    import time

    # A run of some of the tests (one file, one agent) replaces their rows only: the
    # matrix keeps what the other tests last gave.
    try:
        kept = json.loads(RESULTS.read_text())["tests"]
    except (OSError, ValueError, KeyError):
        kept = {}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    finished = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
    doc = {"finished": finished, "tests": {**kept, **_results}}
    RESULTS.write_text(json.dumps(doc, indent=1) + "\n")
