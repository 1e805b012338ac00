"""A scripted OpenAI-compatible server on 127.0.0.1 for tests (the only one).

It speaks the real wire protocol over real HTTP, so memloom's own client code
runs unchanged. Every POST is recorded (path, lower-cased headers, JSON body)
and answered, in this order, by:

1. ``failures``: status codes to answer with first (e.g. ``[429, 500]``);
2. ``script``: the next ``(status, body, headers)`` tuple, or a callable
   returning one (any path: the Anthropic tests script ``/v1/messages``);
3. ``/v1/embeddings``: deterministic bag-of-words vectors (texts sharing words
   are close);
4. ``/v1/chat/completions``: the ``chat`` callable, ``(status, body)``;
5. ``default`` (a step like the script's), else a 404.

``delays`` makes the server wait before answering the request at a position
(0-based), for timeout tests. A ``str`` body is sent as text/plain.
"""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple

import numpy as np

Answer = tuple[int, Any, dict[str, str]]
Step = Answer | Callable[[Any], Answer]
Reply = Callable[[dict[str, Any]], tuple[int, dict[str, Any]]]


def bag_of_words(text: str, dim: int) -> list[float]:
    vec = np.zeros(dim, dtype=np.float64)
    for word in text.lower().split():
        h = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
        vec[h % dim] += 1.0 if (h >> 32) & 1 else -1.0
    if not vec.any():
        vec[0] = 1.0
    return (vec / np.linalg.norm(vec)).tolist()


def ok(doc: Any, **headers: str) -> Answer:
    return 200, doc, dict(headers)


def status(code: int, doc: Any = None, **headers: str) -> Answer:
    return code, doc if doc is not None else {"error": {"message": f"scripted {code}"}}, headers


def free_port() -> int:
    """A local port that nothing listens on (for connection-refused tests)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class _PathBody(NamedTuple):
    path: str
    body: Any


class Recorded(_PathBody):
    """One request: unpacks as ``(path, body)``, and carries its ``headers``."""

    headers: dict[str, str]

    def __new__(cls, path: str, headers: dict[str, str], body: Any) -> Recorded:
        self = super().__new__(cls, path, body)
        self.headers = headers
        return self


@dataclass
class ScriptedOpenAI:
    dim: int = 64
    requests: list[Recorded] = field(default_factory=list)
    chat: Reply | None = None
    #: Status codes to answer with before serving normally (e.g. [429]).
    failures: list[int] = field(default_factory=list)
    script: list[Step] = field(default_factory=list)
    default: Step | None = None
    #: Seconds to wait before answering the request with the same position (0-based).
    delays: dict[int, float] = field(default_factory=dict)

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
                headers = {k.lower(): v for k, v in self.headers.items()}
                owner.requests.append(Recorded(self.path, headers, body))
                if position in owner.delays:
                    time.sleep(owner.delays[position])
                self._send(*owner.answer(self.path, body))

            def _send(self, code: int, doc: Any, headers: dict[str, str]) -> None:
                text = isinstance(doc, str)
                payload = doc.encode() if text else json.dumps(doc).encode()
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "text/plain" if text else "application/json")
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

    def answer(self, path: str, body: Any) -> Answer:
        """The reply to one request (see the module docstring for the order)."""
        if self.failures:
            return self.failures.pop(0), {"error": {"message": "scripted failure"}}, {}
        if self.script:
            return self._run(self.script.pop(0), body)
        if path.endswith("/embeddings"):
            inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
            data = [
                {"object": "embedding", "index": i, "embedding": bag_of_words(t, self.dim)}
                for i, t in enumerate(inputs)
            ]
            return 200, {"object": "list", "data": data, "model": body.get("model")}, {}
        if path.endswith("/chat/completions") and self.chat is not None:
            code, doc = self.chat(body)
            return code, doc, {}
        if self.default is not None:
            return self._run(self.default, body)
        return 404, {"error": {"message": f"no route {path}"}}, {}

    @staticmethod
    def _run(step: Step, body: Any) -> Answer:
        return step(body) if callable(step) else step

    @property
    def url(self) -> str:
        """The server's root, ``http://127.0.0.1:PORT``."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL, the root plus ``/v1``."""
        return self.url + "/v1"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
