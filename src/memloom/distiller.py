"""Which distiller memloom picks when nothing is chosen, without loading a provider.

The agent CLIs memloom can distil with, in auto-detection order, and the order
itself (DESIGN.md): the API keys first, then the first agent CLI on PATH, else
offline. :mod:`memloom.llm.registry` builds the provider from this; the plugin's
first session says which one will be used from here, and a hook must not load
the providers (httpx, pydantic). Standard library only.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["CLI_AGENTS", "chosen", "detect", "first_cli"]

Which = Callable[[str], "str | None"]

#: (provider name, executable, label, "module:Class" under memloom.llm), in detection
#: order: how well each keeps a call to itself (docs/llm.md).
CLI_AGENTS: tuple[tuple[str, str, str, str], ...] = (
    ("claude-cli", "claude", "Claude Code", "claude_cli:ClaudeCLIProvider"),
    ("codex-cli", "codex", "Codex CLI", "codex_cli:CodexCLIProvider"),
    ("gemini-cli", "gemini", "Gemini CLI", "gemini_cli:GeminiCLIProvider"),
    ("qwen-cli", "qwen", "Qwen Code", "qwen_cli:QwenCLIProvider"),
    ("copilot-cli", "copilot", "GitHub Copilot CLI", "copilot_cli:CopilotCLIProvider"),
    ("opencode-cli", "opencode", "OpenCode", "opencode_cli:OpenCodeCLIProvider"),
)


def first_cli(which: Which) -> tuple[str, str, str] | None:
    """(provider name, executable, label) of the first agent CLI on PATH."""
    for name, binary, label, _target in CLI_AGENTS:
        if which(binary):
            return name, binary, label
    return None


def detect(
    *,
    openai_key: str | None,
    base_url: str | None,
    anthropic_key: str | None,
    api_key: str | None,
    which: Which,
) -> tuple[str, str] | None:
    """(provider name, why) from the keys and PATH, or None for the offline fallback."""
    if openai_key or base_url:
        return "openai", "auto-detected from " + (
            "OPENAI_API_KEY" if openai_key else "MEMLOOM_LLM_BASE_URL"
        )
    if anthropic_key:
        return "anthropic", "auto-detected from ANTHROPIC_API_KEY"
    if api_key:
        name = "anthropic" if api_key.startswith("sk-ant-") else "openai"
        return name, "auto-detected from MEMLOOM_LLM_API_KEY"
    cli = first_cli(which)
    if cli is not None:
        order = ", ".join(binary for _n, binary, _l, _t in CLI_AGENTS)
        return cli[0], (
            f"auto-detected: `{cli[1]}` is on PATH, the first of {order} "
            "(change it: memloom llm use <name>)"
        )
    return None


def chosen(
    env: Mapping[str, str] | None = None,
    config: Mapping[str, Any] | None = None,
    which: Which | None = None,
) -> tuple[str, str]:
    """(name, why) of the distiller as configured or detected, unchecked (a name as the
    user wrote it): what a hook can say without loading a provider."""
    import shutil

    env = os.environ if env is None else env

    def get(name: str) -> str | None:
        value = env.get(name)
        return value.strip() if isinstance(value, str) and value.strip() else None

    if get("MEMLOOM_LLM"):
        return str(get("MEMLOOM_LLM")), "MEMLOOM_LLM"
    table = (config or {}).get("llm")
    provider = table.get("provider") if isinstance(table, Mapping) else None
    if isinstance(provider, str) and provider.strip():
        return provider.strip(), "config.toml [llm] provider"
    found = detect(
        openai_key=get("OPENAI_API_KEY"),
        base_url=get("MEMLOOM_LLM_BASE_URL"),
        anthropic_key=get("ANTHROPIC_API_KEY"),
        api_key=get("MEMLOOM_LLM_API_KEY"),
        which=which or shutil.which,
    )
    return found or ("offline", "no API key and no agent CLI on PATH")
