"""``memloom conflicts``: review and settle conflicting memories."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from memloom.cli._common import (
    CliError,
    JsonOpt,
    console,
    console_err,
    default_command,
    emit_json,
    open_engine,
    short,
)

conflicts_app = typer.Typer(
    help=(
        "Review conflicting memories: list, show, resolve, revert, auto. Alone, "
        "`memloom conflicts` is `memloom conflicts list`: the options below are list's "
        "(e.g. `memloom conflicts --json --status all`)."
    ),
)


def _print_conflict(out: Any, c: Any, full: bool = False) -> None:
    width = 400 if full else 90
    dist = f"{c.distance:.2f}" if c.distance is not None else "-"
    head = f"{c.id}  {c.status}{' (' + c.resolution + ')' if c.resolution else ''}  distance {dist}"
    out.print(head, markup=False)
    out.print(f"  new      {c.new.id} [{c.new.status}]  {short(c.new.text, width)}", markup=False)
    out.print(
        f"  existing {c.existing.id} [{c.existing.status}]  {short(c.existing.text, width)}",
        markup=False,
    )
    if full:
        if c.reason:
            out.print(f"  reason   {c.reason}", markup=False)
        for label, side in (("new", c.new), ("existing", c.existing)):
            if side.excerpt:
                out.print(f"  {label} excerpt: {short(side.excerpt, 300)}", markup=False)


@conflicts_app.command("list")
def conflicts_list(
    ctx: typer.Context,
    status: Annotated[str, typer.Option(help="pending | resolved | all")] = "pending",
    limit: Annotated[int, typer.Option(min=1, max=500, help="Per page.")] = 20,
    page: Annotated[int, typer.Option(min=1, help="Page number.")] = 1,
    json_: JsonOpt = False,
) -> None:
    """List conflicts a page at a time, newest first."""
    if status not in ("pending", "resolved", "all"):
        raise CliError("--status must be pending, resolved or all")
    with open_engine(ctx) as m:
        result = m.conflicts(None if status == "all" else status, limit, (page - 1) * limit)
    if json_:
        emit_json(result)
        return
    out = console()
    if not result.conflicts:
        out.print(f"no {status if status != 'all' else ''} conflicts".replace("  ", " "))
        return
    for c in result.conflicts:
        _print_conflict(out, c)
    first = (page - 1) * limit + 1
    last = first + len(result.conflicts) - 1
    line = f"{first}-{last} of {result.total}"
    if last < result.total:
        line += f"; next page: memloom conflicts list --page {page + 1}"
    out.print(line)


@conflicts_app.command("show")
def conflicts_show(
    ctx: typer.Context,
    conflict_id: Annotated[str, typer.Argument(metavar="ID")],
    json_: JsonOpt = False,
) -> None:
    """Both sides in full, with the reason and the transcript excerpts."""
    with open_engine(ctx) as m:
        doc = m.conflict(conflict_id)
    if json_:
        emit_json(doc)
    else:
        _print_conflict(console(), doc, full=True)


@conflicts_app.command("resolve")
def conflicts_resolve(
    ctx: typer.Context,
    conflict_id: Annotated[str, typer.Argument(metavar="ID")],
    keep: Annotated[str | None, typer.Option(help="new | existing | both")] = None,
    merge: Annotated[str | None, typer.Option(help="Replace both with this merged text.")] = None,
    json_: JsonOpt = False,
) -> None:
    """Settle a conflict: --keep new|existing|both, or --merge TEXT. Revertable."""
    if (keep is None) == (merge is None):
        raise CliError("say how to resolve it: --keep new|existing|both, or --merge TEXT")
    if keep is not None and keep not in ("new", "existing", "both"):
        raise CliError("--keep must be new, existing or both")
    request = {"action": f"keep_{keep}"} if keep else {"action": "merge", "text": merge}
    with open_engine(ctx) as m:
        doc = m.resolve(conflict_id, request)
    if json_:
        emit_json(doc)
    else:
        console().print(
            f"resolved {doc.id}: {doc.resolution} (undo: memloom conflicts revert {doc.id})"
        )


@conflicts_app.command("revert")
def conflicts_revert(
    ctx: typer.Context,
    conflict_id: Annotated[str, typer.Argument(metavar="ID")],
    json_: JsonOpt = False,
) -> None:
    """Undo a resolution: both memories return to how they were."""
    with open_engine(ctx) as m:
        doc = m.revert(conflict_id)
    if json_:
        emit_json(doc)
    else:
        console().print(f"reverted {doc.id}: pending again")


@conflicts_app.command("auto")
def conflicts_auto(ctx: typer.Context, json_: JsonOpt = False) -> None:
    """Let the LLM judge settle the pending queue where it is sure (all revertable)."""
    err = console_err()
    with open_engine(ctx) as m:

        def progress(event: dict[str, Any]) -> None:
            if not json_:
                err.print(f"  {event['done']}/{event['total']} {event['verdict'] or 'failed'}")

        summary = m.auto_resolve(progress)
    if json_:
        emit_json(summary)
        return
    out = console()
    out.print(
        f"judged {summary['judged']} of {summary['pending']}: resolved {summary['resolved']}, "
        f"unsure {summary['unsure']}, failed {summary['failed']}"
    )
    if summary.get("reason"):
        out.print(summary["reason"], markup=False)


default_command(conflicts_app, conflicts_list)


def register(app: typer.Typer) -> None:
    app.add_typer(conflicts_app, name="conflicts")
