"""Every HTTP route against a real ``memloom serve`` on 127.0.0.1 (real httpx client)."""

from __future__ import annotations

import json
import math
import os
import shutil
import uuid
from pathlib import Path

import httpx
import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "claude-code-session"
SESSION = "7acd37a8-2745-4b58-a8a9-46164b22ad9e"


def vec(deg: float, dim: int = 3) -> list[float]:
    v = [math.cos(math.radians(deg)), math.sin(math.radians(deg))]
    return v + [0.0] * (dim - 2)


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


# ---------------------------------------------------------------- Distill routes


def test_distill_client_flow_store_recall_expire_supersede_forget(api):
    project = unique("distill")
    billing = unique("billing")  # a forget by tag alone reaches every project of this store
    body = {
        "session_id": "sess-1",
        "entries": [
            {
                "text": "Auth uses JWT with RS256 keys",
                "source": "auth.md",
                "tags": ["auth"],
                "project": project,
            },
            {
                "text": "The billing service retries webhooks five times",
                "tags": [billing],
                "project": project,
            },
        ],
    }
    stored = api.post("/v1/memory/store", json=body)
    assert stored.status_code == 200
    doc = stored.json()
    assert (doc["stored"], doc["merged"], doc["deduplicated"]) == (2, 0, 0)
    auth_id, billing_id = doc["ids"]

    again = api.post("/v1/memory/store", json={"entries": [body["entries"][0]]}).json()
    assert again["merged"] == 1 and again["ids"] == [auth_id]

    recall = api.post(
        "/v1/memory/recall", json={"query": "how is auth done", "project": project}
    ).json()
    assert recall["memories"][0]["id"] == auth_id
    assert set(recall["memories"][0]) >= {
        "id",
        "text",
        "type",
        "source",
        "tags",
        "relevance",
        "similarity",
        "decay_level",
        "sensitivity",
        "last_referenced",
        "created_at",
        "project",
    }
    assert set(recall) >= {"memories", "stats", "max_sensitivity", "sensitive_chunks"}

    assert api.post("/v1/memory/expire", json={"ids": [billing_id]}).json() == {"expired": 1}
    assert api.post("/v1/memory/expire", json={"ids": [billing_id]}).json() == {"expired": 0}

    new = api.post(
        "/v1/memory/store",
        json={"entries": [{"text": "Auth moved to opaque session tokens", "project": project}]},
    ).json()["ids"][0]
    assert api.post("/v1/memory/supersede", json={"old_id": auth_id, "new_id": new}).json() == {
        "superseded": True
    }
    repeat = api.post("/v1/memory/supersede", json={"old_id": auth_id, "new_id": new})
    assert repeat.status_code == 409 and "already expired" in repeat.json()["error"]
    missing = api.post("/v1/memory/supersede", json={"old_id": "0" * 16, "new_id": new})
    assert missing.status_code == 404

    # A project narrows a forget; another project's memory with the tag is not touched.
    elsewhere = api.post("/v1/memory/forget", json={"tags": [billing], "project": "other"})
    assert elsewhere.json()["removed"] == 0
    assert api.get(f"/v1/memories/{billing_id}").status_code == 200
    # By tag alone, as Distill documents it: the owner's own HTTP call (MCP, whose
    # caller is a model, still asks for a scope: tests/test_mcp.py).
    forget = api.post("/v1/memory/forget", json={"tags": [billing]})
    assert forget.status_code == 200 and forget.json()["removed"] == 1
    assert api.get(f"/v1/memories/{billing_id}").status_code == 404
    assert api.post("/v1/memory/forget", json={"tags": [billing], "all": True}).json() == {
        "removed": 0,
        "total_memories": api.get("/v1/memory/stats").json()["total_memories"],
    }
    stats = api.get("/v1/memory/stats").json()
    assert {"total_memories", "active_count", "expired_count"} <= set(stats)


def test_store_reports_a_version_and_supersede_after_it_is_a_no_op(api):
    """A changed port in the duplicate band (0.03 with the local model): the answer names
    the version and the memory it replaced; Distill's supersede of the pair answers as
    it would, and the old version stays stale (not expired)."""
    project = unique("versioned")
    entry = {"text": "The billing service runs on port 8081", "project": project}
    first = api.post("/v1/memory/store", json={"entries": [entry]}).json()
    assert first["versioned"] == []
    old_id = first["ids"][0]
    entry["text"] = "The billing service runs on port 8082"
    doc = api.post("/v1/memory/store", json={"entries": [entry]}).json()
    new_id = doc["ids"][0]
    assert (doc["stored"], doc["conflicts"]) == (1, [])
    assert doc["versioned"] == [{"id": new_id, "old_id": old_id}]
    done = api.post("/v1/memory/supersede", json={"old_id": old_id, "new_id": new_id})
    assert done.status_code == 200 and done.json() == {"superseded": True}
    old = api.get(f"/v1/memories/{old_id}").json()
    assert (old["status"], old["superseded_by"]) == ("stale", new_id)
    assert api.get(f"/v1/memories/{new_id}").json()["status"] == "active"


