"""The user's own OpenCode (``opencode run``) as the LLM: whatever provider they log in to.

Each call runs, in a fresh empty temporary folder (:mod:`._cli`)::

    OPENCODE_CONFIG_CONTENT='{"agent": {"memloom-distiller": {...no tools...}}, ...}'
    opencode run --format json --agent memloom-distiller --title "memloom distiller call"
                 --print-logs --log-level ERROR [-m provider/model]

with the prompt (the marker line, the task's instructions and schema, the input)
on stdin, and reads the text parts of the JSON events it prints. Checked against
``opencode run --help`` of 1.18.33, its bundled source and runs against the
scripted model (tests/e2e):

* ``--format json``: one JSON event a line (``text`` parts, ``step_finish``
  with the tokens and cost, ``error`` with the provider's status and message).
* ``--agent memloom-distiller``: an agent defined for the call in
  ``OPENCODE_CONFIG_CONTENT`` (merged over the user's config, last), with
  ``"permission": {"*": "deny"}`` and ``"tools": {"*": false}``: OpenCode offers
  the model no tool at all (its request has none), and would refuse any call.
  An agent of memloom's own, so that the user's permissions for their ``build``
  agent (``"*": "allow"`` included) do not apply to it.
* The same config turns off, by name, every MCP server the user's config files
  declare (``"mcp": {"<name>": {"enabled": false}}``): none is started.
  ``"share": "disabled"``: the call is never shared, whatever the user's setting.
* ``OPENCODE_DISABLE_PROJECT_CONFIG=1``: no ``opencode.json`` found above the
  temporary folder (``/tmp`` is anyone's) is read; ``OPENCODE_DISABLE_AUTOUPDATE=1``.
* ``--title``: the session gets this title, so OpenCode makes no second model
  request to write one.
* ``--print-logs --log-level ERROR``: each failed model request is logged at
  once (``stream error``). OpenCode retries a 429 five times with backoff (~80 s)
  and honours a ``retry-after`` of hours; memloom reads its log as it runs and
  stops the call at the first request refused for a login or a plan's limit.

OpenCode has no option that keeps the call out of its session store: the call's
session is saved in ``opencode.db`` with the temporary folder as its directory,
and memloom's importer skips it for that (``is_llm_call``), for good.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from memloom.agents import jsonc
from memloom.agents.opencode.home import config_dir

from ._cli import CLIProvider, CLIRun, json_lines
from .base import ProviderStopError

__all__ = ["AGENT", "OpenCodeCLIProvider", "call_config", "mcp_server_names"]

#: The agent memloom defines for its calls: no tool offered, every permission denied.
AGENT = "memloom-distiller"
TITLE = "memloom distiller call"
_CONFIG_NAMES = ("config.json", "opencode.json", "opencode.jsonc")
#: ``error.error="AI_APICallError: <message>"`` in a ``stream error`` log line.
_LOGGED_ERROR = re.compile(r'error\.error="((?:[^"\\]|\\.)*)"')


def _mcp_names(text: str) -> list[str]:
    try:
        root = jsonc.parse(text)
    except ValueError:
        return []
    found = root.member("mcp") if root.kind == "object" else None
    if found is None or found[1].value.kind != "object":
        return []
    return [m.key for m in found[1].value.members]


def mcp_server_names(env: Mapping[str, str]) -> list[str]:
    """The MCP servers the user's OpenCode config declares: the global config files,
    ``$OPENCODE_CONFIG``, ``$OPENCODE_CONFIG_DIR`` and ``$OPENCODE_CONFIG_CONTENT``.
    A file that cannot be read declares none (its servers' tools are denied anyway)."""
    files = [config_dir(env) / n for n in _CONFIG_NAMES]
    if env.get("OPENCODE_CONFIG"):
        files.append(Path(env["OPENCODE_CONFIG"]).expanduser())
    if env.get("OPENCODE_CONFIG_DIR"):
        files += [Path(env["OPENCODE_CONFIG_DIR"]).expanduser() / n for n in _CONFIG_NAMES]
    texts = []
    for path in files:
        with contextlib.suppress(OSError, UnicodeDecodeError):
            texts.append(path.read_text(encoding="utf-8"))
    texts.append(env.get("OPENCODE_CONFIG_CONTENT") or "")
    return sorted({n for t in texts if t.strip() for n in _mcp_names(t)})


def call_config(env: Mapping[str, str]) -> dict[str, Any]:
    """``OPENCODE_CONFIG_CONTENT`` for a call: the user's own (if any) with memloom's
    agent, its MCP servers off and sharing off on top."""
    doc: dict[str, Any] = {}
    with contextlib.suppress(ValueError):
        mine = json.loads(env.get("OPENCODE_CONFIG_CONTENT") or "{}")
        doc = mine if isinstance(mine, dict) else {}
    agents = doc.get("agent") if isinstance(doc.get("agent"), dict) else {}
    doc["agent"] = {
        **agents,
        AGENT: {
            "mode": "primary",
            "description": "memloom's distillation call: no tools",
            "permission": {"*": "deny"},
            "tools": {"*": False},
        },
    }
    servers = doc.get("mcp") if isinstance(doc.get("mcp"), dict) else {}
    for name in mcp_server_names(env):
        entry = servers.get(name)
        servers[name] = {**(entry if isinstance(entry, dict) else {}), "enabled": False}
    doc["mcp"] = servers
    doc["share"] = "disabled"
    return doc


def _error_text(doc: dict[str, Any]) -> str | None:
    """``HTTP 401: Incorrect API key …`` from an ``error`` event."""
    err = doc.get("error")
    if not isinstance(err, dict):
        return None
    data = err.get("data") if isinstance(err.get("data"), dict) else {}
    message = data.get("message") or err.get("name")
    if not isinstance(message, str) or not message.strip():
        return None
    status = data.get("statusCode")
    return f"HTTP {status}: {message}" if isinstance(status, int) else message


def _logged_errors(stderr: str) -> list[str]:
    """The message of every ``stream error`` OpenCode logged (one per failed request)."""
    out = []
    for line in stderr.splitlines():
        if 'message="stream error"' in line and (m := _LOGGED_ERROR.search(line)):
            text = m.group(1).replace('\\"', '"')
            out.append(re.sub(r"^AI_\w+Error: ", "", text))
    return out


class OpenCodeCLIProvider(CLIProvider):
    """Runs ``opencode run`` once per task call; see the module docstring for the flags."""

    name: ClassVar[str] = "opencode-cli"  # type: ignore[misc]
    agent = "opencode"
    binary = "opencode"
    label = "OpenCode"
    login_hint = "run `opencode auth login` (or choose a model you are logged in to)"
    tested_version = "1.18.33"
    update_hint = "run `opencode upgrade`"
    auth_markers = ("opencode auth login", "no api key", "api key is missing")
    stop_markers = ("freeusagelimiterror", "gousagelimiterror", "quota exceeded")

    def argv(self, workdir: Path, system: str, schema: dict[str, Any]) -> list[str]:
        argv = [
            self.executable,
            "run",
            "--format",
            "json",
            "--agent",
            AGENT,
            "--title",
            TITLE,
            "--print-logs",
            "--log-level",
            "ERROR",
        ]
        if self.model:
            argv += ["-m", self.model]
        return argv

    def extra_env(self, workdir: Path) -> dict[str, str]:
        env = dict(os.environ if self._env is None else self._env)
        return {
            "OPENCODE_CONFIG_CONTENT": json.dumps(call_config(env)),
            "OPENCODE_DISABLE_PROJECT_CONFIG": "1",
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
        }

    def answer(self, run: CLIRun) -> Any:
        texts: dict[str, list[str]] = {}
        last = None
        finished = False
        for doc in json_lines(run.stdout):
            part = doc.get("part") if isinstance(doc.get("part"), dict) else {}
            if doc.get("type") == "error":
                return None
            if doc.get("type") == "text" and isinstance(part.get("text"), str):
                last = str(part.get("messageID"))
                texts.setdefault(last, []).append(part["text"])
            elif doc.get("type") == "step_finish":
                finished = True
                tokens = part.get("tokens") if isinstance(part.get("tokens"), dict) else {}
                self._count_tokens(tokens.get("input"), tokens.get("output"))
                self._add_cost(part.get("cost"))
        if last is not None:
            return "".join(texts[last])
        return "" if finished else None

    def failure_detail(self, run: CLIRun) -> str:
        """The ``error`` event's status and message, else the last error OpenCode logged."""
        for doc in reversed(json_lines(run.stdout)):
            if doc.get("type") == "error" and (text := _error_text(doc)):
                return " ".join(text.split())[:300]
        logged = _logged_errors(run.stderr)
        if logged:
            return " ".join(logged[-1].split())[:300]
        return super().failure_detail(run)

    def classify(self, detail: str) -> None:
        """OpenCode answers an option it does not know with its usage text, exit 1."""
        if detail.startswith("opencode run [message..]"):
            raise ProviderStopError(
                f"{self.label} at {self.executable} rejected memloom's flags (it printed its "
                f"usage); memloom needs {self.label} {self.tested_version} or newer: "
                f"{self.update_hint}, or choose another distiller (memloom llm use <name>)",
                provider=self.name,
            )
        super().classify(detail)

    def watch_line(self, line: str) -> bool:
        """OpenCode retries a refused request for minutes (a 429 five times, a
        ``retry-after`` of hours): its log's first login or limit refusal ends the call."""
        logged = _logged_errors(line)
        return bool(logged) and self.refused(logged[0])
