"""The running daemon's record, ``$MEMLOOM_HOME/daemon.json``, and what reads it.

A stdlib-only leaf: the CLI, ``memloom status``, the MCP server and the daemon
itself all need to find (or stop) the daemon and to tell a loopback address,
and none of them should import the HTTP server to do it.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from memloom.errors import DaemonError

TYPE_CHECKING = False  # typing's, without loading typing (~3 ms): the hooks load this module
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "DAEMON_FILE",
    "daemon_file",
    "is_loopback",
    "reachable_url",
    "read_daemon",
    "remove_daemon_record",
    "stop_daemon",
    "write_daemon_record",
]

DAEMON_FILE = "daemon.json"


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, IPv6 possibly in brackets) is this machine."""
    if host.lower() == "localhost" or host in ("127.0.0.1", "::1", "[::1]"):
        return True  # the daemon's own addresses, without loading ipaddress (hooks)
    import ipaddress

    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def reachable_url(url: str) -> str:
    """``url`` with a wildcard bind (``0.0.0.0``, ``[::]``) replaced by the loopback
    address of its family: where a browser on this machine reaches the daemon."""
    return url.replace("[::]", "[::1]").replace("0.0.0.0", "127.0.0.1")


def daemon_file(home: Path) -> Path:
    return home / DAEMON_FILE


def read_daemon(home: Path) -> dict[str, Any] | None:
    """The running daemon's record, or None (a stale record is removed)."""
    path = daemon_file(home)
    try:
        info = json.loads(path.read_text())
        pid = int(info["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        path.unlink(missing_ok=True)
        return None
    except PermissionError:
        # The pid is another user's process now (ours crashed and the number was
        # reused): not our daemon, whatever listens on its port.
        return None
    if not _ours(pid):
        return None
    return info


def _ours(pid: int) -> bool:
    """Whether ``pid`` runs as this user (root may signal anyone, so ``kill`` alone cannot
    tell); where there is no /proc, what ``kill`` said stands."""
    try:
        return os.stat(f"/proc/{pid}").st_uid == os.geteuid()
    except OSError:
        return True


def write_daemon_record(home: Path, record: dict[str, Any]) -> Path:
    """Write the record atomically (mode 0600: it names the address the hooks post to)."""
    path = daemon_file(home)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump(record, fh)
    os.replace(tmp, path)
    return path


def remove_daemon_record(home: Path, pid: int) -> None:
    """Remove the record if it is still ``pid``'s (a newer daemon's is left alone).

    Raises OSError or ValueError when it is already gone or unreadable.
    """
    path = daemon_file(home)
    if json.loads(path.read_text()).get("pid") == pid:
        path.unlink()


def stop_daemon(home: Path, timeout: float = 15.0) -> dict[str, Any] | None:
    """Ask the daemon to stop (SIGTERM) and wait for it; returns its record or None."""
    info = read_daemon(home)
    if info is None:
        return None
    pid = int(info["pid"])
    try:
        import signal  # here, not at the top: the hooks import this module

        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        daemon_file(home).unlink(missing_ok=True)
        return info
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        # A clean exit removes the record; a crash leaves it behind with a dead pid.
        if not daemon_file(home).exists() or _gone(pid):
            daemon_file(home).unlink(missing_ok=True)
            return info
        time.sleep(0.05)
    raise DaemonError(f"memloom daemon (pid {pid}) did not stop within {timeout:.0f} s")


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    try:  # a zombie (exited, not yet reaped by its parent) is gone too
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False