def test_distill_caller_embeddings_and_older_than(tmp_path_factory, backend):
    """A store that only ever sees caller vectors (Distill's own usage), on its own daemon."""
    from tests.server.conftest import db_env, start_daemon, stop

    base = tmp_path_factory.mktemp("vectors")
    url = backend if backend.startswith("postgresql") else None
    d = start_daemon(base / "home", base / "claude", env=db_env(url))
    try:
        with d.client() as api:
            res = api.post(
                "/v1/memory/store",
                json={
                    "entries": [
                        {"text": "alpha", "embedding": vec(0)},
                        {"text": "beta", "embedding": vec(40)},
                    ]
                },
            ).json()
            assert res["stored"] == 2 and len(res["conflicts"]) == 1
            assert res["conflicts"][0]["distance"] == pytest.approx(
                1 - math.cos(math.radians(40)), 1e-4
            )
            found = api.post(
                "/v1/memory/recall", json={"query_embedding": vec(5), "max_results": 1}
            ).json()
            assert found["memories"][0]["text"] == "alpha"
            assert found["memories"][0]["similarity"] == pytest.approx(
                math.cos(math.radians(5)), 1e-5
            )
            wrong = api.post("/v1/memory/recall", json={"query_embedding": [1.0, 0.0]})
            assert wrong.status_code == 422 and "dimensions" in wrong.json()["error"]
            gone = api.post(
                "/v1/memory/forget", json={"older_than": "2999-01-01T00:00:00Z", "all": True}
            ).json()
            assert gone == {"removed": 2, "total_memories": 0}
    finally:
        stop(d)


# ---------------------------------------------------------------- memloom routes


def test_memories_routes_save_list_get_update_history_pin(api):
    project = unique("routes")
    saved = api.post(
        "/v1/memories",
        json={
            "text": "Run the tests with make check",
            "type": "procedure",
            "project": project,
            "tags": ["testing"],
        },
    )
    assert saved.status_code == 201
    mid = saved.json()["id"]
    assert saved.json()["outcome"] == "added"

    listing = api.get("/v1/memories", params={"project": project, "type": "procedure"}).json()
    assert [m["id"] for m in listing["memories"]] == [mid] and listing["total"] == 1
    assert api.get("/v1/memories", params={"project": project, "tag": "nope"}).json()["total"] == 0

    doc = api.get(f"/v1/memories/{mid}").json()
    assert doc["type"] == "procedure" and doc["versions"][0]["id"] == mid
    upd = api.post(f"/v1/memories/{mid}/update", json={"text": "Run the tests with make test"})
    assert upd.status_code == 200 and upd.json()["version"] == 2
    history = api.get(f"/v1/memories/{mid}/history").json()["versions"]
    assert [v["version"] for v in history] == [2, 1]
    pinned = api.post(f"/v1/memories/{upd.json()['id']}/pin", json={"pinned": True}).json()
    assert pinned["pinned"] is True
    restored = api.post(f"/v1/memories/{upd.json()['id']}/restore", json={}).json()
    assert restored["decay_level"] == 0


def test_list_pages_with_a_cursor(api):
    project = unique("pages")
    texts = [
        "The frontend uses React",
        "Deploys go through ArgoCD",
        "Postgres 16 is the database",
        "Lint with ruff before pushing",
        "The CDN is CloudFront",
        "Logs are shipped to Loki",
        "Feature flags live in LaunchDarkly",
    ]
    for text in texts:
        assert api.post("/v1/memories", json={"text": text, "project": project}).status_code == 201
    first = api.get("/v1/memories", params={"project": project, "limit": 3}).json()
    second = api.get(
        "/v1/memories", params={"project": project, "limit": 3, "cursor": first["next_cursor"]}
    ).json()
    third = api.get(
        "/v1/memories", params={"project": project, "limit": 3, "cursor": second["next_cursor"]}
    ).json()
    ids = [m["id"] for page in (first, second, third) for m in page["memories"]]
    assert len(ids) == 7 == len(set(ids)) and third["next_cursor"] is None
    bad = api.get("/v1/memories", params={"cursor": "garbage"})
    assert bad.status_code == 400


