"""One JSON POST from a hook to memloom's own daemon, on this machine.

``urllib.request`` takes 30-45 ms to import (``http.client`` loads the email
parser and ``ssl``): more than the rest of the prompt hook together, on every
prompt. The daemon is memloom's own HTTP/1.1 server (uvicorn), on a loopback
address, answering JSON with a ``Content-Length``. So the hook speaks exactly that
over a socket, and anything else (a non-2xx status, a chunked or truncated reply,
an address that is not this machine) is an error: the hook logs it and falls back
to its keyword recall.

Before the prompt (and the token) is sent, the process on the port proves it is
memloom's daemon for this data folder: on the same connection, ``GET /health``
with a fresh challenge must come back with the HMAC only the token's holder can
compute (:func:`memloom.access.proof`). After a crash, whatever took the port
learns nothing.

Standard library only: the hook fast path imports it.
"""

from __future__ import annotations

import json
import socket
import time
from typing import Any

#: A recall reply is a few kB; more than this is not memloom's daemon.
MAX_REPLY_BYTES = 8 * 1024 * 1024


class LocalHTTPError(OSError):
    """The daemon's reply was not the one JSON document this client reads."""


class _Reply:
    """One HTTP/1.1 reply read from a socket: status, headers (lower-case), body."""

    __slots__ = ("body", "headers", "status")

    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body


class _Connection:
    """Requests and replies on one socket (keep-alive), within one deadline."""

    def __init__(self, sock: socket.socket, deadline: float, timeout: float) -> None:
        self.sock, self.deadline, self.timeout = sock, deadline, timeout
        self.buffer = b""

    def _more(self) -> bool:
        """Read what the peer sent next; False when it closed the connection."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"no complete reply within {self.timeout} s")
        self.sock.settimeout(left)
        chunk = self.sock.recv(65536)
        self.buffer += chunk
        if len(self.buffer) > MAX_REPLY_BYTES:
            raise LocalHTTPError(f"reply larger than {MAX_REPLY_BYTES} bytes")
        return bool(chunk)

    def exchange(self, request: bytes) -> _Reply:
        self.sock.sendall(request)
        while b"\r\n\r\n" not in self.buffer:
            if not self._more():
                raise LocalHTTPError("the reply ended before its headers did")
        head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        status, headers = _parse_head(head)
        length = headers.get("content-length", "")
        while length.isdigit() and len(self.buffer) < int(length) and self._more():
            pass
        if not length.isdigit() or int(length) != len(self.buffer):
            raise LocalHTTPError(
                f"reply of {len(self.buffer)} bytes, Content-Length {length or 'none'}"
            )
        body, self.buffer = self.buffer, b""
        return _Reply(status, headers, body)


def _request(method: str, path: str, host_header: str, headers: list[str], data: bytes) -> bytes:
    head = [f"{method} {path} HTTP/1.1", f"Host: {host_header}", *headers]
    if data or method == "POST":
        head.append(f"Content-Length: {len(data)}")
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + data


def post_json(
    host: str,
    port: int,
    path: str,
    body: Any,
    *,
    timeout: float,
    token: str | None = None,
    verify: bool = True,
) -> Any:
    """POST ``body`` as JSON to ``http://host:port/path``; the decoded JSON reply.
    ``timeout`` bounds the whole exchange, not each read. With ``token`` and ``verify``
    the daemon proves it holds ``token`` before anything else is sent."""
    from memloom.daemon_record import is_loopback

    if not is_loopback(host) and host not in ("0.0.0.0", "::"):
        raise LocalHTTPError(f"{host} is not this machine: the hook only asks a local daemon")
    connect_to = "127.0.0.1" if host == "0.0.0.0" else "::1" if host == "::" else host.strip("[]")
    data = json.dumps(body).encode()
    shown = f"[{connect_to}]" if ":" in connect_to else connect_to
    host_header = f"{shown}:{port}"
    deadline = time.monotonic() + timeout
    with socket.create_connection((connect_to, port), timeout=timeout) as sock:
        conn = _Connection(sock, deadline, timeout)
        if token and verify:
            from memloom.access import CHALLENGE_HEADER, PROOF_HEADER, new_challenge, proof_matches

            challenge = new_challenge()
            hello = conn.exchange(
                _request("GET", "/health", host_header, [f"{CHALLENGE_HEADER}: {challenge}"], b"")
            )
            answer = hello.headers.get(PROOF_HEADER, "")
            if hello.status != 200 or not proof_matches(token, challenge, answer):
                raise LocalHTTPError(
                    f"the process on port {port} is not this data folder's memloom daemon "
                    "(it did not prove it holds the token): nothing was sent to it"
                )
        headers = [
            "Content-Type: application/json",
            "Accept: application/json",
            "Connection: close",
        ]
        if token:
            headers.append(f"Authorization: Bearer {token}")
        reply = conn.exchange(_request("POST", path, host_header, headers, data))
    if not 200 <= reply.status < 300:
        raise LocalHTTPError(f"HTTP {reply.status}: {reply.body[:200].decode('utf-8', 'replace')}")
    return json.loads(reply.body)


def _parse_head(head: bytes) -> tuple[int, dict[str, str]]:
    status, *lines = head.decode("latin-1").split("\r\n")
    parts = status.split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise LocalHTTPError(f"not an HTTP/1.x status line: {status[:80]!r}")
    headers = {}
    for line in lines:
        name, colon, value = line.partition(":")
        if colon:
            headers[name.strip().lower()] = value.strip()
    if "chunked" in headers.get("transfer-encoding", "").lower():
        raise LocalHTTPError("a chunked reply (memloom's daemon sends a Content-Length)")
    return int(parts[1]), headers
