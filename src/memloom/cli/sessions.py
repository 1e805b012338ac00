"""``memloom import sessions``: distill agent transcripts, with a progress display."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from memloom.cli._common import JsonOpt, console, console_err, emit_json, home_arg, project_name

import_app = typer.Typer(
    help="Bring memories in from elsewhere (coding agents' sessions).", no_args_is_help=True
)


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
    agent: Annotated[
        str,
        typer.Option(
            "--agent",
            help=(
                "claude-code, codex, gemini, copilot, aider, qwen, cursor, "
                "or all (every agent found)."
            ),
        ),
    ] = "all",
    json_: JsonOpt = False,
) -> None:
    """Distill coding agents' sessions (Claude Code, Codex, Gemini CLI, Copilot CLI,
    Aider, Qwen Code, Cursor) into typed memories; a --path file is recognised by its content.

    Secrets are redacted before anything is sent to the LLM or stored. Each
    session is read once: the next run only reads what was added since.
    """
    import memloom

    err = console_err()
    with memloom.open(home_arg(ctx)) as m:
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
                agent=_agent_name(agent),
            )
    if json_:
        emit_json(report)
    else:
        _print_import(report)
    if report.stopped:
        raise typer.Exit(2)


def _agent_name(agent: str) -> str:
    """The registry name for ``--agent``, or a usage error listing the known ones."""
    from memloom.agents import ALIASES, agent_names

    agent = ALIASES.get(agent, agent)  # qwen-code is qwen
    if agent != "all" and agent not in agent_names():
        raise typer.BadParameter(
            f"unknown agent {agent!r}; choose from {', '.join([*agent_names(), 'all'])}",
            param_hint="--agent",
        )
    return agent


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
            label = f"{event['agent']} sessions" if event.get("agent") else "sessions"
            self.sessions_task = self.progress.add_task(label, total=event["files"])
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
    out = console()
    for s in report.per_session:
        where = project_name(s.project)
        line = f"{s.status:<10} {(s.agent or '')[:11]:<11} {Path(s.path).name[:8]}  "
        line += f"{where[:28]:<28} "
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


def register(app: typer.Typer) -> None:
    app.add_typer(import_app, name="import")
