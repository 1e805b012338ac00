"""Qwen Code 0.24.4: OpenAI Chat Completions over SSE, hooks in ~/.qwen/settings.json.

Reference: /work/shared/reference/agents-e2e.md §2.3. ``security.auth.selectedType``
``openai`` with ``OPENAI_BASE_URL`` points it at the scripted model; telemetry and usage
statistics off; Qwen's own managed auto-memory off (``memory.enableManagedAutoMemory``
and ``…AutoDream``: otherwise every turn makes a second, memory-extraction request that
also holds the user turn). The prompt is a positional (one-shot; ``-p`` is deprecated),
stdin ``/dev/null``; ``--continue`` resumes the project's latest session. Qwen fires
SessionStart, UserPromptSubmit and Stop headless, never SessionEnd.

The user's settings.json carries ``"$version": 4``, as every settings file Qwen has
loaded once does: Qwen 0.24.4 writes that key into a user settings file that lacks it
on every start (tests/e2e/test_qwen.py checks memloom's disconnect around that).
"""

from __future__ import annotations

from pathlib import Path

from tests.e2e.harness import Sandbox, UserSettingsDriver

#: The user's settings.json before memloom: JSONC (Qwen strips comments, as Gemini
#: CLI does), the offline settings, and another tool's UserPromptSubmit hook.
USER_SETTINGS = """\
{
  // my Qwen Code settings: offline, against my own OpenAI-compatible server
  "$version": 4,
  "security": { "auth": { "selectedType": "openai" } },
  "model": { "name": "fake-model" },
  "telemetry": { "enabled": false },
  "privacy": { "usageStatisticsEnabled": false },
  "general": { "enableAutoUpdate": false },
  "memory": { "enableManagedAutoMemory": false, "enableManagedAutoDream": false },
  /* another tool's hook */
  "hooks": {
    "UserPromptSubmit": [
      { "hooks": [ { "type": "command", "command": %s } ] }
    ]
  }
}
"""


class QwenCode(UserSettingsDriver):
    name = "qwen"
    binary = "qwen"

    folder = ".qwen"
    user_settings = USER_SETTINGS

    def run_env(self, sb: Sandbox) -> dict[str, str]:
        return {
            "OPENAI_API_KEY": "sk-e2e-dummy",
            "OPENAI_BASE_URL": f"{sb.model.url}/v1",
            "OPENAI_MODEL": "fake-model",
        }

    def command(self, sb: Sandbox, prompt: str, *, resume: bool = False) -> list[str]:
        exe = str(sb.bins["npm"] / self.binary)
        return [exe, *(["--continue"] if resume else []), "--approval-mode", "yolo", prompt]

    def session_files(self, sb: Sandbox) -> list[Path]:
        root = sb.home / ".qwen" / "projects"
        return sorted(root.glob("*/chats/*.jsonl"), key=lambda p: p.stat().st_mtime)
