"""What every command module of the CLI shares: the root state, the engine, output,
and how errors become one line on stderr and exit status 1.

Private to :mod:`memloom.cli` (hence the underscore); the names inside are
public so that command modules import them without reading private names.
It imports only typer and the standard library at load time: the hook fast
path goes through here and must not load numpy or pydantic.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from memloom.errors import CliError
from memloom.location import working_folder

if TYPE_CHECKING:
    from pydantic import BaseModel

    from memloom.engine import Memloom

__all__ = [
    "SENSITIVITY_NAMES",
    "CliError",
    "JsonOpt",
    "State",
    "console",
    "console_err",
    "default_command",
    "emit_json",
    "error_message",
    "home_arg",
    "open_engine",
    "project_name",
    "run",
    "short",
    "when",
]

JsonOpt = Annotated[bool, typer.Option("--json", help="Print the JSON document instead.")]

SENSITIVITY_NAMES = {0: "none", 1: "pii", 2: "internal", 3: "credentials"}


@dataclass
class State:
    """What the root callback learned (``--home``); every command finds it in ``ctx.obj``."""

    home: Path | None


def home_arg(ctx: typer.Context) -> str | None:
    """``--home`` as the string ``memloom.open`` and the hooks take (None: the default)."""
    state: State = ctx.obj
    return str(state.home) if state.home else None


@contextmanager
def open_engine(ctx: typer.Context) -> Iterator[Memloom]:
    import memloom

    m = memloom.open(home_arg(ctx))
    try:
        yield m
    finally:
        m.close()


def default_command(group: typer.Typer, command: Callable[..., None]) -> None:
    """Make ``command`` what the group does alone, with the same options:
    ``memloom conflicts --json`` is ``memloom conflicts list --json``.

    The group's own options are the default command's, so they are refused before
    another command (``memloom conflicts --json show ID``) rather than dropped.
    """
    name = next(
        (c.name for c in group.registered_commands if c.callback is command), command.__name__
    )

    @functools.wraps(command)  # the signature, hence the options, are the command's
    def callback(ctx: typer.Context, **options: Any) -> None:
        if ctx.invoked_subcommand is None:
            command(ctx, **options)
            return
        # By name: typer may bring its own copy of click's ParameterSource.
        sources = {
            p.opts[0]: p.name and ctx.get_parameter_source(p.name) for p in ctx.command.params
        }
        given = [
            opt for opt, source in sources.items() if getattr(source, "name", "") == "COMMANDLINE"
        ]
        if given:
            group_name, sub = ctx.info_name, ctx.invoked_subcommand
            raise CliError(
                f"{', '.join(given)} before a command is an option of `memloom {group_name}` "
                f"alone (its `{name}`); put it after the command: "
                f"memloom {group_name} {sub} … {given[0]}"
            )

    # The group's help stays its own (typer.Typer(help=…)), not the command's docstring.
    callback.__doc__ = None
    group.callback(invoke_without_command=True)(callback)


def console() -> Any:
    from rich.console import Console

    # soft_wrap: long lines are left to the terminal rather than hard-wrapped at 80
    # columns when output is piped.
    return Console(highlight=False, soft_wrap=True)


def console_err() -> Any:
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


def emit_json(doc: BaseModel | dict[str, Any]) -> None:
    data = doc.model_dump(mode="json") if hasattr(doc, "model_dump") else doc
    sys.stdout.write(json.dumps(data, ensure_ascii=False) + "\n")


def short(text: str, width: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def when(value: datetime | None) -> str:
    return "" if value is None else value.astimezone().strftime("%Y-%m-%d %H:%M")


def need_working_folder() -> str:
    """The working folder, for a command that is about it (``stale``, ``--file``)."""
    here = working_folder()
    if here is None:
        raise CliError("the working folder no longer exists (deleted or moved): cd somewhere")
    return here


def working_path(path: str | os.PathLike[str]) -> str:
    """``path`` against the working folder (``os.path.abspath`` without normalising):
    only a relative path needs that folder to still exist."""
    path = os.fspath(path)
    return path if os.path.isabs(path) else os.path.join(need_working_folder(), path)


def project_option(value: str | None) -> str | None:
    """``--project``: a folder written as a path (``.``, ``../api``, ``~/src/api``) is
    made absolute, so that it names its repository's project (``memloom.project``);
    anything else is a project label, as given."""
    if not value:
        return value
    path = os.path.expanduser(value)
    looks_like_path = path.startswith((".", os.sep)) or os.sep in path
    if looks_like_path and os.path.isdir(path):
        return os.path.normpath(working_path(path))
    return value


def project_name(project: str | None) -> str:
    """The last part of a project path: what people call the project."""
    if not project:
        return ""
    return project.rstrip("/").rsplit("/", 1)[-1] or project


# ---------------------------------------------------------------- errors and exit codes


def error_message(exc: BaseException) -> str | None:
    """The one-line message for an error the user can act on; None for a bug."""
    from pydantic import ValidationError as PydanticError

    from memloom.error_text import describe_validation
    from memloom.errors import ConfigError, EmbeddingError, StoreError

    if isinstance(exc, PydanticError):
        return describe_validation(exc.errors())
    if isinstance(exc, CliError | StoreError | ConfigError | EmbeddingError | ValueError):
        return str(exc)
    return None


def run(app: typer.Typer, argv: list[str] | None = None) -> None:
    """Run the app; an anticipated error is ``memloom: error: …`` and exit status 1."""
    try:
        app(args=argv, prog_name="memloom")
    except Exception as exc:
        message = error_message(exc)
        if message is None:
            raise
        sys.stderr.write(f"memloom: error: {message}\n")
        sys.exit(1)


def distiller_lines(d: dict[str, Any]) -> list[str]:
    """What status, connect and ``memloom llm`` add under the distiller's name."""
    lines = []
    if d.get("error"):
        lines.append(f"cannot be used: {d['error']}")
    calls = d["cli_calls"]
    if d.get("agent_cli"):
        lines.append(f"today {calls['used']}/{calls['cap']} calls through the agent's CLI")
    if d.get("note"):
        lines.append(f"note: {d['note']}")
    lines.append("change it: memloom llm use <name> (memloom llm lists them)")
    return lines
