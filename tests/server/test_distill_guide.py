"""The Distill guide's calls, as a new user pastes them, against a real ``memloom serve``.

Distill's memory guide writes every call as ``curl -X POST localhost:8080/v1/memory/<op>
-d '{…}'``, and curl's ``-d`` sends ``Content-Type: application/x-www-form-urlencoded``.
With the owner's token added (``-H "Authorization: Bearer $(cat <token file>)"``, the
line ``memloom serve`` prints) each line works as written: the body of a request with a
valid bearer token and no sign of another origin is read as JSON whatever its type, and
a forget by ``tags`` or ``before`` alone is the owner's, as Distill documents it.
Without the token every check of docs/security.md stays (415 first for such a body, as
before; 403 from another origin even with the token). The real ``curl`` binary runs
each line through ``bash``, so ``$(cat …)`` is read as a user's shell reads it.

Bad input from the token's holder -- form fields, garbage, an empty body, invalid UTF-8,
a JSON body past the size limit sent as ``text/plain``, a ``Content-Type`` with odd
parameters -- gets a clear 4xx JSON answer; nothing is stored and nothing answers 5xx.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from tests.server.conftest import Daemon, db_env, start_daemon, stop

#: The body limit of this module's daemon: small, so the 413 cases stay cheap.
MAX_BODY = 64 * 1024

#: Distill's memory guide, verbatim: each call as its documentation shows it.
GUIDE = {
    "store": """curl -X POST localhost:8080/v1/memory/store -d '{
  "entries": [{
    "text": "Auth uses JWT with RS256 signing",
    "source": "code_review",
    "tags": ["auth", "security"],
    "auto_classify": true
  }]
}'""",
    "recall": """curl -X POST localhost:8080/v1/memory/recall -d '{
  "query": "how does authentication work?",
  "max_results": 5,
  "boost_tags": ["auth"],
  "min_relevance": 0.3,
  "task_context": "fixing login bugs in code_review"
}'""",
    "expire": """curl -X POST localhost:8080/v1/memory/expire -d '{
  "ids": ["abc123", "def456"]
}'""",
    "supersede": """curl -X POST localhost:8080/v1/memory/supersede -d '{
  "old_id": "abc123",
  "new_id": "ghi789"
}'""",
    "forget_ids": """curl -X POST localhost:8080/v1/memory/forget -d '{"ids": ["abc123"]}'""",
    "forget_tags": """curl -X POST localhost:8080/v1/memory/forget -d '{"tags": ["temp"]}'""",
    "forget_age": (
        """curl -X POST localhost:8080/v1/memory/forget -d '{"before": "2026-01-01T00:00:00Z"}'"""
    ),
}
CUTOFF_2026 = datetime(2026, 1, 1, tzinfo=UTC).timestamp()

CURL = shutil.which("curl")
pytestmark = pytest.mark.skipif(CURL is None, reason="needs the curl binary")


@pytest.fixture(scope="module")
def daemon(tmp_path_factory, served_database) -> Iterator[Daemon]:
    base = tmp_path_factory.mktemp("distill-guide")
    d = start_daemon(
        base / "home",
        base / "claude",
        env={**db_env(served_database), "MEMLOOM_MAX_BODY_BYTES": str(MAX_BODY)},
    )
    yield d
    stop(d)


def pasted(
    daemon: Daemon, line: str, ids: dict[str, str] | None = None, auth: str | None = "token"
) -> str:
    """A guide line as a user pastes it here: this daemon's port, the placeholder ids
    replaced by real ones, and (``auth="token"``) the header ``memloom serve`` suggests;
    ``auth`` may also be a literal header to add instead, or None for none."""
    port = httpx.URL(daemon.url).port
    line = line.replace("localhost:8080", f"localhost:{port}")
    for placeholder, real in (ids or {}).items():
        line = line.replace(placeholder, real)
    extra = "-s -w '\\n%{http_code}'"
    if auth == "token":
        token_file = shlex.quote(str(daemon.home / "api-token"))
        extra += f' -H "Authorization: Bearer $(cat {token_file})"'
    elif auth is not None:
        extra += f" -H {shlex.quote(auth)}"
    assert line.startswith("curl ")
    return f"curl {extra} {line[len('curl ') :]}"