def test_conflict_routes_resolve_and_revert(api):
    project = unique("conflicts")
    api.post(
        "/v1/memories", json={"text": "The API server listens on port 8080", "project": project}
    )
    second = api.post(
        "/v1/memories",
        # A changed port and more: a conflict (the port alone would be a new version).
        json={"text": "The API server listens on port 9090 behind nginx", "project": project},
    ).json()
    assert second["outcome"] == "conflict"
    cid = second["conflicts"][0]["conflict_id"]
    listed = api.get("/v1/conflicts").json()
    assert cid in [c["id"] for c in listed["conflicts"]]
    one = api.get(f"/v1/conflicts/{cid}").json()
    assert "9090" in one["new"]["text"] and one["existing"]["text"].endswith("8080")
    res = api.post(f"/v1/conflicts/{cid}/resolve", json={"action": "keep_new"}).json()
    assert res["status"] == "resolved" and res["existing"]["status"] == "expired"
    again = api.post(f"/v1/conflicts/{cid}/resolve", json={"action": "keep_new"})
    assert again.status_code == 409
    back = api.post(f"/v1/conflicts/{cid}/revert", json={}).json()
    assert back["status"] == "pending" and back["existing"]["status"] == "active"
    bad = api.post(f"/v1/conflicts/{cid}/resolve", json={"action": "merge"})
    assert bad.status_code == 422 and "merged text" in bad.json()["error"]
    assert api.get("/v1/conflicts/nope").status_code == 404


def test_import_sessions_streams_ndjson_progress(api, daemon):
    target = daemon.claude / "projects" / "-home-dev-example"
    target.mkdir(parents=True, exist_ok=True)
    for f in EXAMPLE.glob("*.jsonl"):
        shutil.copy(f, target / f.name)
    with api.stream("POST", "/v1/import/sessions", json={"paths": [str(target)]}) as res:
        assert res.status_code == 200
        assert res.headers["content-type"].startswith("application/x-ndjson")
        events = [json.loads(line) for line in res.iter_lines() if line]
    kinds = [e["event"] for e in events]
    assert kinds[0] == "discovered" and kinds[-1] == "done"
    assert "session_done" in kinds and "chunk_done" in kinds
    report = events[-1]["report"]
    assert report["sessions"] == 1 and report["saved"] >= 1 and report["offline"] is True
    bad = api.post("/v1/import/sessions", json={"days": -1})
    assert bad.status_code == 422


@pytest.mark.security
def test_the_import_walk_follows_no_symlink_out_of_the_projects_folder(api, daemon, tmp_path):
    """The named folder is inside Claude Code's projects folder; a symlink in it to a
    transcript elsewhere is counted ``unsafe``, never read."""
    target = daemon.claude / "projects" / "-home-dev-walk"
    target.mkdir(parents=True, exist_ok=True)
    source = next(EXAMPLE.glob("*.jsonl"))
    outside = tmp_path / "outside" / source.name
    outside.parent.mkdir()
    shutil.copy(source, outside)
    (target / source.name).symlink_to(outside)
    with api.stream("POST", "/v1/import/sessions", json={"paths": [str(target)]}) as res:
        assert res.status_code == 200
        events = [json.loads(line) for line in res.iter_lines() if line]
    report = events[-1]["report"]
    # every agent walks the folder, and each counts the symlink it refused
    assert report["sessions"] == 0 and report["skipped"]["unsafe"] >= 1, report
    os.chmod(target, 0o777)  # a folder others can write: refused before any walk
    refused = api.post("/v1/import/sessions", json={"paths": [str(target)]})
    assert refused.status_code == 400 and "writable by every user" in refused.json()["error"]
    os.chmod(target, 0o755)


