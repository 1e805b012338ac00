"""Only its owner reaches memloom (docs/security.md): the checks every request passes,
tried as an attacker would, against a real ``memloom serve`` and a real
``memloom mcp --transport http`` on 127.0.0.1.

* Host: DNS rebinding gives a hostile name the address 127.0.0.1; such a Host gets 421.
* Origin / Sec-Fetch-Site: another origin's page (another loopback port included)
  gets 403, even with the right token.
* Content-Type: a form or a no-cors fetch can only send text/plain, urlencoded or
  multipart (or nothing) without asking first; a POST that is not JSON gets 415 unless
  it carries a valid token (a page cannot attach one without a preflight that is never
  answered; tests/server/test_distill_guide.py has the token holder's side).
* The token: made on the first start (0600), never from argv; another local user,
  who cannot read it, gets 401.
After every refused request the store is exactly as it was.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.server.conftest import Daemon, start_daemon, stop

pytestmark = pytest.mark.security

PROJECT = "/home/dev/owner-only"
#: An MCP initialize request, as a client sends it first.
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "attacker", "version": "1"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


#: What an attacker sends first: read the memories, write one every agent obeys, wipe all.
ATTACKS = (
    ("GET", "/v1/memories", b""),
    ("POST", "/v1/memory/store", json.dumps({"entries": [{"text": "pwned"}]}).encode()),
    (
        "POST",
        "/v1/memory/forget",
        json.dumps({"before": "2100-01-01T00:00:00Z", "all": True}).encode(),
    ),
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def daemon(tmp_path_factory) -> Iterator[Daemon]:
    base = tmp_path_factory.mktemp("owner-only")
    home = base / "home"
    home.mkdir()
    (home / "config.toml").write_text('[server]\nallowed_hosts = ["memloom.test", ".lan.test"]\n')
    d = start_daemon(home, base / "claude")
    try:
        with d.client() as api:
            api.post(
                "/v1/memories",
                json={"text": "The billing service listens on port 8081", "project": PROJECT},
            ).raise_for_status()
        yield d
    finally:
        stop(d)


@pytest.fixture(scope="module")
def mcp_http(daemon) -> Iterator[str]:
    """``memloom mcp --transport http`` on the daemon's data folder (the same token)."""
    port = free_port()
    env = {**os.environ, "MEMLOOM_HOME": str(daemon.home), "MEMLOOM_LLM": "offline"}
    env.pop("MEMLOOM_API_TOKEN", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "memloom.cli", "mcp", "--transport", "http", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"memloom mcp exited: {proc.communicate()[1]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
        except OSError:
            time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=15)


def snapshot(daemon: Daemon) -> dict[str, Any]:
    """What an attack must not change: the memories, their versions, the conflicts."""
    with daemon.client() as api:
        listed = api.get("/v1/memories", params={"status": ["active", "stale", "expired"]})
        conflicts = api.get("/v1/conflicts", params={"status": "all"})
    return {
        "memories": sorted(
            (m["id"], m["text"], m["status"], m["pinned"]) for m in listed.json()["memories"]
        ),
        "conflicts": conflicts.json()["total"],
    }


def raw_request(url: str, method: str, path: str, headers: dict[str, str], body: bytes) -> Any:
    """One request with exactly these headers (httpx would add a Host of its own)."""
    with httpx.Client(base_url=url, timeout=30) as client:
        request = client.build_request(method, path, content=body or None)
        for name in list(request.headers):
            if name.lower() not in ("content-length",):
                del request.headers[name]
        request.headers.update(headers)
        return client.send(request)


# ---------------------------------------------------------------- Host (DNS rebinding)

REFUSED_HOSTS = [
    "evil.example",
    "evil.example:4319",
    "127.0.0.1.nip.io",
    "localhost.evil.example",
    "memloom.test.evil.example",
    "[::1",
    "127.0.0.1:99999",
]
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "127.0.0.2", "[::1]", "memloom.test", "a.lan.test"]


