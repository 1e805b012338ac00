"""Capture: ``connect``/``disconnect`` an agent, ``capture run-once``, the ``hook``
commands the installed hooks run, and ``status``."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Annotated

import typer

from memloom.agents import ALIASES
from memloom.cli._common import (
    CliError,
    JsonOpt,
    State,
    console,
    distiller_lines,
    emit_json,
    home_arg,
    need_working_folder,
    working_path,
)

connect_app = typer.Typer(help="Install memloom's hooks into an agent.", no_args_is_help=True)
disconnect_app = typer.Typer(help="Remove memloom's hooks from an agent.", no_args_is_help=True)


#: What each agent's connect installs, for its help text.
_HOOKS = {
    "claude-code": (
        "Claude Code",
        "a SessionEnd hook (queues the session for import) and a UserPromptSubmit hook "
        "(adds relevant memories as background) to ~/.claude/settings.json "
        "($CLAUDE_CONFIG_DIR respected)",
    ),
    "codex": (
        "Codex CLI",
        "a Stop hook (queues the rollout after each turn; imported once the session is "
        "quiet) and UserPromptSubmit context to ~/.codex/hooks.json ($CODEX_HOME "
        "respected). Codex skips hooks you have not trusted, silently: trust memloom's in "
        "/hooks (the TUI); `memloom status` shows whether they are trusted",
    ),
    "gemini": (
        "Gemini CLI",
        "AfterAgent and SessionEnd hooks (queue the chat) and BeforeAgent context to "
        "~/.gemini/settings.json; the daemon's sweep covers what SessionEnd misses",
    ),
    "copilot": (
        "GitHub Copilot CLI",
        "a sessionEnd hook (queues the session), and sessionStart and userPromptSubmitted "
        "context, to ~/.copilot/hooks/hooks.json ($COPILOT_HOME respected)",
    ),
    "cursor": (
        "Cursor",
        "stop and sessionEnd hooks (queue the agent transcript) and sessionStart context "
        "(the project's digest) to ~/.cursor/hooks.json. Cursor lets no hook add context "
        "to a prompt, so recall comes with the session's start only",
    ),
    "qwen": (
        "Qwen Code",
        "a Stop hook (queues the session after each turn: Qwen fires no SessionEnd "
        "headless), and SessionStart and UserPromptSubmit context, to ~/.qwen/settings.json "
        "($QWEN_HOME respected)",
    ),
    "opencode": (
        "OpenCode",
        "a plugin (~/.config/opencode/plugins/memloom.js: queues the session when it goes "
        "idle, adds relevant memories to the system prompt) and `memloom mcp` under mcp in "
        "opencode.json ($XDG_CONFIG_HOME respected)",
    ),
}


def prime_mcp() -> bool:
    """Teach ``memloom mcp``'s handshake cache now (:func:`memloom.mcp_stdio.prime`) when
    the answers shipped with the package do not fit this install (an edited checkout,
    another SDK), so that the agent's first start of it answers at once too. False when
    it could not: the first start then learns it, ~1 s slower once. Never fails
    ``connect``. (The CLI orchestrates it: capture knows no shell.)"""
    try:
        from memloom.mcp_stdio import prime

        prime()
    except Exception as exc:  # the SDK missing or broken: memloom mcp says so itself
        sys.stderr.write(f"memloom: could not prepare memloom mcp's start ({exc})\n")
        return False
    return True


def _connect(
    ctx: typer.Context,
    agent: str,
    project: list[str] | None,
    all_: bool,
    no_recall: bool,
    json_: bool,
) -> None:
    from memloom.capture.connect import connect, memloom_command
    from memloom.capture.scope import Scope, load_scope, save_scope
    from memloom.config import resolve_home

    if not project and not all_:
        raise CliError("nothing is captured until you choose: --project NAME (repeatable) or --all")
    if project and all_:
        raise CliError("choose either --project or --all, not both")
    state: State = ctx.obj
    home = resolve_home(state.home)
    explicit_home = home if (state.home or "MEMLOOM_HOME" in os.environ) else None
    result = connect(memloom_command(explicit_home), recall=not no_recall, agent=agent)
    prime_mcp()
    kept = load_scope(home).roots  # the Aider folders stay watched
    scope = Scope(all=all_, projects=list(project or []), recall=not no_recall, roots=kept)
    save_scope(home, scope)
    doc = {
        "agent": agent,
        "settings": str(result.settings_path),
        "changed": result.changed,
        "backup": str(result.backup_path) if result.backup_path else None,
        "hooks": result.events,
        "scope": {"all": scope.all, "projects": scope.projects, "recall": scope.recall},
    }
    notes = list(getattr(result, "notes", None) or [])
    from memloom.capture.plugin import CONNECT_NOTE, plugin_installed

    if plugin_installed(agent):
        notes.append(CONNECT_NOTE.format(agent=agent))
    if notes:
        doc["notes"] = notes
    from memloom.config import load_settings
    from memloom.status import distiller

    doc["distiller"] = distiller(load_settings(state.home))
    if json_:
        emit_json(doc)
        return
    out = console()
    what = "every project" if all_ else "projects matching " + ", ".join(project or [])
    verb = "installed" if result.changed else "already installed"
    out.print(f"hooks {verb} in {result.settings_path}: {', '.join(result.events)}", markup=False)
    if result.backup_path:
        out.print(f"backup of your previous settings: {result.backup_path}", markup=False)
    out.print(f"capturing {what}; recall into prompts {'off' if no_recall else 'on'}")
    for note in notes:
        out.print(f"note: {note}", markup=False)
    out.print(
        "Sessions are imported by `memloom serve` (or `memloom capture run-once` from cron).",
        markup=False,
    )
    d = doc["distiller"]
    out.print(f"distiller: {d['description'] or d['error']}", markup=False)
    for line in distiller_lines(d):
        out.print(f"  {line}", markup=False)
    if agent == "claude-code":
        out.print(
            "To give Claude Code the memory tools too: claude mcp add memloom -- memloom mcp",
            markup=False,
        )


def _disconnect(ctx: typer.Context, agent: str, json_: bool) -> None:
    from memloom.capture.connect import disconnect, installed_hooks
    from memloom.capture.scope import load_scope, save_scope
    from memloom.config import resolve_home

    state: State = ctx.obj
    home = resolve_home(state.home)
    result = disconnect(agent=agent)
    others = [a for a in _HOOKS if a != agent and any(_quiet(installed_hooks, a).values())]
    if not others and not load_scope(home).roots:  # the last connected agent: stop capturing
        save_scope(home, None)
    if json_:
        emit_json(
            {"agent": agent, "settings": str(result.settings_path), "changed": result.changed}
        )
    else:
        verb = "removed from" if result.changed else "were not in"
        console().print(f"memloom's hooks {verb} {result.settings_path}", markup=False)


def _quiet(installed: Callable[..., dict[str, bool]], agent: str) -> dict[str, bool]:
    """An agent's installed hooks, or none when its settings cannot be read."""
    try:
        hooks = installed(agent=agent)
    except Exception:
        return {}
    return {k: v for k, v in hooks.items() if k not in ("readable", "feature_disabled")}


