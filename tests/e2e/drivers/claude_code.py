"""Claude Code 2.1.328: Anthropic Messages over SSE, hooks in ~/.claude/settings.json."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.harness import Driver, Sandbox


class ClaudeCode(Driver):
    name = "claude-code"
    binary = "claude"

    def settings(self, sb: Sandbox) -> Path:
        return sb.home / ".claude" / "settings.json"

    def configure(self, sb: Sandbox) -> None:
        pass  # all in the environment (run_env); the settings file is the user's

    def seed_user_config(self, sb: Sandbox) -> list[Path]:
        path = self.settings(sb)
        path.parent.mkdir(parents=True, exist_ok=True)
        other = {"type": "command", "command": self.other_hook_command(sb)}
        doc = {
            "theme": "dark",
            "permissions": {"allow": ["Bash(make check)"]},
            "hooks": {"UserPromptSubmit": [{"hooks": [other]}]},
        }
        path.write_text(json.dumps(doc, indent=4) + "\n")
        return [path]

    def run_env(self, sb: Sandbox) -> dict[str, str]:
        return {
            "ANTHROPIC_BASE_URL": sb.model.url,
            "ANTHROPIC_API_KEY": "sk-ant-e2e-dummy",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
        }

    def command(self, sb: Sandbox, prompt: str, *, resume: bool = False) -> list[str]:
        exe = str(sb.bins["npm"] / self.binary)
        return [exe, "-p", *(["--continue"] if resume else []), prompt]

    def session_files(self, sb: Sandbox) -> list[Path]:
        root = sb.home / ".claude" / "projects"
        return sorted(root.glob("*/*.jsonl"), key=lambda p: p.stat().st_mtime)
