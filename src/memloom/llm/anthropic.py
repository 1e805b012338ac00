"""Anthropic's Messages API (``POST {base}/v1/messages``) with the schema as a forced tool.

The task's JSON schema becomes the ``input_schema`` of a single tool named
after the task, and ``tool_choice`` forces the model to call it, so the reply
is the ``input`` of the ``tool_use`` block. The system prompt goes in
``system`` and the task input, as a JSON document, is the user message.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._http import DEFAULT_TIMEOUT, HTTPProvider
from .base import LLMError, parse_json_reply

if TYPE_CHECKING:
    import httpx

__all__ = ["ANTHROPIC_VERSION", "DEFAULT_BASE_URL", "DEFAULT_MODEL", "AnthropicProvider"]

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MODEL = "claude-haiku-4-5"
ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 8192

_TOOL_DESCRIPTIONS = {
    "memloom_distill": "Record the durable memories extracted from the conversation lines.",
    "memloom_classify": "Record one label for every candidate memory.",
    "memloom_judge": "Record the verdict on the conflicting memories.",
}


class AnthropicProvider(HTTPProvider):
    kind = "Anthropic API"

    def __init__(
        self,
        *,
        base_url: str = DEFAULT_BASE_URL,
        model: str = DEFAULT_MODEL,
        api_key: str | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        timeout: float = DEFAULT_TIMEOUT,
        max_tries: int = 4,
        backoff: float = 1.0,
        max_retry_after: float = 60.0,
        sleep: Callable[[float], None] | None = None,
        transport: httpx.BaseTransport | None = None,
        description: str | None = None,
    ) -> None:
        if not base_url:
            raise ValueError("base_url is required, e.g. https://api.anthropic.com")
        if not model:
            raise ValueError("model is required, e.g. claude-haiku-4-5")
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
        self.name = "anthropic"
        self.model = model
        self.offline = False
        self.max_tokens = max_tokens
        base = base_url.rstrip("/")
        # Accept a base given with or without the /v1 suffix.
        self.base_url = base[: -len("/v1")] if base.endswith("/v1") else base
        self.url = self.base_url + "/v1/messages"
        self.description = (
            description or f"Anthropic Messages API at {self.base_url}, model {model}"
        )

    def __repr__(self) -> str:  # never show the key
        key = "set" if self.has_key else "none"
        return f"AnthropicProvider(url={self.url!r}, model={self.model!r}, api_key={key})"

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "anthropic-version": ANTHROPIC_VERSION}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        return headers

    def _stop_reason(self, response: httpx.Response) -> str | None:
        # A 400 "credit balance is too low" is a billing stop, not a bad request.
        if response.status_code != 400:
            return None
        text = response.text.lower()
        if "credit balance" in text:
            return "the account's credit balance is too low"
        return None

    def request_body(
        self, task: str, system: str, payload: dict[str, Any], schema: dict[str, Any]
    ) -> dict[str, Any]:
        return {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "temperature": 0,
            "system": system,
            "messages": [{"role": "user", "content": json.dumps(payload, ensure_ascii=False)}],
            "tools": [
                {
                    "name": task,
                    "description": _TOOL_DESCRIPTIONS.get(task, f"Record the {task} result."),
                    "input_schema": schema,
                }
            ],
            "tool_choice": {"type": "tool", "name": task},
        }

    def complete(
        self, task: str, system: str, payload: dict[str, Any], schema: dict[str, Any]
    ) -> dict[str, Any]:
        body = self.request_body(task, system, payload, schema)
        self._count_call(task, len(system) + len(body["messages"][0]["content"]))
        try:
            doc = self.post_json(self.url, body, task=task)
            usage = doc.get("usage")
            if isinstance(usage, dict):
                tokens_in = sum(
                    v
                    for k in (
                        "input_tokens",
                        "cache_creation_input_tokens",
                        "cache_read_input_tokens",
                    )
                    if isinstance(v := usage.get(k), int)
                )
                self._count_tokens(tokens_in, usage.get("output_tokens"))
            return self._reply(task, doc)
        except LLMError:
            self._count_failure(task)
            raise

    def _reply(self, task: str, doc: dict[str, Any]) -> dict[str, Any]:
        where = f"{task} via {self.url}"
        blocks = doc.get("content")
        if not isinstance(blocks, list):
            raise LLMError(f"{where}: the response has no content blocks")
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                if block.get("name") not in (task, None):
                    continue
                data = block.get("input")
                if isinstance(data, str):  # defensive: some proxies stringify it
                    return parse_json_reply(data, where=where)
                if not isinstance(data, dict):
                    raise LLMError(f"{where}: the tool input is not a JSON object")
                return data
        reason = doc.get("stop_reason")
        raise LLMError(f"{where}: the reply has no {task} tool call (stop_reason={reason!r})")