def _register_agent(agent: str, label: str, installs: str) -> None:
    def connect_agent(
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
        _connect(ctx, agent, project, all_, no_recall, json_)

    connect_agent.__doc__ = (
        f"Distill every finished {label} session, and bring memories back into prompts.\n\n"
        f"Adds {installs}. Nothing is captured until you choose a scope."
    )

    def disconnect_agent(ctx: typer.Context, json_: JsonOpt = False) -> None:
        _disconnect(ctx, agent, json_)

    disconnect_agent.__doc__ = (
        "Remove memloom's hooks (only those); the last agent disconnected stops capturing."
    )
    connect_app.command(agent)(connect_agent)
    disconnect_app.command(agent)(disconnect_agent)
    for alias in (a for a, name in ALIASES.items() if name == agent):  # the name users type
        connect_app.command(alias, hidden=True)(connect_agent)
        disconnect_app.command(alias, hidden=True)(disconnect_agent)


for _agent, (_label, _installs) in _HOOKS.items():
    _register_agent(_agent, _label, _installs)


@connect_app.command("aider")
def connect_aider(
    ctx: typer.Context,
    path: Annotated[
        list[str] | None,
        typer.Option("--path", help="A project folder Aider works in (default: this folder)."),
    ] = None,
    project: Annotated[
        list[str] | None,
        typer.Option("--project", help="Capture sessions whose project path contains this."),
    ] = None,
    all_: Annotated[bool, typer.Option("--all", help="Capture every project.")] = False,
    json_: JsonOpt = False,
) -> None:
    """Distill Aider's chat histories in this folder (or --path), found by the sweep.

    Aider has no hooks: nothing is installed, and nothing is added to its prompts.
    memloom watches the folder's .aider.chat.history.md; `memloom serve` (or
    `memloom capture run-once`) imports what was added once it has been quiet 5 minutes.
    """
    from pathlib import Path

    from memloom.capture.scope import Scope, load_scope, save_scope
    from memloom.config import resolve_home

    if project and all_:
        raise CliError("choose either --project or --all, not both")
    state: State = ctx.obj
    home = resolve_home(state.home)
    old = load_scope(home)
    folders = [Path(working_path(Path(p).expanduser())) for p in (path or [need_working_folder()])]
    missing = [str(p) for p in folders if not p.is_dir()]
    if missing:
        raise CliError(f"not a folder: {', '.join(missing)}")
    roots = list(dict.fromkeys([*old.roots, *map(str, folders)]))
    if project or all_:
        scope = Scope(all=all_, projects=list(project or []), recall=old.recall, roots=roots)
    elif old.enabled:
        scope = Scope(old.all, old.projects, old.recall, old.connected_at, roots)
    else:  # the folders named are the scope
        scope = Scope(projects=[str(p) for p in folders], roots=roots)
    save_scope(home, scope)
    doc = {
        "agent": "aider",
        "changed": roots != old.roots,
        "hooks": [],
        "roots": roots,
        "scope": {"all": scope.all, "projects": scope.projects, "recall": scope.recall},
    }
    if json_:
        emit_json(doc)
        return
    out = console()
    out.print(f"watching Aider's chat history in {', '.join(roots)}", markup=False)
    out.print(
        "Aider has no hooks: memories are not added to its prompts. Histories are imported "
        "by `memloom serve` (or `memloom capture run-once` from cron) once quiet 5 minutes.",
        markup=False,
    )


@disconnect_app.command("aider")
def disconnect_aider(ctx: typer.Context, json_: JsonOpt = False) -> None:
    """Stop watching Aider's folders (nothing was installed in Aider)."""
    from memloom.capture.connect import installed_hooks
    from memloom.capture.scope import load_scope, save_scope
    from memloom.config import resolve_home

    state: State = ctx.obj
    home = resolve_home(state.home)
    scope = load_scope(home)
    others = [a for a in _HOOKS if any(_quiet(installed_hooks, a).values())]
    changed = bool(scope.roots)
    scope.roots = []
    save_scope(home, scope if others else None)
    if json_:
        emit_json({"agent": "aider", "changed": changed})
    else:
        verb = "stopped watching" if changed else "was not watching"
        console().print(f"memloom {verb} Aider's folders", markup=False)


capture_app = typer.Typer(help="Work through captured sessions.", no_args_is_help=True)


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
    from memloom.capture.background import wait_settled
    from memloom.capture.worker import CaptureWorker
    from memloom.config import resolve_home

    state: State = ctx.obj
    home = resolve_home(state.home)
    wait_settled(home)  # an agent that just exited may still be queueing its session
    with memloom.open(str(home)) as m:
        worker = CaptureWorker(m, home)
        queued = worker.sweep() if sweep else 0
        done = worker.drain()
        doc = {"swept": queued, "processed": done, **worker.state()}
    if json_:
        emit_json(doc)
    else:
        line = f"processed {done} queued sessions"
        if sweep:
            line += f" ({queued} found by the sweep)"
        if worker.paused:
            line += "; PAUSED: today's budget of unattended calls is spent"
        console().print(line)
        if worker.last_error:
            console().print(f"last error: {worker.last_error}", markup=False)


hook_app = typer.Typer(
    help="What the installed Claude Code hooks run (reads the hook JSON on stdin).",
    no_args_is_help=True,
)


HookAgent = Annotated[
    str | None,
    typer.Option("--agent", help="The agent running the hook (default claude-code)."),
]
HookPlugin = Annotated[
    str | None,
    typer.Option(
        "--plugin",
        help="The version of memloom's agent plugin running the hook (hooks/memloom-hook).",
        hidden=True,
    ),
]


@hook_app.command("notify")
def hook_notify(ctx: typer.Context, agent: HookAgent = None, plugin: HookPlugin = None) -> None:
    """Session or turn end: queue the session for import. Silent; always exits 0."""
    from memloom.capture.hooks_cli import run_hook

    raise typer.Exit(run_hook("notify", home_arg(ctx), agent=agent, plugin=plugin))


@hook_app.command("prompt-recall")
def hook_prompt_recall(
    ctx: typer.Context, agent: HookAgent = None, plugin: HookPlugin = None
) -> None:
    """A prompt was typed: print relevant memories as background context, in the
    agent's own output format. Always exits 0."""
    from memloom.capture.hooks_cli import run_hook

    raise typer.Exit(run_hook("prompt-recall", home_arg(ctx), agent=agent, plugin=plugin))


@hook_app.command("session-start")
def hook_session_start(
    ctx: typer.Context, agent: HookAgent = None, plugin: HookPlugin = None
) -> None:
    """A session started: reads the payload and adds nothing yet (the project digest
    is still to come). Installed by connect for agents with a SessionStart hook, so
    they have a command that always exits 0."""
    from memloom.capture.hooks_cli import run_hook

    raise typer.Exit(run_hook("session-start", home_arg(ctx), agent=agent, plugin=plugin))


@hook_app.command("compacted")
def hook_compacted(ctx: typer.Context, agent: HookAgent = None, plugin: HookPlugin = None) -> None:
    """The agent is about to compact its context (Gemini CLI's PreCompress): the next
    prompt gets the project digest again. Prints nothing; always exits 0."""
    from memloom.capture.hooks_cli import run_hook

    raise typer.Exit(run_hook("compacted", home_arg(ctx), agent=agent, plugin=plugin))


@hook_app.command("read")
def hook_read(ctx: typer.Context, agent: HookAgent = None, plugin: HookPlugin = None) -> None:
    """The agent's read tool opened a file (its after-tool hook): print the memories
    anchored to that file, once per file and session, in the agent's own output
    format. Always exits 0."""
    from memloom.capture.hooks_cli import run_hook

    raise typer.Exit(run_hook("read", home_arg(ctx), agent=agent, plugin=plugin))


def status(ctx: typer.Context, json_: JsonOpt = False) -> None:
    """Daemon, hooks, capture scope, queue, today's budget, LLM and embedder."""
    from memloom.status import gather

    state: State = ctx.obj
    doc = gather(state.home)
    if json_:
        emit_json(doc)
        return
    out = console()
    d = doc["daemon"]
    out.print(f"daemon      {'up at ' + d['url'] if d['running'] else 'down'}", markup=False)
    token = doc["api_token_file"] or "MEMLOOM_API_TOKEN"
    out.print(f"api token   {token} (memloom ui opens the viewer with it)", markup=False)
    h = doc["hooks"]
    hooks = [n for n in ("notify", "prompt_recall") if h.get(n)]
    out.print(f"hooks       {', '.join(hooks) or 'not installed'} ({h['settings']})", markup=False)
    for name, a in doc.get("agents", {}).items():
        seen = a.get("imports") or {}
        on = [k for k, v in a["hooks"].items() if v]
        if (
            not a["found"]
            and not seen.get("sessions")
            and not a.get("plugin")
            and not a.get("native")
        ):
            continue
        parts = [
            "found" if a["found"] else "not found",
            f"hooks {', '.join(on) or 'not installed'}" if a["settings"] else "no hooks",
            *(["plugin installed"] if a.get("plugin") else []),
            f"{seen.get('sessions', 0)} sessions, {seen.get('memories', 0)} memories",
        ]
        if seen.get("last_import"):
            parts.append(f"last import {seen['last_import_text']}")
        out.print(f"  {name:<12}{'; '.join(parts)}", markup=False)
        if a.get("hooks_disabled"):
            out.print(f"  {'':<12}hooks turned OFF in the agent's config: they do not run")
        if a.get("trust"):
            out.print(f"  {'':<12}{_trust_line(a['trust'])}", markup=False)
        if seen.get("last_error"):
            e = seen["last_error"]
            out.print(f"  {'':<12}last error {e['path']}: {e['error']}", markup=False)
        for f in a.get("native") or []:
            out.print(
                f"  {'':<12}own memory {f['folder']}: {f['files']} files, "
                f"{f['memories']} memories, read {f['read_at_text'] or 'never'}",
                markup=False,
            )
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
    for line in distiller_lines(doc["distiller"]):
        out.print(f"            {line}", markup=False)
    out.print(f"embedder    {doc['embedder']}", markup=False)
    i = doc["imports"]
    out.print(
        f"all time    {i['sessions']} sessions imported, {i['memories']} memories saved; "
        f"{doc['memories']['active']} active memories",
        markup=False,
    )


def _trust_line(trust: dict[str, str]) -> str:
    """Whether the agent will run memloom's hooks (Codex skips untrusted ones silently)."""
    if "error" in trust:
        return f"hook trust unknown: {trust['error']}"
    if all(v == "trusted" for v in trust.values()):
        return "hooks trusted"
    pending = ", ".join(f"{event} {v}" for event, v in trust.items() if v != "trusted")
    return f"hooks NOT trusted ({pending}): they do not run until you trust them in /hooks"


def register(app: typer.Typer) -> None:
    app.add_typer(connect_app, name="connect")
    app.add_typer(disconnect_app, name="disconnect")
    app.add_typer(capture_app, name="capture")
    app.add_typer(hook_app, name="hook")
    app.command()(status)