@pytest.mark.parametrize("host", REFUSED_HOSTS)
def test_a_host_that_is_not_ours_gets_421_on_rest(daemon, host):
    before = snapshot(daemon)
    auth = {"Authorization": f"Bearer {daemon.token}"}
    for method, path, body in (
        *ATTACKS,
        ("GET", "/v1/memories/0123456789abcdef/context", b""),
        ("GET", "/v1/stale?folder=/tmp", b""),
        ("GET", "/", b""),
        ("GET", "/health", b""),
    ):
        headers = {"Host": host, **auth, "Content-Type": "application/json"}
        res = raw_request(daemon.url, method, path, headers, body)
        assert res.status_code == 421, (host, path, res.status_code, res.text)
        assert "host" in res.json()["error"]
    assert snapshot(daemon) == before


def test_a_request_without_a_host_gets_421(daemon):
    """HTTP/1.0 has no Host header: nothing says which server was meant."""
    port = httpx.URL(daemon.url).port
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        auth = f"Authorization: Bearer {daemon.token}"
        sock.sendall(f"GET /v1/memory/stats HTTP/1.0\r\n{auth}\r\n\r\n".encode())
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    assert reply.startswith(b"HTTP/1.1 421 "), reply[:200]


@pytest.mark.parametrize("host", ALLOWED_HOSTS)
def test_loopback_and_configured_hosts_are_served(daemon, host):
    port = httpx.URL(daemon.url).port
    res = raw_request(
        daemon.url,
        "GET",
        "/v1/memory/stats",
        {"Host": f"{host}:{port}", "Authorization": f"Bearer {daemon.token}"},
        b"",
    )
    assert res.status_code == 200, (host, res.text)


@pytest.mark.parametrize("host", ["evil.example", "127.0.0.1.nip.io", "localhost.evil.example"])
def test_a_host_that_is_not_ours_gets_421_on_mcp(daemon, mcp_http, host):
    headers = {
        "Host": host,
        "Authorization": f"Bearer {daemon.token}",
        "Content-Type": "application/json",
        **MCP_HEADERS,
    }
    res = raw_request(mcp_http, "POST", "/mcp", headers, json.dumps(INITIALIZE).encode())
    assert res.status_code == 421, res.text


# ---------------------------------------------------------------- Origin and Sec-Fetch-Site

FOREIGN = [
    ({"Origin": "https://evil.example"}, "origin"),
    ({"Origin": "http://127.0.0.1:1"}, "origin"),  # another loopback port: another origin
    ({"Origin": "http://localhost:1"}, "origin"),
    ({"Origin": "null"}, "origin"),  # a sandboxed frame, a data: URL, a file
    ({"Sec-Fetch-Site": "cross-site"}, "site"),
    ({"Sec-Fetch-Site": "same-site"}, "site"),  # another port of 127.0.0.1 is same-site
]


@pytest.mark.parametrize(("headers", "says"), FOREIGN, ids=lambda v: str(v))
def test_another_origin_gets_403_even_with_the_token(daemon, headers, says):
    before = snapshot(daemon)
    port = httpx.URL(daemon.url).port
    base = {
        "Host": f"127.0.0.1:{port}",
        "Authorization": f"Bearer {daemon.token}",
        "Content-Type": "application/json",
    }
    for method, path, body in (
        *ATTACKS,
        ("GET", "/v1/activity", b""),
        ("GET", "/v1/stale?folder=/tmp", b""),
        ("POST", "/v1/import/sessions", b"{}"),
        ("POST", "/v1/import/native", b"{}"),
        ("POST", "/v1/conflicts/auto", b"{}"),
    ):
        res = raw_request(daemon.url, method, path, {**base, **headers}, body)
        assert res.status_code == 403, (headers, path, res.status_code, res.text)
        assert says in res.json()["error"]
    assert snapshot(daemon) == before


