"""OpenCode 1.18.33: OpenAI Chat Completions (SSE) through a ``fake`` openai-compatible
provider, hooks as JS plugins in ``~/.config/opencode/plugins/``, sessions in the SQLite
store ``~/.local/share/opencode/opencode.db``.

Reference: /work/shared/reference/agents-e2e.md §2.2. The prompt goes as separate
words (one quoted positional reaches the model wrapped in literal quotes); ``--continue``
resumes the last session. A config folder with a plugins folder makes OpenCode
npm-install ``@opencode-ai/plugin`` there on its first run (18 s, network): the first
run's ``node_modules`` is kept under ``.e2e/opencode-plugin-cache`` and every later
sandbox gets it (linked), so later runs are offline and fast.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.e2e.harness import Driver, Run, Sandbox
from tests.e2e.install import ROOT as E2E_ROOT

#: Where the first run's installed plugin SDK is kept for every later sandbox.
PLUGIN_CACHE = E2E_ROOT / "opencode-plugin-cache"
_CACHED = ("package.json", "package-lock.json")

#: The user's opencode.json before memloom: JSONC, the scripted model, an MCP server
#: of their own.
USER_CONFIG = """\
{
  // my OpenCode settings: a local model, no sharing
  "$schema": "https://opencode.ai/config.json",
  "model": "fake/fake-model",
  "small_model": "fake/fake-model",
  "autoupdate": false,
  "share": "disabled",
  "provider": {
    "fake": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "Fake",
      "options": { "baseURL": %s, "apiKey": "sk-dummy" },
      "models": { "fake-model": { "name": "Fake Model" } }
    }
  },
  "mcp": {
    /* another tool's server, switched off */
    "other-tool": { "type": "local", "command": ["other-tool", "mcp"], "enabled": false }
  }
}
"""

#: Another tool's plugin: it runs that tool's hook command when a session goes idle.
OTHER_PLUGIN = """\
import { execSync } from "node:child_process";
const HOOK = %s;
export const OtherTool = async () => ({
  event: async ({ event }) => {
    if (event.type === "session.idle") execSync(HOOK, { input: "{}" });
  },
});
"""


class OpenCode(Driver):
    name = "opencode"
    binary = "opencode"

    def config_dir(self, sb: Sandbox) -> Path:
        return sb.home / ".config" / "opencode"

    def configure(self, sb: Sandbox) -> None:
        """Seed the plugin SDK from the cache (filled by the first run ever)."""
        folder = self.config_dir(sb)
        (folder / "plugins").mkdir(parents=True, exist_ok=True)
        if (PLUGIN_CACHE / "node_modules").is_dir():
            for name in _CACHED:
                shutil.copy2(PLUGIN_CACHE / name, folder / name)
            if not (folder / "node_modules").exists():
                (folder / "node_modules").symlink_to(PLUGIN_CACHE / "node_modules")

    def seed_user_config(self, sb: Sandbox) -> list[Path]:
        folder = self.config_dir(sb)
        config = folder / "opencode.json"
        config.write_text(USER_CONFIG % json.dumps(f"{sb.model.url}/v1"))
        other = folder / "plugins" / "other-tool.js"
        other.write_text(OTHER_PLUGIN % json.dumps(self.other_hook_command(sb)))
        return [config, other]

    def run_env(self, sb: Sandbox) -> dict[str, str]:
        return {
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
            "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
        }

    def command(self, sb: Sandbox, prompt: str, *, resume: bool = False) -> list[str]:
        exe = str(sb.bins["npm"] / self.binary)
        return [exe, "run", *(["--continue"] if resume else []), *prompt.split()]

    def run(
        self, sb: Sandbox, prompt: str, *, resume: bool = False, env: dict[str, str] | None = None
    ) -> Run:
        run = super().run(sb, prompt, resume=resume, env=env)
        modules = self.config_dir(sb) / "node_modules"
        if modules.is_dir() and not modules.is_symlink() and not PLUGIN_CACHE.exists():
            staging = PLUGIN_CACHE.with_name(PLUGIN_CACHE.name + ".tmp")
            shutil.rmtree(staging, ignore_errors=True)
            shutil.copytree(modules, staging / "node_modules", symlinks=True)
            for name in _CACHED:
                shutil.copy2(self.config_dir(sb) / name, staging / name)
            staging.rename(PLUGIN_CACHE)
        return run

    def session_files(self, sb: Sandbox) -> list[Path]:
        db = sb.home / ".local" / "share" / "opencode" / "opencode.db"
        return [db] if db.exists() else []
