"""The ``memloom`` command: a thin shell over :class:`memloom.Memloom`.

Every command takes ``--json`` and then prints the same document the HTTP API
returns; without it, output is for people. Errors are one line on stderr and a
non-zero exit status.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from memloom.cli_backup import register as _register_backup
from memloom.cli_team import register as _register_team
from memloom.errors import CliError

if TYPE_CHECKING:
    from pydantic import BaseModel

    from memloom.engine import Memloom

HELP = """\
memloom — long-term memory for AI coding agents, kept on your machine.

Memories are short typed statements (fact, preference, episode, procedure) in a
SQLite file under MEMLOOM_HOME (default ~/.memloom), or for a team in PostgreSQL
(MEMLOOM_DATABASE_URL=postgresql://…, see `memloom tokens`). They come from your Claude
Code sessions (distilled, secrets redacted) or from you and your agents.
Recall ranks them by meaning, keywords, recency and tags. Everything runs
offline; an LLM (MEMLOOM_LLM) makes the distilled memories better.

Examples:

\b
  memloom import sessions                      # distill recent Claude Code sessions
  memloom recall "how do I run the tests?" --project api
  memloom save "Run the tests with: make check" --type procedure
  memloom connect claude-code --all            # capture every session from now on
  memloom serve                                # HTTP API, viewer, background capture
  claude mcp add memloom -- memloom mcp        # give Claude Code the memory tools
"""

app = typer.Typer(
    help=HELP,
    no_args_is_help=True,
    rich_markup_mode=None,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print the JSON document instead.")]


@dataclass
class State:
    home: Path | None


@app.callback()
def _root(
    ctx: typer.Context,
    home: Annotated[
        Path | None,
        typer.Option(
            "--home",
            envvar="MEMLOOM_HOME",
            help="Data folder (config.toml, memloom.db). Default: ~/.memloom",
            show_default=False,
        ),
    ] = None,
) -> None:
    ctx.obj = State(home=home)


@contextmanager
def _engine(ctx: typer.Context) -> Iterator[Memloom]:
    import memloom

    state: State = ctx.obj
    m = memloom.open(str(state.home) if state.home else None)
    try:
        yield m
    finally:
        m.close()


def _console() -> Any:
    from rich.console import Console

    # soft_wrap: long lines are left to the terminal rather than hard-wrapped at 80
    # columns when output is piped.
    return Console(highlight=False, soft_wrap=True)


def _emit_json(doc: BaseModel | dict[str, Any]) -> None:
    data = doc.model_dump(mode="json") if hasattr(doc, "model_dump") else doc
    sys.stdout.write(json.dumps(data, ensure_ascii=False) + "\n")


def _short(text: str, width: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _when(value: datetime | None) -> str:
    return "" if value is None else value.astimezone().strftime("%Y-%m-%d %H:%M")


SENSITIVITY_NAMES = {0: "none", 1: "pii", 2: "internal", 3: "credentials"}


# ---------------------------------------------------------------- write


@app.command()
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
    json_: JsonOpt = False,
) -> None:
    """Save one memory (deduplicated against what is already stored)."""
    with _engine(ctx) as m:
        result = m.save(
            {
                "text": text,
                "type": type_,
                "tags": tag or [],
                "source": source,
                "project": project,
                "sensitivity": sensitivity,
                "expires_at": expires_at,
            }
        )
    if json_:
        _emit_json(result)
        return
    out = _console()
    out.print(f"{result.outcome}: {result.id}")
    for c in result.conflicts:
        out.print(
            f"  possible conflict {c.conflict_id} with {c.existing_id} "
            f"(distance {c.distance:.2f}): {_short(c.existing_text, 80)}"
        )


@app.command()
def update(
    ctx: typer.Context,
    memory_id: Annotated[str, typer.Argument(metavar="ID")],
    text: Annotated[str, typer.Argument(help="The new text.")],
    json_: JsonOpt = False,
) -> None:
    """Write a new version of a memory (the old one is kept in its history)."""
    with _engine(ctx) as m:
        result = m.update(m.resolve_id(memory_id), text)
    if json_:
        _emit_json(result)
    else:
        _console().print(f"version {result.version}: {result.id} (belief {result.root_id})")


@app.command()
def expire(
    ctx: typer.Context,
    ids: Annotated[list[str], typer.Argument(metavar="ID...")],
    json_: JsonOpt = False,
) -> None:
    """Mark memories expired: kept for audit, left out of recall."""
    with _engine(ctx) as m:
        result = m.expire({"ids": [m.resolve_id(i) for i in ids]})
    if json_:
        _emit_json(result)
    else:
        _console().print(f"expired {result.expired}")


@app.command()
def supersede(
    ctx: typer.Context,
    old: Annotated[str, typer.Argument(metavar="OLD")],
    new: Annotated[str, typer.Argument(metavar="NEW")],
    json_: JsonOpt = False,
) -> None:
    """Expire OLD and point it at its replacement NEW."""
    with _engine(ctx) as m:
        result = m.supersede({"old_id": m.resolve_id(old), "new_id": m.resolve_id(new)})
    if json_:
        _emit_json(result)
    else:
        _console().print(f"{old} superseded by {new}")


@app.command()
def forget(
    ctx: typer.Context,
    id_: Annotated[list[str] | None, typer.Option("--id", help="A memory id (repeatable).")] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="A tag (repeatable).")] = None,
    before: Annotated[datetime | None, typer.Option(help="Created before this time (UTC).")] = None,
    json_: JsonOpt = False,
) -> None:
    """Delete memories for good, with all their versions. Criteria combine with AND."""
    if not id_ and not tag and before is None:
        raise CliError("say what to forget: --id, --tag and/or --before")
    with _engine(ctx) as m:
        ids = [m.resolve_id(i) for i in id_ or []]
        result = m.forget({"ids": ids, "tags": tag or [], "before": before})
    if json_:
        _emit_json(result)
    else:
        _console().print(f"removed {result.removed}; {result.total_memories} memories remain")


# ---------------------------------------------------------------- read


@app.command()
def recall(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What you are looking for.")],
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=1000)] = 10,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="Only with this tag.")] = None,
    boost_tag: Annotated[
        list[str] | None, typer.Option("--boost-tag", help="Rank this tag higher.")
    ] = None,
    task_context: Annotated[str | None, typer.Option("--task-context")] = None,
    min_relevance: Annotated[float | None, typer.Option("--min-relevance", min=0, max=1)] = None,
    recency_weight: Annotated[float, typer.Option("--recency-weight", min=0, max=1)] = 0.0,
    max_tokens: Annotated[int | None, typer.Option("--max-tokens", min=1)] = None,
    include_expired: Annotated[bool, typer.Option("--include-expired")] = False,
    project: Annotated[str | None, typer.Option(help="This project and global memories.")] = None,
    type_: Annotated[list[str] | None, typer.Option("--type", help="Only this type.")] = None,
    max_sensitivity: Annotated[int | None, typer.Option("--max-sensitivity", min=0, max=3)] = None,
    json_: JsonOpt = False,
) -> None:
    """Find the memories most relevant to QUERY."""
    with _engine(ctx) as m:
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
                "project": project,
                "types": type_ or [],
                "max_sensitivity": max_sensitivity,
            }
        )
    if json_:
        _emit_json(result)
        return
    out = _console()
    if not result.memories:
        out.print("no memories match")
        return
    for mem in result.memories:
        scope = f"[{_project_name(mem.project)}] " if mem.project else ""
        out.print(
            f"{mem.relevance:.2f}  {mem.id}  {mem.type:<10} {scope}{_short(mem.text, 160)}",
            markup=False,
        )
        for p in mem.provenance[:2]:
            out.print(
                f"      from {Path(p.path or '').name or p.session_id} "
                f"lines {p.start_line}-{p.end_line}",
                style="dim",
                markup=False,
            )


def _project_name(project: str | None) -> str:
    """The last part of a project path: what people call the project."""
    if not project:
        return ""
    return project.rstrip("/").rsplit("/", 1)[-1] or project


@app.command()
def show(
    ctx: typer.Context,
    memory_id: Annotated[str, typer.Argument(metavar="ID")],
    json_: JsonOpt = False,
) -> None:
    """Show one memory with its versions and where it came from."""
    with _engine(ctx) as m:
        doc = m.get(m.resolve_id(memory_id))
    if json_:
        _emit_json(doc)
        return
    out = _console()
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
        "created": _when(doc.created_at),
        "last referenced": f"{_when(doc.last_referenced)} ({doc.access_count} uses)",
        "expires": _when(doc.expires_at),
        "superseded by": doc.superseded_by or "",
        "pinned": "yes" if doc.pinned else "",
        "metadata": json.dumps(doc.metadata) if doc.metadata else "",
    }
    out.print()
    for key, value in fields.items():
        if value:
            out.print(f"  {key:<16}{value}", markup=False)
    if len(doc.versions) > 1:
        out.print("\nversions:")
        for v in doc.versions:
            mark = "*" if v.id == doc.id else " "
            out.print(
                f" {mark} v{v.version} {v.id} {v.status:<8} {_short(v.text, 70)}", markup=False
            )
    if doc.provenance:
        out.print("\nprovenance:")
        for p in doc.provenance:
            out.print(
                f"  {p.path or p.session_id} lines {p.start_line}-{p.end_line} ({p.project or ''})",
                markup=False,
            )
            if p.excerpt:
                out.print(f"    {_short(p.excerpt, 200)}", markup=False)


@app.command()
def history(
    ctx: typer.Context,
    memory_id: Annotated[str, typer.Argument(metavar="ID")],
    json_: JsonOpt = False,
) -> None:
    """List every version of a memory, newest first."""
    with _engine(ctx) as m:
        result = m.history(m.resolve_id(memory_id))
    if json_:
        _emit_json(result)
        return
    out = _console()
    for v in result.versions:
        out.print(
            f"v{v.version} {v.id} {v.status:<8} {_when(v.created_at)}  {_short(v.text, 70)}",
            markup=False,
        )


@app.command()
def stats(ctx: typer.Context, json_: JsonOpt = False) -> None:
    """Counts by status, type, project and decay level."""
    with _engine(ctx) as m:
        result = m.stats()
    if json_:
        _emit_json(result)
        return
    out = _console()
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


@app.command()
def decay(ctx: typer.Context, json_: JsonOpt = False) -> None:
    """Run one decay pass: unused memories shrink to summaries, then keywords, then go."""
    with _engine(ctx) as m:
        result = m.decay()
    if json_:
        _emit_json(result)
    else:
        _console().print(
            f"summarized {result.summarized}, reduced to keywords {result.keywords}, "
            f"evicted {result.evicted}"
        )


@app.command()
def restore(
    ctx: typer.Context,
    memory_id: Annotated[str, typer.Argument(metavar="ID")],
    json_: JsonOpt = False,
) -> None:
    """Undo decay on a memory: its original text comes back."""
    with _engine(ctx) as m:
        doc = m.restore(m.resolve_id(memory_id))
    if json_:
        _emit_json(doc)
    else:
        _console().print(f"restored {doc.id}")


@app.command()
def pin(
    ctx: typer.Context,
    memory_id: Annotated[str, typer.Argument(metavar="ID")],
    off: Annotated[bool, typer.Option("--off", help="Unpin instead.")] = False,
    json_: JsonOpt = False,
) -> None:
    """Pin a memory so it never decays."""
    with _engine(ctx) as m:
        doc = m.pin(m.resolve_id(memory_id), not off)
    if json_:
        _emit_json(doc)
    else:
        _console().print(f"{'unpinned' if off else 'pinned'} {doc.id}")


@app.command()
def reembed(ctx: typer.Context, json_: JsonOpt = False) -> None:
    """Re-embed every memory with the configured embedder (after changing MEMLOOM_EMBEDDER)."""
    import memloom

    state: State = ctx.obj
    m = memloom.open(str(state.home) if state.home else None, check_embedder=False)
    try:
        before = m.backend.get_meta("embedder")
        result = m.reembed()
    finally:
        m.close()
    if json_:
        _emit_json({**result, "previous": before})
    else:
        count, after = result["reembedded"], result["embedder"]
        _console().print(f"re-embedded {count} memories: {before or 'none'} -> {after}")


@app.command()
def redact(
    ctx: typer.Context,
    lines: Annotated[
        bool, typer.Option("--lines", help="Treat each input line as its own text.")
    ] = False,
    json_: JsonOpt = False,
) -> None:
    """Mask secrets and personal data in standard input; print the result.

    Credentials, keys, tokens, passwords in URLs and assignments, e-mail
    addresses, phone, card, SSN and IBAN numbers become [redacted:RULE]
    markers. With --json, each input gives {"text", "redactions", "sensitivity"}.
    """
    from memloom.config import detector_for, load_settings

    state: State = ctx.obj
    detector = detector_for(load_settings(state.home))
    data = sys.stdin.read()
    inputs = data.split("\n") if lines else [data]
    if lines and inputs and inputs[-1] == "":
        inputs.pop()  # the newline that ends the last line is not an empty input
    for text in inputs:
        result = detector.analyze(text)
        if json_:
            _emit_json(result.to_json())
        elif lines:
            sys.stdout.write(result.text + "\n")
        else:
            sys.stdout.write(result.text)


import_app = typer.Typer(
    help="Bring memories in from elsewhere (Claude Code sessions).", no_args_is_help=True
)
app.add_typer(import_app, name="import")


@import_app.command("sessions")
def import_sessions(
    ctx: typer.Context,
    days: Annotated[float, typer.Option(help="Only sessions modified in the last DAYS days.")] = 14,
    sessions: Annotated[
        int, typer.Option(help="At most this many sessions, newest first.", min=1)
    ] = 20,
    project: Annotated[
        str | None, typer.Option(help="Only sessions whose project (cwd) contains this.")
    ] = None,
    path: Annotated[
        list[Path] | None,
        typer.Option(
            "--path",
            help="Transcript files or folders to import (skips discovery, window and caps).",
        ),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Show what would be distilled; call and write nothing."),
    ] = False,
    force: Annotated[bool, typer.Option(help="Reprocess sessions already imported.")] = False,
    json_: JsonOpt = False,
) -> None:
    """Distill Claude Code transcripts (~/.claude/projects) into typed memories.

    Secrets are redacted before anything is sent to the LLM or stored. Each
    session is read once: the next run only reads what was added since.
    """
    import memloom

    state: State = ctx.obj
    err = _console_err()
    with memloom.open(str(state.home) if state.home else None) as m:
        llm = m.llm
        if not json_:
            err.print(f"LLM: {llm.description}", markup=False)
        with _ImportProgress(err, enabled=not json_) as progress:
            report = m.import_sessions(
                path or None,
                days=days,
                sessions=sessions,
                project=project,
                dry_run=dry_run,
                force=force,
                progress=progress,
            )
    if json_:
        _emit_json(report)
    else:
        _print_import(report)
    if report.stopped:
        raise typer.Exit(2)


def _console_err() -> Any:
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


class _ImportProgress:
    """A Rich progress display fed by the importer's events (stderr; --json stays clean)."""

    def __init__(self, console: Any, enabled: bool) -> None:
        self.console = console
        self.enabled = enabled and console.is_terminal
        self.progress: Any = None
        self.sessions_task: Any = None
        self.chunk_task: Any = None

    def __enter__(self) -> _ImportProgress:
        if self.enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            self.progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                console=self.console,
                transient=True,
            )
            self.progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.__exit__(*exc)

    def __call__(self, event: dict[str, Any]) -> None:
        if self.progress is None:
            return
        kind = event["event"]
        if kind == "discovered":
            self.sessions_task = self.progress.add_task("sessions", total=event["files"])
        elif kind == "session_start":
            name = Path(event["path"]).name[:8]
            if self.chunk_task is not None:
                self.progress.remove_task(self.chunk_task)
            self.chunk_task = self.progress.add_task(f"  {name} chunks", total=event["chunks"])
        elif kind == "chunk_done" and self.chunk_task is not None:
            self.progress.advance(self.chunk_task)
        elif kind in ("session_done", "session_skipped") and self.sessions_task is not None:
            self.progress.advance(self.sessions_task)


