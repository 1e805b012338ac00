"""Anthropic's Messages API (``POST {base}/v1/messages``) with the schema as a forced tool.

The task's JSON schema becomes the ``input_schema`` of a single tool named
after the task, and ``tool_choice`` forces the model to call it, so the reply
is the ``input`` of the ``tool_use`` block. The system prompt goes in
``system`` and the task input, as a JSON document, is the user message.
Construction, retries and accounting are
:class:`~memloom.llm._http.HTTPProvider`'s; this module declares the rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memloom.config import ANTHROPIC_API_KEY_VAR, LLM_API_KEY_VAR

from ._http import HTTPOptions, HTTPProvider
from .base import LLMError, parse_json_reply

if TYPE_CHECKING:
    from typing import Unpack

    import httpx

__all__ = ["ANTHROPIC_VERSION", "DEFAULT_BASE_URL", "DEFAULT_MODEL", "AnthropicProvider"]

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MODEL = "claude-haiku-4-5"
ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 8192
_INPUT_USAGE = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")

_TOOL_DESCRIPTIONS = {
    "memloom_distill": "Record the durable memories extracted from the conversation lines.",
    "memloom_classify": "Record one label for every candidate memory.",
    "memloom_judge": "Record the verdict on the conflicting memories.",
}


class AnthropicProvider(HTTPProvider):
    name = "anthropic"
    kind = "Anthropic API"
    label = "Anthropic Messages API"
    default_base_url = DEFAULT_BASE_URL
    default_model = DEFAULT_MODEL
    path = "/v1/messages"
    key_variable = ANTHROPIC_API_KEY_VAR
    official_host = "api.anthropic.com"
    missing_key = (
        f"MEMLOOM_LLM=anthropic needs an API key: set {LLM_API_KEY_VAR} or "
        f"{ANTHROPIC_API_KEY_VAR} (or choose MEMLOOM_LLM=claude-cli to use your Claude Code "
        "login)"
    )

    def __init__(
        self, *, max_tokens: int = DEFAULT_MAX_TOKENS, **options: Unpack[HTTPOptions]
    ) -> None:
        super().__init__(**options)
        self.max_tokens = max_tokens

    @classmethod
    def normalise_base_url(cls, base_url: str) -> str:
        # Accept a base given with or without the /v1 suffix.
        base = base_url.rstrip("/")
        return base[: -len("/v1")] if base.endswith("/v1") else base

    def headers(self) -> dict[str, str]:
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        return headers

    def stop_reason(self, response: httpx.Response) -> str | None:
        # A 400 "credit balance is too low" is a billing stop, not a bad request.
        if response.status_code == 400 and "credit balance" in response.text.lower():
            return "the account's credit balance is too low"
        return None

    def request_body(
        self, task: str, system: str, user: str, schema: dict[str, Any]
    ) -> dict[str, Any]:
        return {
            "max_tokens": self.max_tokens,
            "temperature": 0,
            "system": system,
            "messages": [{"role": "user", "content": user}],
            "tools": [
                {
                    "name": task,
                    "description": _TOOL_DESCRIPTIONS.get(task, f"Record the {task} result."),
                    "input_schema": schema,
                }
            ],
            "tool_choice": {"type": "tool", "name": task},
        }

    def usage_tokens(self, usage: dict[str, Any]) -> tuple[Any, Any]:
        tokens_in = sum(v for k in _INPUT_USAGE if isinstance(v := usage.get(k), int))
        return tokens_in, usage.get("output_tokens")

    def parse_reply(self, task: str, doc: dict[str, Any]) -> dict[str, Any]:
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
