"""``memloom import sessions`` (distill agent transcripts, with a progress display) and
``memloom import native`` (the agents' own memory files, no LLM)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from memloom.cli._common import JsonOpt, console, console_err, emit_json, home_arg, project_name

import_app = typer.Typer(
    help=(
        "Bring memories in from the coding agents: their sessions (distilled by an LLM) "
        "and their own memory files (Claude Code's auto memory, Qwen Code's and Gemini "
        "CLI's memory, Codex's memories; read as they are, no LLM). Switch the second "
        "off with --no-native, or in config.toml: [native] enabled = false (or "
        'agents = ["claude-code"] for some).'
    ),
    no_args_is_help=True,
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
    native: Annotated[
        bool,
        typer.Option(
            "--native/--no-native",
            help=(
                "Also follow the agents' own memory files (see memloom import native); "
                "not with --path."
            ),
        ),
    ] = True,
    json_: JsonOpt = False,
) -> None:
    """Distill coding agents' sessions (Claude Code, Codex, Gemini CLI, Copilot CLI,
    Aider, Qwen Code, Cursor) into typed memories; a --path file is recognised by its content.

    Secrets are redacted before anything is sent to the LLM or stored. Each
    session is read once: the next run only reads what was added since. The agents'
    own memory files are followed first (no LLM call), unless --no-native or
    config.toml's [native] enabled = false.
    """
    import memloom

    err = console_err()
    with memloom.open(home_arg(ctx)) as m:
        llm = m.llm
        native_report = None
        if native and not path:
            names = None if agent == "all" else [_agent_name(agent)]
            native_report = m.import_native(names, force=force, dry_run=dry_run)
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
                named=bool(path),  # the owner's own choice: /context may serve its lines
            )
    if native_report is not None:
        report.native = native_report
    if json_:
        emit_json(report)
    else:
        if native_report is not None and native_report.folders:
            _print_native(native_report)
        _print_import(report)
    if report.stopped:
        raise typer.Exit(2)


@import_app.command("native")
def import_native(
    ctx: typer.Context,
    agent: Annotated[
        str,
        typer.Option(
            "--agent",
            help="claude-code, qwen, gemini, codex, or all (those [native] names).",
        ),
    ] = "all",
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what changed; write nothing.")
    ] = False,
    force: Annotated[
        bool, typer.Option(help="Read every file again, even those unchanged since the last run.")
    ] = False,
    json_: JsonOpt = False,
) -> None:
    """Read the coding agents' own memories into memloom, with no LLM call.

    Claude Code's auto memory (~/.claude/projects/<project>/memory/, or
    autoMemoryDirectory), Qwen Code's (~/.qwen/memories/ and
    ~/.qwen/projects/<project>/memory/), Gemini CLI's project memory
    (~/.gemini/tmp/<project>/memory/) and Codex's memories (~/.codex/memories_v2/:
    the summary and the ad-hoc notes). Each memory belongs to the project the agent
    keeps it for; secrets are redacted. An edited file makes a new version, a removed
    one expires its memory, one changed in memloom since becomes a conflict; unchanged
    files cost nothing. Nothing is written into the agents' folders, and a memory is
    never shown back to the agent it came from (it shows its own).

    Switch it off in config.toml: [native] enabled = false, or agents = [...] to read
    only some agents.
    """
    import memloom

    names = None if agent == "all" else [_agent_name(agent)]
    with memloom.open(home_arg(ctx)) as m:
        report = m.import_native(names, force=force, dry_run=dry_run)
    if json_:
        emit_json(report)
    else:
        _print_native(report)


def _left_out(skipped: dict[str, int]) -> str:
    """What a run left out, by reason (``unsafe 2, over cap 1``)."""
    return ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in skipped.items() if v)


def _print_native(report: Any) -> None:
    out = console()
    for f in report.per_folder:
        where = project_name(f.project) if f.project else f"({f.scope})"
        state = f.skipped.replace("_", " ") if f.skipped else f"{f.files} files, {f.changed} read"
        if f.removed:
            state += f", {f.removed} gone"
        out.print(f"{f.agent[:11]:<11} {where[:28]:<28} {state}  {f.path}", markup=False)
    left_out = _left_out(report.skipped)
    out.print(
        f"\nagents' own memories: {report.files} files in {report.folders} folders, "
        f"{report.changed} read ({report.notes} notes): {report.added} added, "
        f"{report.merged} merged, {report.versioned} versioned, {report.conflicts} conflicts, "
        f"{report.expired} expired; no LLM calls",
        markup=False,
    )
    if left_out:
        out.print(f"left out: {left_out}", markup=False)
    if report.dry_run:
        out.print("dry run: nothing was written", markup=False)


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
    left_out = _left_out(sk)
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
    out.print(f"distiller: {report.llm}", markup=False)
    if report.offline and not report.dry_run:
        from memloom.llm import offline_note

        out.print(f"note: {offline_note()}", markup=False)
    if report.stopped:
        out.print(f"stopped: {report.stopped} (progress so far is kept; run again to resume)")


def register(app: typer.Typer) -> None:
    app.add_typer(import_app, name="import")
