"""The user's own Codex CLI (``codex exec``) as the LLM: their ChatGPT plan or login pays.

Each call runs, in a fresh empty temporary folder (:mod:`._cli`)::

    codex exec --skip-git-repo-check --ephemeral --sandbox read-only --json --color never
               --output-schema <file> -c approval_policy="never" -c web_search="disabled"
               [-c mcp_servers.<name>.enabled=false ...] --disable <feature> ... [-m M] -

with the prompt (the marker line, the task's instructions and schema, the input)
on stdin (``-``), and reads the last ``agent_message`` of the JSON Lines events it
prints. Every flag was checked against ``codex exec --help`` of 0.169.0, its
``codex features list`` and runs against the scripted model (tests/e2e):

* ``--skip-git-repo-check``: the empty folder is no git repository.
* ``--ephemeral``: no rollout file is written, so memloom never imports the call.
* ``--sandbox read-only`` and ``-c approval_policy="never"``: were any command
  offered, it could write nothing and no approval would be asked for.
* ``--json``: one JSON event a line (the answer, the token usage, the error).
* ``--output-schema <file>``: the answer is constrained to the task's schema
  (a strict ``json_schema`` text format). The file is written beside the folder,
  never in it, and removed after the call.
* ``--disable`` of every feature that offers a tool: ``shell_tool`` and
  ``unified_exec`` (the shell), ``view_image`` (it reads any file), ``multi_agent``
  (sub-agents), ``goals``, ``apps``, ``plugins``, ``browser_use``,
  ``computer_use``, ``image_generation``, ``sleep_tool``, ``tool_suggest``,
  ``skill_search`` and ``memories``; ``hooks`` (no hook of the user's, memloom's
  included, runs for the call); ``unbounded_connection_retries`` (offline, a call
  ends instead of waiting for the network for ever). What is left offered is
  ``request_user_input``, which Codex itself refuses outside Plan mode ("is
  unavailable in Default mode"): it reads no file and runs nothing.
* ``-c web_search="disabled"``: no web search tool.
* ``-c mcp_servers.<name>.enabled=false`` for each MCP server in the user's
  ``config.toml``: ``-c mcp_servers={}`` does not clear them (Codex merges the
  table; openai/codex#16045), so each is switched off by name.

Not logged in, Codex prints ``unexpected status 401 Unauthorized: …`` after five
quick reconnects (~7 s); at a plan's limit, at once, ``You've hit your usage
limit. … try again at 9:24 PM.``: both end the run in one line (:mod:`._cli`).
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any, ClassVar

from memloom.agents.codex.home import config_path

from ._cli import CLIProvider, CLIRun, json_lines
from .base import ProviderStopError

__all__ = ["DISABLED_FEATURES", "CodexCLIProvider", "mcp_server_names"]

#: Codex features turned off for a call: every one that offers the model a tool,
#: the user's hooks, and the endless wait for the network.
DISABLED_FEATURES = (
    "shell_tool",
    "unified_exec",
    "view_image",
    "multi_agent",
    "goals",
    "apps",
    "plugins",
    "browser_use",
    "computer_use",
    "image_generation",
    "sleep_tool",
    "tool_suggest",
    "skill_search",
    "memories",
    "hooks",
    "unbounded_connection_retries",
)
#: What Codex accepts as an MCP server's name (anything else it refuses to load).
_SERVER_NAME = re.compile(r"[A-Za-z0-9_-]+")


def mcp_server_names(env: dict[str, str] | None = None) -> list[str]:
    """The MCP servers the user's ``config.toml`` declares: each is switched off by
    name for the call. Only those: ``-c mcp_servers.<name>.enabled=false`` for a
    name the file does not declare makes Codex refuse its config ("invalid
    transport"). Legacy ``[profiles.*]`` tables are not read (0.169.0 layers a
    profile from its own file, and only with ``--profile``, which memloom does not
    pass). An unreadable file declares none (Codex then refuses it itself)."""
    try:
        doc = tomllib.loads(config_path(env).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return []
    table = doc.get("mcp_servers")
    names = table if isinstance(table, dict) else {}
    return sorted(n for n in names if _SERVER_NAME.fullmatch(n))


def _schema_file(workdir: Path) -> Path:
    """Beside the call's folder (unique as the folder is), never inside it."""
    return workdir.with_name(workdir.name + ".schema.json")


