"""``memloom mcp`` on stdio answers the handshake from its cache (memloom.mcp_stdio).

Real processes: the installed console script, spawned by the MCP SDK's own stdio
client, as an agent spawns it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from memloom.mcp_stdio import CACHE_FILE, AnswerCache, Session, cache_path, fingerprint, static_key

SCRIPT = Path(sys.executable).with_name("memloom")


def command() -> tuple[str, list[str]]:
    if SCRIPT.exists():
        return str(SCRIPT), ["mcp"]
    return sys.executable, ["-m", "memloom._entry", "mcp"]


def go(
    test: Callable[[ClientSession], Awaitable[Any]],
    home: Path,
    err: Path,
    cache: Path | None = None,
    shipped: str | None = "",
) -> Any:
    """``test`` with a client session on a fresh ``memloom mcp`` (its import log in
    ``err``); the handshake cache in ``cache``, by default beside ``home``; the shipped
    answers ``shipped`` (``MEMLOOM_MCP_SHIPPED``; "": none, so a first start learns,
    None: the package's own)."""
    cmd, args = command()
    env = {
        "MEMLOOM_HOME": str(home),
        "XDG_CACHE_HOME": str(cache or cached(home).parents[1]),
        "PATH": os.environ["PATH"],
        "PYTHONPROFILEIMPORTTIME": "1",
    }
    if shipped is not None:
        env["MEMLOOM_MCP_SHIPPED"] = shipped
    box: list[Any] = []

    async def main() -> None:
        with anyio.fail_after(60), err.open("w") as errlog:
            params = StdioServerParameters(command=cmd, args=args, env=env)
            async with stdio_client(params, errlog=errlog) as (r, w), ClientSession(r, w) as s:
                await s.initialize()
                box.append(await test(s))

    anyio.run(main)
    return box[0]


def cached(home: Path) -> Path:
    """The handshake cache the servers of ``go(…, home, …)`` keep."""
    return home.parent / "cache" / "memloom" / CACHE_FILE


def imported(err: Path) -> set[str]:
    """The modules the server process imported (``-X importtime`` lines on stderr)."""
    names = set()
    for line in err.read_text().splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


async def list_tools(s: ClientSession) -> list[dict[str, Any]]:
    return [t.model_dump(mode="json") for t in (await s.list_tools()).tools]


@pytest.mark.slow
def test_a_second_start_answers_the_handshake_without_loading_the_sdk(tmp_path):
    home = tmp_path / "home"
    cold = go(list_tools, home, tmp_path / "cold.log")
    assert "mcp_types" in imported(tmp_path / "cold.log")  # the SDK answered, and taught
    cache = json.loads(cached(home).read_text())
    assert cache["fingerprint"] == fingerprint()
    assert any(k.endswith(" tools/list") for k in cache["answers"])

    warm = go(list_tools, home, tmp_path / "warm.log")
    assert warm == cold  # the same tools, schemas and descriptions
    modules = imported(tmp_path / "warm.log")
    assert "memloom.mcp_stdio" in modules
    assert not {"mcp", "mcp_types", "pydantic", "numpy", "memloom.engine"} & modules
    assert not (home / "memloom.db").exists()  # nothing asked of the store: not opened


@pytest.mark.slow
def test_a_data_folder_that_cannot_be_written_does_not_slow_the_start(tmp_path):
    """The cache lives in the user's cache folder, not the data folder: a data folder
    that cannot be made still gets the fast start (its tool calls then fail as tool
    errors, one line each, and the server keeps serving)."""
    home = tmp_path / "home"
    go(list_tools, home, tmp_path / "cold.log")
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    unusable = blocker / "home"  # even root cannot make this folder

    async def work(s: ClientSession) -> list[Any]:
        tools = await list_tools(s)
        stats = await s.call_tool("memory_stats", {})
        again = await s.call_tool("memory_stats", {})
        return [tools, stats, again]

    cache = cached(home).parents[1]
    assert len(go(list_tools, unusable, tmp_path / "fast.log", cache)) == 10
    assert "mcp_types" not in imported(tmp_path / "fast.log")  # answered from the cache
    tools, stats, again = go(work, unusable, tmp_path / "warm.log", cache)
    assert len(tools) == 10
    assert stats.is_error and again.is_error  # the store cannot be opened there
    assert "Traceback" not in (tmp_path / "warm.log").read_text()


@pytest.mark.slow
def test_a_first_start_in_an_empty_cache_folder_answers_from_the_package(tmp_path):
    """The first session after a plugin install: no cache yet, and no memloom code ran
    before. The answers shipped with the package serve the handshake, the SDK unloaded,
    and they are the SDK's own answers (the same tools as a learnt start lists)."""
    home = tmp_path / "home"
    shipped = go(list_tools, home, tmp_path / "shipped.log", shipped=None)
    modules = imported(tmp_path / "shipped.log")
    assert not {"mcp", "mcp_types", "pydantic", "numpy", "memloom.engine"} & modules
    # The answers are keyed by memloom's version, read off the metadata file: not
    # through importlib.metadata (20-45 ms of imports at every start).
    assert "memloom.version" in modules and "importlib.metadata" not in modules
    learnt = go(list_tools, tmp_path / "other", tmp_path / "learnt.log")
    assert "mcp_types" in imported(tmp_path / "learnt.log")
    assert shipped == learnt and len(shipped) == 10


def test_the_shipped_answers_are_what_the_sdk_answers_now(tmp_path):
    """They cannot drift: remade from the SDK server here, they equal the package's file,
    key and answers (``python scripts/mcp_handshake.py`` remakes it)."""
    from memloom.mcp_stdio import SHIPPED, shipped_key, write_shipped

    made = write_shipped(tmp_path / "made.json")
    shipped = json.loads(SHIPPED.read_text())
    assert shipped["key"] == shipped_key() == made["key"], (
        "src/memloom/mcp_handshake.json is stale: run python scripts/mcp_handshake.py"
    )
    assert shipped["answers"] == made["answers"]
    versions = {k.split(" ", 1)[1] for k in made["answers"] if k.startswith("initialize ")}
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    assert versions == set(HANDSHAKE_PROTOCOL_VERSIONS)


def test_shipped_answers_made_from_other_code_are_not_used(tmp_path, monkeypatch):
    from memloom.mcp_stdio import SHIPPED, shipped_answers

    doc = json.loads(SHIPPED.read_text())
    assert shipped_answers() == doc["answers"]
    for change in ({"code": "0" * 32}, {"mcp": "1.0.0"}, {"memloom": "0.0.1"}):
        other = tmp_path / "other.json"
        other.write_text(json.dumps({**doc, "key": {**doc["key"], **change}}))
        monkeypatch.setenv("MEMLOOM_MCP_SHIPPED", str(other))
        assert shipped_answers() == {}, change
    for broken in ("{nope", "[1]", '{"key": {}}'):
        other.write_text(broken)
        assert shipped_answers() == {}
    monkeypatch.setenv("MEMLOOM_MCP_SHIPPED", "")
    assert shipped_answers() == {}


def test_the_cache_lives_in_the_users_cache_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_path() == tmp_path / "xdg" / "memloom" / CACHE_FILE
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/not/allowed")
    monkeypatch.setenv("HOME", str(tmp_path / "me"))
    assert cache_path() == tmp_path / "me" / ".cache" / "memloom" / CACHE_FILE


@pytest.mark.slow
def test_a_tool_call_hands_the_session_to_the_sdk_server(tmp_path):
    home = tmp_path / "home"
    go(list_tools, home, tmp_path / "cold.log")

    async def work(s: ClientSession) -> list[Any]:
        saved = await s.call_tool(
            "save_memory", {"text": "The shop's staging database listens on port 5433"}
        )
        found = await s.call_tool("recall_memory", {"query": "staging database port"})
        tools = await list_tools(s)
        bad = await s.call_tool("recall_memory", {"query": ""})
        pong = await s.send_ping()
        return [saved, found, tools, bad, pong]

    saved, found, tools, bad, pong = go(work, home, tmp_path / "warm.log")
    assert not saved.is_error and not found.is_error
    assert "5433" in found.content[0].text
    assert [t["name"] for t in tools][:2] == ["save_memory", "recall_memory"]
    assert bad.is_error  # errors still come back as tool errors, one line
    assert pong is not None
    log = (tmp_path / "warm.log").read_text()
    assert "Traceback" not in log
    assert "mcp_types" in imported(tmp_path / "warm.log")


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["stale", "corrupt", "not an object"])
def test_a_stale_or_broken_cache_is_a_slow_start_and_is_renewed(tmp_path, damage):
    home = tmp_path / "home"
    path = cached(home)
    path.parent.mkdir(parents=True)
    if damage == "stale":  # another memloom or SDK wrote it: its answers may not hold
        path.write_text(json.dumps({"fingerprint": "0.0.1|old", "answers": {"x": 1}}))
    else:
        path.write_text("{not json" if damage == "corrupt" else "[1, 2]")
    tools = go(list_tools, home, tmp_path / "err.log")
    assert len(tools) == 10
    assert "mcp_types" in imported(tmp_path / "err.log")
    assert json.loads(path.read_text())["fingerprint"] == fingerprint()