def _print_import(report: Any) -> None:
    out = _console()
    for s in report.per_session:
        where = _project_name(s.project)
        line = f"{s.status:<10} {Path(s.path).name[:8]}  {where[:28]:<28} "
        if s.status == "dry_run":
            line += f"{s.units} lines, {s.chunks} chunks, {s.chars:,} chars"
        else:
            line += (
                f"saved {s.saved}, versioned {s.versioned}, merged {s.merged}, "
                f"conflicts {s.conflicts}"
            )
        if s.error:
            line += f"  ({s.error})"
        out.print(line, markup=False)
    sk = report.skipped
    left_out = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in sk.items() if v)
    calls = report.calls
    out.print(
        f"\n{report.sessions} sessions: {report.saved} saved, {report.versioned} versioned, "
        f"{report.merged} merged, {report.conflicts} conflicts "
        f"({report.auto_resolved} resolved by the judge), {report.dropped} dropped",
        markup=False,
    )
    out.print(
        f"redactions {report.redactions}, truncated {report.truncated}, "
        f"malformed lines {report.malformed}, duplicates {report.duplicates}; "
        f"calls: extraction {calls.get('extraction', 0)}, classify {calls.get('classify', 0)}, "
        f"judge {calls.get('judge', 0)}, embedding {calls.get('embedding', 0)}",
        markup=False,
    )
    if left_out:
        out.print(f"left out: {left_out}", markup=False)
    if report.dry_run:
        out.print(
            f"dry run: {report.chunks} chunks ({report.input_chars:,} chars) would be distilled; "
            "nothing was called or written",
            markup=False,
        )
    if report.offline and not report.dry_run:
        out.print(
            "note: no LLM is configured, so a rule-based extractor picked out explicit "
            "statements only. An LLM gives far better memories: set MEMLOOM_LLM "
            "(openai, anthropic, claude-cli) or OPENAI_API_KEY / ANTHROPIC_API_KEY.",
            markup=False,
        )
    if report.stopped:
        out.print(f"stopped: {report.stopped} (progress so far is kept; run again to resume)")


