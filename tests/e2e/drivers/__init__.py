"""One driver per real agent (tests/e2e/harness.py's Driver); DRIVERS lists them."""

from __future__ import annotations

from tests.e2e.drivers.aider import Aider
from tests.e2e.drivers.claude_code import ClaudeCode
from tests.e2e.drivers.codex import Codex
from tests.e2e.drivers.copilot import Copilot
from tests.e2e.drivers.gemini import GeminiCli
from tests.e2e.drivers.opencode import OpenCode
from tests.e2e.drivers.qwen import QwenCode
from tests.e2e.harness import Driver

DRIVERS: dict[str, Driver] = {
    d.name: d
    for d in (Aider(), ClaudeCode(), Codex(), GeminiCli(), Copilot(), QwenCode(), OpenCode())
}
