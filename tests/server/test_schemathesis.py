"""Schemathesis against the OpenAPI document of a live ``memloom serve``.

A real daemon (``start_daemon``: its own process on a free loopback port,
``MEMLOOM_LLM=offline``) is seeded through its API with memories of every type,
a credential, XSS payloads, a pending conflict and an imported session. Then
Schemathesis's runner -- the one behind ``st run``, driven in-process -- tests
every operation of ``/openapi.json``: the schema's examples, the coverage phase
(boundary values, wrong types, missing fields) and a bounded number of
generated cases, valid and invalid, on SQLite and on PostgreSQL. Every response
must be no 5xx, carry a documented status code and content type and match its
declared schema, and none may carry a CORS allow-origin header. Path ids are
drawn from the seeded memories and conflicts six times in ten, so the routes
that take an id reach their real code, not only their 404.

Nothing is excluded. ``POST /v1/import/sessions`` (an NDJSON stream) is tested
like the rest: the server refuses any path outside the Claude Code projects
folder, so a generated body can only (re)import the one bundled session there;
``test_import_refuses_hostile_bodies`` sends the bodies a generator is unlikely
to hit. ``POST /v1/import/native`` reads the daemon's HOME (a sandbox's: the
agents' own memory folders there are empty). Two smaller passes check who may call
(docs/security.md): without the token every route but ``/health`` answers the
documented 401 (or 415 for a body that is not JSON, refused before the token is
looked at), and with the token but from another origin's page (``Origin:
https://evil.example``) every one answers 403.

``MEMLOOM_FUZZ_EXAMPLES`` (generated cases per operation, default 50; a quarter on
PostgreSQL) and
``MEMLOOM_FUZZ_SEED`` (a number, or ``random``) widen or vary the search.
(Schemathesis's pytest plugin is not used: its ``from_fixture`` loader needs
``Node._nodeid``, which pytest 9 no longer has.)
"""

from __future__ import annotations

import collections
import os
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import schemathesis
from schemathesis.core.result import Ok
from schemathesis.engine import events, from_schema
from schemathesis.engine.statistic import Statistic

from tests.server.conftest import Daemon, db_env, start_daemon, stop
from tests.viewer.seed import seed

EXAMPLES = int(os.environ.get("MEMLOOM_FUZZ_EXAMPLES", "50"))
_seed = os.environ.get("MEMLOOM_FUZZ_SEED", "20261130")
SEED = random.randrange(2**63) if _seed == "random" else int(_seed)
ORIGIN = "https://evil.example"
TOKEN = "fuzz-s3cret-token"
CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
)


@schemathesis.check
def no_cors_allow_origin(ctx: Any, response: Any, case: Any) -> None:
    """No response lets another origin's page read it (every request carries an Origin)."""
    allowed = response.headers.get("access-control-allow-origin")
    if allowed:
        raise AssertionError(f"Access-Control-Allow-Origin: {allowed}")


@schemathesis.check
def token_is_required(ctx: Any, response: Any, case: Any) -> None:
    """Without a token: 401 everywhere but /health (or the HTTP server's own 400, or 415
    for a body that is not JSON)."""
    content_type = (response.headers.get("content-type") or [""])[0]
    if case.path == "/health":
        ok = response.status_code == 200
    elif response.status_code == 400 and content_type.startswith("text/plain"):
        ok = True  # answered by uvicorn before the app (e.g. a request line over 64 KiB)
    elif response.status_code == 415:
        ok = case.method.upper() in ("POST", "PUT", "PATCH")
    else:
        ok = response.status_code == 401 and response.headers.get("www-authenticate") == ["Bearer"]
    if not ok:
        raise AssertionError(f"expected 401 without a token, got {response.status_code}")


@schemathesis.check
def other_origins_are_refused(ctx: Any, response: Any, case: Any) -> None:
    """From another origin's page, with the right token: 403 everywhere but /health."""
    content_type = (response.headers.get("content-type") or [""])[0]
    if case.path == "/health":
        ok = response.status_code == 200
    elif response.status_code == 400 and content_type.startswith("text/plain"):
        ok = True
    else:
        ok = response.status_code == 403
    if not ok:
        raise AssertionError(f"expected 403 from another origin, got {response.status_code}")


# ---------------------------------------------------------------- running Schemathesis


class ServerLog:
    """The daemon's stderr (drained by ``start_daemon``), for the failure report."""

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon

    @property
    def lines(self) -> list[str]:
        return self.daemon.lines

    @property
    def text(self) -> str:
        return self.daemon.log


@dataclass
class Run:
    operations: int = 0
    tested: set[str] = field(default_factory=set)
    statuses: dict[str, collections.Counter[int]] = field(
        default_factory=lambda: collections.defaultdict(collections.Counter)
    )
    statistic: Statistic = field(default_factory=Statistic)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def cases(self) -> int:
        return self.statistic.total_cases

    def report(self) -> str:
        """Every failing case: what failed, the response and a curl command that repeats it."""
        from schemathesis.config import OutputConfig

        out = [
            f"__ {label} __\n"
            + group.format(index=None, curl=group.code_sample, config=OutputConfig())
            for label, groups in sorted(self.statistic.failures.items())
            for group in groups.values()
        ]
        return "\n\n".join(out + self.errors)


