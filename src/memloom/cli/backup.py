"""Backups: ``memloom export``, ``memloom import-backup`` and ``memloom backup``."""

from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from memloom.cli._common import CliError, emit_json

JsonOpt = Annotated[bool, typer.Option("--json", help="Print the report as JSON.")]


def export(
    ctx: typer.Context,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write to this file (mode 0600) instead of stdout."),
    ] = None,
    embeddings: Annotated[
        bool,
        typer.Option(
            "--embeddings", help="Include the vectors (float32, base64): no re-embedding."
        ),
    ] = False,
) -> None:
    """Write the whole store as JSON lines: every version of every memory, provenance,
    conflicts and the import ledger (restore it with `memloom import-backup`)."""
    import memloom
    from memloom.admin import create_private_file

    if output is not None:
        if output.exists():
            raise CliError(f"{output} exists; choose a new file")
        create_private_file(output)
    with memloom.open(ctx.obj.home and str(ctx.obj.home), check_embedder=False) as m:
        if output is None:
            m.dump_backup(sys.stdout, embeddings=embeddings, version=memloom.__version__)
            return
        with output.open("w", encoding="utf-8") as fh:
            report = m.dump_backup(fh, embeddings=embeddings, version=memloom.__version__)
    typer.echo(
        f"exported {report.memories} memories, {report.provenance} provenance rows, "
        f"{report.conflicts} conflicts, {report.ledger} ledger entries to {output}",
        err=True,
    )


def import_backup(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(help="A file written by `memloom export`.")],
    json_: JsonOpt = False,
) -> None:
    """Restore a backup into this store (checked in full first; rows already here are
    kept, so it is safe to run again). Vectors missing from the backup are computed."""
    import memloom

    if not path.is_file():
        raise CliError(f"no backup file at {path}")
    with memloom.open(ctx.obj.home and str(ctx.obj.home), check_embedder=False) as m:
        report = m.restore_backup(path)
    if json_:
        emit_json(asdict(report))
        return
    typer.echo(
        f"restored {report.memories} memories ({report.skipped} already here, "
        f"{report.embedded} re-embedded), {report.provenance} provenance rows, "
        f"{report.conflicts} conflicts, {report.ledger} ledger entries"
    )


def backup(
    ctx: typer.Context,
    dest: Annotated[Path, typer.Argument(help="The new SQLite file to write.")],
    json_: JsonOpt = False,
) -> None:
    """A consistent copy of the live SQLite store, while the daemon and hooks keep
    writing (SQLite's online backup). For PostgreSQL use pg_dump."""
    from memloom.admin import online_backup
    from memloom.config import load_settings

    count = online_backup(load_settings(ctx.obj.home), dest)
    if json_:
        emit_json({"path": str(dest), "memories": count})
    else:
        typer.echo(f"copied {count} memories to {dest} (integrity check: ok)")


def register(app: typer.Typer) -> None:
    app.command("export")(export)
    app.command("import-backup")(import_backup)
    app.command("backup")(backup)
