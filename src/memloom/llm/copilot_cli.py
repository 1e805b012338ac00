"""The user's own GitHub Copilot CLI (``copilot``) as the LLM: their Copilot seat
pays, no API key.

Each call runs, in a fresh empty temporary folder (:mod:`._cli`), with the prompt
(the marker line, the instructions, the schema, the task input) on stdin::

    copilot --output-format json --available-tools=memloom-no-tools
            --deny-tool=shell --deny-tool=write --deny-tool=url
            --disable-builtin-mcps [--disable-mcp-server=<name> …]
            --no-custom-instructions --no-ask-user --disallow-temp-dir
            --no-auto-update --disable-client-telemetry --no-color [--model M]

The flags, checked against ``copilot --help`` (and ``copilot help permissions``,
``copilot help environment``) of 1.0.102 and against runs of that version:

* no ``-p``: a piped prompt is prompt mode ("-p/--prompt or piped stdin"), so the
  prompt never meets argv's per-argument limit.
* ``--output-format json``: JSON Lines, one event a line; the answer is the last
  top-level ``assistant.message``'s ``content``, a failure a ``session.error``.
* ``--available-tools=memloom-no-tools``: "only these tools will be available to
  the model"; naming no real tool leaves none (the requests carry no ``tools``, and
  a tool call the model makes anyway gets "Tool 'bash' does not exist"). An empty
  value is ignored by 1.0.102 (every tool stays), hence a name.
* ``--deny-tool=shell|write|url``: were a tool offered after all, deny rules win
  over any allow rule. ``--allow-all-tools`` is never passed, so in prompt mode
  any tool needing approval is refused ("Permission denied because no interactive
  user response was available"), never waited on.
* ``--disable-builtin-mcps`` and one ``--disable-mcp-server=<name>`` per server
  ``copilot mcp list --json`` names (the user's, plugins'): no MCP server starts.
  Copilot has no switch for "none at all"; without these it starts the user's
  servers for each call (and waits up to 60 s on one that does not answer).
* ``--no-custom-instructions``: no AGENTS.md / copilot-instructions in the prompt.
* ``--no-ask-user``: no question tool. ``--disallow-temp-dir``: paths under the
  system temporary folder (other calls' folders) are not granted.
* ``--no-auto-update``, ``--disable-client-telemetry``, ``--no-color``: quiet.

The environment sets ``COPILOT_ALLOW_ALL=false`` (a user's ``true`` would approve
every tool and trust the folder) and the ``GITHUB_COPILOT_PROMPT_MODE_*`` opt-ins
to ``false`` (no repository hooks, workspace MCP servers or extensions).

Copilot 1.0.102 has no option that stops it saving the call's session
(``~/.copilot/session-state/<id>/``) or running the user's hooks: memloom's own
hooks stand down (``MEMLOOM_LLM_CHILD``), and the importer skips the session by
its folder (``memloom-llm-copilot-…``) or the marker line.
"""

from __future__ import annotations

import json
import logging
import subprocess
from pathlib import Path
from typing import Any, ClassVar

from ._cli import CLIProvider, CLIRun, json_lines
from .base import LLMError

log = logging.getLogger(__name__)

__all__ = ["NO_TOOL", "CopilotCLIProvider", "answer_events", "build_argv"]

#: The one tool ``--available-tools`` allows: no tool has this name.
NO_TOOL = "memloom-no-tools"

_FLAGS = (
    "--output-format",
    "json",
    f"--available-tools={NO_TOOL}",
    "--deny-tool=shell",
    "--deny-tool=write",
    "--deny-tool=url",
    "--disable-builtin-mcps",
    "--no-custom-instructions",
    "--no-ask-user",
    "--disallow-temp-dir",
    "--no-auto-update",
    "--disable-client-telemetry",
    "--no-color",
)


def build_argv(
    executable: str, *, model: str | None = None, mcp_servers: tuple[str, ...] = ()
) -> list[str]:
    """The ``copilot`` command line of one call (the prompt goes to stdin)."""
    argv = [executable, *_FLAGS]
    argv += [f"--disable-mcp-server={name}" for name in mcp_servers]
    if model:
        argv += ["--model", model]
    return argv


def _events(stdout: str) -> list[dict[str, Any]]:
    """Copilot's events: the JSON lines that carry a ``type``."""
    return [doc for doc in json_lines(stdout) if isinstance(doc.get("type"), str)]