class CodexCLIProvider(CLIProvider):
    """Runs ``codex exec`` once per task call; see the module docstring for the flags."""

    name: ClassVar[str] = "codex-cli"  # type: ignore[misc]
    agent = "codex"
    binary = "codex"
    label = "Codex CLI"
    login_hint = "run `codex login`"
    tested_version = "0.169.0"
    update_hint = "run `npm install -g @openai/codex@latest` (or `codex update`)"
    auth_markers = ("sign in again", "refresh token", "codex login", "not logged in")
    stop_markers = ("hit your usage limit", "usage_limit_reached", "usage_not_included")
    transient_markers = ("connection failed", "stream disconnected", "error sending request")

    def argv(self, workdir: Path, system: str, schema: dict[str, Any]) -> list[str]:
        schema_path = _schema_file(workdir)
        schema_path.write_text(json.dumps(schema), encoding="utf-8")
        argv = [
            self.executable,
            "exec",
            "--skip-git-repo-check",
            "--ephemeral",
            "--sandbox",
            "read-only",
            "--json",
            "--color",
            "never",
            "--output-schema",
            str(schema_path),
            "-c",
            'approval_policy="never"',
            "-c",
            'web_search="disabled"',
        ]
        for server in mcp_server_names(self._env if self._env is not None else dict(os.environ)):
            argv += ["-c", f"mcp_servers.{server}.enabled=false"]
        for feature in DISABLED_FEATURES:
            argv += ["--disable", feature]
        if self.model:
            argv += ["-m", self.model]
        return [*argv, "-"]

    def after(self, workdir: Path) -> None:
        _schema_file(workdir).unlink(missing_ok=True)

    def answer(self, run: CLIRun) -> Any:
        events = json_lines(run.stdout)
        text = None
        for doc in events:
            item = doc.get("item")
            if (
                doc.get("type") == "item.completed"
                and isinstance(item, dict)
                and item.get("type") == "agent_message"
                and isinstance(item.get("text"), str)
            ):
                text = item["text"]
            elif doc.get("type") == "turn.completed" and isinstance(doc.get("usage"), dict):
                usage = doc["usage"]
                self._count_tokens(usage.get("input_tokens"), usage.get("output_tokens"))
        if text is None and any(d.get("type") == "turn.completed" for d in events):
            return ""  # a finished turn with no message: no JSON in it (fails this chunk)
        return text

    def failure_detail(self, run: CLIRun) -> str:
        """The turn's error (``turn.failed``), else the last ``error`` event, else stderr."""
        failed = errors = None
        for doc in json_lines(run.stdout):
            if doc.get("type") == "turn.failed" and isinstance(doc.get("error"), dict):
                failed = doc["error"].get("message")
            elif doc.get("type") == "error" and isinstance(doc.get("message"), str):
                errors = doc["message"]
        detail = failed or errors
        if isinstance(detail, str) and detail.strip():
            return " ".join(detail.split())[:300]
        lines = []
        for line in run.stderr.splitlines():
            if line.startswith("Stack backtrace"):
                break
            if not line.startswith("WARNING: proceeding"):
                lines.append(line)
        return " ".join(" ".join(lines).split())[:300] or super().failure_detail(run)

    def classify(self, detail: str) -> None:
        """Codex names a feature it does not know (an older Codex) as it names a flag."""
        if "unknown feature flag" in detail.lower():
            raise ProviderStopError(
                f"{self.label} at {self.executable} rejected memloom's flags ({detail}); "
                f"memloom needs {self.label} {self.tested_version} or newer: "
                f"{self.update_hint}, or choose another distiller (memloom llm use <name>)",
                provider=self.name,
            )
        super().classify(detail)
