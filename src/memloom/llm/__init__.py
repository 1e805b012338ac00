"""Language models for distillation: one protocol, four providers, three tasks.

``resolve_llm()`` picks the provider from the environment (DESIGN.md):

* ``MEMLOOM_LLM`` = ``openai`` (any OpenAI-compatible server: OpenAI, Ollama,
  vLLM, llama.cpp, OpenRouter) | ``anthropic`` | ``claude-cli`` (the user's
  ``claude -p``, no extra key) | ``offline``;
* ``MEMLOOM_LLM_MODEL``, ``MEMLOOM_LLM_BASE_URL``, and the key from
  ``MEMLOOM_LLM_API_KEY``, then ``OPENAI_API_KEY`` / ``ANTHROPIC_API_KEY``
  (whichever belongs to the provider); optional ``MEMLOOM_LLM_TIMEOUT`` seconds.
* Unset: auto-detect, in this order: ``OPENAI_API_KEY`` or
  ``MEMLOOM_LLM_BASE_URL`` -> openai; ``ANTHROPIC_API_KEY`` -> anthropic;
  (a lone ``MEMLOOM_LLM_API_KEY`` -> anthropic if it looks like one,
  ``sk-ant-...``, else openai); a ``claude`` executable on PATH ->
  claude-cli; else offline. The resolved provider's ``description`` says
  which one was chosen and why.

Bad values raise :class:`memloom.config.ConfigError` (a ``ValueError``) with
a message that says what to set.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping
from urllib.parse import urlsplit

from memloom.config import ConfigError

from .anthropic import AnthropicProvider
from .base import LLM, BaseLLM, LLMError, ProviderAuthError, ProviderStopError
from .claude_cli import ClaudeCLIProvider
from .offline import OFFLINE_DESCRIPTION, OfflineLLM
from .openai import OpenAIProvider
from .tasks import (
    CLASSIFY,
    DISTILL,
    JUDGE,
    TASKS,
    DistilledMemory,
    DistillResult,
    Label,
    LLMClassifier,
    Verdict,
    classify,
    distill,
    distill_payload,
    judge,
    schema_for,
    system_for,
    validate_classify,
    validate_distill,
    validate_judge,
)

__all__ = [
    "CLASSIFY",
    "DISTILL",
    "JUDGE",
    "LLM",
    "PROVIDERS",
    "TASKS",
    "AnthropicProvider",
    "BaseLLM",
    "ClaudeCLIProvider",
    "ConfigError",
    "DistillResult",
    "DistilledMemory",
    "LLMClassifier",
    "LLMError",
    "Label",
    "OfflineLLM",
    "OpenAIProvider",
    "ProviderAuthError",
    "ProviderStopError",
    "Verdict",
    "classify",
    "distill",
    "distill_payload",
    "judge",
    "resolve_llm",
    "schema_for",
    "system_for",
    "validate_classify",
    "validate_distill",
    "validate_judge",
]

PROVIDERS = ("openai", "anthropic", "claude-cli", "offline")
_ALIASES = {
    "openai": "openai",
    "openai-compatible": "openai",
    "anthropic": "anthropic",
    "claude-cli": "claude-cli",
    "claude_cli": "claude-cli",
    "claude": "claude-cli",
    "offline": "offline",
    "none": "offline",
}
_LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "0.0.0.0")


def _get(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name)
    return value.strip() if isinstance(value, str) and value.strip() else None


def _key(env: Mapping[str, str], provider_var: str) -> tuple[str | None, str | None]:
    """(key, the variable it came from)."""
    for var in ("MEMLOOM_LLM_API_KEY", provider_var):
        value = _get(env, var)
        if value:
            return value, var
    return None, None


def _timeout(env: Mapping[str, str], default: float) -> float:
    raw = _get(env, "MEMLOOM_LLM_TIMEOUT")
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if value <= 0:
        raise ConfigError(f"MEMLOOM_LLM_TIMEOUT must be a positive number of seconds, not {raw!r}")
    return value


def _check_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(
            f"MEMLOOM_LLM_BASE_URL must be an http(s) URL such as http://localhost:11434/v1, "
            f"not {url!r}"
        )
    return url.rstrip("/")


def _openai(env: Mapping[str, str], why: str) -> OpenAIProvider:
    key, key_var = _key(env, "OPENAI_API_KEY")
    base = _get(env, "MEMLOOM_LLM_BASE_URL")
    model = _get(env, "MEMLOOM_LLM_MODEL")
    official = base is None or (urlsplit(base).hostname or "") == "api.openai.com"
    if base is not None:
        base = _check_url(base)
    if key is None and official:
        raise ConfigError(
            "MEMLOOM_LLM=openai needs an API key (MEMLOOM_LLM_API_KEY or OPENAI_API_KEY), or "
            "MEMLOOM_LLM_BASE_URL pointing at an OpenAI-compatible server that needs none "
            "(e.g. http://localhost:11434/v1 for Ollama)"
        )
    if model is None and not official:
        raise ConfigError(
            f"MEMLOOM_LLM_BASE_URL is {base}: set MEMLOOM_LLM_MODEL to a model that server "
            "serves (e.g. llama3.1:8b for Ollama, openai/gpt-4o-mini for OpenRouter)"
        )
    provider = OpenAIProvider(
        base_url=base or "https://api.openai.com/v1",
        model=model or "gpt-4o-mini",
        api_key=key,
        timeout=_timeout(env, 180.0),
    )
    host = urlsplit(provider.base_url).hostname or ""
    local = " (local server)" if host in _LOCAL_HOSTS else ""
    keyed = f", key from {key_var}" if key_var else ", no API key"
    provider.description = (
        f"OpenAI-compatible API at {provider.base_url}{local}, model {provider.model}{keyed}; {why}"
    )
    return provider


def _anthropic(env: Mapping[str, str], why: str) -> AnthropicProvider:
    key, key_var = _key(env, "ANTHROPIC_API_KEY")
    base = _get(env, "MEMLOOM_LLM_BASE_URL")
    if base is not None:
        base = _check_url(base)
    if key is None and (base is None or (urlsplit(base).hostname or "") == "api.anthropic.com"):
        raise ConfigError(
            "MEMLOOM_LLM=anthropic needs an API key: set MEMLOOM_LLM_API_KEY or "
            "ANTHROPIC_API_KEY (or choose MEMLOOM_LLM=claude-cli to use your Claude Code login)"
        )
    provider = AnthropicProvider(
        base_url=base or "https://api.anthropic.com",
        model=_get(env, "MEMLOOM_LLM_MODEL") or "claude-haiku-4-5",
        api_key=key,
        timeout=_timeout(env, 180.0),
    )
    keyed = f", key from {key_var}" if key_var else ", no API key"
    provider.description = (
        f"Anthropic Messages API at {provider.base_url}, model {provider.model}{keyed}; {why}"
    )
    return provider


def _claude_cli(
    env: Mapping[str, str], which: Callable[[str], str | None], why: str
) -> ClaudeCLIProvider:
    exe = which("claude")
    if not exe:
        raise ConfigError(
            "MEMLOOM_LLM=claude-cli but no `claude` executable is on PATH; install Claude Code "
            "(https://docs.claude.com/claude-code) or choose another MEMLOOM_LLM"
        )
    model = _get(env, "MEMLOOM_LLM_MODEL")
    provider = ClaudeCLIProvider(executable=exe, model=model, timeout=_timeout(env, 600.0))
    provider.description = (
        f"Claude Code CLI ({exe} -p, model {model or 'its default'}; uses your Claude Code "
        f"login, no extra key); {why}"
    )
    return provider


def resolve_llm(
    env: Mapping[str, str] | None = None,
    *,
    which: Callable[[str], str | None] = shutil.which,
) -> LLM:
    """The configured LLM provider (see the module docstring for the rules)."""
    env = os.environ if env is None else env
    raw = _get(env, "MEMLOOM_LLM")
    if raw is not None:
        choice = _ALIASES.get(raw.lower())
        if choice is None:
            raise ConfigError(
                f"MEMLOOM_LLM={raw!r} is not a known provider; choose one of {', '.join(PROVIDERS)}"
            )
        why = f"MEMLOOM_LLM={raw}"
        if choice == "openai":
            return _openai(env, why)
        if choice == "anthropic":
            return _anthropic(env, why)
        if choice == "claude-cli":
            return _claude_cli(env, which, why)
        return OfflineLLM(
            description="offline rule-based extractor (MEMLOOM_LLM=offline; explicit "
            "statements only, no LLM calls)"
        )
    if _get(env, "OPENAI_API_KEY") or _get(env, "MEMLOOM_LLM_BASE_URL"):
        var = "OPENAI_API_KEY" if _get(env, "OPENAI_API_KEY") else "MEMLOOM_LLM_BASE_URL"
        return _openai(env, f"auto-detected from {var}")
    if _get(env, "ANTHROPIC_API_KEY"):
        return _anthropic(env, "auto-detected from ANTHROPIC_API_KEY")
    lone = _get(env, "MEMLOOM_LLM_API_KEY")
    if lone:
        why = "auto-detected from MEMLOOM_LLM_API_KEY"
        return _anthropic(env, why) if lone.startswith("sk-ant-") else _openai(env, why)
    if which("claude"):
        return _claude_cli(env, which, "auto-detected: `claude` is on PATH")
    return OfflineLLM(description=OFFLINE_DESCRIPTION)