# ---------------------------------------------------------------- the daemon


@app.command()
def serve(
    ctx: typer.Context,
    host: Annotated[str, typer.Option(help="Address to listen on (loopback by default).")] = (
        "127.0.0.1"
    ),
    port: Annotated[int, typer.Option(help="Port (0 picks a free one).", min=0, max=65535)] = 4319,
    token: Annotated[
        str | None,
        typer.Option(
            envvar="MEMLOOM_API_TOKEN",
            help="Bearer token every request must carry (required off loopback).",
            show_envvar=True,
        ),
    ] = None,
    stop_: Annotated[bool, typer.Option("--stop", help="Stop the running daemon instead.")] = False,
) -> None:
    """Run the HTTP API and the background worker (decay, capture) in the foreground.

    Listens on 127.0.0.1:4319 by default; API docs at /docs, OpenAPI at /openapi.json.
    Listening on any other address needs a token. `memloom stop` ends it.
    """
    from memloom.config import resolve_home
    from memloom.server.daemon import DaemonError
    from memloom.server.daemon import serve as run_server

    state: State = ctx.obj
    if stop_:
        _stop(resolve_home(state.home))
        return
    try:
        run_server(state.home, host=host, port=port, token=token)
    except DaemonError as exc:
        raise CliError(str(exc)) from exc


