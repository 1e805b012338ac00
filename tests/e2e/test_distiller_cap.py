"""The daily cap on calls through an agent's CLI holds, for every agent's CLI, for real.

With ``MEMLOOM_CLI_DAILY_CAP=1`` an import of two sessions runs the agent's CLI once:
the first session is distilled, the second stops the run before the CLI starts (one
line naming the cap and how to raise it), stays undone, and is distilled by the next
run once the cap allows (here: a raised cap, as a new day would). Today's count is in
``memloom status``.
"""

from __future__ import annotations

import pytest

from tests.e2e.distiller import CUE, DISTILLERS, FACT, memloom, plan_answer, write_session
from tests.e2e.drivers import DRIVERS
from tests.e2e.harness import Sandbox


@pytest.mark.parametrize("provider", list(DISTILLERS))
def test_the_cli_cap_holds(sandbox: Sandbox, provider: str) -> None:
    driver = DRIVERS[DISTILLERS[provider]]
    driver.configure(sandbox)
    driver.seed_user_config(sandbox)
    plan_answer(sandbox)
    first = write_session(sandbox, "first.jsonl")
    second = write_session(sandbox, "second.jsonl")
    folder = str(first.parent)

    mark = sandbox.model.mark()
    capped = memloom(
        sandbox,
        driver,
        provider,
        "import",
        "sessions",
        "--path",
        folder,
        "--json",
        env={"MEMLOOM_CLI_DAILY_CAP": "1"},
    )
    asked = [r for r in sandbox.model.since(mark) if CUE in r.text]
    assert capped.returncode == 2, capped.stderr
    assert "today's cap of 1 distillation calls" in capped.stdout + capped.stderr
    assert asked, "the first session never reached the model"
    status = memloom(sandbox, driver, provider, "status", env={"MEMLOOM_CLI_DAILY_CAP": "1"})
    assert "today 1/1 calls through the agent's CLI" in status.stdout, status.stderr

    again = memloom(
        sandbox,
        driver,
        provider,
        "import",
        "sessions",
        "--path",
        folder,
        "--json",
        env={"MEMLOOM_CLI_DAILY_CAP": "5"},
    )
    assert again.returncode == 0, again.stderr
    texts = [
        m["text"]
        for m in sandbox.memloom("recall", "PostgreSQL integration tests", "--json")["memories"]
    ]
    assert texts.count(FACT) == 1  # both sessions done, the memory written once
    assert second.exists()
