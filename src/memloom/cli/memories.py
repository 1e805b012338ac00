"""Commands on memories: save, update, expire, supersede, forget, recall, show,
history, stats, decay, restore, pin, reembed."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer

from memloom.cli._common import (
    SENSITIVITY_NAMES,
    CliError,
    JsonOpt,
    console,
    emit_json,
    home_arg,
    need_working_folder,
    open_engine,
    project_name,
    project_option,
    short,
    when,
    working_folder,
)

FileOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--file",
        help="A file of this folder the memory is about (repeatable): an anchor, "
        "checked against the code at recall.",
    ),
]


def _given(files: list[Path] | None) -> list[dict[str, str]]:
    """``--file`` as anchors: paths relative to the working folder, never out of it."""
    if not files:
        return []
    here = need_working_folder()
    out = []
    for file in files:
        rel = os.path.relpath(os.path.join(here, file), here)
        if rel == ".." or rel.startswith(".." + os.sep):
            raise CliError(f"--file {file}: not inside the working folder {here}")
        out.append({"path": rel.replace(os.sep, "/")})
    return out


def save(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(help="What to remember.")],
    type_: Annotated[
        str, typer.Option("--type", "-t", help="fact | preference | episode | procedure")
    ] = "fact",
    tag: Annotated[list[str] | None, typer.Option("--tag", help="A tag (repeatable).")] = None,
    source: Annotated[str | None, typer.Option(help="Where it came from.")] = None,
    project: Annotated[str | None, typer.Option(help="Project scope (default: global).")] = None,
    sensitivity: Annotated[
        int | None, typer.Option(min=0, max=3, help="0 none, 1 PII, 2 internal, 3 credentials.")
    ] = None,
    expires_at: Annotated[
        datetime | None, typer.Option("--expires-at", help="Forget after this time (UTC).")
    ] = None,
    file: FileOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Save one memory (deduplicated against what is already stored). The files of this
    folder's repository its text names, or --file names, are its anchors."""
    with open_engine(ctx) as m:
        result = m.save(
            {
                "text": text,
                "type": type_,
                "tags": tag or [],
                "source": source,
                "project": project_option(project),
                "sensitivity": sensitivity,
                "expires_at": expires_at,
                "anchors": _given(file),
            },
            folder=working_folder(),
        )
    if json_:
        emit_json(result)
        return
    out = console()
    out.print(f"{result.outcome}: {result.id}")
    for c in result.conflicts:
        out.print(
            f"  possible conflict {c.conflict_id} with {c.existing_id} "
            f"(distance {c.distance:.2f}): {short(c.existing_text, 80)}"
        )


