"""Seed a live ``memloom serve`` through its HTTP API (shared by the tests and the screenshots)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import httpx

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "claude-code-session"

PROCEDURES = [
    "Run the tests with: make check",
    "Deploy to staging with: make deploy ENV=staging",
    "Rebuild the API docs with: make docs",
    "Reset the local database with: make db-reset",
    "Format the code with: ruff format .",
]
FACTS = [
    ("Auth uses JWT with RS256 keys rotated every 90 days", ["auth"]),
    ("The billing service retries webhooks five times with exponential backoff", ["billing"]),
]
PREFERENCES = [
    ("Prefer ruff over flake8 for linting", ["lint"]),
    ("Use pytest fixtures instead of setUp methods", ["testing"]),
]
CREDENTIAL = "The staging database password is hunter2-Kx9!vQ"
CONFLICT_OLD = "The API server listens on port 8080"
CONFLICT_NEW = "The API server listens on port 9090 behind the nginx proxy"
XSS_SCRIPT = "<script>window.__pwned=1</script>"
XSS_IMG = '<img src=x onerror="window.__pwned=1">'
XSS_TAG = "<svg onload=window.__pwned=2>"
PROJECT = "acme-api"
#: Learnt in another agent's session: the list shows its source and filters by it.
CODEX_FACT = "The protobuf stubs must be regenerated with make proto before go build"


def save(api: httpx.Client, text: str, type_: str = "fact", **extra: Any) -> dict[str, Any]:
    body = {"text": text, "type": type_, "project": extra.pop("project", PROJECT), **extra}
    res = api.post("/v1/memories", json=body)
    assert res.status_code == 201, res.text
    return res.json()


def import_example(api: httpx.Client, claude: Path) -> dict[str, Any]:
    """Copy the bundled real session under ``claude``/projects and import it.

    The import streams NDJSON progress; it is read to the end (the report is last).
    """
    target = claude / "projects" / "-home-dev-example"
    target.mkdir(parents=True, exist_ok=True)
    for f in EXAMPLE.glob("*.jsonl"):
        shutil.copy(f, target / f.name)
    with api.stream("POST", "/v1/import/sessions", json={"paths": [str(target)]}) as res:
        assert res.status_code == 200, res.read()
        events = [json.loads(line) for line in res.iter_lines() if line]
    assert events and events[-1]["event"] == "done", events[-1:]
    return events[-1]["report"]


def seed(api: httpx.Client, claude: Path, *, xss: bool = True) -> dict[str, Any]:
    """Several memories of every type, a credential, a pending conflict and an imported session."""
    ids: dict[str, Any] = {"procedures": [], "facts": [], "preferences": []}
    for text in PROCEDURES:
        ids["procedures"].append(save(api, text, "procedure", tags=["howto"])["id"])
    for text, tags in FACTS:
        ids["facts"].append(save(api, text, "fact", tags=tags)["id"])
    for text, tags in PREFERENCES:
        ids["preferences"].append(save(api, text, "preference", tags=tags)["id"])
    ids["episode"] = save(
        api,
        "Debugged the flaky checkout test: the clock mock leaked between tests",
        "episode",
        tags=["testing"],
    )["id"]
    ids["codex"] = save(api, CODEX_FACT, "fact", source="codex", tags=["build"])["id"]
    ids["credential"] = save(api, CREDENTIAL, "fact", sensitivity=3, tags=["staging"])["id"]
    old = save(api, CONFLICT_OLD, "fact", tags=["config"])
    new = save(api, CONFLICT_NEW, "fact", tags=["config"])
    assert new["outcome"] == "conflict", new
    ids["conflict"] = new["conflicts"][0]["conflict_id"]
    ids["conflict_old"], ids["conflict_new"] = old["id"], new["id"]
    if xss:
        ids["xss_script"] = save(api, XSS_SCRIPT, "fact", project="xss-lab", tags=[XSS_TAG])["id"]
        ids["xss_img"] = save(api, XSS_IMG, "fact", project="xss-lab")["id"]
    ids["import"] = import_example(api, claude)
    return ids