def test_the_readme_quickstart_traces_back_to_its_conversation(tmp_path):
    """The README's quickstart imports the bundled session with ``--path`` from a clone,
    outside every agent's folder; the owner chose it, so the viewer's ``/context`` serves
    its lines (redacted), not ``withheld: outside``. (A daemon of its own: another
    import of the same session would already hold its records.)"""
    from tests.server.conftest import start_daemon, stop
    from tests.support.processes import run_python

    clone = tmp_path / "clone"
    shutil.copytree(EXAMPLE, clone / "examples" / "claude-code-session")
    daemon = start_daemon(tmp_path / "home", tmp_path / "claude")
    env = {
        "MEMLOOM_HOME": str(daemon.home),
        "MEMLOOM_LLM": "offline",
        "CLAUDE_CONFIG_DIR": str(daemon.claude),
        "HOME": str(tmp_path / "user-home"),
    }

    def memloom(*args: str) -> str:
        return run_python(["-m", "memloom.cli", *args], "", cwd=clone, timeout=300, **env).stdout

    try:
        memloom("import", "sessions", "--path", "examples/claude-code-session")
        found = json.loads(memloom("recall", "how do I run the app locally?", "--json"))
        top = found["memories"][0]
        ours = str((clone / "examples" / "claude-code-session" / f"{SESSION}.jsonl").resolve())
        with daemon.client() as api:
            ctx = api.get(f"/v1/memories/{top['id']}/context", params={"around": 2})
    finally:
        stop(daemon)
    assert ctx.status_code == 200
    (entry,) = ctx.json()["provenance"]
    assert entry["path"] == ours and entry["exists"] and entry["withheld"] is None, entry
    cited = [line for line in entry["lines"] if line["cited"]]
    assert cited and any("npm" in line["text"] for line in cited), entry["lines"]
    assert entry["start_line"] == 61 and entry["truncated"] is False


def test_capture_notify_queues_valid_transcripts_only(api, daemon):
    inside = daemon.claude / "projects" / "-home-dev-x" / f"{uuid.uuid4()}.jsonl"
    inside.parent.mkdir(parents=True, exist_ok=True)
    inside.write_text("")
    payload = {
        "transcript_path": str(inside),
        "session_id": "s",
        "hook_event_name": "SessionEnd",
        "reason": "exit",
    }
    ok = api.post("/v1/capture/notify", json=payload)
    assert ok.status_code == 202 and ok.json()["queued"] is True
    for bad in (
        "/etc/passwd",
        str(daemon.claude / "projects" / ".." / "x.jsonl"),
        str(inside.with_suffix(".txt")),
    ):
        res = api.post("/v1/capture/notify", json={"transcript_path": bad})
        assert res.status_code == 400, bad
    assert api.post("/v1/capture/notify", json={}).status_code == 422


def test_status_health_openapi_and_docs(api):
    status = api.get("/v1/status").json()
    assert status["daemon"]["pid"] > 0 and "store" in status and "imports" in status
    assert status["store"]["embedder"].startswith("local:")
    assert api.get("/health").json()["status"] == "ok"
    spec = api.get("/openapi.json").json()
    for route in (
        "/v1/memory/store",
        "/v1/memory/recall",
        "/v1/memory/expire",
        "/v1/memory/supersede",
        "/v1/memory/forget",
        "/v1/memory/stats",
        "/v1/memories",
        "/v1/memories/{memory_id}",
        "/v1/memories/{memory_id}/update",
        "/v1/conflicts",
        "/v1/conflicts/{conflict_id}/resolve",
        "/v1/conflicts/{conflict_id}/revert",
        "/v1/import/sessions",
        "/v1/capture/notify",
        "/v1/status",
        "/health",
    ):
        assert route in spec["paths"], route
    schemas = spec["components"]["schemas"]
    assert "examples" in schemas["StoreEntry"] and "StoreResponse" in schemas
    answer = schemas["StoreResponse"]["properties"]
    assert set(answer) == {
        "stored",
        "merged",
        "deduplicated",
        "total_memories",
        "ids",
        "conflicts",
        "versioned",
    }
    assert answer["versioned"]["items"] == {"$ref": "#/components/schemas/VersionedInfo"}
    assert schemas["VersionedInfo"]["required"] == ["id", "old_id"]
    assert "text/html" in api.get("/docs").headers["content-type"]


# ---------------------------------------------------------------- validation