@app.command()
def stop(ctx: typer.Context) -> None:
    """Stop the running `memloom serve` daemon."""
    from memloom.config import resolve_home

    state: State = ctx.obj
    _stop(resolve_home(state.home))


def _stop(home: Path) -> None:
    from memloom.server.daemon import DaemonError, stop_daemon

    try:
        info = stop_daemon(home)
    except DaemonError as exc:
        raise CliError(str(exc)) from exc
    if info is None:
        _console().print("no memloom daemon is running")
    else:
        _console().print(f"stopped memloom daemon (pid {info['pid']}, {info.get('url')})")


@app.command("mcp")
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
        typer.Option("--allow-remote", help="Allow a non-loopback --host (no authentication)."),
    ] = False,
    log_level: Annotated[
        str, typer.Option(help="DEBUG, INFO, WARNING or ERROR; logs go to stderr.")
    ] = "WARNING",
) -> None:
    """Serve memory tools to AI agents over MCP (stdio by default; see docs/mcp.md).

    Add it to Claude Code with: claude mcp add memloom -- memloom mcp
    """
    from memloom.mcp import run

    state: State = ctx.obj
    run(
        str(state.home) if state.home else None,
        transport,  # type: ignore[arg-type]
        host,
        port,
        allow_remote=allow_remote,
        log_level=log_level.upper(),  # type: ignore[arg-type]
    )


