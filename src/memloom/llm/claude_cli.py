"""The user's own Claude Code CLI (``claude -p``) as the LLM: no extra API key.

Each call runs, in a fresh empty temporary folder (:mod:`._cli`)::

    claude -p --output-format json --json-schema '<schema>' --system-prompt '<prompt>'
           --tools "" --no-session-persistence --strict-mcp-config --safe-mode [--model M]

with the task input (a JSON document, after the marker line) on stdin, and reads
``structured_output`` (or, failing that, the JSON in ``result``) from the single
JSON object it prints. The flags, checked against ``claude --help`` of 2.1.328
and the Claude Code documentation ("Run Claude Code programmatically", "CLI
reference"):

* ``-p`` / ``--print``: non-interactive; the prompt is read from stdin.
* ``--output-format json``: one JSON object with ``result``, ``is_error``,
  ``usage``, ``total_cost_usd`` and, with ``--json-schema``,
  ``structured_output``.
* ``--json-schema <json>``: structured output conforming to the schema.
* ``--system-prompt <text>``: replaces Claude Code's own (agentic) system
  prompt with the task's instructions.
* ``--tools ""``: no tools at all, so text inside a transcript cannot make
  the model read files or run commands.
* ``--no-session-persistence``: the call leaves no transcript behind, so
  memloom never imports its own distillation calls.
* ``--strict-mcp-config``: no MCP servers (none is given with ``--mcp-config``).
* ``--safe-mode``: no hooks, plugins, CLAUDE.md, skills or MCP servers of the
  user's (memloom's own SessionStart digest included), while the login works as
  usual. ``--bare`` would skip them too, but reads no OAuth login: a Pro/Max
  user would be refused.

The environment adds ``CLAUDE_CODE_MAX_RETRIES=2``: Claude Code 2.1.328 retries a
401 ten times with backoff (about 180 s) before it says "Invalid API key"; with
two it says so in about 3 s (an overloaded answer is still retried, by it and by
:mod:`._cli`). A plan's limit reads "You've hit your session limit · resets 5pm".

All of the argv is built in :func:`build_argv`, the one place to adapt.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from memloom.agents.markup import LLM_CALL_MARKER

from ._cli import CLIProvider, CLIRun, schema_hint
from .base import LLMError

__all__ = ["MAX_RETRIES", "ClaudeCLIProvider", "build_argv"]

#: Claude Code's own retries of a failed request (its default is 10: ~180 s on a 401).
MAX_RETRIES = 2


def build_argv(
    executable: str,
    *,
    system: str,
    schema: dict[str, Any],
    model: str | None = None,
    extra_args: Sequence[str] = (),
) -> list[str]:
    """The ``claude`` command line for one task call (the payload goes to stdin).

    The schema is also spelled out at the end of the system prompt, so that a
    CLI that returns plain ``result`` text still answers in the right shape.
    """
    compact = json.dumps(schema, separators=(",", ":"), ensure_ascii=False)
    argv = [
        executable,
        "-p",
        "--output-format",
        "json",
        "--json-schema",
        compact,
        "--system-prompt",
        system.rstrip() + schema_hint(schema),
        "--tools",
        "",
        "--no-session-persistence",
        "--strict-mcp-config",
        "--safe-mode",
    ]
    if model:
        argv += ["--model", model]
    argv += list(extra_args)
    return argv


def _result_doc(stdout: str) -> dict[str, Any] | None:
    """The CLI's result object: the whole stdout, its last JSON line, or the
    ``type: result`` element of a JSON array (``--verbose`` output)."""
    text = stdout.strip()
    if not text:
        return None
    candidates = [text] + [ln for ln in reversed(text.splitlines()) if ln.strip()]
    for chunk in candidates:
        try:
            doc = json.loads(chunk)
        except json.JSONDecodeError:
            continue
        if isinstance(doc, list):
            results = [d for d in doc if isinstance(d, dict) and d.get("type") == "result"]
            doc = results[-1] if results else None
        if isinstance(doc, dict):
            return doc
    return None


class ClaudeCLIProvider(CLIProvider):
    """Runs ``claude -p`` once per task call; see the module docstring for the flags."""

    name: ClassVar[str] = "claude-cli"  # type: ignore[misc]
    agent = "claude-code"
    binary = "claude"
    label = "Claude Code"
    login_hint = "run `claude` once and log in (/login)"
    tested_version = "2.1.328"
    update_hint = "run `claude update`"
    auth_markers = ("please run /login", "oauth token revoked")
    stop_markers = ("billing", "you've hit your", "spend limit")

    def argv(self, workdir: Path, system: str, schema: dict[str, Any]) -> list[str]:
        return build_argv(self.executable, system=system, schema=schema, model=self.model)

    def prompt(self, system: str, payload: str, schema: dict[str, Any]) -> str:
        return f"{LLM_CALL_MARKER}\n{payload}"

    def extra_env(self, workdir: Path) -> dict[str, str]:
        return {"CLAUDE_CODE_MAX_RETRIES": str(MAX_RETRIES)}

    def failure_detail(self, run: CLIRun) -> str:
        doc = _result_doc(run.stdout)
        if doc is not None and (doc.get("result") or doc.get("subtype")):
            return " ".join(str(doc.get("result") or doc.get("subtype")).split())[:300]
        return super().failure_detail(run)

    def answer(self, run: CLIRun) -> Any:
        doc = _result_doc(run.stdout)
        if doc is None:
            return None
        self._record_usage(doc)
        if doc.get("is_error") or doc.get("subtype") not in (None, "success"):
            detail = self.failure_detail(run)
            self.classify(detail)
            raise LLMError(f"{self.label} reported an error: {detail}")
        structured = doc.get("structured_output")
        if isinstance(structured, dict | str):
            return structured
        return doc.get("result") if isinstance(doc.get("result"), str) else ""

    def _record_usage(self, doc: dict[str, Any]) -> None:
        usage = doc.get("usage")
        if isinstance(usage, dict):
            tokens_in = sum(
                v
                for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
                if isinstance(v := usage.get(k), int)
            )
            self._count_tokens(tokens_in, usage.get("output_tokens"))
        self._add_cost(doc.get("total_cost_usd"))
