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

Where things live: the variables and their checks in
:func:`memloom.config.llm_settings`; names -> providers and the detection
order in :mod:`.registry`; the HTTP providers' shared behaviour in
:class:`._http.HTTPProvider`, of which :mod:`.openai` and :mod:`.anthropic`
only declare the wire format.
"""

from __future__ import annotations

from memloom.config import ConfigError

from .anthropic import AnthropicProvider
from .base import LLM, BaseLLM, LLMError, ProviderAuthError, ProviderStopError
from .claude_cli import ClaudeCLIProvider
from .offline import OfflineLLM
from .openai import OpenAIProvider
from .registry import PROVIDERS, resolve_llm
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
