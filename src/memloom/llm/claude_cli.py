"""The user's own Claude Code CLI (``claude -p``) as the LLM: no extra API key.

Each call runs, in a fresh empty temporary directory::

    claude -p --output-format json --json-schema '<schema>' --system-prompt '<prompt>'
           --tools "" --no-session-persistence --strict-mcp-config [--model M]

with the task input (a JSON document) on stdin, and reads ``structured_output``
(or, failing that, the JSON in ``result``) from the single JSON object it
prints. The flags, checked against the Claude Code documentation
("Run Claude Code programmatically", "CLI reference"):

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

Assumption: older CLIs may lack some of these flags; a CLI that rejects a
flag stops the run with a message saying so (update with ``claude update``).
All of the argv is built in :func:`build_argv`, the one place to adapt. The
child also gets ``MEMLOOM_LLM_CHILD=1`` in its environment so memloom's own
Claude Code hooks can recognise (and ignore) it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from memloom.config import ConfigError, LLMSettings

from .base import BaseLLM, LLMError, ProviderAuthError, ProviderStopError, parse_json_reply

__all__ = ["ClaudeCLIProvider", "build_argv"]

DEFAULT_TIMEOUT = 600.0
CHILD_ENV = "MEMLOOM_LLM_CHILD"

_SCHEMA_HINT = (
    "\n\nReply with a single JSON object that matches this JSON schema, and nothing else:\n"
)
_AUTH_MARKERS = (
    "invalid api key",
    "not logged in",
    "please run /login",
    "authentication_error",
    "oauth token has expired",
    "oauth token revoked",
    "permission_error",
)
_STOP_MARKERS = (
    "credit balance is too low",
    "usage limit reached",
    "limit reached",
    "insufficient_quota",
    "billing",
    "payment required",
)
_TRANSIENT_MARKERS = (
    "overloaded",
    "api error: 5",
    "api error: 429",
    "rate_limit_error",
    "timed out",
    "timeout",
    "econnreset",
    "socket hang up",
    "network",
)
_BAD_FLAG_MARKERS = ("unknown option", "unknown argument", "unexpected argument")


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
        system.rstrip() + _SCHEMA_HINT + compact,
        "--tools",
        "",
        "--no-session-persistence",
        "--strict-mcp-config",
    ]
    if model:
        argv += ["--model", model]
    argv += list(extra_args)
    return argv


def _has(text: str, markers: Sequence[str]) -> bool:
    low = text.lower()
    return any(m in low for m in markers)


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


class _Retry(Exception):
    pass


class ClaudeCLIProvider(BaseLLM):
    """Runs ``claude -p`` once per task call; see the module docstring for the flags."""

    def __init__(
        self,
        *,
        executable: str | None = None,
        model: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_tries: int = 2,
        backoff: float = 5.0,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        description: str | None = None,
    ) -> None:
        super().__init__()
        exe = executable or shutil.which("claude")
        if not exe:
            raise ValueError(
                "no `claude` executable found on PATH; install Claude Code or pass its path"
            )
        if max_tries < 1:
            raise ValueError("max_tries must be >= 1")
        self.name = "claude-cli"
        self.model = model or None
        self.offline = False
        self.executable = exe
        self.timeout = timeout
        self.max_tries = max_tries
        self.backoff = backoff
        self.extra_args = tuple(extra_args)
        self._env = dict(env) if env is not None else None
        self._sleep = sleep
        self.cost_usd = 0.0
        self.description = description or (
            f"Claude Code CLI ({exe} -p"
            + (f", model {model}" if model else ", its default model")
            + "); uses your Claude Code login, no extra key"
        )

    @classmethod
    def from_settings(
        cls,
        settings: LLMSettings,
        why: str,
        which: Callable[[str], str | None] | None = None,
    ) -> ClaudeCLIProvider:
        """The ``claude`` found by ``which`` with the environment's model and timeout."""
        exe = (which or shutil.which)("claude")
        if not exe:
            raise ConfigError(
                "MEMLOOM_LLM=claude-cli but no `claude` executable is on PATH; install Claude "
                "Code (https://docs.claude.com/claude-code) or choose another MEMLOOM_LLM"
            )
        model = settings.model
        provider = cls(executable=exe, model=model, timeout=settings.timeout(DEFAULT_TIMEOUT))
        provider.description = (
            f"Claude Code CLI ({exe} -p, model {model or 'its default'}; uses your Claude Code "
            f"login, no extra key); {why}"
        )
        return provider

    def __repr__(self) -> str:
        return f"ClaudeCLIProvider(executable={self.executable!r}, model={self.model!r})"

    def complete(
        self, task: str, system: str, payload: dict[str, Any], schema: dict[str, Any]
    ) -> dict[str, Any]:
        argv = build_argv(
            self.executable,
            system=system,
            schema=schema,
            model=self.model,
            extra_args=self.extra_args,
        )
        stdin = json.dumps(payload, ensure_ascii=False)
        self._count_call(task, len(system) + len(stdin))
        try:
            last = ""
            for attempt in range(self.max_tries):
                try:
                    return self._run_once(task, argv, stdin)
                except _Retry as e:
                    last = str(e)
                if attempt + 1 < self.max_tries:
                    self._sleep(self.backoff * (2**attempt))
            raise LLMError(
                f"{task} via claude CLI failed after {self.max_tries} tries; last error: {last}"
            )
        except LLMError:
            self._count_failure(task)
            raise

    def _environment(self) -> dict[str, str]:
        env = dict(os.environ if self._env is None else self._env)
        env[CHILD_ENV] = "1"
        return env

    def _run_once(self, task: str, argv: list[str], stdin: str) -> dict[str, Any]:
        where = f"{task} via claude CLI ({self.executable})"
        with tempfile.TemporaryDirectory(prefix="memloom-claude-") as cwd:
            try:
                proc = subprocess.run(
                    argv,
                    input=stdin,
                    capture_output=True,
                    text=True,
                    encoding="utf-8",
                    errors="replace",
                    timeout=self.timeout,
                    cwd=cwd,
                    env=self._environment(),
                    check=False,
                )
            except subprocess.TimeoutExpired:
                raise _Retry(f"timed out after {self.timeout:g}s") from None
            except OSError as e:
                raise ProviderStopError(
                    f"cannot run the claude CLI at {self.executable}: {e}", provider=self.name
                ) from None
        doc = _result_doc(proc.stdout)
        stderr = " ".join(proc.stderr.split())[:300]
        if doc is None:
            detail = stderr or " ".join(proc.stdout.split())[:300] or "no output"
            if _has(detail, _BAD_FLAG_MARKERS):
                raise ProviderStopError(
                    f"the claude CLI at {self.executable} rejected memloom's flags ({detail}); "
                    "update Claude Code (`claude update`)",
                    provider=self.name,
                )
            self._classify_failure(detail)
            raise LLMError(f"{where}: exit code {proc.returncode}, no JSON result: {detail}")
        self._record_usage(doc)
        if doc.get("is_error") or doc.get("subtype") not in (None, "success"):
            detail = " ".join(str(doc.get("result") or doc.get("subtype") or stderr).split())
            self._classify_failure(detail[:300])
            raise LLMError(f"{where}: the CLI reported an error: {detail[:300]}")
        structured = doc.get("structured_output")
        if isinstance(structured, dict):
            return structured
        if isinstance(structured, str):
            return parse_json_reply(structured, where=where)
        return parse_json_reply(doc.get("result"), where=where)

    def _classify_failure(self, detail: str) -> None:
        if _has(detail, _AUTH_MARKERS):
            raise ProviderAuthError(
                f"the claude CLI is not authorised ({detail}); run `claude` once and log in, "
                "or choose another MEMLOOM_LLM",
                provider=self.name,
            )
        if _has(detail, _STOP_MARKERS):
            raise ProviderStopError(
                f"the claude CLI hit a usage or billing limit ({detail})", provider=self.name
            )
        if _has(detail, _TRANSIENT_MARKERS):
            raise _Retry(detail)

    def _record_usage(self, doc: dict[str, Any]) -> None:
        usage = doc.get("usage")
        if isinstance(usage, dict):
            tokens_in = sum(
                v
                for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
                if isinstance(v := usage.get(k), int)
            )
            self._count_tokens(tokens_in, usage.get("output_tokens"))
        cost = doc.get("total_cost_usd")
        if isinstance(cost, int | float) and not isinstance(cost, bool):
            with self._usage_lock:
                self.cost_usd += float(cost)

    def usage(self) -> dict[str, Any]:
        out = super().usage()
        out["cost_usd"] = round(self.cost_usd, 6)
        return out
