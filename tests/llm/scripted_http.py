"""A scripted JSON-over-HTTP server on 127.0.0.1 for the LLM provider tests.

Like ``tests/support/openai_server.py`` but generic: every POST is recorded
with its path, headers and JSON body, and answered by the next entry of
``script`` (a ``(status, body, headers)`` tuple or a callable returning one);
when the script is empty, ``default`` answers. A ``delay`` entry makes the
server wait before answering (for timeout tests).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Answer = tuple[int, Any, dict[str, str]]
Step = Answer | Callable[[dict[str, Any]], Answer]


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: Any


def ok(doc: Any, **headers: str) -> Answer:
    return 200, doc, dict(headers)


def status(code: int, doc: Any = None, **headers: str) -> Answer:
    return code, doc if doc is not None else {"error": {"message": f"scripted {code}"}}, headers


@dataclass
class ScriptedHTTP:
    script: list[Step] = field(default_factory=list)
    default: Step | None = None
    #: Seconds to wait before answering the request with the same position (0-based).
    delays: dict[int, float] = field(default_factory=dict)
    requests: list[Recorded] = field(default_factory=list)

    def __post_init__(self) -> None:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"null")
                except json.JSONDecodeError:
                    body = raw.decode("utf-8", "replace")
                position = len(owner.requests)
                owner.requests.append(
                    Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                )
                if position in owner.delays:
                    time.sleep(owner.delays[position])
                step = owner.script.pop(0) if owner.script else owner.default
                if step is None:
                    answer: Answer = (404, {"error": {"message": "no script left"}}, {})
                elif callable(step):
                    answer = step(body)
                else:
                    answer = step
                code, doc, headers = answer
                payload = doc.encode() if isinstance(doc, str) else json.dumps(doc).encode()
                try:
                    self.send_response(code)
                    ctype = "text/plain" if isinstance(doc, str) else "application/json"
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(payload)))
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def free_port() -> int:
    """A local port that nothing listens on (for connection-refused tests)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
