"""Aider 0.86.2: OpenAI Chat Completions over SSE (litellm ``openai/<model>``), no hooks.

memloom captures Aider only by the capture worker's sweep, which finds
``.aider.chat.history.md`` in the project folders memloom knows (``memloom connect
aider`` names the folder) once it has been quiet for 5 minutes: :meth:`Aider.run`
dates the history back past that. Aider writes it in its working directory
(``--no-git``: no repository root to climb to). Aider's "whole" edit format offers
the model no tools, so its history never holds a tool call.

Kept offline (../shared/reference/agents-e2e.md §2.6): litellm's model price map is
pre-seeded **non-empty** at ``~/.aider/caches/model_prices_and_context_window.json``
(an empty one is fetched again from GitHub on every start) and
``LITELLM_LOCAL_MODEL_COST_MAP=True``; no update check, no analytics, no release notes.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from tests.e2e import install
from tests.e2e.harness import Driver, Run, Sandbox

MODEL = "fake-model"
#: What litellm needs to know of the scripted model (free, chat, 128k context).
PRICES = {
    MODEL: {
        "max_input_tokens": 128000,
        "max_output_tokens": 4096,
        "litellm_provider": "openai",
        "mode": "chat",
        "input_cost_per_token": 0,
        "output_cost_per_token": 0,
    }
}
#: The API key Aider is given: it echoes the command line into its history (masked).
API_KEY = "sk-e2e-aider-dummy"
HISTORY = ".aider.chat.history.md"
#: How far back a run's history is dated: past the sweep's quiet period (300 s), as if
#: the user had stopped typing a while ago (Aider writes no end marker).
SETTLED_S = 600


class Aider(Driver):
    name = "aider"
    binary = "aider"
    install = "aider"
    hooks = False

    def configure(self, sb: Sandbox) -> None:
        cache = sb.home / ".aider" / "caches" / "model_prices_and_context_window.json"
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(PRICES))

    def seed_user_config(self, sb: Sandbox) -> list[Path]:
        """The user's own ``~/.aider.conf.yml`` (memloom never edits it: no hooks)."""
        path = sb.home / ".aider.conf.yml"
        path.write_text("# my aider settings\ndark-mode: true\n")
        return [path]

    def run_env(self, sb: Sandbox) -> dict[str, str]:
        return {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}

    def command(self, sb: Sandbox, prompt: str, *, resume: bool = False) -> list[str]:
        # A resumed run appends to the same history file; Aider starts a new session header.
        return [
            str(install.aider_bin()),
            "--model",
            f"openai/{MODEL}",
            "--openai-api-base",
            f"{sb.model.url}/v1",
            "--openai-api-key",
            API_KEY,
            "--message",
            prompt,
            "--yes-always",
            "--no-git",
            "--no-check-update",
            "--analytics-disable",
            "--no-show-model-warnings",
            "--no-show-release-notes",
            "--no-pretty",
            *(["--restore-chat-history"] if resume else []),
        ]

    def run(
        self, sb: Sandbox, prompt: str, *, resume: bool = False, env: dict[str, str] | None = None
    ) -> Run:
        """One prompt; then the history is dated :data:`SETTLED_S` back, so the next
        sweep takes it (a history written in the last 5 minutes is still active)."""
        done = super().run(sb, prompt, resume=resume, env=env)
        then = time.time() - SETTLED_S
        for path in self.session_files(sb):
            os.utime(path, (then, then))
        return done

    def session_files(self, sb: Sandbox) -> list[Path]:
        path = sb.project / HISTORY
        return [path] if path.exists() else []
