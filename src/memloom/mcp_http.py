"""``memloom mcp --transport http``: the streamable HTTP app, for its owner only.

The same rules as ``memloom serve`` (:mod:`memloom.guard`, docs/security.md): the
Host must be a loopback name or a configured one (421), another origin's browser
request is refused (403), a POST must be JSON (415), and every request needs the
data folder's API token (401; :mod:`memloom.access`). The SDK's own Host and
Origin checks stay on as well where it can apply them (a loopback address).
"""

from __future__ import annotations

import sys
from typing import Any

from memloom.daemon_record import is_loopback

__all__ = ["HTTP_PATH", "http_app", "serve_http", "url_host"]

HTTP_PATH = "/mcp"


def url_host(host: str) -> str:
    """``host`` as it appears in a URL or a Host header (IPv6 in brackets)."""
    return f"[{host.strip('[]')}]" if ":" in host else host


def http_app(server: Any, host: str, token: str, allowed_hosts: tuple[str, ...] = ()) -> Any:
    """The SDK server's streamable HTTP app behind memloom's checks."""
    from mcp.server.transport_security import TransportSecuritySettings

    from memloom.guard import BearerAuth, HostPolicy, OwnerOnly

    security = None
    if is_loopback(host):
        name = url_host(host)
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[
                "127.0.0.1:*",
                "localhost:*",
                "[::1]:*",
                f"{name}:*",
                *(f"{h}:*" for h in allowed_hosts if not h.startswith(".")),
            ],
            allowed_origins=[
                "http://127.0.0.1:*",
                "http://localhost:*",
                "http://[::1]:*",
                f"http://{name}:*",
            ],
        )
    app = server.streamable_http_app(
        streamable_http_path=HTTP_PATH, host=host, transport_security=security
    )
    return OwnerOnly(BearerAuth(app, token, open_paths=()), HostPolicy(host, allowed_hosts))


def serve_http(server: Any, settings: Any, host: str, port: int, log_level: str) -> None:
    """Serve ``server`` at ``http://host:port/mcp`` until stopped, with the token of the
    data folder in ``settings`` (the daemon's: made on the first start if need be)."""
    import anyio
    import uvicorn

    from memloom.access import ensure_token
    from memloom.config import allowed_hosts

    source = ensure_token(settings.home, settings.raw)
    app = http_app(server, host, source.token, allowed_hosts(settings.raw))
    url = f"http://{url_host(host)}:{port}{HTTP_PATH}"
    where = source.path if source.path is not None else "MEMLOOM_API_TOKEN"
    sys.stderr.write(
        f"memloom mcp: streamable HTTP on {url} (send 'Authorization: Bearer <token>'; "
        f"the token is in {where})\n"
    )
    sys.stderr.flush()
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_config=None,  # uvicorn's default config would log requests to stdout
        log_level=log_level.lower(),
        access_log=log_level in ("DEBUG", "INFO"),
        lifespan="on",
    )
    anyio.run(uvicorn.Server(config).serve)
