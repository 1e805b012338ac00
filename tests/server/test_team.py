"""A team on one PostgreSQL: two ``memloom serve`` processes, API tokens, owners."""

from __future__ import annotations

import json
import os
import shutil
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


def cli(home: Path, url: str, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMLOOM_HOME": str(home), "MEMLOOM_DATABASE_URL": url, **extra}
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


@pytest.mark.security
def test_a_tokens_forget_by_tags_or_age_touches_its_owners_memories_only(team):
    """Over HTTP a forget by tags or ``before`` alone needs no scope (the Distill guide's
    call, ``curl -d``): on a shared store it reaches only the token owner's memories,
    never another owner's nor a shared scope's it may read."""
    s1, s2 = team["servers"]
    t = team["tokens"]
    form = {"Content-Type": "application/x-www-form-urlencoded"}  # what curl -d sends

    def store(api: httpx.Client, *texts: str) -> list[str]:
        body = {"entries": [{"text": x, "tags": ["temp"]} for x in texts]}
        res = api.post("/v1/memory/store", content=json.dumps(body), headers=form)
        assert res.status_code == 200, res.text
        return res.json()["ids"]

    def forget(api: httpx.Client, body: dict) -> int:
        res = api.post("/v1/memory/forget", content=json.dumps(body), headers=form)
        assert res.status_code == 200, res.text
        return res.json()["removed"]

    with client(s1, t["alice"]) as alice, client(s2, t["bob"]) as bob:
        with client(s2, t["team"]) as shared:
            team_ids = store(shared, "team: scratch notes from the offsite")
        alice_ids = store(alice, "alice: scratch VPN notes", "alice: scratch deploy notes")
        bob_ids = store(bob, "bob: scratch dotfile notes")
        # bob, tags alone and then every age: only his own memory goes
        assert forget(bob, {"tags": ["temp"]}) == 1
        assert forget(bob, {"before": "2100-01-01T00:00:00Z"}) == 0
        assert bob.get(f"/v1/memories/{bob_ids[0]}").status_code == 404
        for i in alice_ids + team_ids:
            assert alice.get(f"/v1/memories/{i}").status_code == 200
        # alice reads the team scope, but forgets her own memories only
        assert forget(alice, {"tags": ["temp"], "before": "2100-01-01T00:00:00Z"}) == 2
        assert [alice.get(f"/v1/memories/{i}").status_code for i in alice_ids] == [404, 404]
        assert alice.get(f"/v1/memories/{team_ids[0]}").status_code == 200


# ---------------------------------------------------------------- least privilege (issue 33)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "claude-code-session"
SERVER_TOKEN = "server-own-token-for-the-host"


@pytest.fixture
def host(tmp_path: Path, pg_url: str) -> Iterator[dict]:
    """One server on the shared store with its own token (the host's user) and a
    session of the host's in its Claude Code folder; API tokens for alice (who reads
    the team scope), bob and the team."""
    admin_home = tmp_path / "admin"
    tokens = {
        "alice": create_token(admin_home, pg_url, "alice", "team"),
        "bob": create_token(admin_home, pg_url, "bob"),
        "team": create_token(admin_home, pg_url, "team"),
    }
    home, claude = tmp_path / "host" / "home", tmp_path / "host" / "claude"
    project = claude / "projects" / "-home-host-secret-project"
    project.mkdir(parents=True)
    session = project / "7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl"
    shutil.copy(EXAMPLE / session.name, session)
    server = start_daemon(home, claude, env={**db_env(pg_url), "MEMLOOM_API_TOKEN": SERVER_TOKEN})
    try:
        yield {"url": pg_url, "tokens": tokens, "server": server, "session": session}
    finally:
        stop(server)


@pytest.mark.security
def test_the_server_tokens_forget_by_tags_alone_keeps_the_other_owners(host):
    """The server's own token acts for the whole store, but a forget by tags or age
    alone (the Distill guide's call) is the host owner's: it never empties alice's."""
    server = host["server"]
    body = {"entries": [{"text": "scratch notes of the day", "tags": ["temp"]}]}
    with client(server, host["tokens"]["alice"]) as alice:
        [alice_id] = alice.post("/v1/memory/store", json=body).json()["ids"]
    with server.client(SERVER_TOKEN) as api:
        body = {"entries": [{"text": "the host's scratch build notes", "tags": ["temp"]}]}
        [own_id] = api.post("/v1/memory/store", json=body).json()["ids"]
        res = api.post("/v1/memory/forget", json={"tags": ["temp"]})
        assert res.status_code == 200 and res.json()["removed"] == 1
        assert api.get(f"/v1/memories/{own_id}").status_code == 404
        assert api.get(f"/v1/memories/{alice_id}").status_code == 200
        # named by id, the server token still reaches it: the store's administrator
        assert api.post("/v1/memory/forget", json={"ids": [alice_id]}).json()["removed"] == 1


def ndjson(res: httpx.Response) -> list[dict]:
    return [json.loads(line) for line in res.iter_lines() if line]


def import_as_server(server: Daemon, session: Path) -> dict:
    body = {"paths": [str(session)]}
    with (
        server.client(SERVER_TOKEN) as api,
        api.stream("POST", "/v1/import/sessions", json=body) as res,
    ):
        assert res.status_code == 200
        events = ndjson(res)
    assert events[-1]["event"] == "done", events[-1]
    return events[-1]["report"]


@pytest.mark.security
def test_only_the_server_token_imports_queues_or_runs_the_judge(host):
    """An owner token could distil the server host's own sessions into its memories
    (then read their raw lines), queue them, and spend the host's LLM calls."""
    server, session = host["server"], host["session"]
    notify = {"transcript_path": str(session), "session_id": session.stem, "reason": "exit"}
    calls = [
        ("/v1/import/sessions", {"paths": [str(session)]}),
        ("/v1/import/sessions", {}),
        ("/v1/import/native", {}),
        ("/v1/capture/notify", notify),
        ("/v1/conflicts/auto", {}),
    ]
    for owner in ("alice", "bob", "team"):
        with client(server, host["tokens"][owner]) as api:
            for route, body in calls:
                res = api.post(route, json=body)
                assert res.status_code == 403, (owner, route, res.text)
                error = res.json()["error"]
                assert "server's own token" in error and repr(owner) in error, error
            assert api.get("/v1/memories").json()["total"] == 0  # nothing distilled for them
    with server.client(SERVER_TOKEN) as api:
        assert api.get("/v1/status").json()["imports"]["sessions"] == 0  # nothing ran
        activity = api.get("/v1/activity").json()
        assert activity["capture"]["queued"] == 0  # nothing queued
        # the server's own token does all three
        queued = api.post("/v1/capture/notify", json=notify)
        assert queued.status_code == 202 and queued.json()["queued"] is True
        with api.stream("POST", "/v1/conflicts/auto", json={}) as res:
            assert res.status_code == 200 and ndjson(res)[-1]["event"] == "done"
    report = import_as_server(server, session)
    assert report["sessions"] == 1 and report["saved"] >= 1


@pytest.mark.security
def test_activity_and_status_show_a_token_only_its_own(host):
    """Activity named the host's hook settings, each agent's settings file and its
    recent sessions; status its database and daemon. A token sees its own."""
    server, session = host["server"], host["session"]
    import_as_server(server, session)  # the host's ledger now names its session
    with client(server, host["tokens"]["alice"]) as api:
        mine = api.post("/v1/memories", json={"text": "alice keeps her notes in org-mode"})
        assert mine.status_code == 201
        activity = api.get("/v1/activity")
        status = api.get("/v1/status")
    for res in (activity, status):
        assert res.status_code == 200
        text = res.text
        for secret in (str(server.home), str(server.claude), session.stem, host["url"]):
            assert secret not in text, (res.url, secret)
        port = host["url"].rsplit(":", 1)[1].split("/")[0]
        assert f":{port}" not in text
    doc = activity.json()
    for key in ("hooks", "agents", "scope", "capture", "budget", "llm"):
        assert key not in doc, key
    assert doc["recent_sessions"] == [] and doc["imports"]["sessions"] == 0
    assert sum(doc["by_type"].values()) == 1  # her memory, counted
    assert doc["embedder"]
    st = status.json()
    assert st["daemon"] is None and st["llm"] is None and "database" not in st["store"]
    assert st["store"]["total_memories"] == 1 and st["imports"]["sessions"] == 0
    assert st["version"]
    # the server's own token keeps the full view
    with server.client(SERVER_TOKEN) as api:
        full = api.get("/v1/activity").json()
        st = api.get("/v1/status").json()
    assert {"hooks", "agents", "scope", "capture", "budget", "llm"} <= set(full)
    assert [r["path"] for r in full["recent_sessions"]] == [str(session)]
    assert str(server.claude) in json.dumps(full["agents"])
    assert st["daemon"]["pid"] == server.process.pid and "database" in st["store"]
    assert st["imports"]["sessions"] == 1


@pytest.mark.security
def test_transcript_lines_are_served_to_the_server_token_only(host, tmp_path):
    """``/context`` read ±50 lines of the server's disk for any token. A transcript
    path names a file of the machine that imported it, the server user's here, so an
    owner token gets where a memory came from, never the lines: for its own memories
    (imported from its terminal) and for the team scope's it reads."""
    server, session, url = host["server"], host["session"], host["url"]
    import_as_server(server, session)
    for owner in ("alice", "team"):  # each imports the session as its own, at a terminal
        done = cli(
            tmp_path / owner,
            url,
            "import",
            "sessions",
            "--path",
            str(session),
            "--json",
            MEMLOOM_OWNER=owner,
            MEMLOOM_LLM="offline",
            CLAUDE_CONFIG_DIR=str(server.claude),
        )
        assert done.returncode == 0, done.stderr
    with client(server, host["tokens"]["alice"]) as api:
        memories = api.get("/v1/memories", params={"limit": 1000}).json()["memories"]
        owners_seen = 0
        for memory in memories:
            doc = api.get(f"/v1/memories/{memory['id']}").json()
            ctx = api.get(f"/v1/memories/{memory['id']}/context", params={"around": 50})
            assert ctx.status_code == 200
            entries = ctx.json()["provenance"]
            assert len(entries) == len(doc["provenance"]) >= 1
            for entry in entries:
                assert entry["lines"] == [] and entry["exists"] is False
                assert "server's own token" in entry["withheld"]
            owners_seen += 1
        assert owners_seen >= 2
        # bob's token cannot read alice's memories at all, nor their context
        mid = memories[0]["id"]
    with client(server, host["tokens"]["bob"]) as api:
        assert api.get(f"/v1/memories/{mid}/context").status_code == 404
    with server.client(SERVER_TOKEN) as api:  # the host's user reads the lines
        some = api.get("/v1/memories", params={"limit": 1}).json()["memories"][0]
        entries = api.get(f"/v1/memories/{some['id']}/context").json()["provenance"]
        assert any(e["exists"] and e["lines"] for e in entries)
        assert all(not e.get("withheld") for e in entries)


@pytest.mark.security
def test_a_path_another_owner_imported_is_not_served_to_the_server(host, tmp_path):
    """A session imported with ``--path`` from outside any agent's folder is served by
    ``/context`` to whoever named it: the ledger row of that import is the importing
    owner's. alice's import from her own folder vouches for nothing on the server."""
    server, session, url = host["server"], host["session"], host["url"]
    copies = {}
    for who in ("host", "alice"):
        folder = tmp_path / f"{who}-files"
        folder.mkdir()
        copies[who] = folder / session.name
        shutil.copy(session, copies[who])
    owner = {"alice": {"MEMLOOM_OWNER": "alice"}, "host": {}}
    for who in ("host", "alice"):  # the host's user at its terminal, then alice at hers
        done = cli(
            tmp_path / f"{who}-home",
            url,
            "import",
            "sessions",
            "--path",
            str(copies[who].parent),
            "--json",
            MEMLOOM_LLM="offline",
            CLAUDE_CONFIG_DIR=str(server.claude),
            **owner[who],
        )
        assert done.returncode == 0, done.stderr
    seen = {"host": 0, "alice": 0}
    with server.client(SERVER_TOKEN) as api:
        for memory in api.get("/v1/memories", params={"limit": 1000}).json()["memories"]:
            ctx = api.get(f"/v1/memories/{memory['id']}/context", params={"around": 3})
            for entry in ctx.json()["provenance"]:
                if entry["path"] == str(copies["alice"]):
                    assert entry["lines"] == [] and entry["withheld"] == "not_imported", entry
                    seen["alice"] += 1
                elif entry["path"] == str(copies["host"]):
                    assert entry["withheld"] is None and entry["lines"], entry
                    seen["host"] += 1
    assert seen["host"] >= 1 and seen["alice"] >= 1, seen


@pytest.mark.security
def test_another_owners_words_do_not_move_a_tokens_scores(host):
    """The side channel: owner A's rows changed owner B's relevance for a word
    (BM25 statistics were global), so B could tell which words A's memories hold."""
    server = host["server"]
    query = {"query": "staging postgres kubernetes", "recency_weight": 0, "max_results": 5}

    def alice_scores() -> list[tuple[str, float]]:
        with client(server, host["tokens"]["alice"]) as api:
            found = api.post("/v1/memory/recall", json=query).json()["memories"]
        return [(m["id"], m["relevance"]) for m in found]

    with client(server, host["tokens"]["alice"]) as api:
        api.post("/v1/memories", json={"text": "the staging database runs postgres 16"})
        api.post("/v1/memories", json={"text": "staging deploys go through the release bot"})
    before = alice_scores()
    assert len(before) == 2
    with client(server, host["tokens"]["bob"]) as api:
        ids = api.post(
            "/v1/memory/store",
            json={
                "entries": [
                    {"text": f"kubernetes cluster {i} hosts the postgres operator {i * 7}"}
                    for i in range(30)
                ]
            },
        ).json()["ids"]
        assert alice_scores() == before
        gone = api.post("/v1/memory/forget", json={"ids": ids}).json()
        assert gone["removed"] == len(set(ids))
    assert alice_scores() == before