def run_schemathesis(
    url: str,
    *,
    checks: tuple[str, ...],
    examples: int,
    coverage: bool,
    memory_ids: list[str],
    conflict_ids: list[str],
    token: str,
    send_token: bool = True,
    origin: str | None = None,
) -> Run:
    config = schemathesis.Config.from_dict(
        {
            "seed": SEED,
            "suppress-health-check": ["too_slow", "filter_too_much", "data_too_large"],
            "request-timeout": 60,
            "headers": {
                **({"Authorization": f"Bearer {token}"} if send_token else {}),
                **({"Origin": origin} if origin else {}),
            },
            "output": {"sanitization": {"enabled": False}},  # report cases as they were sent
            "checks": {"enabled": False, **{name: {"enabled": True} for name in checks}},
            "generation": {"mode": "all", "max-examples": examples, "database": "none"},
            "phases": {
                "examples": {"enabled": True},
                "coverage": {"enabled": coverage},
                "fuzzing": {"enabled": True},
                "stateful": {"enabled": False},
            },
            "dictionaries": {
                "memory_ids": {"values": memory_ids},
                "conflict_ids": {"values": conflict_ids},
            },
            "parameters": {
                "path.memory_id": {"dictionary": "memory_ids", "probability": 0.6},
                "path.conflict_id": {"dictionary": "conflict_ids", "probability": 0.6},
            },
        }
    )
    schema = schemathesis.openapi.from_url(url + "/openapi.json", config=config)
    run = Run(operations=sum(isinstance(r, Ok) for r in schema.get_all_operations()))
    started = time.monotonic()
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            run.statistic.on_scenario_finished(event.recorder)
            for case_id, interaction in event.recorder.interactions.items():
                case = event.recorder.cases[case_id].value
                run.tested.add(case.operation.label)
                if interaction.response is not None:
                    run.statuses[case.operation.label][interaction.response.status_code] += 1
        elif isinstance(event, events.NonFatalError):
            run.errors.append(f"__ {event.label} __\n{event.info}")
        elif isinstance(event, events.FatalError):
            run.errors.append(f"__ fatal __\n{event.exception!r}")
        elif isinstance(event, events.EngineFinished):
            run.errors.extend(f"__ run __\n{failure.message}" for failure in event.failures)
            if event.stop_reason != "completed":  # e.g. the server stopped answering
                run.errors.append(f"__ run __\nstopped: {event.stop_reason}")
    run.seconds = time.monotonic() - started
    return run


def require_no_failures(run: Run, log: ServerLog) -> None:
    if run.statistic.failures or run.errors:
        tail = "\n".join(log.lines[-80:])
        pytest.fail(f"{run.report()}\n\n--- server log, last lines ---\n{tail}", pytrace=False)


# ---------------------------------------------------------------- the daemons


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory, served_database) -> Iterator[dict[str, Any]]:
    base = tmp_path_factory.mktemp("fuzzed")
    d = start_daemon(base / "home", base / "claude", env=db_env(served_database))
    log = ServerLog(d)
    try:
        with d.client() as api:
            seed(api, d.claude)
            listed = api.get(
                "/v1/memories", params={"limit": 1000, "status": ["active", "stale", "expired"]}
            ).json()["memories"]
            conflicts = api.get("/v1/conflicts", params={"status": "all"}).json()["conflicts"]
        yield {
            "daemon": d,
            "log": log,
            "memory_ids": [m["id"] for m in listed],
            "conflict_ids": [c["id"] for c in conflicts],
            "backend": "postgres" if served_database else "sqlite",
        }
    finally:
        stop(d)


# ---------------------------------------------------------------- the tests


