"""A team on one PostgreSQL: two ``memloom serve`` processes, API tokens, owners."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest

from tests.server.conftest import Daemon, db_env, start_daemon, stop

DIM = 128


def cli(home: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMLOOM_HOME": str(home), "MEMLOOM_DATABASE_URL": url}
    return subprocess.run(
        [sys.executable, "-m", "memloom.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def create_token(home: Path, url: str, owner: str, *shares: str) -> str:
    args = ["tokens", "create", "--owner", owner, "--json"]
    for s in shares:
        args += ["--share", s]
    done = cli(home, url, *args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["token"]


def unrelated_vectors(n: int, seed: int = 3) -> list[list[float]]:
    """Random directions in 128-d: pairwise cosine ~N(0, 0.09), far from every band."""
    rng = np.random.default_rng(seed)
    v = rng.normal(size=(n, DIM))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return v.tolist()


@pytest.fixture
def team(tmp_path: Path, pg_url: str) -> Iterator[dict]:
    admin_home = tmp_path / "admin"
    tokens = {
        "alice": create_token(admin_home, pg_url, "alice", "team"),
        "bob": create_token(admin_home, pg_url, "bob"),
        "team": create_token(admin_home, pg_url, "team"),
    }
    servers = [
        start_daemon(tmp_path / f"s{i}" / "home", tmp_path / f"s{i}" / "claude", env=db_env(pg_url))
        for i in range(2)
    ]
    try:
        yield {"url": pg_url, "tokens": tokens, "servers": servers, "admin": admin_home}
    finally:
        for s in servers:
            stop(s)


def client(server: Daemon, token: str) -> httpx.Client:
    return server.client(token)


def test_tokens_are_required_once_they_exist(team):
    s1 = team["servers"][0]
    assert httpx.get(s1.url + "/health").status_code == 200
    bare = httpx.post(s1.url + "/v1/memory/recall", json={"query": "x"})
    assert bare.status_code == 401 and bare.json() == {"error": "missing or wrong bearer token"}
    wrong = client(s1, "mlt_not-a-token").post("/v1/memory/recall", json={"query": "x"})
    assert wrong.status_code == 401
    with client(s1, team["tokens"]["alice"]) as api:
        assert api.post("/v1/memory/recall", json={"query": "x"}).status_code == 200


def test_owner_isolation_across_both_servers(team):
    s1, s2 = team["servers"]
    t = team["tokens"]
    with client(s1, t["alice"]) as a1, client(s2, t["bob"]) as b2, client(s2, t["team"]) as t2:
        alice_id = a1.post(
            "/v1/memories", json={"text": "alice: the VPN password rotates monthly"}
        ).json()["id"]
        bob_id = b2.post(
            "/v1/memories", json={"text": "bob: my dotfiles live in ~/src/dots"}
        ).json()["id"]
        team_id = t2.post(
            "/v1/memories", json={"text": "team: releases are cut from the main branch"}
        ).json()["id"]
        # alice reads her own and the shared team scope, never bob's
        listed = {m["id"] for m in a1.get("/v1/memories", params={"limit": 100}).json()["memories"]}
        assert listed == {alice_id, team_id}
        assert a1.get(f"/v1/memories/{bob_id}").status_code == 404
        found = a1.post("/v1/memory/recall", json={"query": "dotfiles src dots"}).json()
        assert bob_id not in {m["id"] for m in found["memories"]}
        assert a1.get("/v1/memory/stats").json()["total_memories"] == 2
        # bob sees only his own
        assert b2.get(f"/v1/memories/{alice_id}").status_code == 404
        assert b2.get(f"/v1/memories/{team_id}").status_code == 404
        bob_recall = b2.post("/v1/memory/recall", json={"query": "VPN password releases"}).json()
        assert {m["id"] for m in bob_recall["memories"]} <= {bob_id}
        # a shared scope is read-only for alice; bob cannot touch alice's rows at all
        ro = a1.post(f"/v1/memories/{team_id}/update", json={"text": "team: cut from dev"})
        assert ro.status_code == 403 and "read-only" in ro.json()["error"]
        forgot = b2.post("/v1/memory/forget", json={"ids": [alice_id]}).json()
        assert forgot["removed"] == 0
        assert a1.get(f"/v1/memories/{alice_id}").status_code == 200
    # revoking a token shuts it out at once, on every server
    listed = cli(team["admin"], team["url"], "tokens", "list", "--json")
    alice_token = next(x for x in json.loads(listed.stdout)["tokens"] if x["owner"] == "alice")
    assert cli(team["admin"], team["url"], "tokens", "revoke", alice_token["id"]).returncode == 0
    for s in (s1, s2):
        with client(s, t["alice"]) as api:
            assert api.post("/v1/memory/recall", json={"query": "x"}).status_code == 401


def test_concurrent_load_on_two_servers_loses_and_duplicates_nothing(team):
    """Every text is sent to both servers at the same moment, from several threads."""
    s1, s2 = team["servers"]
    token = team["tokens"]["alice"]
    n = 120
    vecs = unrelated_vectors(n)
    texts = [f"fact {i}: service-{i} listens on port {9000 + i}" for i in range(n)]
    failures: list[str] = []
    ids: dict[int, set[str]] = {i: set() for i in range(n)}
    lock = threading.Lock()

    def worker(server: Daemon, order: list[int]) -> None:
        with client(server, token) as api:
            for i in order:
                r = api.post(
                    "/v1/memory/store",
                    json={"entries": [{"text": texts[i], "embedding": vecs[i]}]},
                )
                if r.status_code != 200:
                    failures.append(f"{r.status_code} {r.text}")
                    continue
                with lock:
                    ids[i].update(r.json()["ids"])
                if i % 10 == 0:  # reads interleaved with the writes
                    q = api.post(
                        "/v1/memory/recall", json={"query_embedding": vecs[i], "max_results": 1}
                    )
                    if q.status_code != 200:
                        failures.append(f"recall {q.status_code} {q.text}")

    forward, backward = list(range(n)), list(reversed(range(n)))
    threads = [
        threading.Thread(target=worker, args=(s1, forward)),
        threading.Thread(target=worker, args=(s2, forward)),
        threading.Thread(target=worker, args=(s1, backward)),
        threading.Thread(target=worker, args=(s2, backward)),
    ]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not failures, failures[:5]
    assert all(len(v) == 1 for v in ids.values()), "a text got two ids"
    with client(s2, token) as api:
        memories = api.get("/v1/memories", params={"limit": 1000}).json()
        assert memories["total"] == n
        assert sorted(m["text"] for m in memories["memories"]) == sorted(texts)
        stats = api.get("/v1/memory/stats").json()
        assert stats["total_memories"] == n
