"""Language models for distillation: one protocol, providers, three tasks.

``resolve_llm()`` picks the provider (DESIGN.md, docs/llm.md): ``MEMLOOM_LLM``, else
config.toml's ``[llm] provider`` (``memloom llm use <name>`` writes it), names one of

* ``openai`` (any OpenAI-compatible server: OpenAI, Ollama, vLLM, llama.cpp,
  OpenRouter) | ``anthropic``: an API, with ``MEMLOOM_LLM_MODEL``,
  ``MEMLOOM_LLM_BASE_URL``, and the key from ``MEMLOOM_LLM_API_KEY``, then
  ``OPENAI_API_KEY`` / ``ANTHROPIC_API_KEY``; optional ``MEMLOOM_LLM_TIMEOUT``;
* ``claude-cli`` | ``codex-cli`` | ``gemini-cli`` | ``qwen-cli`` | ``copilot-cli`` |
  ``opencode-cli``: the user's own agent CLI, headless, on their plan or login (no
  key; no tools; the call's session never imported; a daily cap of its own,
  :mod:`.meter`);
* ``offline``: the rule-based extractor.

Unset: auto-detect, API keys first, then the agent CLIs on PATH in
:data:`.registry.CLI_ORDER`, else offline. The resolved provider's
``description`` says which one was chosen and why.

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

from ._cli import CLIProvider
from .anthropic import AnthropicProvider
from .base import LLM, BaseLLM, LLMError, ProviderAuthError, ProviderStopError
from .claude_cli import ClaudeCLIProvider
from .meter import DailyMeter
from .offline import OfflineLLM
from .openai import OpenAIProvider
from .registry import (
    CLI_ORDER,
    PROVIDERS,
    installed_clis,
    normalise,
    offline_note,
    resolve_llm,
)
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
    "CLI_ORDER",
    "DISTILL",
    "JUDGE",
    "LLM",
    "PROVIDERS",
    "TASKS",
    "AnthropicProvider",
    "BaseLLM",
    "CLIProvider",
    "ClaudeCLIProvider",
    "ConfigError",
    "DailyMeter",
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
    "installed_clis",
    "judge",
    "normalise",
    "offline_note",
    "resolve_llm",
    "schema_for",
    "system_for",
    "validate_classify",
    "validate_distill",
    "validate_judge",
]