# ---------------------------------------------------------------- conflicts

conflicts_app = typer.Typer(
    help="Review conflicting memories: list, show, resolve, revert, auto.",
    invoke_without_command=True,
)
app.add_typer(conflicts_app, name="conflicts")


def _print_conflict(out: Any, c: Any, full: bool = False) -> None:
    width = 400 if full else 90
    dist = f"{c.distance:.2f}" if c.distance is not None else "-"
    head = f"{c.id}  {c.status}{' (' + c.resolution + ')' if c.resolution else ''}  distance {dist}"
    out.print(head, markup=False)
    out.print(f"  new      {c.new.id} [{c.new.status}]  {_short(c.new.text, width)}", markup=False)
    out.print(
        f"  existing {c.existing.id} [{c.existing.status}]  {_short(c.existing.text, width)}",
        markup=False,
    )
    if full:
        if c.reason:
            out.print(f"  reason   {c.reason}", markup=False)
        for label, side in (("new", c.new), ("existing", c.existing)):
            if side.excerpt:
                out.print(f"  {label} excerpt: {_short(side.excerpt, 300)}", markup=False)


@conflicts_app.callback()
def conflicts_default(ctx: typer.Context) -> None:
    """With no command: list pending conflicts (same as `memloom conflicts list`)."""
    if ctx.invoked_subcommand is None:
        conflicts_list(ctx)


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
    with _engine(ctx) as m:
        result = m.conflicts(None if status == "all" else status, limit, (page - 1) * limit)
    if json_:
        _emit_json(result)
        return
    out = _console()
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
    with _engine(ctx) as m:
        doc = m.conflict(conflict_id)
    if json_:
        _emit_json(doc)
    else:
        _print_conflict(_console(), doc, full=True)


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
    with _engine(ctx) as m:
        doc = m.resolve(conflict_id, request)
    if json_:
        _emit_json(doc)
    else:
        _console().print(
            f"resolved {doc.id}: {doc.resolution} (undo: memloom conflicts revert {doc.id})"
        )


