"""``POST /v1/import/native`` on a real daemon: the host's agents' own memories, read
for the server token alone; the Activity page lists the folders read."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from memloom.agents.native import sanitized_key
from tests.server.conftest import Daemon, start_daemon, stop


@pytest.fixture(scope="module")
def host(tmp_path_factory) -> Iterator[tuple[Daemon, str]]:
    base = tmp_path_factory.mktemp("native-host")
    project = base / "code" / "shop"
    (project / ".git").mkdir(parents=True)
    memory = base / "claude" / "projects" / sanitized_key(str(project)) / "memory"
    memory.mkdir(parents=True)
    (memory / "staging.md").write_text(
        "---\nname: staging\nmetadata:\n  type: project\n---\n"
        "The staging database of the shop listens on port 5433.\n"
    )
    d = start_daemon(base / "home", base / "claude", env={"HOME": str(base / "user")})
    try:
        yield d, str(project)
    finally:
        stop(d)


def test_the_server_token_follows_the_hosts_agents_memories(host):
    daemon, project = host
    with daemon.client() as api:
        dry = api.post("/v1/import/native", json={"agents": ["claude-code"], "dry_run": True})
        assert dry.status_code == 200, dry.text
        assert (dry.json()["changed"], dry.json()["added"]) == (1, 0)
        assert api.get("/v1/memories").json()["total"] == 0
        res = api.post("/v1/import/native", json={"agents": ["claude-code"]})
        assert res.status_code == 200, res.text
        report = res.json()
        assert (report["added"], report["calls"]["llm"]) == (1, 0)
        [mem] = api.get("/v1/memories").json()["memories"]
        assert mem["project"] == project and "native:claude-code" in mem["tags"]
        again = api.post("/v1/import/native", json={}).json()
        assert (again["changed"], again["unchanged"]) == (0, 1)
        folders = api.get("/v1/activity").json()["agents"]["claude-code"]["native"]
        assert [f["files"] for f in folders] == [1] and folders[0]["read_at"]


def test_bad_requests_are_refused_with_a_clear_error(host):
    daemon, _ = host
    with daemon.client() as api:
        unknown = api.post("/v1/import/native", json={"agents": ["vim"]})
        assert unknown.status_code == 400 and "unknown agent 'vim'" in unknown.json()["error"]
        extra = api.post("/v1/import/native", json={"paths": ["/etc"]})
        assert extra.status_code == 422


@pytest.mark.security
def test_no_token_or_a_wrong_one_reads_nothing(host):
    daemon, _ = host
    with httpx.Client(base_url=daemon.url, timeout=60) as api:
        assert api.post("/v1/import/native", json={}).status_code == 401
    with daemon.client(token="not-the-token") as api:
        assert api.post("/v1/import/native", json={}).status_code == 401