def update(
    ctx: typer.Context,
    memory_id: Annotated[str, typer.Argument(metavar="ID")],
    text: Annotated[str, typer.Argument(help="The new text.")],
    file: FileOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Write a new version of a memory (the old one is kept in its history). Its anchors
    are found again in this folder; --file replaces the files named before."""
    request = {"text": text, **({"anchors": _given(file)} if file else {})}
    with open_engine(ctx) as m:
        result = m.update(m.resolve_id(memory_id), request, folder=working_folder())
    if json_:
        emit_json(result)
    else:
        console().print(f"version {result.version}: {result.id} (belief {result.root_id})")


def expire(
    ctx: typer.Context,
    ids: Annotated[list[str], typer.Argument(metavar="ID...")],
    json_: JsonOpt = False,
) -> None:
    """Mark memories expired: kept for audit, left out of recall."""
    with open_engine(ctx) as m:
        result = m.expire({"ids": [m.resolve_id(i) for i in ids]})
    if json_:
        emit_json(result)
    else:
        console().print(f"expired {result.expired}")


def supersede(
    ctx: typer.Context,
    old: Annotated[str, typer.Argument(metavar="OLD")],
    new: Annotated[str, typer.Argument(metavar="NEW")],
    json_: JsonOpt = False,
) -> None:
    """Expire OLD and point it at its replacement NEW."""
    with open_engine(ctx) as m:
        result = m.supersede({"old_id": m.resolve_id(old), "new_id": m.resolve_id(new)})
    if json_:
        emit_json(result)
    else:
        console().print(f"{old} superseded by {new}")


def forget(
    ctx: typer.Context,
    id_: Annotated[list[str] | None, typer.Option("--id", help="A memory id (repeatable).")] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="A tag (repeatable).")] = None,
    before: Annotated[datetime | None, typer.Option(help="Created before this time (UTC).")] = None,
    project: Annotated[
        str | None, typer.Option("--project", help="Only this project's memories.")
    ] = None,
    all_: Annotated[
        bool,
        typer.Option("--all", help="Every project's and the global ones (the default here)."),
    ] = False,
    json_: JsonOpt = False,
) -> None:
    """Delete memories for good, with all their versions. Criteria combine with AND.

    At your terminal a forget by --tag or --before reaches every project unless you give
    --project (over HTTP too, as in Distill); over MCP it must name its scope (a project,
    or all)."""
    if not id_ and not tag and before is None:
        raise CliError("say what to forget: --id, --tag and/or --before")
    if project is not None and all_:
        raise CliError("give --project or --all, not both")
    with open_engine(ctx) as m:
        ids = [m.resolve_id(i) for i in id_ or []]
        result = m.forget(
            {
                "ids": ids,
                "tags": tag or [],
                "before": before,
                "project": project_option(project),
                "all": all_,
            }
        )
    if json_:
        emit_json(result)
    else:
        console().print(f"removed {result.removed}; {result.total_memories} memories remain")


# ---------------------------------------------------------------- read


def _relevance_floor(value: str | None) -> float | str | None:
    """``--min-relevance``: a number in [0, 1] or ``auto``."""
    if value is None or value == "auto":
        return value
    try:
        number = float(value)
    except ValueError:
        number = -1.0
    if not 0.0 <= number <= 1.0:
        raise typer.BadParameter(f"{value!r} is neither a number from 0 to 1 nor 'auto'")
    return number


def recall(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What you are looking for.")],
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=1000)] = 10,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="Only with this tag.")] = None,
    boost_tag: Annotated[
        list[str] | None, typer.Option("--boost-tag", help="Rank this tag higher.")
    ] = None,
    task_context: Annotated[str | None, typer.Option("--task-context")] = None,
    min_relevance: Annotated[
        str | None,
        typer.Option(
            "--min-relevance",
            callback=_relevance_floor,
            help="Drop memories below this (0-1), or 'auto': the calibrated threshold "
            "below which nothing is relevant (the hooks' and MCP's default).",
        ),
    ] = None,
    recency_weight: Annotated[float, typer.Option("--recency-weight", min=0, max=1)] = 0.0,
    max_tokens: Annotated[int | None, typer.Option("--max-tokens", min=1)] = None,
    include_expired: Annotated[bool, typer.Option("--include-expired")] = False,
    project: Annotated[str | None, typer.Option(help="This project and global memories.")] = None,
    type_: Annotated[list[str] | None, typer.Option("--type", help="Only this type.")] = None,
    max_sensitivity: Annotated[int | None, typer.Option("--max-sensitivity", min=0, max=3)] = None,
    json_: JsonOpt = False,
) -> None:
    """Find the memories most relevant to QUERY."""
    with open_engine(ctx) as m:
        result = m.recall(
            {
                "query": query,
                "max_results": limit,
                "tags": tag or [],
                "boost_tags": boost_tag or [],
                "task_context": task_context,
                "min_relevance": min_relevance,
                "recency_weight": recency_weight,
                "max_tokens": max_tokens,
                "include_expired": include_expired,
                "project": project_option(project),
                "types": type_ or [],
                "max_sensitivity": max_sensitivity,
                # The code each memory is about is checked in this folder's working tree.
                "folder": working_folder(),
            }
        )
    if json_:
        emit_json(result)
        return
    out = console()
    if not result.memories:
        out.print("no memories match")
        return
    for mem in result.memories:
        scope = f"[{project_name(mem.project)}] " if mem.project else ""
        out.print(
            f"{mem.relevance:.2f}  {mem.id}  {mem.type:<10} {scope}{short(mem.text, 160)}",
            markup=False,
        )
        if mem.stale:
            out.print(f"      may be out of date: {mem.stale}", style="yellow", markup=False)
        for p in mem.provenance[:2]:
            out.print(
                f"      from {Path(p.path or '').name or p.session_id} "
                f"lines {p.start_line}-{p.end_line}",
                style="dim",
                markup=False,
            )


def stale(
    ctx: typer.Context,
    project: Annotated[
        str | None,
        typer.Option(help="This project's memories (default: this folder's project)."),
    ] = None,
    json_: JsonOpt = False,
) -> None:
    """List the memories whose code changed in this folder's working tree (a file gone,
    an identifier no longer in its file), with why. For review: nothing is expired or
    deleted; `memloom expire ID` or `memloom update ID` when one is out of date."""
    with open_engine(ctx) as m:
        result = m.stale(need_working_folder(), project_option(project))
    if json_:
        emit_json(result)
        return
    out = console()
    if result.note:
        out.print(result.note, markup=False)
        return
    if not result.memories:
        out.print(f"no stale memories ({result.checked} with anchors checked)")
        return
    for mem in result.memories:
        out.print(f"{mem.id}  {mem.type:<10} {short(mem.text, 160)}", markup=False)
        out.print(f"      {mem.stale}", style="yellow", markup=False)
    out.print(f"{len(result.memories)} stale of {result.checked} with anchors", style="dim")


def show(
    ctx: typer.Context,
    memory_id: Annotated[str, typer.Argument(metavar="ID")],
    json_: JsonOpt = False,
) -> None:
    """Show one memory with its versions and where it came from; run inside its
    repository, whether the code it is about changed since."""
    with open_engine(ctx) as m:
        doc = m.get(m.resolve_id(memory_id), folder=working_folder())
    if json_:
        emit_json(doc)
        return
    out = console()
    out.print(f"[bold]{doc.id}[/bold]  {doc.type}  {doc.status}  version {doc.version}")
    out.print(doc.text, markup=False)
    if doc.original_text and doc.original_text != doc.text:
        out.print(f"\n[dim]original (decay level {doc.decay_level}):[/dim]")
        out.print(doc.original_text, markup=False)
    fields = {
        "tags": ", ".join(doc.tags),
        "project": doc.project or "(global)",
        "source": doc.source or "",
        "sensitivity": f"{doc.sensitivity} {SENSITIVITY_NAMES[doc.sensitivity]}",
        "created": when(doc.created_at),
        "last referenced": f"{when(doc.last_referenced)} ({doc.access_count} uses)",
        "expires": when(doc.expires_at),
        "superseded by": doc.superseded_by or "",
        "pinned": "yes" if doc.pinned else "",
        "metadata": json.dumps(doc.metadata) if doc.metadata else "",
        "anchors": "; ".join(
            a.path + (f" ({', '.join(a.symbols)})" if a.symbols else "") for a in doc.anchors
        ),
        "commit": next((a.commit[:12] for a in doc.anchors if a.commit), ""),
        "code changed": doc.stale or "",
    }
    out.print()
    for key, value in fields.items():
        if value:
            style = "yellow" if key == "code changed" else None
            out.print(f"  {key:<16}{value}", markup=False, style=style)
    if len(doc.versions) > 1:
        out.print("\nversions:")
        for v in doc.versions:
            mark = "*" if v.id == doc.id else " "
            out.print(
                f" {mark} v{v.version} {v.id} {v.status:<8} {short(v.text, 70)}", markup=False
            )
    if doc.provenance:
        out.print("\nprovenance:")
        for p in doc.provenance:
            out.print(
                f"  {p.path or p.session_id} lines {p.start_line}-{p.end_line} ({p.project or ''})",
                markup=False,
            )
            if p.excerpt:
                out.print(f"    {short(p.excerpt, 200)}", markup=False)


def history(
    ctx: typer.Context,
    memory_id: Annotated[str, typer.Argument(metavar="ID")],
    json_: JsonOpt = False,
) -> None:
    """List every version of a memory, newest first."""
    with open_engine(ctx) as m:
        result = m.history(m.resolve_id(memory_id))
    if json_:
        emit_json(result)
        return
    out = console()
    for v in result.versions:
        out.print(
            f"v{v.version} {v.id} {v.status:<8} {when(v.created_at)}  {short(v.text, 70)}",
            markup=False,
        )


def stats(ctx: typer.Context, json_: JsonOpt = False) -> None:
    """Counts by status, type, project and decay level."""
    with open_engine(ctx) as m:
        result = m.stats()
    if json_:
        emit_json(result)
        return
    out = console()
    out.print(
        f"{result.total_memories} memories: {result.active_count} active, "
        f"{result.stale_count} stale (old versions), {result.expired_count} expired"
    )
    if result.by_type:
        out.print("by type: " + ", ".join(f"{k} {v}" for k, v in sorted(result.by_type.items())))
    if result.by_project:
        out.print(
            "by project: " + ", ".join(f"{k} {v}" for k, v in sorted(result.by_project.items()))
        )
    out.print(f"pending conflicts: {result.conflicts_pending}")
    out.print(f"embedder: {result.embedder or 'none yet'} (dimension {result.dimension or '-'})")


def decay(ctx: typer.Context, json_: JsonOpt = False) -> None:
    """Run one decay pass: unused memories shrink to summaries, then keywords, then go."""
    with open_engine(ctx) as m:
        result = m.decay()
    if json_:
        emit_json(result)
    else:
        console().print(
            f"summarized {result.summarized}, reduced to keywords {result.keywords}, "
            f"evicted {result.evicted}"
        )


def restore(
    ctx: typer.Context,
    memory_id: Annotated[str, typer.Argument(metavar="ID")],
    json_: JsonOpt = False,
) -> None:
    """Undo decay on a memory: its original text comes back."""
    with open_engine(ctx) as m:
        doc = m.restore(m.resolve_id(memory_id))
    if json_:
        emit_json(doc)
    else:
        console().print(f"restored {doc.id}")


def pin(
    ctx: typer.Context,
    memory_id: Annotated[str, typer.Argument(metavar="ID")],
    off: Annotated[bool, typer.Option("--off", help="Unpin instead.")] = False,
    json_: JsonOpt = False,
) -> None:
    """Pin a memory so it never decays."""
    with open_engine(ctx) as m:
        doc = m.pin(m.resolve_id(memory_id), not off)
    if json_:
        emit_json(doc)
    else:
        console().print(f"{'unpinned' if off else 'pinned'} {doc.id}")


def reembed(ctx: typer.Context, json_: JsonOpt = False) -> None:
    """Re-embed every memory with the configured embedder (after changing MEMLOOM_EMBEDDER)."""
    import memloom

    m = memloom.open(home_arg(ctx), check_embedder=False)
    try:
        before = m.embedder_fingerprint()
        result = m.reembed()
    finally:
        m.close()
    if json_:
        emit_json({**result, "previous": before})
    else:
        count, after = result["reembedded"], result["embedder"]
        console().print(f"re-embedded {count} memories: {before or 'none'} -> {after}")


def register(app: typer.Typer) -> None:
    app.command()(save)
    app.command()(update)
    app.command()(expire)
    app.command()(supersede)
    app.command()(forget)
    app.command()(recall)
    app.command()(stale)
    app.command()(show)
    app.command()(history)
    app.command()(stats)
    app.command()(decay)
    app.command()(restore)
    app.command()(pin)
    app.command()(reembed)
