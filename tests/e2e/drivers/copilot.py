"""GitHub Copilot CLI 1.0.102: bring-your-own-provider mode (no GitHub account),
OpenAI Chat Completions over SSE, hooks in ``~/.copilot/hooks/*.json`` and in
``~/.copilot/settings.json`` (both read without folder trust; memloom writes
``hooks/hooks.json``), sessions in ``~/.copilot/session-state/<id>/events.jsonl``.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.harness import Driver, Sandbox


class Copilot(Driver):
    name = "copilot"
    binary = "copilot"

    def root(self, sb: Sandbox) -> Path:
        return sb.home / ".copilot"

    def hooks_file(self, sb: Sandbox) -> Path:
        """The user-level hook file memloom merges into (another tool's hook already there)."""
        return self.root(sb) / "hooks" / "hooks.json"

    def settings(self, sb: Sandbox) -> Path:
        """The user's settings, with a hook of their own: memloom must leave it alone."""
        return self.root(sb) / "settings.json"

    def configure(self, sb: Sandbox) -> None:
        pass  # all in the environment (run_env); the files are the user's

    def seed_user_config(self, sb: Sandbox) -> list[Path]:
        other = {"type": "command", "bash": self.other_hook_command(sb), "timeoutSec": 10}
        hooks = self.hooks_file(sb)
        hooks.parent.mkdir(parents=True, exist_ok=True)
        # Another tool's file of the same name. Strict JSON: Copilot 1.0.102 silently
        # ignores a hooks file with comments, trailing commas or a BOM.
        doc = {"version": 1, "hooks": {"sessionStart": [other]}}
        hooks.write_text(json.dumps(doc, indent=2) + "\n")
        settings = {
            "autoUpdate": False,
            "banner": "never",
            "hooks": {"userPromptSubmitted": [other]},
        }
        self.settings(sb).write_text(json.dumps(settings, indent=2) + "\n")
        return [hooks, self.settings(sb)]

    def run_env(self, sb: Sandbox) -> dict[str, str]:
        return {
            "COPILOT_PROVIDER_BASE_URL": f"{sb.model.url}/v1",
            "COPILOT_PROVIDER_TYPE": "openai",
            "COPILOT_PROVIDER_API_KEY": "sk-e2e-dummy",
            "COPILOT_MODEL": "fake-model",
            "COPILOT_OFFLINE": "true",
            "COPILOT_AUTO_UPDATE": "false",
        }

    def command(self, sb: Sandbox, prompt: str, *, resume: bool = False) -> list[str]:
        exe = str(sb.bins["npm"] / self.binary)
        flags = ["--allow-all-tools", "--disable-client-telemetry", "-s"]
        return [exe, "-p", prompt, *(["--continue"] if resume else []), *flags]

    def session_files(self, sb: Sandbox) -> list[Path]:
        root = self.root(sb) / "session-state"
        return sorted(root.glob("*/events.jsonl"), key=lambda p: p.stat().st_mtime)
