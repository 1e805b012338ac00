"""Who may call, as ASGI middleware: Host, Origin, Content-Type, the bearer token, the body limit.

Shared by the two HTTP shells, `memloom serve` (:mod:`memloom.server`) and `memloom mcp
--transport http` (:mod:`memloom.mcp`), so both apply the same rules (docs/security.md).

Loopback is not a trust boundary (docs/security.md): a web page in the user's
browser and other users of the machine reach 127.0.0.1 too. So every request is
checked, cheapest first, before any route runs:

1. :class:`OwnerOnly` -- the ``Host`` must be a loopback name or a configured one
   (421; DNS rebinding), a browser request from another origin is refused (403;
   ``Origin``, ``Sec-Fetch-Site``), and a POST/PUT/PATCH must be
   ``application/json`` (415: an HTML form or a no-cors ``fetch`` cannot send it)
   -- unless it carries a valid bearer token (``memloom serve`` only): a page cannot
   attach ``Authorization`` to another origin's request without a CORS preflight,
   which is never answered, so such a request is no forgery, and its body is read
   as JSON whatever its type (``curl -d``, as the Distill guide writes its calls).
   It also adds the headers that keep responses out of frames and sniffers.
2. :class:`BodyLimit` -- 413 past the size limit.
3. :class:`BearerAuth` -- 401 without the token.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
from collections.abc import Callable, Collection
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


def _bearer(scope: Scope) -> bytes:
    """The token of the request's ``Authorization: Bearer`` header (the last one), or b""."""
    supplied = b""
    for name, value in scope.get("headers", []):
        if name == b"authorization" and value[:7].lower() == b"bearer ":
            supplied = value[7:].strip()
    return supplied


class BearerAuth:
    """Every route but the open ones needs ``Authorization: Bearer <token>``.

    Two kinds of token are accepted: the server's own (``token``: the whole store;
    ``memloom.access`` says where it comes from) and, on a shared store, the API
    tokens of ``memloom tokens create`` (one owner each), found by ``lookup``.
    The principal a request acts for is left in ``scope["memloom.principal"]``.
    """

    def __init__(
        self,
        app: Any,
        token: str,
        *,
        lookup: Callable[[str], Any] | None = None,
        open_paths: Collection[str] = ("/health",),
        open_prefixes: tuple[str, ...] = (),
    ) -> None:
        if not token:
            raise ValueError("BearerAuth needs the server's token")
        self.app = app
        self.token = token.encode()
        self.lookup = lookup
        self.open_paths = frozenset(open_paths)
        self.open_prefixes = open_prefixes

    def _authorize(self, supplied: bytes) -> Any:
        """The principal for a token (None: the whole store); raises Unauthorized."""
        if supplied and hmac.compare_digest(supplied, self.token):
            return None
        # API tokens are short printable ASCII: anything else is not worth a database query.
        plausible = len(supplied) <= 512 and all(0x21 <= b <= 0x7E for b in supplied)
        if self.lookup is not None and supplied and plausible:
            principal = self.lookup(supplied.decode("utf-8", "replace"))
            if principal is not None:
                return principal
        raise Unauthorized

    async def authorized(self, scope: Scope) -> bool:
        """Whether the request carries a token this check accepts (no answer sent; a
        token store that cannot be asked counts as no). :class:`OwnerOnly` asks it of
        a body that is not JSON."""
        supplied = _bearer(scope)
        if not supplied:
            return False
        try:
            await anyio.to_thread.run_sync(self._authorize, supplied)
        except Unauthorized:
            return False
        except Exception:  # the token store is down: the request is refused as before
            log.warning("token check failed; the body is not read as JSON", exc_info=True)
            return False
        return True

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if (
            scope["type"] not in ("http", "websocket")
            or path in self.open_paths
            or (self.open_prefixes and path.startswith(self.open_prefixes))
        ):
            await self.app(scope, receive, send)
            return
        supplied = _bearer(scope)
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


#: What the viewer's page may load and do: its own files only, never in a frame.
STRICT_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)
#: The API documentation pages (Swagger UI, ReDoc) start from an inline script; their
#: files are served from here, never a CDN.
DOCS_CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; object-src 'none'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
#: Methods a page can send with a body; only JSON is taken (a form or a no-cors fetch
#: can only send text/plain, form-urlencoded or multipart without asking first).
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
#: Sec-Fetch-Site values of a request made by another origin's page.
FOREIGN_SITES = frozenset({b"cross-site", b"same-site"})
#: The refusal of a body that is not JSON (unless a valid token came with it).
NOT_JSON = (415, "send the body as Content-Type: application/json")


def as_json(scope: Scope) -> Scope:
    """``scope`` with one ``Content-Type: application/json`` in place of the ones sent:
    what the app is shown of a token holder's body (FastAPI parses JSON only when the
    type says so). A body that is not JSON then gets the app's 400."""
    headers = [(k, v) for k, v in scope.get("headers", []) if k != b"content-type"]
    return {**scope, "headers": [*headers, (b"content-type", b"application/json")]}


