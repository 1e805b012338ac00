"""The providers by ``MEMLOOM_LLM`` name, and auto-detection when it is unset.

Which variables exist and how they are checked is :mod:`memloom.config`'s
(:func:`~memloom.config.llm_settings`: ``MEMLOOM_LLM``, else config.toml's
``[llm] provider``, which ``memloom llm use`` writes); this module only maps
names to providers and orders the guesses (DESIGN.md):

1. ``OPENAI_API_KEY`` or ``MEMLOOM_LLM_BASE_URL`` -> openai;
2. ``ANTHROPIC_API_KEY`` -> anthropic;
3. a lone ``MEMLOOM_LLM_API_KEY`` -> anthropic if it looks like one
   (``sk-ant-...``), else openai;
4. the first agent CLI on PATH, in :data:`CLI_ORDER`: claude, codex, gemini,
   qwen, copilot, opencode (the order of how well each keeps a call to itself:
   Claude Code and Codex save no session and offer no tool; the others need their
   sessions skipped or their tools refused by policy, docs/llm.md);
5. else offline.
"""

from __future__ import annotations

import importlib
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from memloom.config import (
    LLM_PROVIDER_VAR,
    ConfigError,
    LLMSettings,
    llm_settings,
)
from memloom.distiller import CLI_AGENTS, detect

from .anthropic import AnthropicProvider
from .base import LLM
from .offline import OfflineLLM
from .openai import OpenAIProvider

__all__ = [
    "ALIASES",
    "CLI_ORDER",
    "PROVIDERS",
    "REGISTRY",
    "AgentCLI",
    "Builder",
    "installed_clis",
    "normalise",
    "offline_note",
    "resolve_llm",
]

Which = Callable[[str], str | None]

_EXPLICIT_OFFLINE = "offline rule-based extractor (explicit statements only, no LLM calls)"


class Builder(Protocol):
    """Builds a provider from the settings; ``why`` ends its description."""

    def __call__(self, settings: LLMSettings, why: str, which: Which) -> LLM: ...


def _offline(settings: LLMSettings, why: str, which: Which) -> OfflineLLM:
    return OfflineLLM(description=f"{_EXPLICIT_OFFLINE}; {why}")


@dataclass(frozen=True)
class AgentCLI:
    """An agent whose CLI can distil: its provider's name, executable and class (loaded
    only when chosen: detection needs no more than the executable's name)."""

    name: str
    binary: str
    label: str
    target: str  # "module:Class" under memloom.llm

    def build(self, settings: LLMSettings, why: str, which: Which) -> LLM:
        module, _, cls = self.target.partition(":")
        provider = getattr(importlib.import_module(f"memloom.llm.{module}"), cls)
        return provider.from_settings(settings, why, which)


#: The agent CLIs, in auto-detection order (:data:`memloom.distiller.CLI_AGENTS`).
CLI_ORDER: tuple[AgentCLI, ...] = tuple(AgentCLI(*row) for row in CLI_AGENTS)

#: ``MEMLOOM_LLM`` name -> how to build that provider.
REGISTRY: Mapping[str, Builder] = {
    "openai": OpenAIProvider.from_settings,
    "anthropic": AnthropicProvider.from_settings,
    **{cli.name: cli.build for cli in CLI_ORDER},
    "offline": _offline,
}
PROVIDERS = tuple(REGISTRY)
#: Other spellings accepted for ``MEMLOOM_LLM``, ``[llm] provider`` and ``memloom llm
#: use`` (case-insensitive): an agent's own name means its CLI.
ALIASES: Mapping[str, str] = {
    "openai-compatible": "openai",
    "none": "offline",
    **{alias: cli.name for cli in CLI_ORDER for alias in (cli.binary, cli.name.replace("-", "_"))},
    "claude-code": "claude-cli",
    "qwen-code": "qwen-cli",
    "github-copilot": "copilot-cli",
}


def normalise(raw: str) -> str:
    """The provider ``raw`` names (an alias or any case), or ConfigError naming the choices."""
    name = raw.strip().lower()
    name = ALIASES.get(name, name)
    if name not in REGISTRY:
        raise ConfigError(
            f"{raw!r} is not a known distiller; choose one of {', '.join(PROVIDERS)} "
            "(an agent's own name, such as codex, means its CLI)"
        )
    return name


def installed_clis(which: Which = shutil.which) -> list[tuple[AgentCLI, str]]:
    """The agent CLIs on PATH, in detection order, with where each is."""
    found = [(cli, which(cli.binary)) for cli in CLI_ORDER]
    return [(cli, path) for cli, path in found if path]


def offline_note(which: Which = shutil.which) -> str:
    """What the end of an offline import says: the rule-based extractor keeps explicit
    statements only, and which agents on this machine could distil instead."""
    lead = (
        "the offline extractor picked out explicit statements only; an LLM gives far "
        "better memories"
    )
    clis = installed_clis(which)
    if clis:
        names = ", ".join(f"{cli.label} (memloom llm use {cli.binary})" for cli, _ in clis)
        return f"{lead}. On this machine, on your own login and no API key: {names}"
    return (
        f"{lead}: set OPENAI_API_KEY or ANTHROPIC_API_KEY, or install a coding agent's CLI "
        f"({', '.join(c.binary for c in CLI_ORDER)}) and run memloom llm use <agent>"
    )


def _detect(settings: LLMSettings, which: Which) -> tuple[str, str] | None:
    """(provider name, why) from the keys and PATH, or None for the offline fallback."""
    return detect(
        openai_key=settings.openai_api_key,
        base_url=settings.base_url_raw,
        anthropic_key=settings.anthropic_api_key,
        api_key=settings.api_key,
        which=which,
    )


def resolve_llm(
    env: Mapping[str, str] | None = None,
    *,
    which: Which = shutil.which,
    config: Mapping[str, Any] | None = None,
) -> LLM:
    """The configured LLM provider (``env`` defaults to ``os.environ``; ``config`` is
    config.toml as parsed, for its ``[llm]`` table; see the module doc)."""
    settings = llm_settings(env, config)
    raw = settings.provider
    if raw is not None:
        try:
            name = normalise(raw)
        except ConfigError as e:
            raise ConfigError(f"{settings.provider_source or LLM_PROVIDER_VAR}: {e}") from None
        return REGISTRY[name](
            settings, settings.provider_source or f"{LLM_PROVIDER_VAR}={raw}", which
        )
    detected = _detect(settings, which)
    if detected is None:
        return OfflineLLM()
    name, why = detected
    return REGISTRY[name](settings, why, which)
