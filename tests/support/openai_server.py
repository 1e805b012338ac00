"""A scripted OpenAI-compatible server on 127.0.0.1 for tests.

It speaks the real wire protocol over real HTTP, so memloom's own client code
runs unchanged. ``/v1/embeddings`` returns deterministic bag-of-words vectors
(texts sharing words are close); ``/v1/chat/completions`` replies from a script.
Every request is recorded for assertions.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

Reply = Callable[[dict[str, Any]], tuple[int, dict[str, Any]]]


def bag_of_words(text: str, dim: int) -> list[float]:
    vec = np.zeros(dim, dtype=np.float64)
    for word in text.lower().split():
        h = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
        vec[h % dim] += 1.0 if (h >> 32) & 1 else -1.0
    if not vec.any():
        vec[0] = 1.0
    return (vec / np.linalg.norm(vec)).tolist()


@dataclass
class ScriptedOpenAI:
    dim: int = 64
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    chat: Reply | None = None
    #: Status codes to answer with before serving normally (e.g. [429]).
    failures: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                owner.requests.append((self.path, body))
                if owner.failures:
                    self._send(owner.failures.pop(0), {"error": {"message": "scripted failure"}})
                    return
                if self.path.endswith("/embeddings"):
                    inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                    data = [
                        {"object": "embedding", "index": i, "embedding": bag_of_words(t, owner.dim)}
                        for i, t in enumerate(inputs)
                    ]
                    self._send(200, {"object": "list", "data": data, "model": body.get("model")})
                elif self.path.endswith("/chat/completions") and owner.chat is not None:
                    self._send(*owner.chat(body))
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def _send(self, status: int, doc: dict[str, Any]) -> None:
                raw = json.dumps(doc).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