def split_host(value: str) -> tuple[str, int | None] | None:
    """``Host`` header → (host, port), IPv6 without brackets; None when malformed."""
    value = value.strip()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        host, rest = value[1:end], value[end + 1 :]
        if rest and not rest.startswith(":"):
            return None
        port_text = rest[1:]
    else:
        host, _, port_text = value.partition(":")
    if port_text:
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            return None
        return host.lower(), int(port_text)
    return (host.lower(), None) if host else None


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


class HostPolicy:
    """Which ``Host`` names a server answers to.

    Always: ``localhost`` and loopback addresses. A server bound to another
    address also answers to IP addresses (a DNS-rebinding page can only use a
    name). Other names only when configured (``allowed``: exact names, or
    ``.example.com`` for a domain and its subdomains), as Vite's ``allowedHosts``.
    """

    def __init__(self, bound: str, allowed: Collection[str] = ()) -> None:
        bound_ip = _ip(bound.strip("[]"))
        self.any_ip = bool(bound_ip is not None and not bound_ip.is_loopback) or bound in ("", "*")
        if bound_ip is None and bound not in ("", "*", "localhost"):
            allowed = [*allowed, bound]  # bound by name: that name is the server's own
        self.names = frozenset(a.lower().rstrip(".") for a in allowed if not a.startswith("."))
        self.suffixes = tuple(a.lower().rstrip(".") for a in allowed if a.startswith("."))

    def allows(self, host: str) -> bool:
        name = host.lower().rstrip(".")
        if name == "localhost":
            return True
        ip = _ip(name)
        if ip is not None:
            return ip.is_loopback or self.any_ip
        return name in self.names or (
            bool(self.suffixes) and (name.endswith(self.suffixes) or f".{name}" in self.suffixes)
        )


class OwnerOnly:
    """The checks no route may skip (see the module's docstring), and the safety headers.

    ``open_paths`` / ``open_prefixes``: files with no data (the viewer's page and
    scripts, the API docs): a browser may navigate to them from anywhere (they are
    still Host-checked, and never framed). ``docs_prefixes``: pages that run an
    inline script, which get :data:`DOCS_CSP`.

    ``bearer``: the token check of the app behind (``memloom serve``'s). A body that
    is not ``application/json``, sent with a token it accepts and with no sign of
    another origin (those are refused before), is read as JSON: its ``Content-Type``
    is presented to the app as ``application/json``. Without ``bearer`` (MCP over
    HTTP, whose SDK takes JSON only) such a body is always 415. A request whose token
    it does not accept gets the 415 it always got, before the token's own 401.
    """

    def __init__(
        self,
        app: Any,
        hosts: HostPolicy,
        *,
        open_paths: Collection[str] = (),
        open_prefixes: tuple[str, ...] = (),
        docs_paths: Collection[str] = (),
        bearer: BearerAuth | None = None,
    ) -> None:
        self.app = app
        self.hosts = hosts
        self.open_paths = frozenset(open_paths)
        self.open_prefixes = open_prefixes
        self.docs_paths = frozenset(docs_paths)
        self.bearer = bearer

    def _refusal(self, scope: Scope) -> tuple[int, str] | None:
        headers: dict[bytes, bytes] = {}
        for name, value in scope.get("headers", []):
            headers.setdefault(name, value)
        raw_host = headers.get(b"host", b"").decode("latin-1")
        host = split_host(raw_host)
        if host is None or not self.hosts.allows(host[0]):
            return 421, (
                f"this server does not answer to the host {raw_host!r}; add it to "
                "[server] allowed_hosts in config.toml if it is yours"
            )
        method = scope.get("method", "GET")
        path = scope.get("path", "")
        static = method in ("GET", "HEAD") and (
            path in self.open_paths
            or (bool(self.open_prefixes) and path.startswith(self.open_prefixes))
        )
        origin = headers.get(b"origin")
        if origin is not None and not static:
            scheme = scope.get("scheme", "http")
            if origin.decode("latin-1").lower().rstrip("/") != f"{scheme}://{raw_host}".lower():
                return 403, "requests from another origin are refused"
        if headers.get(b"sec-fetch-site") in FOREIGN_SITES and not static:
            return 403, "requests from another site are refused"
        if method in BODY_METHODS:
            media = headers.get(b"content-type", b"").split(b";", 1)[0].strip().lower()
            if media != b"application/json":
                return NOT_JSON
        return None

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is NOT_JSON and self.bearer is not None and await self.bearer.authorized(scope):
            scope = as_json(scope)
            refusal = None
        if refusal is not None:
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
                return
            status, message = refusal
            await _send_error(send, status, message, _SAFETY)
            return
        csp = DOCS_CSP if scope.get("path", "") in self.docs_paths else STRICT_CSP

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _ in message.get("headers", [])}
                extra = [h for h in _SAFETY if h[0] not in present]
                if b"content-security-policy" not in present:
                    extra.append((b"content-security-policy", csp.encode()))
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, send_with_headers)


#: On every response: no MIME sniffing, no framing (old browsers), no referrer.
_SAFETY = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-resource-policy", b"same-origin"),
]
