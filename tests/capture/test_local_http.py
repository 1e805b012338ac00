"""The prompt hook's one POST to the local daemon: exactly one JSON reply with a
Content-Length is accepted; everything else is an error the hook falls back from."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from memloom.access import proof
from memloom.capture.local_http import LocalHTTPError, post_json


class Server:
    """A real TCP server on 127.0.0.1 that answers each connection with ``reply``."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.reply: bytes = b""
        self.delay = 0.0
        self.requests: list[bytes] = []
        #: How ``GET /health`` with a challenge is answered (None: like any request).
        self.hello: Callable[[str], bytes] | None = None
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, body = data.partition(b"\r\n\r\n")
                if head.startswith(b"GET /health ") and self.hello is not None:
                    # The hook's check before it sends anything: answer, keep the connection.
                    self.requests.append(head)
                    challenge = next(
                        line.split(b":", 1)[1].strip().decode()
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"x-memloom-challenge:")
                    )
                    conn.sendall(self.hello(challenge))
                    data = body
                    while b"\r\n\r\n" not in data:
                        more = conn.recv(65536)
                        if not more:
                            break
                        data += more
                    head, _, body = data.partition(b"\r\n\r\n")
                    if not head:
                        continue
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                while len(body) < length:
                    body += conn.recv(65536)
                self.requests.append(head + b"\r\n\r\n" + body)
                time.sleep(self.delay)
                with contextlib.suppress(OSError):  # the client gave up (the timeout test)
                    conn.sendall(self.reply)

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def server() -> Iterator[Server]:
    srv = Server()
    yield srv
    srv.close()


def reply(status: str, body: bytes, *headers: str) -> bytes:
    head = [f"HTTP/1.1 {status}", *headers]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def test_a_json_reply_with_its_length_is_decoded_and_the_request_is_json(server):
    doc = json.dumps({"memories": [{"id": "a1", "text": "port 5433"}]}).encode()
    server.reply = reply("200 OK", doc, f"content-length: {len(doc)}", "content-type: x")
    got = post_json("127.0.0.1", server.port, "/v1/memory/recall", {"query": "port"}, timeout=5)
    assert got["memories"][0]["text"] == "port 5433"
    head, _, body = server.requests[0].partition(b"\r\n\r\n")
    assert head.startswith(b"POST /v1/memory/recall HTTP/1.1\r\n")
    assert json.loads(body) == {"query": "port"}
    assert b"Authorization" not in head


def test_the_api_token_goes_as_a_bearer_header(server):
    server.reply = reply("200 OK", b"{}", "Content-Length: 2")
    post_json("localhost", server.port, "/x", {}, timeout=5, token="ml_secret", verify=False)
    assert b"\r\nAuthorization: Bearer ml_secret\r\n" in server.requests[0]


def proving(token: str) -> Callable[[str], bytes]:
    def hello(challenge: str) -> bytes:
        return reply(
            "200 OK", b"{}", "Content-Length: 2", f"x-memloom-proof: {proof(token, challenge)}"
        )

    return hello


@pytest.mark.security
def test_the_daemon_proves_it_holds_the_token_before_the_prompt_is_sent(server):
    """One connection: GET /health with a fresh challenge, the daemon's HMAC answer,
    then the POST with the token and the prompt."""
    server.hello = proving("ml_secret")
    doc = b'{"memories": []}'
    server.reply = reply("200 OK", doc, f"Content-Length: {len(doc)}")
    got = post_json(
        "127.0.0.1", server.port, "/v1/memory/recall", {"query": "q"}, timeout=5, token="ml_secret"
    )
    assert got == {"memories": []}
    first, second = server.requests
    assert first.startswith(b"GET /health HTTP/1.1\r\n") and b"Bearer" not in first
    assert second.startswith(b"POST /v1/memory/recall ") and b"Bearer ml_secret" in second


@pytest.mark.security
@pytest.mark.parametrize(
    "impostor",
    [
        lambda challenge: reply("200 OK", b"{}", "Content-Length: 2"),  # no proof at all
        proving("another-token"),  # another data folder's daemon, or a guess
        lambda challenge: reply(
            "200 OK", b"{}", "Content-Length: 2", f"x-memloom-proof: {challenge}"
        ),  # echoes the challenge
        lambda challenge: reply("401 Unauthorized", b"{}", "Content-Length: 2"),
    ],
    ids=["no-proof", "wrong-token", "echo", "refuses"],
)
def test_a_process_that_took_the_port_gets_neither_the_prompt_nor_the_token(server, impostor):
    """After a crash another program (another user's) may listen on the daemon's port:
    the hook gives up after the challenge, having sent no token and no prompt."""
    server.hello = impostor
    server.reply = reply("200 OK", b"{}", "Content-Length: 2")
    with pytest.raises(LocalHTTPError, match="not this data folder's memloom daemon"):
        post_json(
            "127.0.0.1",
            server.port,
            "/v1/memory/recall",
            {"query": "my secret prompt"},
            timeout=5,
            token="ml_secret",
        )
    sent = b"".join(server.requests)
    assert b"ml_secret" not in sent and b"my secret prompt" not in sent
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        (reply("500 Internal Server Error", b"boom", "Content-Length: 4"), "HTTP 500"),
        (reply("401 Unauthorized", b"{}", "Content-Length: 2"), "HTTP 401"),
        (
            reply("200 OK", b"2\r\n{}\r\n0\r\n\r\n", "Transfer-Encoding: chunked"),
            "chunked",
        ),
        (reply("200 OK", b'{"memo', "Content-Length: 40"), "Content-Length 40"),
        (reply("200 OK", b"{}"), "Content-Length none"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n", "before its headers"),
        (b"SSH-2.0-OpenSSH_9.2\r\n\r\n", "not an HTTP/1.x status line"),
    ],
    ids=["500", "401", "chunked", "truncated", "no-length", "cut-headers", "not-http"],
)
def test_anything_but_one_complete_json_reply_is_an_error(server, answer, says):
    server.reply = answer
    with pytest.raises(LocalHTTPError, match=says):
        post_json("127.0.0.1", server.port, "/v1/memory/recall", {}, timeout=5)


def test_the_timeout_bounds_the_whole_exchange(server):
    server.reply = reply("200 OK", b"{}", "Content-Length: 2")
    server.delay = 3.0
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        post_json("127.0.0.1", server.port, "/v1/memory/recall", {}, timeout=0.5)
    assert time.monotonic() - started < 2.0


def test_a_closed_port_is_an_os_error():
    sock = socket.create_server(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    with pytest.raises(OSError):
        post_json("127.0.0.1", port, "/v1/memory/recall", {}, timeout=2)


def test_a_daemon_address_that_is_not_this_machine_is_refused_without_connecting():
    with pytest.raises(LocalHTTPError, match="not this machine"):
        post_json("192.0.2.7", 8080, "/v1/memory/recall", {}, timeout=2)
