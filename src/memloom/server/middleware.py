"""Pure ASGI middleware: body size limit and bearer-token check."""

from __future__ import annotations

import hmac
import json
import logging
from collections.abc import Callable
from typing import Any

import anyio

from memloom.errors import UnavailableError

log = logging.getLogger("memloom.server")

Scope = dict[str, Any]

DEFAULT_MAX_BODY = 8 * 1024 * 1024


async def _send_error(send: Any, status: int, message: str, extra: list | None = None) -> None:
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send(
        {"type": "http.response.start", "status": status, "headers": headers + (extra or [])}
    )
    await send({"type": "http.response.body", "body": body})


class BodyLimit:
    """413 for bodies over ``limit`` bytes, whether or not Content-Length is sent."""

    def __init__(self, app: Any, limit: int = DEFAULT_MAX_BODY) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    too_big = int(value) > self.limit
                except ValueError:
                    await _send_error(send, 400, "invalid Content-Length")
                    return
                if too_big:
                    await _send_error(send, 413, f"request body is larger than {self.limit} bytes")
                    return
        # No (trusted) length: read the body first, at most limit + 1 bytes, then replay it.
        chunks: list[bytes] = []
        seen = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            body = message.get("body", b"")
            seen += len(body)
            if seen > self.limit:
                await _send_error(send, 413, f"request body is larger than {self.limit} bytes")
                return
            chunks.append(body)
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


class Unauthorized(Exception):
    pass


class BearerAuth:
    """Every route but the open ones needs ``Authorization: Bearer <token>``.

    Two kinds of token are accepted: the server's own (``--token`` /
    ``MEMLOOM_API_TOKEN``: the whole store) and, on a shared store, the API
    tokens of ``memloom tokens create`` (one owner each), found by ``lookup``.
    The principal a request acts for is left in ``scope["memloom.principal"]``.
    While neither kind exists (a loopback server of one person) nothing is asked.
    """

    def __init__(
        self,
        app: Any,
        token: str | None,
        *,
        lookup: Callable[[str], Any] | None = None,
        tokens_exist: Callable[[], bool] | None = None,
        open_paths: tuple[str, ...] = ("/health",),
        open_prefixes: tuple[str, ...] = (),
    ) -> None:
        self.app = app
        self.token = token.encode() if token else None
        self.lookup = lookup
        self.tokens_exist = tokens_exist
        self.open_paths = open_paths
        self.open_prefixes = open_prefixes

    def _authorize(self, supplied: bytes) -> Any:
        """The principal for a token (None: the whole store); raises Unauthorized."""
        if self.token is not None and supplied and hmac.compare_digest(supplied, self.token):
            return None
        # API tokens are short printable ASCII: anything else is not worth a database query.
        plausible = len(supplied) <= 512 and all(0x21 <= b <= 0x7E for b in supplied)
        if self.lookup is not None and supplied and plausible:
            principal = self.lookup(supplied.decode("utf-8", "replace"))
            if principal is not None:
                return principal
        if (
            self.token is None
            and not supplied
            and not (self.tokens_exist is not None and self.tokens_exist())
        ):
            return None
        raise Unauthorized

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if (
            scope["type"] != "http"
            or path in self.open_paths
            or (self.open_prefixes and path.startswith(self.open_prefixes))
        ):
            await self.app(scope, receive, send)
            return
        supplied = b""
        for name, value in scope.get("headers", []):
            if name == b"authorization" and value[:7].lower() == b"bearer ":
                supplied = value[7:].strip()
        try:
            # Store lookups are blocking database calls: keep them off the event loop.
            principal = await anyio.to_thread.run_sync(self._authorize, supplied)
        except Unauthorized:
            await _send_error(
                send, 401, "missing or wrong bearer token", [(b"www-authenticate", b"Bearer")]
            )
            return
        except UnavailableError as exc:  # the token store is down: say so, as the routes do
            await _send_error(send, 503, str(exc))
            return
        except Exception:  # still a JSON error, never uvicorn's bare text
            log.exception("token check failed")
            await _send_error(send, 500, "internal error (see the server log)")
            return
        scope["memloom.principal"] = principal
        await self.app(scope, receive, send)


class JsonBodies:
    """Every POST body here is JSON: read it as JSON whatever Content-Type says.

    curl's ``-d`` and some clients send ``application/x-www-form-urlencoded`` or
    nothing; answering "expected an object" to valid JSON would be unhelpful.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope.get("method") in ("POST", "PUT", "PATCH"):
            headers = [(k, v) for k, v in scope.get("headers", []) if k != b"content-type"]
            original = dict(scope.get("headers", [])).get(b"content-type", b"")
            if not original.startswith(b"application/json"):
                headers.append((b"content-type", b"application/json"))
                scope = {**scope, "headers": headers}
        await self.app(scope, receive, send)
