"""One JSON POST from a hook to memloom's own daemon, on this machine.

``urllib.request`` takes 30-45 ms to import (``http.client`` loads the email
parser and ``ssl``): more than the rest of the prompt hook together, on every
prompt. The daemon is memloom's own HTTP/1.1 server (uvicorn), on a loopback
address, answering JSON with a ``Content-Length``. So the hook speaks exactly that
over a socket, and anything else (a non-2xx status, a chunked or truncated reply,
an address that is not this machine) is an error: the hook logs it and falls back
to its keyword recall.

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


def post_json(
    host: str, port: int, path: str, body: Any, *, timeout: float, token: str | None = None
) -> Any:
    """POST ``body`` as JSON to ``http://host:port/path``; the decoded JSON reply.
    ``timeout`` bounds the whole exchange, not each read."""
    from memloom.daemon_record import is_loopback

    if not is_loopback(host) and host not in ("0.0.0.0", "::"):
        raise LocalHTTPError(f"{host} is not this machine: the hook only asks a local daemon")
    connect_to = "127.0.0.1" if host == "0.0.0.0" else "::1" if host == "::" else host.strip("[]")
    data = json.dumps(body).encode()
    shown = f"[{connect_to}]" if ":" in connect_to else connect_to
    head = [
        f"POST {path} HTTP/1.1",
        f"Host: {shown}:{port}",
        "Content-Type: application/json",
        "Accept: application/json",
        f"Content-Length: {len(data)}",
        "Connection: close",
    ]
    if token:
        head.append(f"Authorization: Bearer {token}")
    request = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + data
    deadline = time.monotonic() + timeout
    chunks: list[bytes] = []
    size = 0
    with socket.create_connection((connect_to, port), timeout=timeout) as sock:
        sock.sendall(request)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no complete reply within {timeout} s")
            sock.settimeout(left)
            chunk = sock.recv(65536)
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_REPLY_BYTES:
                raise LocalHTTPError(f"reply larger than {MAX_REPLY_BYTES} bytes")
            chunks.append(chunk)
    return _decode(b"".join(chunks))


def _decode(raw: bytes) -> Any:
    head, sep, payload = raw.partition(b"\r\n\r\n")
    if not sep:
        raise LocalHTTPError("the reply ended before its headers did")
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
    length = headers.get("content-length", "")
    if not length.isdigit() or int(length) != len(payload):
        raise LocalHTTPError(f"reply of {len(payload)} bytes, Content-Length {length or 'none'}")
    code = int(parts[1])
    if not 200 <= code < 300:
        raise LocalHTTPError(f"HTTP {code}: {payload[:200].decode('utf-8', 'replace')}")
    return json.loads(payload)
