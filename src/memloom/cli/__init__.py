"""The ``memloom`` command: a thin shell over :class:`memloom.Memloom`.

Every command takes ``--json`` and then prints the same document the HTTP API
returns; without it, output is for people. Errors are one line on stderr and a
non-zero exit status.

This module builds the Typer app and adds the command modules to it, one way:
each module has ``register(app)`` and none imports this package's ``__init__``
(what they share is in :mod:`memloom.cli._common`). Everything loaded here is
typer and the standard library: ``memloom hook …`` comes through here too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from memloom.cli import (
    backup,
    capture,
    conflicts,
    llm,
    memories,
    redact,
    server,
    sessions,
    team,
)
from memloom.cli._common import State, run

__all__ = ["app", "main"]

HELP = """\
memloom — long-term memory for AI coding agents, kept on your machine.

Memories are short typed statements (fact, preference, episode, procedure) in a
SQLite file under MEMLOOM_HOME (default ~/.memloom), or for a team in PostgreSQL
(MEMLOOM_DATABASE_URL=postgresql://…, see `memloom tokens`). They come from your coding
agents' own session files, distilled with secrets redacted -- Claude Code, Codex CLI,
Gemini CLI, Copilot CLI, Aider, OpenCode, Qwen Code and Cursor --, from the memories
those agents keep themselves (Claude Code's auto memory, Qwen Code's, Gemini CLI's and
Codex's; read as they are), or from you and your agents. One memory per user and
project, whichever agent learned it, shown to every other agent.
Recall ranks them by meaning, keywords, recency and tags. Everything runs
offline; an LLM (MEMLOOM_LLM) makes the distilled memories better.

Examples:

\b
  memloom import sessions                      # distill every agent's recent sessions
  memloom import sessions --agent opencode     # one agent (see --help for the names)
  memloom import native                        # the agents' own memories (no LLM call)
  memloom recall "how do I run the tests?" --project api
  memloom save "Run the tests with: make check" --type procedure
  memloom connect claude-code --all            # capture every session from now on
                                               # (also codex, gemini, copilot, qwen,
                                               # opencode, cursor, aider)
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


def _version(value: bool) -> None:
    if value:
        from memloom.version import banner

        typer.echo(banner())
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            "-V",
            help="Print memloom's version and exit.",
            is_eager=True,
            callback=_version,
        ),
    ] = False,
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
    del version  # handled by its callback
    ctx.obj = State(home=home)


# The order of registration is the order of ``memloom --help``.
for _module in (memories, redact, sessions, llm, server, conflicts, capture, team, backup):
    _module.register(app)


def main(argv: list[str] | None = None) -> None:
    run(app, argv)
