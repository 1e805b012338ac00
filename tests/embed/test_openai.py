"""OpenAIEmbedder against a real HTTP server on 127.0.0.1 (stdlib http.server)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from memloom.embed import (
    EmbedderMismatchError,
    EmbeddingError,
    OpenAIEmbedder,
    check_fingerprint,
    make_embedder,
)

KEY = "sk-test-SECRET-0123456789"
MODEL = "test-embed-model"


def fake_vector(text: str, dim: int) -> np.ndarray:
    """Deterministic, deliberately unnormalised vector for ``text``."""
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    return np.random.default_rng(seed).standard_normal(dim) * 3.0


class FakeServer:
    """Serves POST /v1/embeddings; ``script`` holds one-off actions for the next requests."""

    def __init__(self, dim: int = 8) -> None:
        self.dim = dim
        self.requests: list[dict[str, Any]] = []
        self.script: list[tuple[str, Any]] = []
        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def _next_action(self) -> tuple[str, Any] | None:
        with self._lock:
            return self.script.pop(0) if self.script else None

    def respond(self, body: dict[str, Any]) -> dict[str, Any]:
        dim = int(body.get("dimensions") or self.dim)
        data = [
            {"object": "embedding", "index": i, "embedding": fake_vector(t, dim).tolist()}
            for i, t in enumerate(body["input"])
        ]
        data.reverse()  # clients must order by index, not by position
        return {"object": "list", "data": data, "model": body["model"], "usage": {}}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(
                self, status: int, payload: Any, headers: dict[str, str] | None = None
            ) -> None:
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                with contextlib.suppress(OSError):  # client gave up (timeout test)
                    self.wfile.write(raw)

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server._lock:
                    server.requests.append(
                        {"path": self.path, "headers": dict(self.headers), "body": body}
                    )
                if self.path != "/v1/embeddings":
                    self._send(404, {"error": {"message": "not found"}})
                    return
                action = server._next_action()
                if action is not None:
                    kind, arg = action
                    if kind == "status":
                        # Echo the Authorization header to prove the client scrubs it.
                        msg = f"error for {self.headers.get('Authorization')}"
                        self._send(arg, {"error": {"message": msg}}, {"Retry-After": "0"})
                        return
                    if kind == "sleep":
                        time.sleep(arg)
                    if kind == "body":
                        self._send(200, arg)
                        return
                self._send(200, server.respond(body))

        return Handler

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def server() -> Iterator[FakeServer]:
    srv = FakeServer()
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def sleeps() -> list[float]:
    return []


def make(server: FakeServer, sleeps: list[float], **kw: Any) -> OpenAIEmbedder:
    kw.setdefault("api_key", KEY)
    return OpenAIEmbedder(server.base_url, MODEL, sleep=sleeps.append, **kw)


def expected(texts: list[str], dim: int = 8) -> np.ndarray:
    vecs = np.stack([fake_vector(t, dim) for t in texts])
    return (vecs / np.linalg.norm(vecs, axis=1, keepdims=True)).astype(np.float32)


def test_request_shape(server: FakeServer, sleeps: list[float]) -> None:
    emb = make(server, sleeps)
    emb.embed(["alpha", "beta"])
    (req,) = server.requests
    assert req["path"] == "/v1/embeddings"
    assert req["body"] == {"model": MODEL, "input": ["alpha", "beta"]}
    assert req["headers"]["Authorization"] == f"Bearer {KEY}"
    assert req["headers"]["Content-Type"] == "application/json"


def test_no_auth_header_without_key(server: FakeServer, sleeps: list[float]) -> None:
    make(server, sleeps, api_key=None).embed(["alpha"])
    assert "Authorization" not in server.requests[0]["headers"]


def test_orders_by_index_and_normalises(server: FakeServer, sleeps: list[float]) -> None:
    texts = ["one", "two", "three", "four", "five"]
    out = make(server, sleeps).embed(texts)
    assert out.dtype == np.float32 and out.shape == (5, 8)
    np.testing.assert_allclose(out, expected(texts), atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-6)


def test_batches(server: FakeServer, sleeps: list[float]) -> None:
    texts = [f"text {i}" for i in range(7)]
    out = make(server, sleeps, batch_size=3).embed(texts)
    assert [len(r["body"]["input"]) for r in server.requests] == [3, 3, 1]
    np.testing.assert_allclose(out, expected(texts), atol=1e-6)


def test_dimension_discovery(server: FakeServer, sleeps: list[float]) -> None:
    emb = make(server, sleeps)
    assert server.requests == []  # constructing does not call out
    assert emb.dim == 8
    assert [r["body"]["input"] for r in server.requests] == [["dimension probe"]]
    assert emb.fingerprint == f"openai:{MODEL}@8"
    assert len(server.requests) == 1  # learnt once
    assert emb.embed([]).shape == (0, 8)
    assert len(server.requests) == 1


def test_dimension_from_first_embed(server: FakeServer, sleeps: list[float]) -> None:
    emb = make(server, sleeps)
    emb.embed(["hello"])
    assert emb.dim == 8 and len(server.requests) == 1


def test_explicit_dimensions(server: FakeServer, sleeps: list[float]) -> None:
    emb = make(server, sleeps, dimensions=16)
    assert emb.dim == 16 and emb.fingerprint == f"openai:{MODEL}@16"
    assert server.requests == []
    v = emb.embed_query("hello")
    assert v.shape == (16,)
    assert server.requests[0]["body"] == {"model": MODEL, "input": ["hello"], "dimensions": 16}


def test_wrong_dimension_from_server(server: FakeServer, sleeps: list[float]) -> None:
    server.script.append(("body", {"data": [{"index": 0, "embedding": [1.0, 2.0]}]}))
    with pytest.raises(EmbeddingError, match="dimensional"):
        make(server, sleeps, dimensions=16).embed(["hello"])


def test_count_mismatch(server: FakeServer, sleeps: list[float]) -> None:
    server.script.append(("body", {"data": [{"index": 0, "embedding": [1.0, 2.0]}]}))
    with pytest.raises(EmbeddingError, match="1 vectors for 2 inputs"):
        make(server, sleeps).embed(["a", "b"])


def test_empty_string_is_sent_as_space(server: FakeServer, sleeps: list[float]) -> None:
    out = make(server, sleeps).embed(["", "x"])
    assert server.requests[0]["body"]["input"] == [" ", "x"]
    assert out.shape == (2, 8)


def test_retry_429_then_success(server: FakeServer, sleeps: list[float]) -> None:
    server.script.append(("status", 429))
    out = make(server, sleeps).embed(["hello"])
    np.testing.assert_allclose(out, expected(["hello"]), atol=1e-6)
    assert len(server.requests) == 2
    assert sleeps == [0.5]


def test_retry_5xx_backoff_then_success(server: FakeServer, sleeps: list[float]) -> None:
    server.script += [("status", 503), ("status", 500)]
    make(server, sleeps).embed(["hello"])
    assert len(server.requests) == 3
    assert sleeps == [0.5, 1.0]  # exponential


def test_gives_up_after_three_tries(server: FakeServer, sleeps: list[float]) -> None:
    server.script += [("status", 502)] * 3
    with pytest.raises(EmbeddingError, match="after 3 tries") as info:
        make(server, sleeps).embed(["hello"])
    assert "HTTP 502" in str(info.value)
    assert KEY not in str(info.value)
    assert len(server.requests) == 3


def test_retry_on_timeout(server: FakeServer, sleeps: list[float]) -> None:
    server.script.append(("sleep", 1.0))
    out = make(server, sleeps, timeout=0.2).embed(["hello"])
    np.testing.assert_allclose(out, expected(["hello"]), atol=1e-6)
    assert len(server.requests) == 2 and sleeps == [0.5]


@pytest.mark.parametrize("status", [401, 403])
def test_auth_error_is_clear_and_hides_key(
    server: FakeServer, sleeps: list[float], status: int
) -> None:
    server.script.append(("status", status))
    emb = make(server, sleeps)
    with pytest.raises(EmbeddingError, match=f"HTTP {status}") as info:
        emb.embed(["hello"])
    assert KEY not in str(info.value) and KEY not in repr(emb)
    assert "API key" in str(info.value)
    assert len(server.requests) == 1  # not retried


def test_client_error_not_retried_and_scrubbed(server: FakeServer, sleeps: list[float]) -> None:
    server.script.append(("status", 400))
    with pytest.raises(EmbeddingError, match="HTTP 400") as info:
        make(server, sleeps).embed(["hello"])
    assert KEY not in str(info.value) and "***" in str(info.value)
    assert len(server.requests) == 1


def test_connection_refused(sleeps: list[float]) -> None:
    srv = FakeServer()  # bound but never served, then closed: nothing listens
    url = srv.base_url
    srv.httpd.server_close()
    emb = OpenAIEmbedder(url, MODEL, api_key=KEY, sleep=sleeps.append, timeout=2.0)
    with pytest.raises(EmbeddingError, match="after 3 tries") as info:
        emb.embed(["hello"])
    assert KEY not in str(info.value)
    assert len(sleeps) == 2


def test_fingerprint_check(server: FakeServer, sleeps: list[float]) -> None:
    emb = make(server, sleeps)
    check_fingerprint(f"openai:{MODEL}@8", emb)
    with pytest.raises(EmbedderMismatchError) as info:
        check_fingerprint("local:all-MiniLM-L6-v2-int8@384", emb)
    msg = str(info.value)
    assert "local:all-MiniLM-L6-v2-int8@384" in msg and f"openai:{MODEL}@8" in msg
    assert "memloom reembed" in msg


def test_make_embedder_openai(server: FakeServer) -> None:
    emb = make_embedder("openai", model=MODEL, base_url=server.base_url, api_key=KEY)
    assert isinstance(emb, OpenAIEmbedder)
    assert emb.embed(["a"]).shape == (1, 8)
    assert server.requests[0]["body"]["model"] == MODEL