def test_the_same_origin_and_a_navigation_are_served(daemon):
    port = httpx.URL(daemon.url).port
    auth = {"Authorization": f"Bearer {daemon.token}", "Host": f"127.0.0.1:{port}"}
    same = {**auth, "Origin": f"http://127.0.0.1:{port}", "Sec-Fetch-Site": "same-origin"}
    assert raw_request(daemon.url, "GET", "/v1/memory/stats", same, b"").status_code == 200
    typed = {**auth, "Sec-Fetch-Site": "none"}  # the user typed the address
    assert raw_request(daemon.url, "GET", "/v1/memory/stats", typed, b"").status_code == 200
    # The viewer's page has no data: a link from anywhere may open it (never framed).
    page = raw_request(
        daemon.url, "GET", "/", {"Host": f"127.0.0.1:{port}", "Sec-Fetch-Site": "cross-site"}, b""
    )
    assert page.status_code == 200
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]


def initialize_mcp(daemon, mcp_http: str, headers: dict[str, str]) -> httpx.Response:
    """MCP's ``initialize``, POSTed with the daemon's token, MCP's headers and ``headers``."""
    port = httpx.URL(mcp_http).port
    base = {"Host": f"127.0.0.1:{port}", "Authorization": f"Bearer {daemon.token}"}
    return raw_request(
        mcp_http,
        "POST",
        "/mcp",
        {**base, **MCP_HEADERS, **headers},
        json.dumps(INITIALIZE).encode(),
    )


@pytest.mark.parametrize(("headers", "says"), FOREIGN[:5], ids=lambda v: str(v))
def test_another_origin_gets_403_on_mcp(daemon, mcp_http, headers, says):
    res = initialize_mcp(daemon, mcp_http, {"Content-Type": "application/json", **headers})
    assert res.status_code == 403, (headers, res.text)


# ---------------------------------------------------------------- Content-Type

SIMPLE_BODIES = [
    ("text/plain", json.dumps({"entries": [{"text": "pwned"}]})),  # <form enctype=text/plain>
    ("text/plain;charset=UTF-8", '{"before": "2100-01-01T00:00:00Z", "all": true}'),
    ("application/x-www-form-urlencoded", '{"entries": [{"text": "pwned"}]}'),
    ("multipart/form-data; boundary=x", "--x\r\n\r\n{}\r\n--x--"),
    ("", '{"entries": [{"text": "pwned"}]}'),  # a no-cors fetch of a Blob without a type
    ("application/jsonp", "{}"),
]