@conflicts_app.command("revert")
def conflicts_revert(
    ctx: typer.Context,
    conflict_id: Annotated[str, typer.Argument(metavar="ID")],
    json_: JsonOpt = False,
) -> None:
    """Undo a resolution: both memories return to how they were."""
    with _engine(ctx) as m:
        doc = m.revert(conflict_id)
    if json_:
        _emit_json(doc)
    else:
        _console().print(f"reverted {doc.id}: pending again")


@conflicts_app.command("auto")
def conflicts_auto(ctx: typer.Context, json_: JsonOpt = False) -> None:
    """Let the LLM judge settle the pending queue where it is sure (all revertable)."""
    err = _console_err()
    with _engine(ctx) as m:

        def progress(event: dict[str, Any]) -> None:
            if not json_:
                err.print(f"  {event['done']}/{event['total']} {event['verdict'] or 'failed'}")

        summary = m.auto_resolve(progress)
    if json_:
        _emit_json(summary)
        return
    out = _console()
    out.print(
        f"judged {summary['judged']} of {summary['pending']}: resolved {summary['resolved']}, "
        f"unsure {summary['unsure']}, failed {summary['failed']}"
    )
    if summary.get("reason"):
        out.print(summary["reason"], markup=False)


@app.command()
def ui(ctx: typer.Context) -> None:
    """Open the viewer in your browser (starting the daemon if it is not running)."""
    import subprocess
    import time as _time
    import webbrowser

    from memloom.config import resolve_home
    from memloom.server.daemon import read_daemon

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
    url = info["url"] + "/"
    opened = webbrowser.open(url)
    _console().print(f"{'opened' if opened else 'open'} {url}")


# ---------------------------------------------------------------- capture


connect_app = typer.Typer(help="Install memloom's hooks into an agent.", no_args_is_help=True)
disconnect_app = typer.Typer(help="Remove memloom's hooks from an agent.", no_args_is_help=True)
app.add_typer(connect_app, name="connect")
app.add_typer(disconnect_app, name="disconnect")