def answer_events(
    stdout: str,
) -> tuple[str | None, str | None, dict[str, Any] | None]:
    """(the answer, the error, the ``result`` event) of ``--output-format json``'s
    lines: the last top-level ``assistant.message`` with text, the last
    ``session.error``'s message."""
    answer = error = None
    result = None
    for event in _events(stdout):
        data = event.get("data") if isinstance(event.get("data"), dict) else {}
        kind = event["type"]
        if kind == "assistant.message" and not data.get("parentToolCallId"):
            content = data.get("content")
            if isinstance(content, str) and content.strip():
                answer = content
        elif kind == "session.error":
            error = str(data.get("message") or data.get("errorType") or "error")
        elif kind == "result":
            result = event
    return answer, error, result


class CopilotCLIProvider(CLIProvider):
    """Runs ``copilot`` once per task call; see the module docstring for the flags."""

    name: ClassVar[str] = "copilot-cli"  # type: ignore[misc]
    agent = "copilot"
    binary = "copilot"
    label = "GitHub Copilot CLI"
    login_hint = "run `copilot login` (or `copilot` and /login)"
    tested_version = "1.0.102"
    update_hint = "run `copilot update` (npm: npm install -g @github/copilot)"
    auth_markers = (
        "no authentication information found",
        "not authenticated",
        "copilot login",
    )
    stop_markers = (
        "run out of your",
        "used all your copilot",
        "you've hit your",
        "you've reached your",
        "weekly rate limit",
        "session rate limit",
        "spending limit",
        "limit to reset",
        "limit resets",
        "quota_exceeded",
        "premium request",
    )

    _mcp_servers: tuple[str, ...] | None = None

    def argv(self, workdir: Path, system: str, schema: dict[str, Any]) -> list[str]:
        return build_argv(self.executable, model=self.model, mcp_servers=self.mcp_servers(workdir))

    def extra_env(self, workdir: Path) -> dict[str, str]:
        return {
            "COPILOT_ALLOW_ALL": "false",
            "GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS": "false",
            "GITHUB_COPILOT_PROMPT_MODE_WORKSPACE_MCP": "false",
            "GITHUB_COPILOT_PROMPT_MODE_EXTENSIONS": "false",
            "COPILOT_AUTO_UPDATE": "false",
        }

    def mcp_servers(self, workdir: Path) -> tuple[str, ...]:
        """The MCP servers Copilot would start (``copilot mcp list --json``, asked
        once, in the empty folder): each gets ``--disable-mcp-server``."""
        if self._mcp_servers is None:
            self._mcp_servers = self._list_mcp(workdir)
        return self._mcp_servers

    def _list_mcp(self, workdir: Path) -> tuple[str, ...]:
        try:
            proc = subprocess.run(
                [self.executable, "mcp", "list", "--json"],
                cwd=str(workdir),
                env=self.environment(workdir),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            doc = json.loads(proc.stdout) if proc.returncode == 0 else {}
            why = f"exit {proc.returncode}: {' '.join(proc.stderr.split())[:200]}"
        except (OSError, subprocess.TimeoutExpired, ValueError) as e:
            doc, why = {}, str(e)
        servers = doc.get("mcpServers") if isinstance(doc, dict) else None
        if not isinstance(servers, dict):
            # No tool is offered either way (--available-tools); a server of the user's
            # may start for the call, so say so where the user can see it.
            log.warning("could not list Copilot CLI's MCP servers to switch them off (%s)", why)
            return ()
        return tuple(sorted(n for n in servers if isinstance(n, str) and n and "\n" not in n))

    def failure_detail(self, run: CLIRun) -> str:
        _answer, error, _result = answer_events(run.stdout)
        if error:
            return " ".join(error.split())[:300]
        return super().failure_detail(run) if run.stderr.strip() else "no output"

    def answer(self, run: CLIRun) -> Any:
        events = _events(run.stdout)
        if not events:  # not JSON Lines: the text is the answer (or nothing)
            return run.stdout.strip() or None
        text, error, result = answer_events(run.stdout)
        exit_code = result.get("exitCode") if isinstance(result, dict) else None
        if error or (isinstance(exit_code, int) and exit_code != 0):
            detail = self.failure_detail(run)
            self.classify(detail)
            if text is None:
                return None  # no answer: the base retries, then stops the run
            raise LLMError(f"{self.label} reported an error: {detail}")
        return text
