"""``memloom mcp``: the MCP server, driven by the official SDK's own clients.

Servers run as real subprocesses over stdio and streamable HTTP, on a store in a
temporary MEMLOOM_HOME, with the real local embedding model.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

import memloom
from memloom.config import ConfigError
from memloom.mcp import TOOL_NAMES, build_server, run

pytestmark = pytest.mark.slow  # every server loads the local embedding model

TIMEOUT = 30.0
PORT_8080 = "The API server listens on port 8080"
#: A changed port and more besides: a conflict (the port alone is a new version).
PORT_9090 = "The API server listens on port 9090 behind the nginx proxy"


# ---------------------------------------------------------------- helpers


def go(test: Callable[[], Awaitable[None]]) -> None:
    async def bounded() -> None:
        with anyio.fail_after(TIMEOUT):
            await test()

    anyio.run(bounded)


def _database_env() -> dict[str, str]:
    """The stdio client passes servers only the variables it is given: the store's too."""
    url = os.environ.get("MEMLOOM_DATABASE_URL")
    return {"MEMLOOM_DATABASE_URL": url} if url else {}


@asynccontextmanager
async def stdio_session(home: Path, errlog: Path) -> AsyncIterator[ClientSession]:
    """A server spawned the way an MCP client spawns ``memloom mcp``."""
    # The installed console script, exactly what `claude mcp add memloom -- memloom mcp` runs.
    script = Path(sys.executable).with_name("memloom")
    params = StdioServerParameters(
        command=str(script) if script.exists() else sys.executable,
        args=["mcp"] if script.exists() else ["-m", "memloom._entry", "mcp"],
        env={
            "MEMLOOM_HOME": str(home),
            "XDG_CACHE_HOME": str(home.parent / "cache"),  # the handshake cache
            **_database_env(),
        },
    )
    with errlog.open("a") as err:
        async with (
            stdio_client(params, errlog=err) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session
    assert "Traceback" not in errlog.read_text()


async def call(session: ClientSession, tool: str, **arguments: Any) -> CallToolResult:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, text(result)
    return result


def text(result: CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


def structured(result: CallToolResult) -> dict[str, Any]:
    assert result.structured_content is not None
    return result.structured_content


@pytest.fixture
def home(tmp_path: Path, backend: str, monkeypatch) -> Iterator[Path]:
    """MEMLOOM_HOME for the servers (with MEMLOOM_DATABASE_URL on the PostgreSQL run);
    afterwards, every server must have closed the store."""
    path = tmp_path / "home"
    path.mkdir()
    postgres = backend.startswith("postgresql")
    if postgres:
        monkeypatch.setenv("MEMLOOM_DATABASE_URL", backend)
    yield path
    if postgres:
        return
    # SQLite removes the WAL file when its last connection closes: a server that
    # was killed, or left its engine open, would leave it behind. (A stdio server
    # opens the store at its first tool call: one that only listed tools has none.)
    assert not (path / "memloom.db-wal").exists()


@pytest.fixture
def errlog(tmp_path: Path) -> Path:
    return tmp_path / "server-stderr.log"


# ---------------------------------------------------------------- stdio


def test_lists_every_tool_with_a_description_and_schema(home, errlog):
    async def test() -> None:
        async with stdio_session(home, errlog) as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert set(tools) == set(TOOL_NAMES)
            for tool in tools.values():
                assert tool.description and len(tool.description) > 80, tool.name
                assert tool.output_schema is not None, tool.name
            assert "start of every task" in tools["recall_memory"].description
            assert "Never save secrets" in tools["save_memory"].description
            assert "explicitly asks" in tools["forget_memory"].description

            save = tools["save_memory"].input_schema["properties"]
            assert save["type"]["enum"] == ["fact", "preference", "episode", "procedure"]
            assert (
                save["sensitivity"]["anyOf"][0]["minimum"],
                save["sensitivity"]["anyOf"][0]["maximum"],
            ) == (0, 3)
            assert tools["save_memory"].input_schema["required"] == ["text"]
            recall = tools["recall_memory"].input_schema["properties"]
            assert (recall["limit"]["minimum"], recall["limit"]["maximum"]) == (1, 50)
            assert recall["max_sensitivity"]["default"] == 2
            assert all(p.get("description") for p in recall.values())
            resolve = tools["resolve_conflict"].input_schema["properties"]
            assert resolve["action"]["enum"] == ["keep_new", "keep_existing", "keep_both", "merge"]
            assert tools["recall_memory"].annotations.read_only_hint is True
            assert tools["forget_memory"].annotations.destructive_hint is True

    go(test)


def test_save_then_recall(home, errlog):
    async def test() -> None:
        async with stdio_session(home, errlog) as s:
            empty = await call(s, "recall_memory", query="how do I run the tests?")
            assert structured(empty)["memories"] == []
            assert "No memories matched" in text(empty)

            saved = await call(
                s,
                "save_memory",
                text="Run the test suite with `make check`",
                type="procedure",
                tags=["testing"],
                project="acme",
            )
            doc = structured(saved)
            assert doc["outcome"] == "added"
            memory_id = doc["id"]
            assert memory_id in text(saved)

            again = await call(
                s,
                "save_memory",
                text="Run the test suite with `make check`",
                type="procedure",
                project="acme",
            )
            assert (structured(again)["outcome"], structured(again)["id"]) == ("merged", memory_id)

            found = await call(
                s, "recall_memory", query="how do I run the tests?", project="acme", limit=3
            )
            memories = structured(found)["memories"]
            assert memories[0]["id"] == memory_id
            assert memories[0]["type"] == "procedure"
            assert memories[0]["tags"] == ["testing"]
            first_line = text(found).splitlines()[1]
            assert first_line.startswith(f"1. [{memory_id}] (procedure, 0.")
            assert first_line.endswith("Run the test suite with `make check`")

            stats = structured(await call(s, "memory_stats"))
            assert (stats["total_memories"], stats["active_count"]) == (1, 1)

    go(test)


def test_credentials_are_left_out_of_default_recall(home, errlog):
    async def test() -> None:
        async with stdio_session(home, errlog) as s:
            await call(s, "save_memory", text="The staging database is Postgres 16")
            secret = structured(
                await call(
                    s,
                    "save_memory",
                    text="The staging database password is swordfish",
                    sensitivity=3,
                )
            )["id"]

            default = await call(s, "recall_memory", query="staging database password")
            ids = [m["id"] for m in structured(default)["memories"]]
            assert ids and secret not in ids
            assert "swordfish" not in text(default)

            allowed = await call(
                s, "recall_memory", query="staging database password", max_sensitivity=3
            )
            top = structured(allowed)["memories"][0]
            assert (top["id"], top["sensitivity"]) == (secret, 3)
            assert structured(allowed)["max_sensitivity"] == 3

    go(test)


def test_conflict_is_listed_and_resolved(home, errlog):
    async def test() -> None:
        async with stdio_session(home, errlog) as s:
            old = structured(await call(s, "save_memory", text=PORT_8080))["id"]
            saved = await call(s, "save_memory", text=PORT_9090)
            doc = structured(saved)
            assert doc["outcome"] == "conflict"
            (conflict,) = doc["conflicts"]
            assert conflict["existing_id"] == old
            assert 0.15 < conflict["distance"] < 0.35
            assert conflict["conflict_id"] in text(saved)
            assert "resolve_conflict" in text(saved)

            listed = await call(s, "list_conflicts")
            (pending,) = structured(listed)["conflicts"]
            assert pending["id"] == conflict["conflict_id"]
            assert (pending["new"]["id"], pending["existing"]["id"]) == (doc["id"], old)
            assert conflict["conflict_id"] in text(listed)

            resolved = await call(
                s, "resolve_conflict", conflict_id=conflict["conflict_id"], action="keep_new"
            )
            assert (structured(resolved)["status"], structured(resolved)["resolution"]) == (
                "resolved",
                "keep_new",
            )
            assert structured(resolved)["existing"]["status"] == "expired"
            assert structured(await call(s, "list_conflicts"))["conflicts"] == []
            assert "No pending conflicts" in text(await call(s, "list_conflicts"))

            recalled = await call(s, "recall_memory", query="API server port")
            assert [m["text"] for m in structured(recalled)["memories"]] == [PORT_9090]

    go(test)


def test_errors_are_tool_errors_and_the_server_survives(home, errlog):
    async def test() -> None:
        async with stdio_session(home, errlog) as s:
            unknown = await s.call_tool("update_memory", {"id": "0123456789abcdef", "text": "x"})
            assert unknown.is_error
            assert text(unknown) == (
                "Error executing tool update_memory: memory 0123456789abcdef not found"
            )

            empty = await s.call_tool("forget_memory", {})
            assert empty.is_error
            assert "needs at least one of ids, tags or before" in text(empty)

            missing = await s.call_tool(
                "resolve_conflict", {"conflict_id": "nope", "action": "keep_both"}
            )
            assert missing.is_error and "conflict nope not found" in text(missing)

            merge = await s.call_tool(
                "resolve_conflict", {"conflict_id": "nope", "action": "merge"}
            )
            assert merge.is_error and "merge needs the merged text" in text(merge)

            too_many = await s.call_tool("recall_memory", {"query": "x", "limit": 500})
            assert too_many.is_error
            assert "limit" in text(too_many) and "\n" not in text(too_many)

            for result in (unknown, empty, missing, merge, too_many):
                assert "Traceback" not in text(result)
                assert "\n" not in text(result)

            # Still serving.
            saved = await call(s, "save_memory", text="Deploys go out on Tuesdays")
            assert structured(saved)["outcome"] == "added"
            assert structured(await call(s, "memory_stats"))["total_memories"] == 1

    go(test)


def test_two_servers_share_one_store(home, errlog):
    async def test() -> None:
        async with AsyncExitStack() as stack:
            a = await stack.enter_async_context(stdio_session(home, errlog))
            b = await stack.enter_async_context(stdio_session(home, errlog))

            saved = structured(
                await call(a, "save_memory", text="The CI pipeline runs on GitHub Actions")
            )
            found = structured(await call(b, "recall_memory", query="where does CI run?"))
            assert [m["id"] for m in found["memories"]] == [saved["id"]]

            other = structured(
                await call(b, "save_memory", text="Releases are tagged vX.Y.Z on main")
            )
            found = structured(await call(a, "recall_memory", query="how are releases tagged?"))
            assert found["memories"][0]["id"] == other["id"]

            # A delete in one process reaches the other's vector index too.
            await call(a, "forget_memory", ids=[saved["id"]])
            found = structured(await call(b, "recall_memory", query="where does CI run?"))
            assert saved["id"] not in [m["id"] for m in found["memories"]]
            assert structured(await call(b, "memory_stats"))["total_memories"] == 1

    go(test)


# ---------------------------------------------------------------- streamable HTTP


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen[str], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"server exited early: {proc.communicate()[1]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"nothing listening on port {port}")


def test_streamable_http(home):
    port = free_port()
    env = {**os.environ, "MEMLOOM_HOME": str(home)}
    proc = subprocess.Popen(
        [sys.executable, "-c", f"from memloom.mcp import run; run(None, 'http', port={port})"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_port(port, proc)

        token = (home / "api-token").read_text().strip()  # made on the first start

        async def test() -> None:
            url = f"http://127.0.0.1:{port}/mcp"
            async with (
                httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http,
                streamable_http_client(url, http_client=http) as (read, write),
                ClientSession(read, write) as s,
            ):
                await s.initialize()
                tools = (await s.list_tools()).tools
                assert {t.name for t in tools} == set(TOOL_NAMES)
                saved = structured(
                    await call(
                        s,
                        "save_memory",
                        text="The user prefers tabs over spaces",
                        type="preference",
                    )
                )
                found = await call(s, "recall_memory", query="tabs or spaces?")
                assert structured(found)["memories"][0]["id"] == saved["id"]
                assert f"[{saved['id']}] (preference, " in text(found)

        go(test)
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=15)
    assert proc.returncode == 0  # SIGTERM is an orderly stop
    assert out == ""  # logs and notices go to stderr only
    assert f"http://127.0.0.1:{port}/mcp" in err
    assert "Traceback" not in err


def test_http_refuses_a_non_loopback_host(tmp_path):
    with pytest.raises(ConfigError, match="loopback"):
        run(str(tmp_path), "http", host="0.0.0.0")
    with pytest.raises(ConfigError, match="transport"):
        run(str(tmp_path), "sse")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="log level"):
        run(str(tmp_path), log_level="LOUD")  # type: ignore[arg-type]
    assert not (tmp_path / "memloom.db").exists()  # refused before opening the store


# ---------------------------------------------------------------- in process


def test_lifecycle_tools_in_process(tmp_path, backend):
    """build_server with an engine the caller owns; the SDK's in-memory client."""
    from mcp import Client

    engine = memloom.open(str(tmp_path), database_url=backend)
    try:
        server = build_server(engine)

        async def test() -> None:
            async with Client(server) as c:
                first = structured(await c.call_tool("save_memory", {"text": PORT_8080}))["id"]
                updated = await c.call_tool(
                    "update_memory", {"id": first[:6], "text": "The API server listens on 8081"}
                )
                new = structured(updated)
                assert (new["version"], new["root_id"]) == (2, first)

                history = await c.call_tool("memory_history", {"id": new["id"]})
                assert [v["status"] for v in structured(history)["versions"]] == ["active", "stale"]
                assert text(history).splitlines()[1].startswith(f"v2 [{new['id']}] active")

                other = structured(
                    await c.call_tool("save_memory", {"text": "Staging runs on port 8443"})
                )["id"]
                sup = await c.call_tool("supersede_memory", {"old_id": other, "new_id": new["id"]})
                assert structured(sup) == {"superseded": True}
                stale = await c.call_tool(
                    "supersede_memory", {"old_id": other, "new_id": new["id"]}
                )
                assert stale.is_error and "already expired" in text(stale)

                expired = await c.call_tool("expire_memory", {"ids": [new["id"], "unknown"]})
                assert structured(expired) == {"expired": 1}

                tagged = structured(
                    await c.call_tool("save_memory", {"text": "Old scratch note", "tags": ["tmp"]})
                )["id"]
                # (a forget by tags alone is refused: test_a_model_must_name_a_forgets_scope)
                forgot = await c.call_tool("forget_memory", {"tags": ["tmp"], "all": True})
                assert structured(forgot)["removed"] == 1
                assert engine.backend.get(tagged) is None

        go(test)
        assert engine.stats().total_memories == 3  # the caller's engine is still open
    finally:
        engine.close()


@pytest.mark.security
def test_a_model_must_name_a_forgets_scope(tmp_path, backend):
    """MCP's caller is a model, which a prompt injection can steer: a forget by tags or
    time alone is refused (nothing deleted) until it names a project or ``all``. (Over
    HTTP the owner's own call needs no scope, as in Distill: test_distill_guide.py.)"""
    from mcp import Client

    engine = memloom.open(str(tmp_path), database_url=backend)
    try:
        server = build_server(engine)

        async def test() -> None:
            async with Client(server) as c:
                saved = [
                    structured(await c.call_tool("save_memory", args))["id"]
                    for args in (
                        {"text": "Old scratch note", "tags": ["tmp"], "project": "/srv/a"},
                        {"text": "Another scratch note", "tags": ["tmp"], "project": "/srv/b"},
                    )
                ]
                for args in (
                    {"tags": ["tmp"]},
                    {"before": "2100-01-01T00:00:00Z"},
                    {"tags": ["tmp"], "before": "2100-01-01T00:00:00Z"},
                ):
                    refused = await c.call_tool("forget_memory", args)
                    assert refused.is_error and "all=true" in text(refused), args
                assert all(engine.backend.get(i) is not None for i in saved)
                one = await c.call_tool("forget_memory", {"tags": ["tmp"], "project": "/srv/a"})
                assert structured(one)["removed"] == 1
                rest = await c.call_tool("forget_memory", {"tags": ["tmp"], "all": True})
                assert structured(rest)["removed"] == 1
                assert all(engine.backend.get(i) is None for i in saved)

        go(test)
    finally:
        engine.close()


def test_factory_engine_is_opened_lazily_and_closed_with_the_server(tmp_path):
    from mcp import Client

    opened: list[memloom.Memloom] = []

    def factory() -> memloom.Memloom:
        opened.append(memloom.open(str(tmp_path)))
        return opened[-1]

    server = build_server(factory)
    assert opened == []

    async def test() -> None:
        async with Client(server) as c:
            await c.list_tools()
            assert opened == []
            stats = await c.call_tool("memory_stats", {})
            assert structured(stats)["total_memories"] == 0

    go(test)
    assert len(opened) == 1
    with pytest.raises(Exception):  # noqa: B017 - closed: any use fails
        opened[0].stats()


def test_save_and_update_anchor_files_in_the_stdio_folder_never_out_of_it(tmp_path, backend):
    """On stdio the folder the agent started us in is the project: its files the text
    or ``files`` names are anchored, recall shows them; a file out of it is refused.
    Over HTTP (no folder) nothing is read."""
    from mcp import Client

    from tests.test_anchors import RETRY, make_repo

    repo = make_repo(tmp_path)
    engine = memloom.open(str(tmp_path / "home"), database_url=backend)
    try:
        local, remote = build_server(engine, folder=str(repo)), build_server(engine)

        async def test() -> None:
            async with Client(local) as c:
                saved = structured(
                    await c.call_tool("save_memory", {"text": RETRY, "files": ["svc/config.py"]})
                )
                found = structured(await c.call_tool("recall_memory", {"query": RETRY}))
                [hit] = [m for m in found["memories"] if m["id"] == saved["id"]]
                assert {a["path"] for a in hit["anchors"]} == {"svc/net/retry.py", "svc/config.py"}
                answer = await c.call_tool("recall_memory", {"query": RETRY})
                assert "(about svc/" in text(answer)
                for bad in ("../../.ssh/id_rsa", "/etc/passwd", "missing.py"):
                    refused = await c.call_tool(
                        "save_memory", {"text": f"about {bad}", "files": [bad]}
                    )
                    assert refused.is_error, text(refused)
                upd = structured(
                    await c.call_tool(
                        "update_memory",
                        {"id": saved["id"], "text": "load_settings() in svc/config.py"},
                    )
                )
                assert [a.path for a in engine.get(upd["id"]).anchors] == ["svc/config.py"]
                # The code changed in the stdio folder: recall says so, text and document.
                (repo / "svc/config.py").unlink()
                query = {"query": "load_settings() in svc/config.py"}
                found = structured(await c.call_tool("recall_memory", query))
                [hit] = [m for m in found["memories"] if m["id"] == upd["id"]]
                assert hit["stale"] == "file gone: svc/config.py"
                answer = text(await c.call_tool("recall_memory", query))
                assert "May be out of date, the code changed: file gone: svc/config.py" in answer
            async with Client(remote) as c:
                query = {"query": "load_settings() in svc/config.py"}
                found = structured(await c.call_tool("recall_memory", query))
                [hit] = [m for m in found["memories"] if m["id"] == upd["id"]]
                assert hit["stale"] is None  # over HTTP no folder: nothing checked
                other = structured(
                    await c.call_tool("save_memory", {"text": "svc/net/retry.py caps retries"})
                )
                assert engine.get(other["id"]).anchors == []

        go(test)
    finally:
        engine.close()


def test_recall_text_says_a_memory_may_be_out_of_date_and_why():
    from datetime import UTC, datetime

    from memloom import mcp_text
    from memloom.models import RecalledMemory, RecallResponse

    now = datetime.now(UTC)
    common = {
        "type": "fact", "source": None, "tags": [], "relevance": 0.9, "similarity": 0.9,
        "decay_level": 0, "sensitivity": 0, "last_referenced": now, "created_at": now,
        "project": None,
    }  # fmt: skip
    resp = RecallResponse(
        memories=[
            RecalledMemory(id="a", text="retries: MAX_RETRIES", stale="file gone: x.py", **common),
            RecalledMemory(id="b", text="use pnpm", **common),
        ]
    )
    text = mcp_text.recall_text("retries", resp)
    assert "May be out of date, the code changed: file gone: x.py" in text
    assert text.count("May be out of date") == 1
