"""``memloom redact``: the redaction rules as a filter on standard input."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from memloom.cli._common import JsonOpt, State, emit_json


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
            emit_json(result.to_json())
        elif lines:
            sys.stdout.write(result.text + "\n")
        else:
            sys.stdout.write(result.text)


def register(app: typer.Typer) -> None:
    app.command()(redact)
