"""Team commands: API tokens for a shared store, and moving a store to PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

import typer

from memloom.cli._common import CliError, console_err, default_command, emit_json

tokens_app = typer.Typer(
    help=(
        "API tokens for a shared PostgreSQL store: each maps to one owner, whose "
        "memories it reads and writes, plus team scopes it may read. Alone, "
        "`memloom tokens` is `memloom tokens list` (`memloom tokens --json` too)."
    ),
)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead.")]


def _admin(ctx: typer.Context, job: str, *args: Any) -> Any:
    """Run one of :mod:`memloom.admin`'s token jobs on the configured (shared) store."""
    from memloom import admin
    from memloom.config import load_settings

    return getattr(admin, job)(load_settings(ctx.obj.home), *args)


def _when(ts: float | None) -> str:
    if ts is None:
        return "-"
    return datetime.fromtimestamp(ts, UTC).astimezone().strftime("%Y-%m-%d %H:%M")


def _doc(row: Any) -> dict[str, Any]:
    return {
        "id": row.id,
        "name": row.name,
        "owner": row.owner,
        "shared": row.shared,
        "created_at": row.created_at,
        "last_used_at": row.last_used_at,
        "revoked_at": row.revoked_at,
    }


@tokens_app.command("create")
def tokens_create(
    ctx: typer.Context,
    owner: Annotated[str, typer.Option("--owner", help="Whose memories the token acts on.")],
    share: Annotated[
        list[str] | None,
        typer.Option("--share", help="A team scope it may also read (repeatable)."),
    ] = None,
    name: Annotated[str | None, typer.Option("--name", help="A label, e.g. the laptop.")] = None,
    json_: JsonOpt = False,
) -> None:
    """Create a token; its secret is shown once (only a hash is stored)."""

    owner = owner.strip()
    scopes = [s.strip() for s in share or [] if s.strip()]
    if not owner:
        raise CliError("--owner must not be empty")
    row, secret = _admin(ctx, "create_token", owner, scopes, name)
    if json_:
        emit_json({**_doc(row), "token": secret})
        return
    typer.echo(
        f"token {row.id} for owner {row.owner!r}" + (f", reads {row.shared}" if row.shared else "")
    )
    typer.echo(secret)
    typer.echo(
        "Keep it now: it is not shown again. Clients send 'Authorization: Bearer <token>'.",
        err=True,
    )


@tokens_app.command("list")
def tokens_list(ctx: typer.Context, json_: JsonOpt = False) -> None:
    """Every token (never the secrets)."""

    rows = _admin(ctx, "list_tokens")
    if json_:
        emit_json({"tokens": [_doc(r) for r in rows]})
        return
    if not rows:
        typer.echo("no tokens (create one with: memloom tokens create --owner NAME)")
    for r in rows:
        state = (
            f"revoked {_when(r.revoked_at)}"
            if r.revoked_at
            else f"last used {_when(r.last_used_at)}"
        )
        shared = f" reads {','.join(r.shared)}" if r.shared else ""
        label = f" ({r.name})" if r.name else ""
        typer.echo(
            f"{r.id}  owner {r.owner}{shared}{label}  created {_when(r.created_at)}  {state}"
        )


@tokens_app.command("revoke")
def tokens_revoke(
    ctx: typer.Context,
    token_id: Annotated[str, typer.Argument(help="The token's id (from `tokens list`).")],
    json_: JsonOpt = False,
) -> None:
    """Revoke a token: requests carrying it get 401 from then on."""

    row = _admin(ctx, "revoke_token", token_id)
    if json_:
        emit_json(_doc(row))
    else:
        typer.echo(f"revoked {row.id} (owner {row.owner})")


default_command(tokens_app, tokens_list)


def migrate_command(
    ctx: typer.Context,
    to: Annotated[
        str, typer.Option("--to", help="The PostgreSQL URL to copy into (postgresql://…).")
    ],
    owner: Annotated[
        str | None,
        typer.Option("--owner", help="Owner of the copied memories in the shared store."),
    ] = None,
    json_: JsonOpt = False,
) -> None:
    """Copy this SQLite store into PostgreSQL (memories, versions, conflicts, provenance,
    ledger), re-using the embeddings. Safe to run again: copied rows are skipped."""
    from dataclasses import asdict

    from memloom.config import load_settings, redact_url
    from memloom.store.base import LOCAL_OWNER

    if not to.startswith(("postgresql://", "postgres://")):
        raise CliError("--to must be a postgresql:// URL")
    settings = load_settings(ctx.obj.home)
    if settings.sqlite_path is None:
        raise CliError("the configured store is not SQLite; unset MEMLOOM_DATABASE_URL")
    if not settings.sqlite_path.exists():
        raise CliError(f"no SQLite store at {settings.sqlite_path}")
    from rich.progress import Progress

    from memloom.admin import migrate_to_postgres

    with Progress(console=console_err(), transient=True, disable=json_) as bar:
        task = bar.add_task("copying memories", total=None)
        report = migrate_to_postgres(
            settings.sqlite_path,
            to,
            owner or settings.owner or LOCAL_OWNER,
            lambda done, total: bar.update(task, completed=done, total=total),
        )
    if json_:
        emit_json(asdict(report))
        return
    typer.echo(
        f"copied {report.memories} memories ({report.skipped} already there), "
        f"{report.conflicts} conflicts, {report.provenance} provenance rows, "
        f"{report.ledger} ledger entries into {redact_url(to)}; it now holds "
        f"{report.target_total} memories"
    )
    typer.echo(f"use it with: export MEMLOOM_DATABASE_URL='{redact_url(to)}'")


def register(app: typer.Typer) -> None:
    app.add_typer(tokens_app, name="tokens")
    app.command("migrate")(migrate_command)