def test_bad_input_is_4xx_json_never_5xx(api):
    cases = [
        ("/v1/memory/store", b"{not json", 400),
        ("/v1/memory/store", b"[]", 422),
        ("/v1/memory/store", b'{"entries": []}', 422),
        ("/v1/memory/store", b'{"entries": [{"text": ""}]}', 422),
        ("/v1/memory/store", b'{"entries": [{"text": 5}]}', 422),
        ("/v1/memory/store", b'{"entries": [{"text": "x", "tagz": ["a"]}]}', 422),
        ("/v1/memory/store", b'{"entries": [{"text": "x", "sensitivity": 9}]}', 422),
        ("/v1/memory/store", b'{"entries": [{"text": "x", "embedding": [0, 0]}]}', 422),
        ("/v1/memory/store", b'{"entries": [{"text": "x", "expires_at": "tomorrow"}]}', 422),
        ("/v1/memory/recall", b"{}", 422),
        ("/v1/memory/recall", b'{"query": "x", "max_results": 0}', 422),
        ("/v1/memory/recall", b'{"query": "x", "recency_weight": 2}', 422),
        ("/v1/memory/expire", b'{"ids": "abc"}', 422),
        ("/v1/memory/supersede", b'{"new_id": "x"}', 422),
        ("/v1/memory/forget", b'{"before": "not a date"}', 422),
        ("/v1/memories", b'{"text": "x", "type": "opinion"}', 422),
        ("/v1/memories/..%2F/update", b'{"text": "x"}', 404),
        ("/v1/memories/abc/update", b'{"text": "x"}', 404),
        ("/v1/conflicts/abc/resolve", b'{"action": "delete"}', 422),
    ]
    for path, body, status in cases:
        res = api.post(path, content=body, headers={"Content-Type": "application/json"})
        assert res.status_code == status, (path, body, res.status_code, res.text)
        assert "error" in res.json() and "Traceback" not in res.text
    many = {"entries": [{"text": f"entry {i}"} for i in range(1001)]}
    assert api.post("/v1/memory/store", json=many).status_code == 422
    assert api.get("/v1/memories", params={"limit": 0}).status_code == 422
    assert api.get("/v1/memories/has space").status_code == 422  # not an id at all


