"""Any OpenAI-compatible ``POST {base}/chat/completions`` server.

OpenAI itself, OpenRouter, and local servers that copy its API (Ollama,
vLLM, llama.cpp's server, LM Studio). The request is exactly the wire
contract: ``temperature: 0``, a system and a user message (the user message
is the task input as a JSON document) and ``response_format`` with a strict
JSON schema named after the task.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ._http import DEFAULT_TIMEOUT, HTTPProvider
from .base import LLMError, parse_json_reply

if TYPE_CHECKING:
    import httpx

__all__ = ["DEFAULT_BASE_URL", "DEFAULT_MODEL", "OpenAIProvider"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4o-mini"
_QUOTA_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached"})


class OpenAIProvider(HTTPProvider):
    kind = "OpenAI-compatible endpoint"

    def __init__(
        self,
        *,
        base_url: str = DEFAULT_BASE_URL,
        model: str = DEFAULT_MODEL,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_tries: int = 4,
        backoff: float = 1.0,
        max_retry_after: float = 60.0,
        sleep: Callable[[float], None] | None = None,
        transport: httpx.BaseTransport | None = None,
        description: str | None = None,
    ) -> None:
        if not base_url:
            raise ValueError("base_url is required, e.g. https://api.openai.com/v1")
        if not model:
            raise ValueError("model is required, e.g. gpt-4o-mini")
        extra = {"sleep": sleep} if sleep is not None else {}
        super().__init__(
            api_key=api_key,
            timeout=timeout,
            max_tries=max_tries,
            backoff=backoff,
            max_retry_after=max_retry_after,
            transport=transport,
            **extra,
        )
        self.name = "openai"
        self.model = model
        self.offline = False
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + "/chat/completions"
        self.description = description or (
            f"OpenAI-compatible API at {self.base_url}, model {model}"
        )

    def __repr__(self) -> str:  # never show the key
        key = "set" if self.has_key else "none"
        return f"OpenAIProvider(url={self.url!r}, model={self.model!r}, api_key={key})"

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        host = urlsplit(self.base_url).hostname or ""
        if host.endswith("openrouter.ai"):
            headers["X-Title"] = "memloom"
        return headers

    def _stop_reason(self, response: httpx.Response) -> str | None:
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
        self, task: str, system: str, payload: dict[str, Any], schema: dict[str, Any]
    ) -> dict[str, Any]:
        return {
            "model": self.model,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": json.dumps(payload, ensure_ascii=False)},
            ],
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": task, "strict": True, "schema": schema},
            },
        }

    def complete(
        self, task: str, system: str, payload: dict[str, Any], schema: dict[str, Any]
    ) -> dict[str, Any]:
        body = self.request_body(task, system, payload, schema)
        self._count_call(task, len(system) + len(body["messages"][1]["content"]))
        try:
            doc = self.post_json(self.url, body, task=task)
            usage = doc.get("usage")
            if isinstance(usage, dict):
                self._count_tokens(usage.get("prompt_tokens"), usage.get("completion_tokens"))
            return self._reply(task, doc)
        except LLMError:
            self._count_failure(task)
            raise

    def _reply(self, task: str, doc: dict[str, Any]) -> dict[str, Any]:
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