def test_unusable_settings_fail_before_anything_is_served(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text("[embedder\nname = 1\n")
    cmd, args = command()
    run = subprocess.run(
        [cmd, *args],
        input=b"",
        capture_output=True,
        env={**os.environ, "MEMLOOM_HOME": str(home)},
        timeout=60,
    )
    assert run.returncode == 1
    assert run.stderr.decode().startswith("memloom mcp: error: ")
    assert "Traceback" not in run.stderr.decode()


# ---------------------------------------------------------------- Session, in process


class Recorder:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def readline(self) -> bytes:
        return b""

    def send(self, data: bytes) -> None:
        self.sent.append(json.loads(data))

    def answer(self, request_id: Any, result: Any) -> None:
        self.sent.append({"id": request_id, "result": result})


def line(**message: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n"


INIT = line(id=0, method="initialize", params={"protocolVersion": "2025-11-25"})
LIST = line(id=1, method="tools/list")


def learnt_cache(tmp_path: Path) -> AnswerCache:
    """A cache taught as the SDK's answers teach it, through ``Session.passes``."""
    cache = AnswerCache(tmp_path / CACHE_FILE, "stamp")
    teach = Session(Recorder(), cache)  # type: ignore[arg-type]
    for ask, answer in [
        (INIT, {"protocolVersion": "2025-11-25", "serverInfo": {"name": "memloom"}}),
        (LIST, {"tools": [{"name": "save_memory"}]}),
    ]:
        teach.asking(ask)
        reply = {"jsonrpc": "2.0", "id": json.loads(ask)["id"], "result": answer}
        assert teach.passes(json.dumps(reply).encode())
    return AnswerCache(tmp_path / CACHE_FILE, "stamp")


def test_the_cache_answers_and_the_replayed_initialize_answer_is_dropped(tmp_path):
    wire = Recorder()
    session = Session(wire, learnt_cache(tmp_path))  # type: ignore[arg-type]
    assert session.take(INIT)
    assert session.take(line(method="notifications/initialized"))
    assert session.take(LIST)
    assert [m["id"] for m in wire.sent] == [0, 1]
    assert wire.sent[1]["result"] == {"tools": [{"name": "save_memory"}]}
    call = line(id=2, method="tools/call", params={"name": "memory_stats"})
    assert not session.take(call)  # the SDK's, with the handshake replayed first
    assert [json.loads(x)["method"] for x in session.replay] == [
        "initialize",
        "notifications/initialized",
    ]
    # The SDK server answers the replayed initialize: the client has that answer already.
    for raw in [*session.replay, call]:
        session.asking(raw)
    assert not session.passes(json.dumps({"jsonrpc": "2.0", "id": 0, "result": {}}).encode())
    assert session.passes(json.dumps({"jsonrpc": "2.0", "id": 2, "result": {}}).encode())
    # A later answer with the same id (a new request that reused it) goes through.
    assert session.passes(json.dumps({"jsonrpc": "2.0", "id": 0, "result": {}}).encode())


@pytest.mark.parametrize(
    "request_line",
    [
        line(id=0, method="initialize", params={"protocolVersion": "2099-01-01"}),
        line(id=0, method="ping"),  # allowed before initialize; the SDK's to answer
        b"{not json\n",
        b"[1, 2]\n",
    ],
)
def test_what_the_cache_cannot_answer_goes_to_the_sdk(tmp_path, request_line):
    wire = Recorder()
    session = Session(wire, learnt_cache(tmp_path))  # type: ignore[arg-type]
    assert not session.take(request_line)
    assert wire.sent == []


def test_only_first_pages_of_the_list_requests_are_cached():
    assert static_key({"id": 1, "method": "tools/list"}, "v") == "v tools/list"
    assert static_key({"id": 1, "method": "tools/list", "params": {"_meta": {}}}, "v")
    assert static_key({"id": 1, "method": "tools/list", "params": {"cursor": "2"}}, "v") is None
    assert static_key({"id": 1, "method": "tools/call"}, "v") is None
    assert static_key({"method": "tools/list"}, "v") is None  # a notification


def test_an_unwritable_cache_is_reported_and_not_fatal(tmp_path, capsys):
    blocked = tmp_path / "file"
    blocked.write_text("")
    cache = AnswerCache(blocked / CACHE_FILE, "stamp")  # its folder is a file
    cache.learn("k", {"a": 1})
    assert cache.get("k") == {"a": 1}
    assert "cannot keep the handshake cache" in capsys.readouterr().err
