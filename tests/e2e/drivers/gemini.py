"""Gemini CLI 0.61.0: Gemini v1beta streamGenerateContent (SSE), hooks in ~/.gemini/settings.json.

Reference: /work/shared/reference/agents-e2e.md §2.4. ``GOOGLE_GEMINI_BASE_URL``
points it at the scripted model (which answers ``/v1beta/models/<m>:…`` by suffix);
with that variable set the CLI picks the ``gateway`` auth type unless
``security.auth.selectedType`` says ``gemini-api-key`` (exit 41 otherwise), and
without ``GEMINI_CLI_TRUST_WORKSPACE`` it exits 55 in an untrusted folder. In
headless mode the SessionStart hook's context is put in front of the prompt as
``<hook_context>…</hook_context>``, and that whole text is BeforeAgent's ``prompt``.
``--resume latest`` continues the last session headless; memloom gives Gemini its digest
with the first prompt, so the resumed history holds both injections (a SessionStart
context would lead that user message, and Gemini leaves such messages out of a resumed
history): the "not injected twice" check sees them there.
"""

from __future__ import annotations

from pathlib import Path

from tests.e2e.harness import Sandbox, UserSettingsDriver

#: The user's settings.json before memloom: JSONC (Gemini strips comments), the
#: offline settings, and another tool's BeforeAgent hook.
USER_SETTINGS = """\
{
  // my Gemini settings: keep it quiet and offline
  "general": {
    "enableAutoUpdate": false,
    "enableAutoUpdateNotification": false
  },
  "privacy": { "usageStatisticsEnabled": false },
  "telemetry": { "enabled": false },
  "model": { "name": "gemini-2.5-pro" }, // pinned: no router calls
  "security": { "auth": { "selectedType": "gemini-api-key" } },
  /* another tool's hook */
  "hooks": {
    "BeforeAgent": [
      {
        "matcher": "*",
        "hooks": [
          { "name": "other-tool", "type": "command", "command": %s }
        ]
      }
    ]
  }
}
"""


class GeminiCli(UserSettingsDriver):
    name = "gemini"
    binary = "gemini"

    folder = ".gemini"
    user_settings = USER_SETTINGS

    def __init__(self, *, yolo: bool = False) -> None:
        #: ``--approval-mode yolo`` on every run: headless, Gemini offers its file-writing
        #: tools (``write_file``, ``replace``) and the shell only then.
        self.yolo = yolo

    def run_env(self, sb: Sandbox) -> dict[str, str]:
        return {
            "GEMINI_API_KEY": "gemini-e2e-dummy",
            "GOOGLE_GEMINI_BASE_URL": sb.model.url,
            "GEMINI_TELEMETRY_ENABLED": "false",
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
        }

    def command(self, sb: Sandbox, prompt: str, *, resume: bool = False) -> list[str]:
        exe = str(sb.bins["npm"] / self.binary)
        flags = ["--approval-mode", "yolo"] if self.yolo else []
        return [exe, *(["--resume", "latest"] if resume else []), *flags, "-p", prompt]

    def session_files(self, sb: Sandbox) -> list[Path]:
        root = sb.home / ".gemini" / "tmp"
        return sorted(root.glob("*/chats/session-*.json*"), key=lambda p: p.stat().st_mtime)
