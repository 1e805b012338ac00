"""``memloom llm``: which LLM distils, and ``memloom llm use <name>`` to change it."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from memloom.cli._common import CliError, JsonOpt, State, console, distiller_lines, emit_json

llm_app = typer.Typer(
    help="Which LLM distils sessions into memories, and how to change it.",
    invoke_without_command=True,
    no_args_is_help=False,
)


def _show(state: State, json_: bool, changed: str | None = None) -> None:
    from memloom.config import load_settings
    from memloom.llm import CLI_ORDER
    from memloom.status import distiller

    doc = distiller(load_settings(state.home))
    if changed:
        doc["config"] = changed
    if json_:
        emit_json(doc)
        return
    out = console()
    if changed:
        out.print(f"wrote {changed}", markup=False)
    out.print(f"distiller: {doc['description'] or 'none'}", markup=False)
    for line in distiller_lines(doc)[:-1]:
        out.print(f"  {line}", markup=False)
    found = {c["provider"]: c["path"] for c in doc["installed_clis"]}
    out.print("choices (memloom llm use <name>):", markup=False)
    for cli in CLI_ORDER:
        where = found.get(cli.name)
        state_text = f"on PATH: {where}" if where else "not installed"
        out.print(f"  {cli.binary:<9} {cli.label} ({cli.name}), {state_text}", markup=False)
    out.print("  openai    an OpenAI-compatible API (OPENAI_API_KEY, MEMLOOM_LLM_BASE_URL)")
    out.print("  anthropic the Anthropic API (ANTHROPIC_API_KEY)")
    out.print("  offline   the rule-based extractor: no LLM")
    out.print("  auto      forget the choice: keys first, then the CLIs above in that order")


@llm_app.callback()
def llm(ctx: typer.Context, json_: JsonOpt = False) -> None:
    """Which LLM distils and why (alone: ``memloom llm show``)."""
    if ctx.invoked_subcommand is None:
        _show(ctx.obj, json_)


@llm_app.command("show")
def show(ctx: typer.Context, json_: JsonOpt = False) -> None:
    """Which LLM distils and why, today's calls through an agent's CLI against their
    cap, and the choices (docs/llm.md)."""
    _show(ctx.obj, json_)


@llm_app.command("use")
def use(
    ctx: typer.Context,
    name: Annotated[
        str,
        typer.Argument(
            help="claude, codex, gemini, qwen, copilot, opencode (that agent's CLI, on your "
            "login), openai, anthropic, offline, or auto.",
            show_default=False,
        ),
    ],
    json_: JsonOpt = False,
) -> None:
    """Choose the distiller: writes [llm] provider in config.toml (MEMLOOM_LLM, when
    set, still wins)."""
    import shutil

    from memloom.config import ConfigError, resolve_home, write_llm_provider
    from memloom.llm import CLI_ORDER, normalise

    state: State = ctx.obj
    auto = name.strip().lower() == "auto"
    try:
        provider = None if auto else normalise(name)
    except ConfigError as e:
        raise CliError(str(e)) from None
    cli = next((c for c in CLI_ORDER if c.name == provider), None)
    if cli is not None and shutil.which(cli.binary) is None:
        raise CliError(
            f"`{cli.binary}` is not on PATH: install {cli.label} and log in to it first "
            "(memloom llm lists what is installed)"
        )
    try:
        path = write_llm_provider(resolve_home(state.home), provider)
    except ConfigError as e:
        raise CliError(str(e)) from None
    if os.environ.get("MEMLOOM_LLM", "").strip() and not json_:
        console().print(
            f"note: MEMLOOM_LLM={os.environ['MEMLOOM_LLM']} is set in this environment and "
            "wins over config.toml until you unset it",
            markup=False,
        )
    _show(state, json_, changed=str(path))


def register(app: typer.Typer) -> None:
    app.add_typer(llm_app, name="llm")