@pytest.mark.parametrize(("content_type", "body"), SIMPLE_BODIES)
def test_a_post_that_is_not_json_gets_415_without_a_valid_token(daemon, content_type, body):
    """What a page can send is refused before the token is looked at: no token, a wrong
    one, or one a character short all get 415, as before the token holder's exception."""
    before = snapshot(daemon)
    port = httpx.URL(daemon.url).port
    for token in (None, "wrong", daemon.token[:-1], daemon.token + "x"):
        headers = {"Host": f"127.0.0.1:{port}"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        if content_type:
            headers["Content-Type"] = content_type
        for path in (
            "/v1/memory/store",
            "/v1/memory/forget",
            "/v1/memories",
            "/v1/conflicts/auto",
        ):
            res = raw_request(daemon.url, "POST", path, headers, body.encode())
            assert res.status_code == 415, (token, content_type, path, res.status_code, res.text)
    assert snapshot(daemon) == before


def test_json_with_a_charset_is_json(daemon):
    with daemon.client() as api:
        res = api.post(
            "/v1/memory/recall",
            content=json.dumps({"query": "billing port"}),
            headers={"Content-Type": "application/json; charset=utf-8"},
        )
    assert res.status_code == 200 and res.json()["memories"]


def test_mcp_takes_a_post_only_as_json(daemon, mcp_http):
    for content_type in ("text/plain", "application/x-www-form-urlencoded"):
        res = initialize_mcp(daemon, mcp_http, {"Content-Type": content_type})
        assert res.status_code == 415, res.text


# ---------------------------------------------------------------- the token


def test_without_the_token_nothing_is_read_or_changed(daemon, mcp_http):
    before = snapshot(daemon)
    for token in (None, "wrong", daemon.token[:-1], daemon.token + "x", "x" * 600):
        headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
        with httpx.Client(base_url=daemon.url, headers=headers, timeout=30) as anon:
            for path in (
                "/v1/memories",
                "/v1/status",
                "/v1/activity",
                "/v1/memory/stats",
                "/v1/stale?folder=/tmp",
            ):
                assert anon.get(path).status_code == 401, (token, path)
            store = anon.post("/v1/memory/store", json={"entries": [{"text": "pwned"}]})
            assert store.status_code == 401
            gone = anon.post(
                "/v1/memory/forget", json={"before": "2100-01-01T00:00:00Z", "all": True}
            )
            assert gone.status_code == 401
        res = httpx.post(
            mcp_http + "/mcp",
            json=INITIALIZE,
            headers={**MCP_HEADERS, **headers},
            timeout=30,
        )
        assert res.status_code == 401, (token, res.text)
    assert snapshot(daemon) == before


def test_the_generated_token_is_private_and_kept_across_restarts(tmp_path):
    d = start_daemon(tmp_path / "home", tmp_path / "claude")
    try:
        path = tmp_path / "home" / "api-token"
        first = path.read_text().strip()
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert len(first) >= 40  # 32 random bytes
        record = json.loads((tmp_path / "home" / "daemon.json").read_text())
        assert record["token_required"] is True and record["token_file"] == str(path)
        assert first not in (tmp_path / "home" / "daemon.json").read_text()
        # The link it prints opens the viewer: the token in the fragment, nowhere else.
        link = next(line for line in d.lines if "viewer:" in line).split("viewer: ", 1)[1]
        assert link == f"{d.url}/#token={first}"
    finally:
        stop(d)
    d = start_daemon(tmp_path / "home", tmp_path / "claude")
    try:
        assert d.token == first
        with d.client() as api:
            assert api.get("/v1/status").status_code == 200
    finally:
        stop(d)


def test_status_names_the_token_file(tmp_path):
    env = {**os.environ, "MEMLOOM_HOME": str(tmp_path / "home"), "MEMLOOM_LLM": "offline"}
    env.pop("MEMLOOM_API_TOKEN", None)
    d = start_daemon(tmp_path / "home", tmp_path / "claude")
    try:
        res = subprocess.run(
            [sys.executable, "-m", "memloom.cli", "status", "--json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        stop(d)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["api_token_file"] == str(tmp_path / "home" / "api-token")
    assert d.token not in res.stdout


def test_a_token_on_the_command_line_is_refused(tmp_path):
    env = {**os.environ, "MEMLOOM_HOME": str(tmp_path)}
    env.pop("MEMLOOM_API_TOKEN", None)
    res = subprocess.run(
        [sys.executable, "-m", "memloom.cli", "serve", "--port", "0", "--token", "s3cret-token"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 1 and "`ps`" in res.stderr and "--token-file" in res.stderr
    assert not (tmp_path / "daemon.json").exists()


def test_a_token_file_is_taken_only_when_private(tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("my-own-token-of-the-team\n")
    secret.chmod(0o644)
    env = {**os.environ, "MEMLOOM_HOME": str(tmp_path / "home")}
    env.pop("MEMLOOM_API_TOKEN", None)
    cmd = [sys.executable, "-m", "memloom.cli", "serve", "--port", "0", "--token-file", str(secret)]
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    assert res.returncode == 1 and "chmod 600" in res.stderr, res.stderr
    secret.chmod(0o600)
    d = start_daemon(tmp_path / "home", tmp_path / "claude", "--token-file", str(secret))
    try:
        assert d.token == "my-own-token-of-the-team"
        with d.client() as api:
            assert api.get("/v1/status").status_code == 200
        assert not (tmp_path / "home" / "api-token").exists()  # none generated beside it
    finally:
        stop(d)


def test_a_data_folder_that_does_not_exist_yet_is_made_private(tmp_path, pg_url):
    """On PostgreSQL nothing else makes the data folder; the daemon writes its record
    and token there (this crashed writing daemon.tmp)."""
    home = tmp_path / "not" / "yet"
    d = start_daemon(
        home, tmp_path / "claude", env={"MEMLOOM_DATABASE_URL": pg_url}, make_home=False
    )
    try:
        assert stat.S_IMODE(home.stat().st_mode) == 0o700
        with d.client() as api:
            assert api.get("/v1/status").status_code == 200
    finally:
        stop(d)


# ---------------------------------------------------------------- another local user

ATTACKER = r"""
import json, sys, urllib.request, urllib.error
url, mcp, token_file = sys.argv[1:4]
out = {}
try:
    open(token_file).read()
    out["token_file"] = "read"
except OSError as exc:
    out["token_file"] = type(exc).__name__
def call(method, u, body=None, headers={}):
    req = urllib.request.Request(u, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            return res.status
    except urllib.error.HTTPError as exc:
        return exc.code
out["list"] = call("GET", url + "/v1/memories")
out["recall"] = call("POST", url + "/v1/memory/recall", b'{"query": "billing port"}',
                     {"Content-Type": "application/json"})
out["forget"] = call("POST", url + "/v1/memory/forget",
                     b'{"before": "2100-01-01T00:00:00Z", "all": true}',
                     {"Content-Type": "application/json"})
out["mcp"] = call("POST", mcp + "/mcp", sys.argv[4].encode(),
                  {"Content-Type": "application/json",
                   "Accept": "application/json, text/event-stream"})
print(json.dumps(out))
"""


def test_another_local_user_is_refused_on_rest_and_mcp(daemon, mcp_http):
    """uid 65534 reaches the loopback ports like anyone, but cannot read the token."""
    if os.geteuid() != 0:
        pytest.skip("needs root to run a process as another user (CI runs as root)")
    before = snapshot(daemon)
    token_file = daemon.home / "api-token"
    res = subprocess.run(
        [
            "/usr/bin/python3",
            "-c",
            ATTACKER,
            daemon.url,
            mcp_http,
            str(token_file),
            json.dumps(INITIALIZE),
        ],
        user=65534,
        group=65534,
        extra_groups=[],
        cwd="/",
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout)
    assert got == {
        "token_file": "PermissionError",
        "list": 401,
        "recall": 401,
        "forget": 401,
        "mcp": 401,
    }
    assert snapshot(daemon) == before


# ---------------------------------------------------------------- what every response says


def test_responses_keep_out_of_frames_and_sniffers(daemon):
    with daemon.client() as api:
        for path in ("/", "/viewer/app.js", "/v1/memory/stats", "/docs", "/openapi.json"):
            res = api.get(path)
            assert res.status_code == 200, path
            assert res.headers["x-content-type-options"] == "nosniff", path
            assert "frame-ancestors 'none'" in res.headers["content-security-policy"], path
            assert res.headers["x-frame-options"] == "DENY", path
            assert "access-control-allow-origin" not in res.headers


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_the_api_docs_load_nothing_from_the_network(daemon, page):
    with daemon.client() as api:
        html = api.get(page).text
        for asset in (
            ("swagger-ui-bundle.js", "swagger-ui.css")
            if page == "/docs"
            else ("redoc.standalone.js",)
        ):
            assert f'"/docs-static/{asset}"' in html or f"'/docs-static/{asset}'" in html, html
            assert api.get(f"/docs-static/{asset}").status_code == 200
        assert "cdn" not in html.lower() and "https://" not in html.replace(
            "https://fastapi.tiangolo.com", ""
        ), html


def test_a_malformed_list_cursor_is_a_400(daemon):
    with daemon.client() as api:
        for cursor in (
            "nope",
            "[]",
            "[1]",
            "[1, 2, 3]",
            '["a", "b"]',
            "[[1], [2]]",
            "[1e999, 1]",
            "[1, 1.5]",
            "[true, 1]",
            '{"a": 1}',
            "[1, 99999999999999999999]",
        ):
            res = api.get("/v1/memories", params={"cursor": cursor})
            assert res.status_code == 400, (cursor, res.status_code, res.text)
            assert "cursor" in res.json()["error"]


def test_the_daemons_proof_needs_its_token(daemon):
    from memloom.access import proof

    res = httpx.get(daemon.url + "/health", headers={"X-Memloom-Challenge": "abc123"})
    assert res.headers["x-memloom-proof"] == proof(daemon.token or "", "abc123")
    assert res.headers["x-memloom-proof"] != proof("another-token", "abc123")
