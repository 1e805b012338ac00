"""Any OpenAI-compatible ``POST {base}/chat/completions`` server.

OpenAI itself, OpenRouter, and local servers that copy its API (Ollama,
vLLM, llama.cpp's server, LM Studio). The request is exactly the wire
contract: ``temperature: 0``, a system and a user message (the user message
is the task input as a JSON document) and ``response_format`` with a strict
JSON schema named after the task. Construction, retries and accounting are
:class:`~memloom.llm._http.HTTPProvider`'s; this module declares the rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from memloom.config import LLM_API_KEY_VAR, OPENAI_API_KEY_VAR

from ._http import HTTPProvider
from .base import LLMError, parse_json_reply

if TYPE_CHECKING:
    import httpx

__all__ = ["DEFAULT_BASE_URL", "DEFAULT_MODEL", "OpenAIProvider"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4o-mini"
_QUOTA_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached"})


class OpenAIProvider(HTTPProvider):
    name = "openai"
    kind = "OpenAI-compatible endpoint"
    label = "OpenAI-compatible API"
    default_base_url = DEFAULT_BASE_URL
    default_model = DEFAULT_MODEL
    path = "/chat/completions"
    key_variable = OPENAI_API_KEY_VAR
    official_host = "api.openai.com"
    missing_key = (
        f"MEMLOOM_LLM=openai needs an API key ({LLM_API_KEY_VAR} or {OPENAI_API_KEY_VAR}), or "
        "MEMLOOM_LLM_BASE_URL pointing at an OpenAI-compatible server that needs none "
        "(e.g. http://localhost:11434/v1 for Ollama)"
    )
    model_examples = "e.g. llama3.1:8b for Ollama, openai/gpt-4o-mini for OpenRouter"
    marks_local_servers = True

    def headers(self) -> dict[str, str]:
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        if (urlsplit(self.base_url).hostname or "").endswith("openrouter.ai"):
            headers["X-Title"] = "memloom"
        return headers

    def stop_reason(self, response: httpx.Response) -> str | None:
        # OpenAI answers 429 "insufficient_quota" when the account has no credit
        # left: retrying cannot help.
        if response.status_code != 429:
            return None
        try:
            err = response.json().get("error") or {}
        except (ValueError, AttributeError):
            return None
        if isinstance(err, dict) and (
            err.get("code") in _QUOTA_CODES or err.get("type") in _QUOTA_CODES
        ):
            return "the account's quota is exhausted (insufficient_quota)"
        return None

    def request_body(
        self, task: str, system: str, user: str, schema: dict[str, Any]
    ) -> dict[str, Any]:
        return {
            "temperature": 0,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": task, "strict": True, "schema": schema},
            },
        }

    def usage_tokens(self, usage: dict[str, Any]) -> tuple[Any, Any]:
        return usage.get("prompt_tokens"), usage.get("completion_tokens")

    def parse_reply(self, task: str, doc: dict[str, Any]) -> dict[str, Any]:
        where = f"{task} via {self.url}"
        choices = doc.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise LLMError(f"{where}: the response has no choices")
        message = choices[0].get("message")
        if not isinstance(message, dict):
            raise LLMError(f"{where}: the first choice has no message")
        content = message.get("content")
        if isinstance(content, list):  # some servers send content parts
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict)) or None
        if not content and message.get("refusal"):
            raise LLMError(f"{where}: the model refused: {str(message['refusal'])[:200]}")
        if not content and choices[0].get("finish_reason") == "length":
            raise LLMError(f"{where}: the reply was cut off at the output token limit")
        return parse_json_reply(content, where=where)