@connect_app.command("claude-code")
def connect_claude_code(
    ctx: typer.Context,
    project: Annotated[
        list[str] | None,
        typer.Option("--project", help="Capture sessions whose project path contains this."),
    ] = None,
    all_: Annotated[bool, typer.Option("--all", help="Capture every project.")] = False,
    no_recall: Annotated[
        bool, typer.Option("--no-recall", help="Do not add memories to new prompts.")
    ] = False,
    json_: JsonOpt = False,
) -> None:
    """Distill every finished Claude Code session, and bring memories back into prompts.

    Adds a SessionEnd hook (queues the session for import) and a UserPromptSubmit
    hook (adds up to 5 relevant memories as background) to ~/.claude/settings.json
    ($CLAUDE_CONFIG_DIR respected). Nothing is captured until you choose a scope.
    """
    from memloom.capture.connect import connect, memloom_command
    from memloom.capture.scope import Scope, save_scope
    from memloom.config import resolve_home

    if not project and not all_:
        raise CliError("nothing is captured until you choose: --project NAME (repeatable) or --all")
    if project and all_:
        raise CliError("choose either --project or --all, not both")
    state: State = ctx.obj
    home = resolve_home(state.home)
    explicit_home = home if (state.home or "MEMLOOM_HOME" in __import__("os").environ) else None
    result = connect(memloom_command(explicit_home), recall=not no_recall)
    scope = Scope(all=all_, projects=list(project or []), recall=not no_recall)
    save_scope(home, scope)
    doc = {
        "settings": str(result.settings_path),
        "changed": result.changed,
        "backup": str(result.backup_path) if result.backup_path else None,
        "hooks": result.events,
        "scope": {"all": scope.all, "projects": scope.projects, "recall": scope.recall},
    }
    if json_:
        _emit_json(doc)
        return
    out = _console()
    what = "every project" if all_ else "projects matching " + ", ".join(project or [])
    verb = "installed" if result.changed else "already installed"
    out.print(f"hooks {verb} in {result.settings_path}: {', '.join(result.events)}", markup=False)
    if result.backup_path:
        out.print(f"backup of your previous settings: {result.backup_path}", markup=False)
    out.print(f"capturing {what}; recall into prompts {'off' if no_recall else 'on'}")
    out.print(
        "Sessions are imported by `memloom serve` (or `memloom capture run-once` from cron).\n"
        "To give Claude Code the memory tools too: claude mcp add memloom -- memloom mcp",
        markup=False,
    )


@disconnect_app.command("claude-code")
def disconnect_claude_code(ctx: typer.Context, json_: JsonOpt = False) -> None:
    """Remove memloom's hooks (only those) and stop capturing."""
    from memloom.capture.connect import disconnect
    from memloom.capture.scope import save_scope
    from memloom.config import resolve_home

    state: State = ctx.obj
    result = disconnect()
    save_scope(resolve_home(state.home), None)
    if json_:
        _emit_json({"settings": str(result.settings_path), "changed": result.changed})
    else:
        verb = "removed from" if result.changed else "were not in"
        _console().print(f"memloom's hooks {verb} {result.settings_path}", markup=False)


capture_app = typer.Typer(help="Work through captured sessions.", no_args_is_help=True)
app.add_typer(capture_app, name="capture")


@capture_app.command("run-once")
def capture_run_once(
    ctx: typer.Context,
    sweep: Annotated[
        bool, typer.Option(help="First queue in-scope sessions the hooks missed.")
    ] = True,
    json_: JsonOpt = False,
) -> None:
    """Import the queued sessions now (for cron, when no daemon runs)."""
    import memloom
    from memloom.capture.worker import CaptureWorker
    from memloom.config import resolve_home

    state: State = ctx.obj
    home = resolve_home(state.home)
    with memloom.open(str(home)) as m:
        worker = CaptureWorker(m, home)
        queued = worker.sweep() if sweep else 0
        done = worker.drain()
        doc = {"swept": queued, "processed": done, **worker.state()}
    if json_:
        _emit_json(doc)
    else:
        line = f"processed {done} queued sessions"
        if sweep:
            line += f" ({queued} found by the sweep)"
        if worker.paused:
            line += "; PAUSED: today's budget of unattended calls is spent"
        _console().print(line)
        if worker.last_error:
            _console().print(f"last error: {worker.last_error}", markup=False)


