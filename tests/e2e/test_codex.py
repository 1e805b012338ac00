"""Codex CLI 0.169.0, what only Codex does: its feature flag and its hook trust.

* ``memloom connect codex`` leaves config.toml alone: Codex enables hooks by
  default and prints ``deprecated: [features].codex_hooks is deprecated`` on every
  run while the flag an older memloom wrote is there; a connect over such an
  install takes the flag out again (config.toml as the user had it, byte for byte).
* Codex skips untrusted hooks without a word. memloom computes the key and hash
  Codex records when the user trusts a hook (memloom.agents.codex.trust): they
  must equal what Codex itself reports (``codex app-server``, JSON-RPC
  ``hooks/list``), ``memloom status`` must say whether the hooks are trusted, and
  a run **without** ``--dangerously-bypass-hook-trust`` injects memories only once
  they are.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import tomlkit

from memloom.agents.codex import hooks as codex_hooks
from memloom.agents.codex import trust as codex_trust
from tests.e2e.drivers import DRIVERS
from tests.e2e.drivers.codex import Codex
from tests.e2e.harness import RUN_TIMEOUT_S, Sandbox, snapshot
from tests.e2e.model import ANSWER

FACT = "The staging database for the shop listens on port 5433"
QUESTION = "which port does the staging database of the shop listen on?"

pytestmark = pytest.mark.skipif("codex" not in DRIVERS, reason="no Codex driver")


def answered(run) -> None:
    assert run.returncode == 0, f"exit {run.returncode}: {run.stderr[-1500:]}"
    assert ANSWER in run.stdout, run.stdout[-1500:]


def hooks_list(driver: Codex, sb: Sandbox) -> list[dict[str, Any]]:
    """What Codex itself says of each hook: ``codex app-server``'s ``hooks/list``."""
    proc = subprocess.Popen(
        [str(sb.bins["npm"] / driver.binary), "app-server"],
        cwd=str(sb.project),
        env=sb.env(driver.run_env(sb)),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None

    def call(id_: int | None, method: str, params: dict[str, Any]) -> Any:
        msg = {"method": method, "params": params, **({"id": id_} if id_ is not None else {})}
        proc.stdin.write(json.dumps(msg) + "\n")
        proc.stdin.flush()
        while id_ is not None:
            line = proc.stdout.readline()
            assert line, "codex app-server closed its output"
            doc = json.loads(line)
            if doc.get("id") == id_:
                assert "error" not in doc, doc
                return doc["result"]
        return None

    try:
        call(1, "initialize", {"clientInfo": {"name": "memloom-e2e", "version": "0"}})
        call(None, "initialized", {})
        result = call(2, "hooks/list", {"cwds": [str(sb.project)]})
    finally:
        proc.kill()
        proc.wait(timeout=RUN_TIMEOUT_S)
    return [hook for entry in result["data"] for hook in entry["hooks"]]


def memloom_entries(driver: Codex, sb: Sandbox) -> list[tuple[str, str]]:
    """(key, hash) of each memloom handler in hooks.json, as memloom computes them."""
    path = driver.hooks_file(sb)
    data = json.loads(path.read_text())
    out = []
    for event, groups in data["hooks"].items():
        for g, group in enumerate(groups):
            for h, handler in enumerate(group["hooks"]):
                if codex_hooks.is_memloom_hook(handler):
                    key = codex_trust.hook_key(path, event, g, h)
                    out.append((key, codex_trust.hook_hash(event, handler, group.get("matcher"))))
    return out


def test_connect_writes_no_feature_flag_and_codex_reports_nothing_deprecated(sandbox: Sandbox):
    driver = DRIVERS["codex"]
    driver.configure(sandbox)
    config, _ = driver.seed_user_config(sandbox)
    before = snapshot([config])
    doc = sandbox.memloom("connect", "codex", "--all", "--json")
    assert doc["changed"] and codex_hooks.TRUST_NOTE in doc["notes"]
    assert snapshot([config]) == before, "connect edited config.toml"
    run = driver.run(sandbox, "hello")
    answered(run)
    assert "deprecated" not in run.stderr, run.stderr[-1500:]
    assert "loading hooks from both" not in run.stderr


def test_connect_takes_out_the_deprecated_flag_an_older_memloom_wrote(sandbox: Sandbox):
    driver = DRIVERS["codex"]
    driver.configure(sandbox)
    config, _ = driver.seed_user_config(sandbox)
    original = config.read_text()
    sandbox.memloom("connect", "codex", "--all")
    # What memloom's installer wrote before: the flag, its backup, its record.
    doc = tomlkit.parse(original)
    doc["features"]["codex_hooks"] = True
    config.with_name("config.toml.memloom-backup").write_text(original)
    config.write_text(tomlkit.dumps(doc))
    state_path = driver.hooks_file(sandbox).with_name("hooks.json.memloom-state")
    state = json.loads(state_path.read_text())
    state["config"] = {
        "added_key": "codex_hooks",
        "created_table": False,
        "created_file": False,
        "original_sha256": hashlib.sha256(original.encode()).hexdigest(),
    }
    state_path.write_text(json.dumps(state))
    old = driver.run(sandbox, "hello")
    answered(old)
    assert "[features].codex_hooks` is deprecated" in old.stderr  # the defect, as users saw it

    doc = sandbox.memloom("connect", "codex", "--all", "--json")
    assert doc["changed"] and codex_hooks.LEGACY_FLAG_NOTE in doc["notes"]
    assert config.read_text() == original
    new = driver.run(sandbox, "hello")
    answered(new)
    assert "deprecated" not in new.stderr


def test_hook_trust_is_what_codex_computes_and_status_shows_it(sandbox: Sandbox):
    driver = Codex(bypass_trust=False)  # as a user runs Codex
    driver.configure(sandbox)
    config, _ = driver.seed_user_config(sandbox)
    original = config.read_text()
    sandbox.memloom("connect", "codex", "--all")
    sandbox.save(FACT)

    mine = memloom_entries(driver, sandbox)
    assert len(mine) == len(codex_hooks.EVENTS)  # PostToolUse too: its matcher is hashed
    listed = {hook["key"]: hook for hook in hooks_list(driver, sandbox)}
    for key, digest in mine:
        assert key in listed, f"Codex keys memloom's hook otherwise: {sorted(listed)}"
        assert listed[key]["currentHash"] == digest
        assert listed[key]["trustStatus"] == "untrusted"
    status = sandbox.memloom("status", "--json")
    assert set(status["agents"]["codex"]["trust"].values()) == {"untrusted"}
    text = sandbox.memloom("status").stdout
    assert "NOT trusted" in text and "/hooks" in text

    skipped = driver.run(sandbox, QUESTION)  # Codex's trap: untrusted hooks do not run
    answered(skipped)
    assert "5433" not in skipped.sent

    # What trusting them in /hooks records.
    with config.open("a") as f:
        for key, digest in mine:
            f.write(f'\n[hooks.state."{key}"]\ntrusted_hash = "{digest}"\n')
    listed = {hook["key"]: hook for hook in hooks_list(driver, sandbox)}
    assert {listed[key]["trustStatus"] for key, _ in mine} == {"trusted"}
    status = sandbox.memloom("status", "--json")
    assert set(status["agents"]["codex"]["trust"].values()) == {"trusted"}
    assert "hooks trusted" in sandbox.memloom("status").stdout
    run = driver.run(sandbox, QUESTION)
    answered(run)
    assert "5433" in run.sent, "trusted hooks did not inject the memory"
    assert "hook: UserPromptSubmit" in run.stderr

    sandbox.memloom("disconnect", "codex")  # the trust recorded for memloom's hooks goes too
    assert config.read_text() == original


def test_the_rollout_keeps_memloom_s_context_in_developer_messages_only(sandbox: Sandbox):
    """What the Codex reader relies on: the injection is a ``developer`` message,
    never inside the user's own message (tests/fixtures/agents/codex holds one)."""
    driver = DRIVERS["codex"]
    driver.configure(sandbox)
    driver.seed_user_config(sandbox)
    sandbox.memloom("connect", "codex", "--all")
    sandbox.save(FACT)
    answered(driver.run(sandbox, QUESTION))
    (rollout,) = driver.session_files(sandbox)
    roles = {}
    for line in Path(rollout).read_text().splitlines():
        rec = json.loads(line)
        payload = rec.get("payload") or {}
        if rec.get("type") == "response_item" and payload.get("type") == "message":
            text = json.dumps(payload.get("content"))
            if "5433" in text:
                roles.setdefault(payload.get("role"), 0)
                roles[payload["role"]] += 1
    assert set(roles) == {"developer"}, roles
