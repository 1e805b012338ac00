"""The providers by ``MEMLOOM_LLM`` name, and auto-detection when it is unset.

Which variables exist and how they are checked is :mod:`memloom.config`'s
(:func:`~memloom.config.llm_settings`); this module only maps names to
providers and orders the guesses (DESIGN.md): ``OPENAI_API_KEY`` or
``MEMLOOM_LLM_BASE_URL`` -> openai; ``ANTHROPIC_API_KEY`` -> anthropic; a lone
``MEMLOOM_LLM_API_KEY`` -> anthropic if it looks like one (``sk-ant-...``),
else openai; a ``claude`` executable on PATH -> claude-cli; else offline.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from typing import Protocol

from memloom.config import (
    ANTHROPIC_API_KEY_VAR,
    LLM_API_KEY_VAR,
    LLM_BASE_URL_VAR,
    LLM_PROVIDER_VAR,
    OPENAI_API_KEY_VAR,
    ConfigError,
    LLMSettings,
    llm_settings,
)

from .anthropic import AnthropicProvider
from .base import LLM
from .claude_cli import ClaudeCLIProvider
from .offline import OfflineLLM
from .openai import OpenAIProvider

__all__ = ["ALIASES", "PROVIDERS", "REGISTRY", "Builder", "resolve_llm"]

Which = Callable[[str], str | None]

_EXPLICIT_OFFLINE = (
    "offline rule-based extractor (MEMLOOM_LLM=offline; explicit statements only, no LLM calls)"
)


class Builder(Protocol):
    """Builds a provider from the settings; ``why`` ends its description."""

    def __call__(self, settings: LLMSettings, why: str, which: Which) -> LLM: ...


def _offline(settings: LLMSettings, why: str, which: Which) -> OfflineLLM:
    return OfflineLLM(description=_EXPLICIT_OFFLINE)


#: ``MEMLOOM_LLM`` name -> how to build that provider.
REGISTRY: Mapping[str, Builder] = {
    "openai": OpenAIProvider.from_settings,
    "anthropic": AnthropicProvider.from_settings,
    "claude-cli": ClaudeCLIProvider.from_settings,
    "offline": _offline,
}
PROVIDERS = tuple(REGISTRY)
#: Other spellings accepted for ``MEMLOOM_LLM`` (case-insensitive).
ALIASES: Mapping[str, str] = {
    "openai-compatible": "openai",
    "claude_cli": "claude-cli",
    "claude": "claude-cli",
    "none": "offline",
}


def _detect(settings: LLMSettings, which: Which) -> tuple[str, str] | None:
    """(provider name, why) from the keys and PATH, or None for the offline fallback."""
    if settings.openai_api_key or settings.base_url_raw:
        var = OPENAI_API_KEY_VAR if settings.openai_api_key else LLM_BASE_URL_VAR
        return "openai", f"auto-detected from {var}"
    if settings.anthropic_api_key:
        return "anthropic", f"auto-detected from {ANTHROPIC_API_KEY_VAR}"
    if settings.api_key:
        name = "anthropic" if settings.api_key.startswith("sk-ant-") else "openai"
        return name, f"auto-detected from {LLM_API_KEY_VAR}"
    if which("claude"):
        return "claude-cli", "auto-detected: `claude` is on PATH"
    return None


def resolve_llm(env: Mapping[str, str] | None = None, *, which: Which = shutil.which) -> LLM:
    """The configured LLM provider (``env`` defaults to ``os.environ``; see the module doc)."""
    settings = llm_settings(env)
    raw = settings.provider
    if raw is not None:
        name = raw.lower()
        name = ALIASES.get(name, name)
        if name not in REGISTRY:
            raise ConfigError(
                f"{LLM_PROVIDER_VAR}={raw!r} is not a known provider; choose one of "
                f"{', '.join(PROVIDERS)}"
            )
        return REGISTRY[name](settings, f"{LLM_PROVIDER_VAR}={raw}", which)
    detected = _detect(settings, which)
    if detected is None:
        return OfflineLLM()
    name, why = detected
    return REGISTRY[name](settings, why, which)