def run(line: str) -> tuple[int, Any]:
    """Run ``line`` in bash (as a user's shell would); its status and JSON answer."""
    done = subprocess.run(["bash", "-c", line], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    body, _, status = done.stdout.rpartition("\n")
    return int(status), json.loads(body)


def curl(daemon: Daemon, op: str, body: dict[str, Any], auth: str | None = "token") -> Any:
    """One more call in the guide's own form (``-d``), for the memories a step needs."""
    line = f"curl -X POST localhost:8080/v1/memory/{op} -d {shlex.quote(json.dumps(body))}"
    status, doc = run(pasted(daemon, line, auth=auth))
    assert status == 200, (op, status, doc)
    return doc


def stored(daemon: Daemon, *texts: str, tags: list[str] | None = None) -> list[str]:
    entries = [{"text": t, **({"tags": tags} if tags else {})} for t in texts]
    return curl(daemon, "store", {"entries": entries})["ids"]


def status_of(daemon: Daemon, memory_id: str) -> str | None:
    with daemon.client() as api:
        res = api.get(f"/v1/memories/{memory_id}")
    return res.json()["status"] if res.status_code == 200 else None


def every_memory(daemon: Daemon) -> list[tuple[str, str, str]]:
    """(id, text, status) of every memory, expired and stale ones included."""
    with daemon.client() as api:
        res = api.get(
            "/v1/memories", params={"status": ["active", "stale", "expired"], "limit": 1000}
        )
    return sorted((m["id"], m["text"], m["status"]) for m in res.json()["memories"])


# ---------------------------------------------------------------- the guide, with the token


def test_the_guides_calls_work_as_written_with_the_token(daemon):
    status, doc = run(pasted(daemon, GUIDE["store"]))
    assert status == 200 and (doc["stored"], doc["merged"]) == (1, 0), doc
    (auth,) = doc["ids"]
    with daemon.client() as api:
        kept = api.get(f"/v1/memories/{auth}").json()
    assert kept["source"] == "code_review" and set(kept["tags"]) == {"auth", "security"}

    status, doc = run(pasted(daemon, GUIDE["recall"]))
    assert status == 200 and doc["memories"][0]["id"] == auth, doc
    assert doc["stats"]["returned"] >= 1 and "sensitive_chunks" in doc

    one, two = stored(daemon, "The staging cluster runs on k3s", "Builds are cached in S3")
    status, doc = run(pasted(daemon, GUIDE["expire"], {"abc123": one, "def456": two}))
    assert (status, doc) == (200, {"expired": 2})
    assert status_of(daemon, one) == status_of(daemon, two) == "expired"

    old, new = stored(daemon, "The nightly job emails the QA team", "Flaky tests go to #ci")
    status, doc = run(pasted(daemon, GUIDE["supersede"], {"abc123": old, "ghi789": new}))
    assert (status, doc) == (200, {"superseded": True})
    assert (status_of(daemon, old), status_of(daemon, new)) == ("expired", "active")

    status, doc = run(pasted(daemon, GUIDE["forget_ids"], {"abc123": auth}))
    assert status == 200 and doc["removed"] == 1, doc
    assert status_of(daemon, auth) is None

    temp = stored(daemon, "scratch: try the new linter", "scratch: bisect run", tags=["temp"])
    (keep,) = stored(daemon, "The linter config lives in ruff.toml", tags=["lint"])
    status, doc = run(pasted(daemon, GUIDE["forget_tags"]))
    assert status == 200 and doc["removed"] == 2, doc
    assert [status_of(daemon, i) for i in temp] == [None, None]
    assert status_of(daemon, keep) == "active"

    before = every_memory(daemon)
    status, doc = run(pasted(daemon, GUIDE["forget_age"]))
    assert status == 200, doc
    if time.time() > CUTOFF_2026:  # everything here was written after 2026-01-01
        assert doc["removed"] == 0 and every_memory(daemon) == before

    (older,) = stored(daemon, "The old build server was ci-1.internal")
    time.sleep(0.05)
    cutoff = datetime.now(UTC)
    time.sleep(0.05)
    (newer,) = stored(daemon, "The build server is ci-2.internal")
    doc = curl(daemon, "forget", {"before": cutoff.isoformat()})
    assert doc["removed"] >= 1 and doc["total_memories"] >= 1
    assert status_of(daemon, older) is None and status_of(daemon, newer) == "active"
    with daemon.client() as api:
        left = api.get("/v1/memories", params={"status": ["active", "stale", "expired"]})
    times = [datetime.fromisoformat(m["created_at"]) for m in left.json()["memories"]]
    assert times and min(times) >= cutoff  # by age: every older memory went, no newer one


def test_serve_prints_a_curl_line_that_reads_the_token_file(daemon):
    (line,) = [x.split("memloom: try: ", 1)[1] for x in daemon.lines if "memloom: try: " in x]
    assert daemon.token not in line  # the shell reads the file when the line runs
    assert f"$(cat {shlex.quote(str(daemon.home / 'api-token'))})" in line
    assert line.startswith("curl ") and " -d " in line and "Content-Type" not in line
    status, doc = run(line.replace("curl ", "curl -s -w '\\n%{http_code}' ", 1))
    assert status == 200 and isinstance(doc["memories"], list), doc


# ---------------------------------------------------------------- who is refused, as before


@pytest.mark.security
def test_without_a_valid_token_each_guide_line_is_refused_as_before(daemon):
    """415 for the form-typed body, before the token is looked at (today's order); the
    same call as JSON without the token: 401. Nothing stored, changed or forgotten."""
    (victim,) = stored(daemon, "The payments API key rotates every 90 days", tags=["temp"])
    ids = {"abc123": victim, "def456": victim, "ghi789": victim}
    before = every_memory(daemon)
    wrong = ["Authorization: Bearer wrong", f"Authorization: Bearer {daemon.token[:-1]}"]
    for name, line in GUIDE.items():
        for auth in (None, *wrong):
            status, doc = run(pasted(daemon, line, ids, auth=auth))
            assert status == 415 and "application/json" in doc["error"], (name, auth, doc)
        as_json = pasted(daemon, line, ids, auth="Content-Type: application/json")
        status, doc = run(as_json)
        assert status == 401 and doc == {"error": "missing or wrong bearer token"}, (name, doc)
    assert every_memory(daemon) == before


FOREIGN = [
    "Origin: https://evil.example",
    "Origin: http://127.0.0.1:1",
    "Origin: null",
    "Sec-Fetch-Site: cross-site",
    "Sec-Fetch-Site: same-site",
]


@pytest.mark.security
@pytest.mark.parametrize("signal", FOREIGN)
def test_another_origin_is_refused_even_with_the_token(daemon, signal):
    """A cross-origin signal wins over the token: 403, the body never read."""
    (victim,) = stored(daemon, "The VPN gateway is vpn.example.internal", tags=["temp"])
    ids = {"abc123": victim, "def456": victim, "ghi789": victim}
    before = every_memory(daemon)
    token_file = shlex.quote(str(daemon.home / "api-token"))
    for name, line in GUIDE.items():
        command = pasted(daemon, line, ids).replace(
            f'-H "Authorization: Bearer $(cat {token_file})"',
            f'-H "Authorization: Bearer $(cat {token_file})" -H {shlex.quote(signal)}',
        )
        assert signal in command
        status, doc = run(command)
        assert status == 403 and "refused" in doc["error"], (name, signal, doc)
    assert every_memory(daemon) == before


# ---------------------------------------------------------------- bad input from the owner

FORM = "application/x-www-form-urlencoded"  # what curl -d sends
NOT_JSON = [
    pytest.param(b"text=hello&tags=temp", 400, "not valid JSON", id="form-fields"),
    pytest.param(b'{"entries": [{"text": "cut off"', 400, "not valid JSON", id="truncated"),
    pytest.param(b"\x00\x01garbage\xfe", 400, "not valid JSON", id="garbage"),
    pytest.param(b"", 422, "send a JSON body", id="empty"),
    pytest.param(b'{"entries": [{"text": "caf\xe9"}]}', 400, "not UTF-8", id="latin-1"),
    # UTF-8 of a lone surrogate: JSON's decoder lets it through; no store keeps it
    pytest.param(b'{"entries": [{"text": "\xed\xa0\x80"}]}', 422, "", id="surrogate"),
    pytest.param(b"[]", 422, "", id="a-list"),
]


@pytest.mark.parametrize(("body", "status", "says"), NOT_JSON)
def test_a_body_that_is_not_json_is_a_clear_4xx_and_stores_nothing(daemon, body, status, says):
    before = every_memory(daemon)
    with daemon.client() as api:
        for route in ("/v1/memory/store", "/v1/memory/forget", "/v1/memories"):
            res = api.post(route, content=body, headers={"Content-Type": FORM})
            assert res.status_code == status, (route, res.status_code, res.text)
            assert res.headers["content-type"] == "application/json"
            assert says in res.json()["error"], (route, res.json())
    assert every_memory(daemon) == before


def _big_body() -> bytes:
    text = "padding " * (MAX_BODY // 8)
    body = json.dumps({"entries": [{"text": "too big to store " + text}]}).encode()
    assert len(body) > MAX_BODY
    return body


def test_a_json_body_over_the_limit_sent_as_text_plain_is_413(daemon):
    before = every_memory(daemon)
    body = _big_body()

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        for i in range(0, len(body), 8192):
            yield body[i : i + 8192]

    with daemon.client() as api:
        for content in (body, chunks()):
            res = api.post(
                "/v1/memory/store", content=content, headers={"Content-Type": "text/plain"}
            )
            assert res.status_code == 413, res.text
            assert f"larger than {MAX_BODY} bytes" in res.json()["error"]
    # Without the token the Content-Type is refused first, as before: 415.
    with httpx.Client(base_url=daemon.url, timeout=60) as anon:
        res = anon.post("/v1/memory/store", content=body, headers={"Content-Type": "text/plain"})
        assert res.status_code == 415
    assert every_memory(daemon) == before


ODD_TYPES = [
    "application/json; charset=utf-8",
    'application/json;charset="UTF-8"',
    "APPLICATION/JSON ; charset=latin-1; boundary=x",
    "application/json;;;",
    "application/json; charset",
    'application/json; foo="a;b"; bar=',
    'text/plain; charset=utf-8; boundary="--x"',
    "application/x-www-form-urlencoded; charset=",
    "multipart/form-data",
    "application/vnd.api+json",
    "*/*",
    ";",
    "",
]


@pytest.mark.parametrize("content_type", ODD_TYPES)
def test_a_content_type_with_odd_parameters_is_answered_clearly(daemon, content_type):
    """With the token: read as JSON, stored. Without it: 401 when the type is JSON, 415
    when it is not (as before). Never a 5xx."""
    text = f"Odd content type {content_type!r} is still stored"
    body = json.dumps({"entries": [{"text": text, "tags": ["odd-type"]}]}).encode()
    headers = {"Content-Type": content_type} if content_type else {}
    with httpx.Client(base_url=daemon.url, timeout=60) as anon:
        res = anon.post("/v1/memory/store", content=body, headers=headers)
    is_json = content_type.split(";", 1)[0].strip().lower() == "application/json"
    assert res.status_code == (401 if is_json else 415), (content_type, res.text)
    assert text not in {t for _, t, _ in every_memory(daemon)}
    with daemon.client() as api:
        res = api.post("/v1/memory/store", content=body, headers=headers)
    assert res.status_code == 200, (content_type, res.text)
    (new,) = res.json()["ids"]
    assert status_of(daemon, new) == "active"
