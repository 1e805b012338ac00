"""A real ``memloom serve`` process on a free loopback port, per test module."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest


@dataclass
class Daemon:
    url: str
    home: Path
    claude: Path
    process: subprocess.Popen[bytes]
    token: str | None = None
    lines: list[str] = field(default_factory=list)

    @property
    def log(self) -> str:
        """Everything the daemon wrote to stderr so far."""
        return "\n".join(self.lines)

    def client(self, token: str | None = None) -> httpx.Client:
        headers = (
            {"Authorization": f"Bearer {token or self.token}"} if (token or self.token) else {}
        )
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)


def start_daemon(
    home: Path,
    claude: Path,
    *args: str,
    env: dict[str, str] | None = None,
    make_home: bool = True,
) -> Daemon:
    """``memloom serve`` on a free loopback port; ``make_home=False`` leaves the data
    folder for the daemon to make."""
    if make_home:
        home.mkdir(parents=True, exist_ok=True)
    (claude / "projects").mkdir(parents=True, exist_ok=True)
    full_env = {
        **os.environ,
        "MEMLOOM_HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(claude),
        "MEMLOOM_LLM": "offline",
        # The other agents' own folders (their memories, which the sweep reads) are a
        # sandbox's, never this machine's user's.
        "HOME": str(claude.parent / "user-home"),
        **(env or {}),
    }
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "MEMLOOM_API_TOKEN"):
        if name not in (env or {}):
            full_env.pop(name, None)
    process = subprocess.Popen(
        [sys.executable, "-m", "memloom.cli", "serve", "--port", "0", *args],
        env=full_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    # Drained all along: a full pipe would block the daemon's logging, and with it
    # its event loop.
    lines: list[str] = []
    drain = threading.Thread(target=_drain, args=(process.stderr, lines), daemon=True)
    drain.start()
    record = home / "daemon.json"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            drain.join(timeout=5)
            raise RuntimeError("memloom serve exited: " + "\n".join(lines))
        if record.exists():
            try:
                info = json.loads(record.read_text())
                httpx.get(info["url"] + "/health", timeout=2).raise_for_status()
                token = full_env.get("MEMLOOM_API_TOKEN") or served_token(home, args)
                return Daemon(info["url"], home, claude, process, token=token, lines=lines)
            except (ValueError, httpx.HTTPError):
                pass
        time.sleep(0.1)
    process.kill()
    raise RuntimeError("memloom serve did not come up within 60 s")


def served_token(home: Path, args: tuple[str, ...]) -> str | None:
    """The token the daemon serves with: its ``--token-file``, else the one it made
    (None if it made none: a daemon older than the owner-only contract)."""
    named = args[args.index("--token-file") + 1] if "--token-file" in args else None
    path = Path(named or home / "api-token")
    return path.read_text().strip() if path.exists() else None


def _drain(stream: Any, lines: list[str]) -> None:
    for raw in stream:
        lines.append(raw.decode("utf-8", "replace").rstrip("\n"))


def stop(daemon: Daemon) -> None:
    if daemon.process.poll() is None:
        daemon.process.terminate()
        try:
            daemon.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            daemon.process.kill()


def db_env(url: str | None) -> dict[str, str]:
    """The environment that points ``memloom serve`` at ``url`` (None: the home's SQLite)."""
    return {"MEMLOOM_DATABASE_URL": url} if url else {}


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def served_database(request) -> Iterator[str | None]:
    """The database a module's daemon serves: None (SQLite in its home) or a fresh
    PostgreSQL database for the module."""
    if request.param == "sqlite":
        yield None
        return
    server = request.getfixturevalue("postgres_server")
    name, url = server.create_database()
    try:
        yield url
    finally:
        server.drop_database(name)


@pytest.fixture(scope="module")
def daemon(tmp_path_factory, served_database) -> Iterator[Daemon]:
    base = tmp_path_factory.mktemp("served")
    d = start_daemon(base / "home", base / "claude", env=db_env(served_database))
    yield d
    stop(d)


@pytest.fixture
def api(daemon) -> Iterator[httpx.Client]:
    with daemon.client() as client:
        yield client
