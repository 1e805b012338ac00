"""The hook fast path stays light: ``memloom hook notify|prompt-recall`` never imports
numpy or pydantic (they cost more start-up time than the hook's whole budget), nor
``dataclasses`` (with ``inspect`` and each class's generated methods, ~25 ms of a
~75 ms hook process: the types the hooks use are :mod:`memloom.values` classes).

Each hook runs in a fresh interpreter exactly as the installed hook starts it
(``memloom._entry.main`` with the documented stdin payload and a temporary
MEMLOOM_HOME); afterwards the script reports ``sorted(sys.modules)``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

import memloom
from tests.support.processes import run_python

#: ``typing`` too (~3 ms): hook-path modules import it only under TYPE_CHECKING. (With a
#: config.toml, ``tomllib`` loads it: the tests here run without one.)
HEAVY = {"numpy", "pydantic", "dataclasses", "inspect", "typing"}

#: Runs one hook the way ``memloom hook …`` does, then reports what it imported.
SCRIPT = """
import json, os, sys
from memloom import _entry
try:
    _entry.main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
else:
    code = None
with open(os.environ["EVIDENCE"], "w") as fh:
    json.dump({"exit": code, "modules": sorted(sys.modules)}, fh)
"""


def run_hook(
    tmp_path: Path, home: Path, claude: Path, name: str, payload: dict, *extra: str
) -> dict:
    evidence = tmp_path / f"{name}.json"
    res = run_python(
        ["-c", SCRIPT, "hook", name, *extra],
        payload,
        MEMLOOM_HOME=str(home),
        CLAUDE_CONFIG_DIR=str(claude),
        EVIDENCE=str(evidence),
        HOME=str(tmp_path),  # the other agents' settings: none
    )
    doc = json.loads(evidence.read_text())
    doc["stdout"] = res.stdout
    return doc


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    home, claude = tmp_path / "home", tmp_path / "claude"
    (claude / "projects" / "-home-dev-acme").mkdir(parents=True)
    return home, claude


def heavy(modules: list[str], avoided: set[str] = HEAVY) -> list[str]:
    return [m for m in modules if m.split(".")[0] in avoided]


def test_notify_hook_imports_neither_numpy_nor_pydantic(tmp_path, dirs):
    home, claude = dirs
    path = claude / "projects" / "-home-dev-acme" / f"{uuid.uuid4()}.jsonl"
    path.write_text('{"type":"user","message":{"content":"hi"},"cwd":"/home/dev/acme"}\n')
    payload = {  # what Claude Code's SessionEnd hook sends
        "session_id": path.stem,
        "transcript_path": str(path),
        "cwd": "/home/dev/acme",
        "hook_event_name": "SessionEnd",
        "reason": "prompt_input_exit",
    }
    doc = run_hook(tmp_path, home, claude, "notify", payload)
    assert doc["exit"] == 0 and doc["stdout"] == ""
    assert "memloom.capture.notify" in doc["modules"]  # the hook really ran its path
    assert "memloom.agents.claude_code.payload" in doc["modules"]
    assert heavy(doc["modules"]) == []
    assert (home / "capture.db").exists()  # and queued the session


@pytest.mark.parametrize(
    "extra",
    [
        (),
        ("--agent", "claude-code", "--plugin", memloom.__version__),
        ("--agent", "codex", "--plugin", memloom.__version__),
        ("--agent", "gemini", "--plugin", memloom.__version__),
        ("--agent", "copilot", "--plugin", memloom.__version__),
        ("--agent", "qwen", "--plugin", memloom.__version__),
    ],
    ids=[
        "connect",
        "plugin-claude-code",
        "plugin-codex",
        "plugin-gemini",
        "plugin-copilot",
        "plugin-qwen",
    ],
)
def test_prompt_recall_hook_imports_neither_numpy_nor_pydantic(tmp_path, dirs, extra):
    """Also as the agent plugin's hook runs it (``--plugin``: it first reads the agent's
    settings for connect's hooks)."""
    home, claude = dirs
    m = memloom.open(home=str(home), database_url=str(home / "memloom.db"))
    try:
        m.store(
            {
                "entries": [
                    {"text": "The deploy script for acme lives in tools/deploy.sh", "type": "fact"}
                ]
            }
        )
    finally:
        m.close()
    payload = {  # what Claude Code's UserPromptSubmit hook sends
        "session_id": str(uuid.uuid4()),
        "transcript_path": str(claude / "projects" / "-home-dev-acme" / "x.jsonl"),
        "cwd": "/home/dev/acme",
        "hook_event_name": "UserPromptSubmit",
        "prompt": "where does the deploy script live?",
    }
    doc = run_hook(tmp_path, home, claude, "prompt-recall", payload, *extra)
    assert doc["exit"] == 0
    assert "tools/deploy.sh" in doc["stdout"]
    assert ("memloom.capture.plugin" in doc["modules"]) == bool(
        extra
    )  # the keyword fallback found the memory
    assert "memloom.capture.prompt" in doc["modules"]
    # A plugin's hook first reads the agent's settings through the hook installers
    # (their dataclasses): only connect's hooks are kept free of them so far.
    assert heavy(doc["modules"], {"numpy", "pydantic"} if extra else HEAVY) == []
    # It compares memloom's version with the plugin's: read from the metadata file, not
    # through importlib.metadata (20-45 ms of imports: memloom.version).
    assert ("memloom.version" in doc["modules"]) == bool(extra)
    assert "importlib.metadata" not in doc["modules"]


