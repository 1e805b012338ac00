"""memloom connected to the real agents, run headless against a scripted model.

For each agent memloom supports (tests/e2e/drivers), in a sandbox HOME whose
agent config already holds another tool's hook and the user's own settings:

1. ``memloom connect`` merges its hooks, the agent runs, the user's hook still fires;
2. a project memory reaches **the model's request** through the prompt hook, a
   pinned one through the session-start digest, an unrelated prompt gets no
   memory, and a second prompt of the same session is not given the memory again;
3. capture imports the session file the agent itself wrote: the typed prompt
   reaches memloom's distiller, memloom's own injected context does not;
4. a fact typed in one agent is recalled into another agent's prompt;
5. with memloom's data folder unusable the agent still answers;
6. ``memloom disconnect`` restores the config files byte for byte, and the agent runs.

Hook overhead (p95 added latency, daemon up and down) is measured by
``bench/hooks_e2e.py``, not here.
"""

from __future__ import annotations

import pytest

from tests.e2e.drivers import DRIVERS
from tests.e2e.harness import Driver, Sandbox, snapshot
from tests.e2e.model import ANSWER

FACT = "The staging database for the shop listens on port 5433"
QUESTION = "which port does the staging database of the shop listen on?"
PINNED = "Always run make lint before committing to the shop"
UNRELATED = "what is the capital of France?"
TYPED = "REMEMBER: deploys of the shop go through ArgoCD on Fridays"
CROSS_QUESTION = "how do deploys of the shop go out, and on which day?"

AGENTS = list(DRIVERS.values())
HOOKED = [d for d in AGENTS if d.hooks]


def ids(driver: Driver) -> str:
    return driver.name


def connected(driver: Driver, sb: Sandbox) -> list:
    driver.configure(sb)
    files = driver.seed_user_config(sb)
    sb.memloom("connect", driver.name, "--all")
    return files


def answered(run) -> None:
    assert run.returncode == 0, f"exit {run.returncode}: {run.stderr[-1500:]}"
    assert ANSWER in run.stdout, run.stdout[-1500:]


@pytest.mark.parametrize("driver", HOOKED, ids=ids)
def test_connect_merges_and_the_user_s_own_hook_still_fires(driver: Driver, sandbox: Sandbox):
    driver.configure(sandbox)
    files = driver.seed_user_config(sandbox)
    before = {p: p.read_text() for p in files}
    other = driver.other_hook_command(sandbox)
    holding = [p for p in files if other in before[p]]  # Codex: hooks.json, not config.toml
    assert holding, "the user's own hook is in none of the files"
    doc = sandbox.memloom("connect", driver.name, "--all", "--json")
    assert doc["changed"] and doc["hooks"]
    after = {p: p.read_text() for p in files}
    assert any(after[p] != before[p] for p in files), "connect changed nothing"
    for path in holding:
        assert other in after[path], f"the user's hook left {path}"
    run = driver.run(sandbox, "hello")
    answered(run)
    assert driver.other_hook_marker(sandbox).exists(), "the user's own hook did not fire"


@pytest.mark.parametrize("driver", HOOKED, ids=ids)
def test_a_saved_memory_reaches_the_model_once_and_only_when_relevant(
    driver: Driver, sandbox: Sandbox
):
    connected(driver, sandbox)
    sandbox.save(FACT)
    sandbox.save(PINNED, pin=True)
    first = driver.run(sandbox, QUESTION)
    answered(first)
    assert "5433" in first.sent, "the project memory never reached the model"
    assert PINNED in first.sent, "the pinned memory (session-start digest) never reached the model"
    last = first.requests[-1].text
    again = driver.run(sandbox, QUESTION, resume=True)
    answered(again)
    # The resumed session's history holds the first injection; a new one would add to it.
    assert again.requests[-1].text.count("5433") <= last.count("5433"), "injected twice"

    unrelated = driver.run(sandbox, UNRELATED)
    answered(unrelated)
    assert "5433" not in unrelated.sent


@pytest.mark.parametrize("driver", HOOKED, ids=ids)
def test_capture_distills_the_session_file_the_agent_wrote(driver: Driver, sandbox: Sandbox):
    connected(driver, sandbox)
    sandbox.save(FACT)
    llm = sandbox.memloom_llm
    before = len(llm.payloads.get("memloom_distill", []))
    answered(driver.run(sandbox, f"{TYPED}. Also {QUESTION}"))
    assert driver.session_files(sandbox), "the agent wrote no session file"
    doc = sandbox.memloom("capture", "run-once", "--json")
    assert doc["processed"] >= 1, doc
    sent = llm.payloads.get("memloom_distill", [])[before:]
    lines = [line["text"] for payload in sent for line in payload["lines"]]
    assert any("ArgoCD" in text for text in lines), "the typed prompt never reached the distiller"
    assert not any("5433" in text for text in lines), "memloom re-read its own injection"
    assert not any("memloom-context" in text for text in lines)
    found = sandbox.memloom("recall", "deploys ArgoCD", "--json")
    assert any("ArgoCD" in m["text"] for m in found["memories"])


PAIRS = [
    ("codex", "claude-code"),
    ("claude-code", "gemini"),
    ("gemini", "copilot"),
    ("copilot", "codex"),
    ("aider", "claude-code"),
    ("qwen", "claude-code"),
    ("codex", "qwen"),
    ("opencode", "codex"),
    ("claude-code", "opencode"),
]


@pytest.mark.parametrize(
    ("source", "target"),
    [p for p in PAIRS if p[0] in DRIVERS and p[1] in DRIVERS],
    ids=lambda name: name,
)
def test_a_fact_typed_in_one_agent_is_recalled_into_another(source, target, sandbox: Sandbox):
    a, b = DRIVERS[source], DRIVERS[target]
    for driver in (a, b):
        driver.configure(sandbox)
        driver.seed_user_config(sandbox)
        sandbox.memloom("connect", driver.name, "--all")  # Aider: the folder to sweep
    answered(a.run(sandbox, TYPED))
    doc = sandbox.memloom("capture", "run-once", "--json")
    assert doc["processed"] >= 1 or doc["swept"] >= 1, doc
    run = b.run(sandbox, CROSS_QUESTION)
    answered(run)
    assert "ArgoCD" in run.sent, f"{source}'s fact never reached {target}'s model"


@pytest.mark.parametrize("driver", HOOKED, ids=ids)
def test_the_agent_answers_when_memloom_s_data_folder_is_unusable(driver: Driver, sandbox: Sandbox):
    connected(driver, sandbox)
    sandbox.save(FACT)
    # Root ignores permission bits: a data folder under /proc can be neither made nor written.
    run = driver.run(sandbox, QUESTION, env={"MEMLOOM_HOME": "/proc/memloom-e2e-unwritable"})
    answered(run)


@pytest.mark.parametrize("driver", HOOKED, ids=ids)
def test_disconnect_restores_the_config_files_exactly(driver: Driver, sandbox: Sandbox):
    driver.configure(sandbox)
    files = driver.seed_user_config(sandbox)
    before = snapshot(files)
    sandbox.memloom("connect", driver.name, "--all")
    answered(driver.run(sandbox, QUESTION))
    sandbox.memloom("disconnect", driver.name)
    after = snapshot(files)
    for path in files:
        assert after[path] == before[path], f"{path} differs after disconnect"
    answered(driver.run(sandbox, "hello again"))