hook_app = typer.Typer(
    help="What the installed Claude Code hooks run (reads the hook JSON on stdin).",
    no_args_is_help=True,
)
app.add_typer(hook_app, name="hook")


@hook_app.command("notify")
def hook_notify(ctx: typer.Context) -> None:
    """SessionEnd: queue the finished session for import. Silent; always exits 0."""
    from memloom.capture.hooks_cli import run_hook

    state: State = ctx.obj
    raise typer.Exit(run_hook("notify", str(state.home) if state.home else None))


@hook_app.command("prompt-recall")
def hook_prompt_recall(ctx: typer.Context) -> None:
    """UserPromptSubmit: print relevant memories as background context. Always exits 0."""
    from memloom.capture.hooks_cli import run_hook

    state: State = ctx.obj
    raise typer.Exit(run_hook("prompt-recall", str(state.home) if state.home else None))


@app.command()
def status(ctx: typer.Context, json_: JsonOpt = False) -> None:
    """Daemon, hooks, capture scope, queue, today's budget, LLM and embedder."""
    from memloom.capture.status import gather

    state: State = ctx.obj
    doc = gather(state.home)
    if json_:
        _emit_json(doc)
        return
    out = _console()
    d = doc["daemon"]
    out.print(f"daemon      {'up at ' + d['url'] if d['running'] else 'down'}", markup=False)
    h = doc["hooks"]
    hooks = [n for n in ("notify", "prompt_recall") if h.get(n)]
    out.print(f"hooks       {', '.join(hooks) or 'not installed'} ({h['settings']})", markup=False)
    sc = doc["scope"]
    scope = "all projects" if sc["all"] else ", ".join(sc["projects"]) or "nothing (not connected)"
    out.print(f"capturing   {scope}", markup=False)
    q = doc["capture"]
    out.print(f"queue       {q['queued']} waiting", markup=False)
    if q["last_hook"]:
        out.print(
            f"last hook   {q['last_hook']['at_text']}  {q['last_hook']['detail']}", markup=False
        )
    if q["last_failure"]:
        f = q["last_failure"]
        out.print(f"last error  {f['at_text']}  {f['kind']}: {f['detail']}", markup=False)
    b = doc["budget"]
    paused = "  PAUSED until tomorrow" if b["paused"] else ""
    out.print(f"today       {b['used']}/{b['cap']} unattended LLM calls{paused}", markup=False)
    out.print(f"LLM         {doc['llm']}", markup=False)
    out.print(f"embedder    {doc['embedder']}", markup=False)
    i = doc["imports"]
    out.print(
        f"all time    {i['sessions']} sessions imported, {i['memories']} memories saved; "
        f"{doc['memories']['active']} active memories",
        markup=False,
    )


# ---------------------------------------------------------------- team (PostgreSQL)

_register_team(app)
_register_backup(app)


# ---------------------------------------------------------------- entry point


def _error_message(exc: BaseException) -> str | None:
    from pydantic import ValidationError as PydanticError

    from memloom.config import ConfigError
    from memloom.embed import EmbeddingError
    from memloom.store.base import StoreError

    if isinstance(exc, PydanticError):
        parts = []
        for err in exc.errors():
            where = ".".join(str(x) for x in err["loc"])
            msg = err["msg"].removeprefix("Value error, ")
            parts.append(f"{where}: {msg}" if where else msg)
        return "; ".join(parts)
    if isinstance(exc, CliError | StoreError | ConfigError | EmbeddingError | ValueError):
        return str(exc)
    return None


def main(argv: list[str] | None = None) -> None:
    try:
        app(args=argv, prog_name="memloom")
    except Exception as exc:
        message = _error_message(exc)
        if message is None:
            raise
        sys.stderr.write(f"memloom: error: {message}\n")
        sys.exit(1)


if __name__ == "__main__":
    # Run as ``python -m memloom.cli``: go through the imported module, so that
    # commands defined elsewhere (memloom.cli_team) share its classes.
    from memloom.cli import main as _main

    _main()