def test_no_wildcard_cors(api):
    res = api.get("/health", headers={"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in res.headers
    pre = api.options(
        "/v1/memory/store",
        headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"},
    )
    assert "access-control-allow-origin" not in pre.headers


def test_body_limit_and_token_rule(tmp_path):
    from tests.server.conftest import start_daemon, stop

    d = start_daemon(
        tmp_path / "home",
        tmp_path / "claude",
        env={"MEMLOOM_MAX_BODY_BYTES": "2048", "MEMLOOM_API_TOKEN": "s3cret-token"},
    )
    try:
        assert httpx.get(d.url + "/health").status_code == 200
        no_token = httpx.post(d.url + "/v1/memory/recall", json={"query": "x"})
        assert no_token.status_code == 401 and no_token.json() == {
            "error": "missing or wrong bearer token"
        }
        wrong = httpx.get(d.url + "/v1/status", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        with d.client("s3cret-token") as api:
            assert api.get("/v1/status").status_code == 200
            big = api.post("/v1/memory/store", json={"entries": [{"text": "x" * 5000}]})
            assert big.status_code == 413 and "larger than 2048" in big.json()["error"]

            def chunks():
                yield b'{"entries": [{"text": "'
                yield b"y" * 4000
                yield b'"}]}'

            streamed = api.post(
                "/v1/memory/store", content=chunks(), headers={"Content-Type": "application/json"}
            )
            assert streamed.status_code == 413
    finally:
        stop(d)


def test_refuses_to_listen_off_loopback_without_a_token(tmp_path):
    import subprocess
    import sys

    env = {k: v for k, v in __import__("os").environ.items() if k != "MEMLOOM_API_TOKEN"}
    env["MEMLOOM_HOME"] = str(tmp_path)
    res = subprocess.run(
        [sys.executable, "-m", "memloom.cli", "serve", "--host", "0.0.0.0", "--port", "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 1
    assert "generated token" in res.stderr and "MEMLOOM_API_TOKEN" in res.stderr
    assert not (tmp_path / "daemon.json").exists()


def test_second_daemon_is_refused_and_stop_ends_the_first(tmp_path):
    import subprocess
    import sys

    from tests.server.conftest import start_daemon, stop

    d = start_daemon(tmp_path / "home", tmp_path / "claude")
    try:
        env = {**__import__("os").environ, "MEMLOOM_HOME": str(d.home)}
        res = subprocess.run(
            [sys.executable, "-m", "memloom.cli", "serve", "--port", "0"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert res.returncode == 1 and "already serving" in res.stderr
        res = subprocess.run(
            [sys.executable, "-m", "memloom.cli", "stop"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert res.returncode == 0 and "stopped memloom daemon" in res.stdout
        assert d.process.wait(timeout=30) == 0  # a clean exit
        assert not (d.home / "daemon.json").exists()
    finally:
        stop(d)


# ---------------------------------------------------------------- hardening (schemathesis finds)


def test_unstorable_values_are_422_on_both_backends(api):
    """What schemathesis found: each of these was a 500 (PostgreSQL refuses NUL, nothing
    encodes an unpaired surrogate, huge offsets overflow 64-bit integers, ...)."""
    project = unique("unstorable")
    deep: object = 1
    for _ in range(40):
        deep = {"a": deep}
    raw_cases = [
        ("/v1/memories", b'{"text": "nul \\u0000 byte"}'),
        ("/v1/memories", b'{"text": "lone \\udb14 surrogate"}'),
        ("/v1/memories", b'{"text": "x", "metadata": {"k\\u0000": 1}}'),
        ("/v1/memories", b'{"text": "x", "metadata": {"k\\udc00": 1}}'),
        ("/v1/memories", b'{"text": "x", "metadata": {"n": 1e400}}'),
        ("/v1/memories", b'{"text": "x", "metadata": {"n": NaN}}'),
        ("/v1/memories", b'{"text": "x", "project": "p\\u0000"}'),
        ("/v1/memories", b'{"text": "x", "tags": ["t\\u0000"]}'),
        ("/v1/memory/store", b'{"entries": [{"text": "x", "source": "\\ud800"}]}'),
        ("/v1/memory/store", b'{"session_id": "s\\u0000", "entries": [{"text": "x"}]}'),
        ("/v1/memory/recall", b'{"query": "a\\u0000b"}'),
        ("/v1/memory/expire", b'{"ids": ["a\\u0000b"]}'),
        ("/v1/memory/supersede", b'{"old_id": "\\u00eb\\u0000"}'),
        ("/v1/memory/forget", b'{"tags": ["\\u0000"]}'),
        ("/v1/capture/notify", b'{"transcript_path": "/x/\\ud800.jsonl"}'),
    ]
    json_cases = [
        ("/v1/memories", {"text": "x", "metadata": deep}),
        ("/v1/memories", {"text": "x", "expires_at": "0001-01-01T00:00:00+14:00"}),
        ("/v1/memories", {"text": "x", "expires_at": "9999-12-31T23:59:59-14:00"}),
        ("/v1/memory/forget", {"before": "0001-01-01T00:00:00+01:00"}),
        ("/v1/memory/recall", {"query": "q " * 60_000}),
        ("/v1/memory/recall", {"query": "x", "task_context": "c" * 100_001}),
        ("/v1/memory/recall", {"query_embedding": [1.0] * 16_001}),
        ("/v1/memories", {"text": "x", "tags": [f"t{i}" for i in range(65)]}),
        ("/v1/memories", {"text": "x", "project": "p" * 4097}),
        ("/v1/memory/expire", {"ids": ["x"] * 1001}),
        ("/v1/memory/forget", {"ids": ["x"] * 1001}),
    ]
    for path, body in raw_cases + json_cases:
        if isinstance(body, bytes):
            res = api.post(path, content=body, headers={"Content-Type": "application/json"})
        else:
            res = api.post(path, json=body)
        assert res.status_code == 422, (path, str(body)[:100], res.status_code, res.text[:300])
        assert res.json()["error"] and "Traceback" not in res.text
    for params in ({"project": "a\x00b"}, {"tag": "\x00"}, {"source": "s\x00"}):
        res = api.get("/v1/memories", params=params)
        assert res.status_code == 422, (params, res.status_code, res.text)
    assert api.get("/v1/conflicts", params={"offset": 10**25}).status_code == 422
    assert api.get("/v1/conflicts", params={"offset": 10**9}).json()["conflicts"] == []
    # What the limits still let through is stored and listed.
    nested: object = "leaf"
    for _ in range(25):
        nested = {"a": nested}
    ok = api.post(
        "/v1/memories",
        json={
            "text": "Nested metadata within the limit " + project,
            "project": project,
            "metadata": {"deep": nested, "big": 10**30},
            "expires_at": "9999-12-31T23:59:59Z",
        },
    )
    assert ok.status_code == 201, ok.text
    listed = api.get("/v1/memories", params={"project": project})
    assert listed.status_code == 200 and listed.json()["total"] == 1


def test_openapi_declares_the_limits(api):
    spec = api.get("/openapi.json").json()
    schemas = spec["components"]["schemas"]
    save = schemas["SaveRequest"]["properties"]
    assert save["text"]["maxLength"] == 100_000 and save["text"]["minLength"] == 1
    assert save["tags"]["maxItems"] == 64 and save["tags"]["items"]["maxLength"] == 256
    assert schemas["StoreRequest"]["properties"]["entries"]["maxItems"] == 1000
    assert schemas["ExpireRequest"]["properties"]["ids"]["maxItems"] == 1000
    embedding = schemas["StoreEntry"]["properties"]["embedding"]["anyOf"][0]
    assert embedding["maxItems"] == 16_000 and embedding["minItems"] == 1
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            codes = set(operation["responses"])
            assert {"400", "401", "403", "413", "422", "503"} <= codes, (method, path, codes)
            # Only the HTTP server's own refusals are plain text.
            assert set(operation["responses"]["400"]["content"]) == {
                "application/json",
                "text/plain",
            }


def test_no_cors_header_on_any_route_or_preflight(api, daemon):
    spec = api.get("/openapi.json").json()
    some_id = api.get("/v1/memories", params={"limit": 1}).json()["memories"]
    memory_id = some_id[0]["id"] if some_id else "0123456789abcdef"
    origin = {"Origin": "https://evil.example"}
    for path, item in spec["paths"].items():
        url = path.replace("{memory_id}", memory_id).replace("{conflict_id}", "0123456789abcdef")
        for method in item:
            if path in ("/v1/import/sessions", "/v1/import/native", "/v1/conflicts/auto"):
                continue  # they would start an import or a judge run; their preflight is below
            body = {} if method == "post" else None
            res = api.request(method.upper(), url, headers=origin, json=body)
            assert "access-control-allow-origin" not in res.headers, (method, path)
            assert "access-control-allow-credentials" not in res.headers, (method, path)
        pre = api.options(
            url,
            headers={
                **origin,
                "Access-Control-Request-Method": next(iter(item)).upper(),
                "Access-Control-Request-Headers": "authorization, content-type",
            },
        )
        assert "access-control-allow-origin" not in pre.headers, path
        assert "access-control-allow-headers" not in pre.headers, path
    for path in ("/", "/viewer/index.html", "/docs", "/openapi.json", "/nope"):
        res = httpx.get(daemon.url + path, headers=origin)
        assert "access-control-allow-origin" not in res.headers, path


def test_token_required_off_loopback_and_accepted_from_the_environment(tmp_path):
    """Bound to every interface, with a token (here from MEMLOOM_API_TOKEN): it serves,
    and every route but /health and the viewer's files demands the token."""
    from tests.server.conftest import start_daemon, stop

    d = start_daemon(
        tmp_path / "home",
        tmp_path / "claude",
        "--host",
        "0.0.0.0",
        env={"MEMLOOM_API_TOKEN": "env-s3cret-token"},
    )
    try:
        url = d.url.replace("0.0.0.0", "127.0.0.1")
        record = json.loads((d.home / "daemon.json").read_text())
        assert record["token_required"] is True and record["host"] == "0.0.0.0"
        assert httpx.get(url + "/health").status_code == 200
        for path in ("/v1/status", "/v1/activity", "/v1/memories"):
            res = httpx.get(url + path)
            assert res.status_code == 401 and res.headers["www-authenticate"] == "Bearer", path
        wrong = httpx.get(url + "/v1/status", headers={"Authorization": "Bearer env-s3cret"})
        assert wrong.status_code == 401
        odd = httpx.get(url + "/v1/status", headers={"Authorization": b"Bearer \xff\xfe"})
        assert odd.status_code == 401
        ok = httpx.get(url + "/v1/status", headers={"Authorization": "Bearer env-s3cret-token"})
        assert ok.status_code == 200
        # The body limit answers first: an unauthenticated client cannot make it read 8 MB.
        big = httpx.post(
            url + "/v1/memory/store",
            content=b"x" * (8 * 1024 * 1024 + 1),
            headers={"Content-Type": "application/json"},
        )
        assert big.status_code == 413
    finally:
        stop(d)


def test_token_check_failures_answer_json_not_a_bare_500():
    """A shared store whose database is down: the token check says 503, in JSON."""
    from starlette.testclient import TestClient

    from memloom.guard import BearerAuth
    from memloom.store.base import UnavailableError

    async def app(scope, receive, send):  # never reached
        raise AssertionError("the request passed the token check")

    def down(token: str):
        raise UnavailableError("database unavailable: connection refused")

    def broken(token: str):
        raise RuntimeError("bug")

    for lookup, status in ((down, 503), (broken, 500)):
        client = TestClient(BearerAuth(app, "srv", lookup=lookup), raise_server_exceptions=False)
        res = client.get("/v1/status", headers={"Authorization": "Bearer mlt_abc"})
        assert res.status_code == status and res.headers["content-type"] == "application/json"
        assert res.json()["error"]
    # A token no one could have been given is not even looked up.
    client = TestClient(BearerAuth(app, "srv", lookup=down), raise_server_exceptions=False)
    res = client.get("/v1/status", headers={"Authorization": "Bearer " + "x" * 600})
    assert res.status_code == 401


def test_anchors_over_http_are_taken_as_given_and_never_lead_out(api, tmp_path):
    """A caller names files (kept as given, nothing read: the daemon's folders are not
    the caller's); a project that is a folder here does not make the daemon read it; an
    anchor out of the project is refused whole."""
    from tests.test_anchors import RETRY, make_repo

    repo = make_repo(tmp_path)
    saved = api.post("/v1/memories", json={"text": RETRY, "project": str(repo)}).json()
    assert api.get(f"/v1/memories/{saved['id']}").json()["anchors"] == []
    for path in ("/etc/passwd", "../../.ssh/id_rsa", "svc/../../x"):
        refused = api.post(
            "/v1/memories", json={"text": unique("about"), "anchors": [{"path": path}]}
        )
        assert refused.status_code == 422, refused.text
    given = api.post(
        "/v1/memories",
        json={"text": unique("retries"), "anchors": [{"path": "svc/net/retry.py"}]},
    ).json()
    doc = api.get(f"/v1/memories/{given['id']}").json()
    assert doc["anchors"] == [
        {"path": "svc/net/retry.py", "symbols": [], "commit": None, "root": None, "via": "given"}
    ]
    upd = api.post(
        f"/v1/memories/{given['id']}/update",
        json={"text": unique("retries, now"), "anchors": [{"path": "svc/config.py"}]},
    ).json()
    assert [a["path"] for a in api.get(f"/v1/memories/{upd['id']}").json()["anchors"]] == [
        "svc/config.py"
    ]
    bad = api.post(
        f"/v1/memories/{upd['id']}/update", json={"text": "x", "anchors": [{"path": "/etc"}]}
    )
    assert bad.status_code == 422


def test_recall_checks_anchors_only_in_a_folder_of_the_owner(api, tmp_path):
    """``folder`` on recall: the owner's working tree is checked (``stale``); /etc, a
    symlink to it, a relative path, a missing folder and another user's folder check
    nothing (a check there would call this memory stale: its name is in none of them)."""
    from tests.test_anchors import make_repo

    repo = make_repo(tmp_path)
    text = unique("the retry limit lives in the networking module")
    anchor = {"path": "svc/net/retry.py", "symbols": ["GONE_NAME_XYZ"]}
    api.post("/v1/memories", json={"text": text, "project": str(repo), "anchors": [anchor]})
    passwd = {"path": "passwd", "symbols": ["GONE_NAME_XYZ"]}
    api.post("/v1/memories", json={"text": text + " etc", "project": "/etc", "anchors": [passwd]})

    def stale_of(folder: object) -> dict[str, object]:
        body = {"query": text, "max_results": 10, "folder": folder}
        res = api.post("/v1/memory/recall", json=body)
        assert res.status_code == 200, res.text
        return {m["text"]: m["stale"] for m in res.json()["memories"]}

    assert stale_of(str(repo))[text] == "GONE_NAME_XYZ no longer in svc/net/retry.py"
    link = tmp_path / "etc-link"
    link.symlink_to("/etc")
    others = tmp_path / "others"
    others.mkdir()
    if os.geteuid() == 0:
        os.chown(others, 65534, 65534)
    for folder in ("/etc", str(link), "etc", str(tmp_path / "missing"), str(others), None):
        got = stale_of(folder)
        assert got[text + " etc"] is None and got[text] is None, folder
    assert api.post("/v1/memory/recall", json={"query": "x", "folder": 5}).status_code == 422
    listed = api.get("/v1/stale", params={"folder": str(repo), "project": str(repo)}).json()
    assert [m["stale"] for m in listed["memories"] if m["text"] == text] == [
        "GONE_NAME_XYZ no longer in svc/net/retry.py"
    ]
    for folder in ("/etc", str(link), "etc", str(others)):
        listed = api.get("/v1/stale", params={"folder": folder, "project": "/etc"}).json()
        assert listed["memories"] == [] and listed["checked"] == 0 and listed["note"], folder
    # One memory, read with a folder: the same check, the same fence.
    [mid] = [m["id"] for m in api.get("/v1/memories", params={"limit": 200}).json()["memories"]
             if m["text"] == text]  # fmt: skip
    got = api.get(f"/v1/memories/{mid}", params={"folder": str(repo)})
    assert got.status_code == 200 and got.json()["stale"] == (
        "GONE_NAME_XYZ no longer in svc/net/retry.py"
    )
    assert api.get(f"/v1/memories/{mid}").json()["stale"] is None
    for folder in ("/etc", str(link), "etc", str(tmp_path / "missing"), str(others)):
        got = api.get(f"/v1/memories/{mid}", params={"folder": folder})
        assert got.status_code == 200 and got.json()["stale"] is None, folder
