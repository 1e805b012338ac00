"""The daily LLM budget: every run the server starts draws on it, whoever asks for it.

``POST /v1/import/sessions`` and ``POST /v1/conflicts/auto`` spent LLM calls outside
the cap (issue 33); they now share the capture worker's counter and stop at the cap,
keeping their progress. The CLI's own runs at the terminal stay uncapped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest

from tests.server.conftest import db_env, start_daemon, stop
from tests.support.scripted_llm import ScriptedModel

TOKEN = "the-server-own-token"


def session(claude: Path, project: str, remember: str) -> Path:
    """A finished Claude Code session with one line the scripted model distils."""
    path = claude / "projects" / f"-home-dev-{project}" / f"{uuid.uuid4()}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "type": "user",
        "uuid": str(uuid.uuid4()),
        "sessionId": path.stem,
        "cwd": f"/home/dev/{project}",
        "timestamp": "2026-11-29T09:00:00.000Z",
        "message": {"role": "user", "content": f"REMEMBER: {remember}"},
    }
    path.write_text(json.dumps(record) + "\n")
    old = time.time() - 3600
    os.utime(path, (old, old))
    return path


def ndjson(api: httpx.Client, route: str, body: dict) -> list[dict]:
    with api.stream("POST", route, json=body) as res:
        assert res.status_code == 200, res.read()
        return [json.loads(line) for line in res.iter_lines() if line]


def conflicts(api: httpx.Client, first: int, count: int) -> None:
    """``count`` pending conflicts: Distill's distance bands (a changed port and more
    besides: the port alone would be a new version), one pair per project."""
    for i in range(first, first + count):
        for tail in ("port 8080", "port 9090 behind the nginx proxy"):
            entry = {"text": f"The API server {i} listens on {tail}", "project": f"p{i}"}
            res = api.post("/v1/memory/store", json={"entries": [entry]})
            assert res.status_code == 200, res.text
        assert len(res.json()["conflicts"]) == 1


@pytest.mark.security
def test_http_import_and_judge_runs_draw_on_the_daily_cap(tmp_path, backend):
    model = ScriptedModel(verdict="keep_new")
    url = backend if backend.startswith("postgresql") else None
    env = {
        **db_env(url),
        "MEMLOOM_LLM": "openai",
        "MEMLOOM_LLM_BASE_URL": model.base_url,
        "MEMLOOM_LLM_MODEL": "scripted",
        "MEMLOOM_LLM_API_KEY": "sk-scripted",
        "MEMLOOM_DAILY_CAP": "4",
    }
    home, claude = tmp_path / "home", tmp_path / "claude"
    daemon = start_daemon(home, claude, env={**env, "MEMLOOM_API_TOKEN": TOKEN})
    try:
        with daemon.client(TOKEN) as api:
            conflicts(api, 0, 3)
            # the judge: 3 calls of the 4 ...
            summary = ndjson(api, "/v1/conflicts/auto", {})[-1]["summary"]
            assert (summary["judged"], summary["resolved"]) == (3, 3)
            assert "stopped" not in summary
            # ... an import of two sessions: the first takes the last call, the second
            # stops with the reason in the report; what was imported stays
            paths = [
                session(claude, "one", "builds use gradle"),
                session(claude, "two", "ci is buildkite"),
            ]
            report = ndjson(api, "/v1/import/sessions", {"paths": [str(p) for p in paths]})[-1][
                "report"
            ]
            assert report["stopped"] == "daily budget of unattended calls is spent"
            assert report["saved"] == 1 and model.distill_calls == 1
            imports = api.get("/v1/status").json()["imports"]
            assert imports["complete"] == 1, imports
            # ... and a judge run finds the cap spent: it stops before its first call
            conflicts(api, 3, 1)
            summary = ndjson(api, "/v1/conflicts/auto", {})[-1]["summary"]
            assert summary["judged"] == 0 and summary["remaining"] == 1
            assert (
                "daily budget" in summary["stopped"] and "MEMLOOM_DAILY_CAP" in summary["stopped"]
            )
            assert len(model.payloads["memloom_judge"]) == 3
            assert summary["budget"] == {"used": 4, "cap": 4}
            # the capture worker's counter: the same one, paused for the day
            doc = api.get("/v1/activity").json()
            assert doc["budget"] == {"used": 4, "cap": 4, "paused": True}
            assert doc["capture"]["last_failure"]["kind"] == "budget_paused"
    finally:
        stop(daemon)
    try:
        # the user at their own terminal is not capped
        cli_env = {**os.environ, "MEMLOOM_HOME": str(home), "CLAUDE_CONFIG_DIR": str(claude), **env}
        done = subprocess.run(
            [sys.executable, "-m", "memloom.cli", "conflicts", "auto", "--json"],
            env=cli_env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["resolved"] == 1
        assert len(model.payloads["memloom_judge"]) == 4
    finally:
        model.close()