def test_every_operation_answers_within_its_schema(fuzzed):
    d: Daemon = fuzzed["daemon"]
    log: ServerLog = fuzzed["log"]
    assert len(fuzzed["memory_ids"]) >= 10 and fuzzed["conflict_ids"]
    # PostgreSQL shares every route's code and validation with SQLite; only the storage
    # differs. There the schema's examples and the coverage phase's boundary values
    # (NUL characters, huge numbers: what PostgreSQL alone once failed on) all run, and
    # a quarter of the generated cases, to keep CI within its time.
    examples = EXAMPLES if fuzzed["backend"] == "sqlite" else max(EXAMPLES // 4, 1)
    run = run_schemathesis(
        d.url,
        checks=(*CHECKS, "no_cors_allow_origin"),
        examples=examples,
        coverage=True,
        memory_ids=fuzzed["memory_ids"],
        conflict_ids=fuzzed["conflict_ids"],
        token=d.token or "",
    )
    statuses = sum(run.statuses.values(), collections.Counter())
    print(
        f"\nschemathesis {schemathesis.__version__}, {fuzzed['backend']}: {run.operations} "
        f"operations, {run.cases} cases (max-examples {examples}, seed {SEED}) in "
        f"{run.seconds:.1f} s; statuses {dict(sorted(statuses.items()))}"
    )
    require_no_failures(run, log)
    assert run.operations == 26 and len(run.tested) == run.operations, run.tested
    # The seeded ids were used: every route taking an id answered 2xx at least once.
    for label, counts in run.statuses.items():
        if "{" in label:
            assert any(200 <= s < 300 for s in counts), (label, counts)
    # Nothing went wrong that the responses did not show.
    assert "unhandled error" not in log.text, log.text[-5000:]
    assert "Exception in ASGI application" not in log.text, log.text[-5000:]
    assert httpx.get(d.url + "/health").status_code == 200 and d.process.poll() is None


@pytest.mark.security
@pytest.mark.parametrize(
    ("given", "send_token", "origin", "check"),
    [
        ("env", False, None, "token_is_required"),
        ("generated", False, None, "token_is_required"),
        ("generated", True, ORIGIN, "other_origins_are_refused"),
        ("generated", True, "http://127.0.0.1:1", "other_origins_are_refused"),
    ],
    ids=["no-token-env", "no-token-generated", "evil-origin", "other-loopback-port"],
)
def test_every_route_refuses_who_is_not_the_owner(tmp_path, given, send_token, origin, check):
    """Without the token (one from MEMLOOM_API_TOKEN, or the one the daemon made), or
    with it but from another origin's page, no route but /health does anything."""
    env = {"MEMLOOM_API_TOKEN": TOKEN} if given == "env" else {}
    d = start_daemon(tmp_path / "home", tmp_path / "claude", env=env)
    log = ServerLog(d)
    try:
        with d.client() as api:
            api.post("/v1/memories", json={"text": "The staging DB listens on port 5433"})
        run = run_schemathesis(
            d.url,
            checks=(*CHECKS, "no_cors_allow_origin", check),
            examples=3,
            coverage=False,
            memory_ids=["0123456789abcdef"],
            conflict_ids=["0123456789abcdef"],
            token=d.token or "",
            send_token=send_token,
            origin=origin,
        )
        statuses = sum(run.statuses.values(), collections.Counter())
        print(
            f"\n{given}, token sent {send_token}, origin {origin}: {run.operations} operations, "
            f"{run.cases} cases in {run.seconds:.1f} s; statuses {dict(sorted(statuses.items()))}"
        )
        require_no_failures(run, log)
        assert len(run.tested) == run.operations == 26, run.tested
        with d.client() as api:  # the owner's request opens them, and nothing was changed
            stats = api.get("/v1/memory/stats").json()
            assert stats["total_memories"] == 1 and stats["active_count"] == 1
    finally:
        stop(d)


def test_import_refuses_hostile_bodies(fuzzed):
    """Over HTTP, only transcripts inside the Claude Code projects folder are imported."""
    d: Daemon = fuzzed["daemon"]
    projects = d.claude / "projects"
    outside = d.home.parent / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "secret.jsonl").write_text('{"type": "user"}\n')
    link = projects / "link-out"
    link.symlink_to(outside, target_is_directory=True)
    fifo = projects / "pipe.jsonl"
    os.mkfifo(fifo)
    try:
        with d.client() as api:
            for paths in (
                ["/"],
                ["/etc/passwd"],
                ["~"],
                ["."],
                ["relative/session.jsonl"],
                [str(projects / ".." / ".." / "outside")],
                [str(outside / "secret.jsonl")],
                [str(link)],
                [str(link / "secret.jsonl")],
                [str(fifo)],  # would block the import for ever
                [str(projects), "/"],
            ):
                res = api.post("/v1/import/sessions", json={"paths": paths})
                assert res.status_code == 400, (paths, res.status_code, res.text)
                assert res.headers["content-type"] == "application/json" and res.json()["error"]
            for body in (
                {"paths": [""]},
                {"paths": ["/x\u0000"]},
                {"paths": ["/" + "a" * 5000]},
                {"paths": ["/a"] * 1001},
                {"paths": "/"},
                {"days": 0},
                {"days": 1e308},
                {"sessions": 0},
                {"sessions": 10**12},
                {"project": "p" * 5000},
                {"unknown": True},
            ):
                res = api.post("/v1/import/sessions", json=body)
                assert res.status_code == 422, (str(body)[:80], res.status_code, res.text)
            for raw in (b'{"days": Infinity}', b'{"days": NaN}', b'{"paths": ["/\\udc00"]}'):
                res = api.post(
                    "/v1/import/sessions",
                    content=raw,
                    headers={"Content-Type": "application/json"},
                )
                assert res.status_code == 422, (raw, res.status_code, res.text)
            nope = api.post(
                "/v1/import/sessions",
                content=b"{nope",
                headers={"Content-Type": "application/json"},
            )
            assert nope.status_code == 400
            # A folder inside still imports (nothing new: the session is known).
            target = str(projects / "-home-dev-example")
            with api.stream("POST", "/v1/import/sessions", json={"paths": [target]}) as res:
                assert res.status_code == 200
                assert res.headers["content-type"].startswith("application/x-ndjson")
                assert b'"event": "done"' in res.read()
    finally:
        fifo.unlink()
        link.unlink()
