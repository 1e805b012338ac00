"""The long-running servers: ``serve``, ``stop``, ``mcp`` and ``ui`` (the viewer)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from memloom.cli._common import CliError, State, console, home_arg


def serve(
    ctx: typer.Context,
    host: Annotated[str, typer.Option(help="Address to listen on (loopback by default).")] = (
        "127.0.0.1"
    ),
    port: Annotated[int, typer.Option(help="Port (0 picks a free one).", min=0, max=65535)] = 4319,
    token_file: Annotated[
        Path | None,
        typer.Option(
            "--token-file",
            help="Read the bearer token from this file (yours, mode 600). Default: "
            "MEMLOOM_API_TOKEN, [server] token_file in config.toml, else api-token in the "
            "data folder, made on the first start.",
        ),
    ] = None,
    token: Annotated[str | None, typer.Option("--token", hidden=True)] = None,
    stop_: Annotated[bool, typer.Option("--stop", help="Stop the running daemon instead.")] = False,
) -> None:
    """Run the HTTP API and the background worker (decay, capture) in the foreground.

    Listens on 127.0.0.1:4319 by default and serves its owner only: every /v1 request
    needs the bearer token (hooks, the CLI and `memloom ui` find it themselves), and
    requests from web pages of other origins are refused. API docs at /docs, OpenAPI at
    /openapi.json. Listening on any other address needs a token of your own
    (MEMLOOM_API_TOKEN or --token-file). `memloom stop` ends it.
    """
    from memloom.config import resolve_home
    from memloom.errors import DaemonError
    from memloom.server.daemon import serve as run_server

    state: State = ctx.obj
    if token is not None:
        raise CliError(
            "a token on the command line shows in `ps` to every user: set MEMLOOM_API_TOKEN "
            "or pass --token-file FILE instead"
        )
    if stop_:
        _stop(resolve_home(state.home))
        return
    try:
        run_server(state.home, host=host, port=port, token_file=token_file)
    except DaemonError as exc:
        raise CliError(str(exc)) from exc


def stop(ctx: typer.Context) -> None:
    """Stop the running `memloom serve` daemon."""
    from memloom.config import resolve_home

    state: State = ctx.obj
    _stop(resolve_home(state.home))


def _stop(home: Path) -> None:
    from memloom.daemon_record import stop_daemon
    from memloom.errors import DaemonError

    try:
        info = stop_daemon(home)
    except DaemonError as exc:
        raise CliError(str(exc)) from exc
    if info is None:
        console().print("no memloom daemon is running")
    else:
        console().print(f"stopped memloom daemon (pid {info['pid']}, {info.get('url')})")


def mcp_command(
    ctx: typer.Context,
    transport: Annotated[
        str, typer.Option(help="stdio (the client starts the server) or http (streamable HTTP).")
    ] = "stdio",
    host: Annotated[
        str, typer.Option(help="Address for --transport http; loopback unless --allow-remote.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port for --transport http.", min=1, max=65535)] = 4320,
    allow_remote: Annotated[
        bool,
        typer.Option(
            "--allow-remote",
            help="Allow a non-loopback --host (every request still needs the API token).",
        ),
    ] = False,
    log_level: Annotated[
        str, typer.Option(help="DEBUG, INFO, WARNING or ERROR; logs go to stderr.")
    ] = "WARNING",
) -> None:
    """Serve memory tools to AI agents over MCP (stdio by default; see docs/mcp.md).

    Add it to Claude Code with: claude mcp add memloom -- memloom mcp
    """
    if transport == "stdio":
        from memloom.mcp_stdio import serve

        raise typer.Exit(serve(home_arg(ctx), log_level.upper()))
    from memloom.mcp import run

    run(
        home_arg(ctx),
        transport,  # type: ignore[arg-type]
        host,
        port,
        allow_remote=allow_remote,
        log_level=log_level.upper(),  # type: ignore[arg-type]
    )


def ui(ctx: typer.Context) -> None:
    """Open the viewer in your browser (starting the daemon if it is not running).

    The link carries the daemon's token in its #fragment, which the browser keeps to
    itself: nothing to type, and the token reaches no log.
    """
    import subprocess
    import time as _time
    import webbrowser

    from memloom.access import find_token
    from memloom.config import resolve_home
    from memloom.daemon_record import reachable_url, read_daemon
    from memloom.errors import ConfigError
    from memloom.location import read_config
    from memloom.server.daemon import viewer_link

    state: State = ctx.obj
    home = resolve_home(state.home)
    info = read_daemon(home)
    if info is None:
        cmd = [sys.executable, "-m", "memloom._entry", "--home", str(home), "serve"]
        subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = _time.monotonic() + 30
        while info is None and _time.monotonic() < deadline:
            _time.sleep(0.2)
            info = read_daemon(home)
        if info is None:
            raise CliError("the daemon did not start; run `memloom serve` to see why")
    try:
        source = find_token(home, read_config(home))
    except ConfigError as exc:
        raise CliError(str(exc)) from exc
    base = reachable_url(str(info["url"]))
    url = viewer_link(base, source.token) if source is not None else base + "/"
    opened = webbrowser.open(url)
    shown = base + "/#token=…" if source is not None else url
    console().print(f"{'opened' if opened else 'open'} {shown if opened else url}")


def register(app: typer.Typer) -> None:
    app.command()(serve)
    app.command()(stop)
    app.command("mcp")(mcp_command)
    app.command()(ui)
