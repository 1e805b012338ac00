"""OpenAI Codex CLI 0.169.0: OpenAI Responses over SSE, hooks in ~/.codex/hooks.json.

Codex keeps the provider in ``~/.codex/config.toml`` (``wire_api = "responses"``:
it refuses ``"chat"``), and runs hooks only once they are trusted -- unless the run
passes ``--dangerously-bypass-hook-trust``, as these tests do (``memloom connect
codex`` tells a real user how to trust them). ``[features] plugins = false`` keeps
it from reaching GitHub for its plugin marketplace.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.harness import Driver, Sandbox

#: The environment variable holding the scripted provider's key.
KEY_ENV = "MEMLOOM_E2E_CODEX_KEY"


class Codex(Driver):
    name = "codex"
    binary = "codex"

    def __init__(self, *, bypass_trust: bool = True) -> None:
        #: ``--dangerously-bypass-hook-trust`` on every run (False: as a user runs it)
        self.bypass_trust = bypass_trust

    def codex_home(self, sb: Sandbox) -> Path:
        return sb.home / ".codex"

    def config(self, sb: Sandbox) -> Path:
        return self.codex_home(sb) / "config.toml"

    def hooks_file(self, sb: Sandbox) -> Path:
        return self.codex_home(sb) / "hooks.json"

    def provider(self, sb: Sandbox) -> str:
        """What points Codex at the scripted model and keeps it off the network."""
        return (
            'model = "gpt-fake"\n'
            'model_provider = "scripted"\n'
            "check_for_update_on_startup = false\n"
            'approval_policy = "never"\n'
            'sandbox_mode = "read-only"\n'
            "\n"
            "[model_providers.scripted]\n"
            'name = "scripted"\n'
            f'base_url = "{sb.model.url}/v1"\n'
            f'env_key = "{KEY_ENV}"\n'
            'wire_api = "responses"\n'
            "\n"
            "[analytics]\n"
            "enabled = false\n"
        )

    def configure(self, sb: Sandbox) -> None:
        path = self.config(sb)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.provider(sb) + "\n[features]\nplugins = false\n")

    def seed_user_config(self, sb: Sandbox) -> list[Path]:
        config = self.config(sb)
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(
            "# My Codex settings -- keep these comments, please.\n"
            + self.provider(sb)
            + "\n"
            + "[features]\n"
            + "# the plugin marketplace reaches GitHub: off here\n"
            + "plugins = false  # trailing comment\n"
            + "\n"
            + "[tui]\n"
            + "notifications = true\n"
        )
        hooks = self.hooks_file(sb)
        other = {"type": "command", "command": self.other_hook_command(sb)}
        doc = {"hooks": {"UserPromptSubmit": [{"hooks": [other]}]}}
        hooks.write_text(json.dumps(doc, indent=4) + "\n")
        return [config, hooks]

    def run_env(self, sb: Sandbox) -> dict[str, str]:
        return {KEY_ENV: "sk-e2e-codex-dummy"}

    def command(self, sb: Sandbox, prompt: str, *, resume: bool = False) -> list[str]:
        exe = str(sb.bins["npm"] / self.binary)
        flags = ["--skip-git-repo-check"]
        if self.bypass_trust:
            flags.append("--dangerously-bypass-hook-trust")
        if resume:
            return [exe, "exec", "resume", "--last", *flags, prompt]
        return [exe, "exec", *flags, prompt]

    def session_files(self, sb: Sandbox) -> list[Path]:
        root = self.codex_home(sb) / "sessions"
        return sorted(root.glob("*/*/*/rollout-*.jsonl"), key=lambda p: p.stat().st_mtime)
