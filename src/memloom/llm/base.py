"""The LLM protocol every provider implements, its errors and usage accounting.

A provider answers one *task* per call: ``complete(task, system, payload, schema)``
sends the system prompt, the task input as a JSON document and the reply's JSON
schema, and returns the parsed reply JSON (a dict). Validating the items of a
reply is the caller's job (:mod:`memloom.llm.tasks`), so one bad item never
costs a whole chunk.

Errors:

* :class:`LLMError` — a failed call (transport errors after the retries, a
  refused request, a reply that is not JSON). The importer counts it and moves
  on to the next chunk.
* :class:`ProviderStopError` (a subclass) — the provider refuses us for good:
  HTTP 401/403 (:class:`ProviderAuthError`), 402 or an exhausted quota. The
  importer stops the run, keeping the progress made so far.

No message, repr or log line built here ever contains an API key.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from typing import Any, Protocol, runtime_checkable

from memloom.errors import LLMError, ProviderAuthError, ProviderStopError

__all__ = [
    "LLM",
    "BaseLLM",
    "LLMError",
    "ProviderAuthError",
    "ProviderStopError",
    "parse_json_reply",
]


@runtime_checkable
class LLM(Protocol):
    """What the importer and the belief pipeline need from a language model."""

    name: str
    model: str | None
    description: str
    offline: bool

    def complete(
        self, task: str, system: str, payload: dict[str, Any], schema: dict[str, Any]
    ) -> dict[str, Any]:
        """One task call: the parsed reply JSON, or :class:`LLMError`."""
        ...


class BaseLLM:
    """Shared bookkeeping: per-task call counters and input/output volume.

    ``calls[task]`` counts every ``complete`` call (failed ones too, which are
    also counted in ``failures[task]``); ``input_chars`` is the size of the
    system prompt plus the JSON payload sent; ``input_tokens``/``output_tokens``
    add up what the provider reports (0 when it reports nothing).
    """

    name: str = "llm"
    model: str | None = None
    description: str = ""
    offline: bool = False

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.failures: Counter[str] = Counter()
        self.input_chars = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self._usage_lock = threading.Lock()

    def _count_call(self, task: str, chars: int) -> None:
        with self._usage_lock:
            self.calls[task] += 1
            self.input_chars += chars

    def _count_failure(self, task: str) -> None:
        with self._usage_lock:
            self.failures[task] += 1

    def _count_tokens(self, input_tokens: Any, output_tokens: Any) -> None:
        with self._usage_lock:
            if isinstance(input_tokens, int) and not isinstance(input_tokens, bool):
                self.input_tokens += max(0, input_tokens)
            if isinstance(output_tokens, int) and not isinstance(output_tokens, bool):
                self.output_tokens += max(0, output_tokens)

    def usage(self) -> dict[str, Any]:
        """A JSON-ready snapshot of the counters."""
        with self._usage_lock:
            return {
                "provider": self.name,
                "model": self.model,
                "calls": dict(self.calls),
                "failures": dict(self.failures),
                "input_chars": self.input_chars,
                "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens,
            }

    def close(self) -> None:
        """Release pooled connections, if any (the provider stays usable)."""

    def __enter__(self) -> BaseLLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, model={self.model!r})"


_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*\s*\n(.*?)\n?\s*```\s*$", re.DOTALL)


def parse_json_reply(text: Any, *, where: str) -> dict[str, Any]:
    """The JSON object in a model's text reply, or :class:`LLMError`.

    Tolerates what local servers add around the JSON: a Markdown code fence
    (```json ... ```) or a line of prose before/after the object. A reply that
    holds no JSON object at all is a failed call.
    """
    if not isinstance(text, str) or not text.strip():
        raise LLMError(f"{where}: the reply is empty")
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    try:
        doc = json.loads(body)
    except json.JSONDecodeError:
        doc = None
        start, end = body.find("{"), body.rfind("}")
        if 0 <= start < end:
            try:
                doc = json.loads(body[start : end + 1])
            except json.JSONDecodeError:
                doc = None
        if doc is None:
            preview = body[:120].replace("\n", " ")
            raise LLMError(f"{where}: the reply is not JSON ({preview!r}...)") from None
    if not isinstance(doc, dict):
        raise LLMError(f"{where}: the reply is JSON but not an object ({type(doc).__name__})")
    return doc