def test_prompt_recall_asks_the_daemon_without_loading_an_http_library(tmp_path, dirs):
    """urllib.request (http.client, email, ssl) costs 30-45 ms to import: more than the
    rest of the hook. The hook asks the local daemon over a socket of its own."""
    import socket
    import threading

    home, claude = dirs
    home.mkdir(parents=True)
    answer = {"memories": [{"id": "a1b2", "text": "Staging listens on port 5433", "type": "fact"}]}
    body = json.dumps(answer).encode()
    server = socket.create_server(("127.0.0.1", 0))
    asked: list[bytes] = []

    token = "daemon-token-of-this-home"
    (home / "api-token").write_text(token)
    (home / "api-token").chmod(0o600)

    def serve() -> None:
        from memloom.access import proof

        conn, _ = server.accept()
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:  # first the hook's check: GET /health
                data += conn.recv(65536)
            challenge = data.split(b"x-memloom-challenge: ")[1].split(b"\r\n")[0].decode()
            conn.sendall(
                "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
                f"x-memloom-proof: {proof(token, challenge)}\r\n\r\n{{}}".encode()
            )
            data = b""
            while b'"query"' not in data or not data.rstrip().endswith(b"}"):
                data += conn.recv(65536)
            asked.append(data)
            head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n"
            conn.sendall(head.encode() + body)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    port = server.getsockname()[1]
    record = {"pid": os.getpid(), "host": "127.0.0.1", "port": port}
    (home / "daemon.json").write_text(json.dumps({**record, "url": f"http://127.0.0.1:{port}"}))
    payload = {
        "session_id": str(uuid.uuid4()),
        "cwd": "/home/dev/acme",
        "hook_event_name": "UserPromptSubmit",
        "prompt": "which port does staging listen on?",
    }
    try:
        doc = run_hook(tmp_path, home, claude, "prompt-recall", payload)
    finally:
        server.close()
    assert asked and asked[0].startswith(b"POST /v1/memory/recall HTTP/1.1")
    assert "5433" in doc["stdout"]  # the daemon's answer, not the (empty) keyword fallback
    loaded = set(doc["modules"])
    assert not loaded & {"urllib.request", "http.client", "ssl", "email.parser"}


@pytest.mark.parametrize("agent", sorted(__import__("memloom.agents").agents.ADAPTERS))
def test_each_agents_hook_modules_load_without_dataclasses(agent):
    """What ``hook notify`` / ``prompt-recall`` / ``session-start`` load for any agent:
    its adapter, its payload module, the queue, the scope, the prompt's SQL."""
    package = __import__("memloom.agents").agents.ADAPTERS[agent].partition(":")[0]
    modules = [
        package,
        "memloom.capture.hooks_cli",
        "memloom.capture.prompt",
        "memloom.capture.notify",
        "memloom.capture.queues",
        "memloom.capture.queue",
        "memloom.capture.scope",
        "memloom.location",
    ]
    payload = f"{package}.payload"
    if __import__("importlib.util").util.find_spec(payload) is not None:
        modules.append(payload)
    code = f"import sys; import {', '.join(modules)}; print(sorted(set(sys.modules) & {HEAVY}))"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"


@pytest.mark.parametrize("agent", ["claude-code", "gemini", "qwen"])
def test_read_hook_imports_neither_numpy_nor_pydantic(tmp_path, dirs, agent):
    """``memloom hook read``: the fence, the project's repository and a read-only SQLite
    lookup, nothing more (no engine, no model, no daemon)."""
    home, claude = dirs
    repo = tmp_path / "acme"
    (repo / "tools").mkdir(parents=True)
    (repo / "tools" / "deploy.sh").write_text("echo deploy\n")
    m = memloom.open(home=str(home), database_url=str(home / "memloom.db"))
    try:
        request = {"text": "tools/deploy.sh needs the VPN up", "project": str(repo)}
        m.save(request, folder=str(repo))
    finally:
        m.close()
    payload = {  # the shape the three agents send (tests/fixtures/hooks/reads)
        "session_id": str(uuid.uuid4()),
        "cwd": str(repo),
        "hook_event_name": "AfterTool" if agent == "gemini" else "PostToolUse",
        "tool_name": "Read" if agent == "claude-code" else "read_file",
        "tool_input": {"file_path": str(repo / "tools" / "deploy.sh")},
        "tool_response": {},
    }
    doc = run_hook(tmp_path, home, claude, "read", payload, "--agent", agent)
    assert doc["exit"] == 0
    assert "needs the VPN up" in doc["stdout"]
    assert "memloom.capture.reads" in doc["modules"]
    assert heavy(doc["modules"]) == []
    assert "memloom.agents.base" not in doc["modules"]  # the fence alone, not discovery
