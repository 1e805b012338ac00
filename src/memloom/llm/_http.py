"""HTTP plumbing shared by the OpenAI-compatible and Anthropic providers.

One POST with retries: 408/409/429/5xx, timeouts and connection errors are
retried with exponential backoff (``backoff * 2**attempt``), honouring a
``Retry-After`` header up to ``max_retry_after`` seconds; 401/403 raise
:class:`ProviderAuthError` and 402 (or an exhausted quota) raises
:class:`ProviderStopError` at once, without retrying. Every message is scrubbed
of the API key. httpx is imported on first use to keep CLI start-up fast.
"""

from __future__ import annotations

import email.utils
import json
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .base import BaseLLM, LLMError, ProviderAuthError, ProviderStopError

if TYPE_CHECKING:
    import httpx

RETRY_STATUSES = frozenset({408, 409, 425, 429})
DEFAULT_TIMEOUT = 180.0


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def error_text(response: httpx.Response, limit: int = 300) -> str:
    """The provider's error message from a JSON error body (or the raw body), shortened."""
    try:
        doc = response.json()
    except (json.JSONDecodeError, ValueError):
        text = response.text
    else:
        err = doc.get("error") if isinstance(doc, dict) else None
        if isinstance(err, dict):
            text = str(err.get("message") or err.get("type") or err)
        elif isinstance(err, str):
            text = err
        else:
            text = json.dumps(doc)[:limit]
    text = " ".join(text.split())
    return text[:limit] + ("..." if len(text) > limit else "")


class HTTPProvider(BaseLLM):
    """A provider that POSTs JSON; subclasses build the request and read the reply."""

    #: Human name used in messages ("OpenAI-compatible endpoint", ...).
    kind = "LLM endpoint"

    def __init__(
        self,
        *,
        api_key: str | None,
        timeout: float = DEFAULT_TIMEOUT,
        max_tries: int = 4,
        backoff: float = 1.0,
        max_retry_after: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__()
        if max_tries < 1:
            raise ValueError("max_tries must be >= 1")
        self.timeout = timeout
        self.max_tries = max_tries
        self.backoff = backoff
        self.max_retry_after = max_retry_after
        self._api_key = api_key or None
        self._sleep = sleep
        self._transport = transport
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()

    # -- subclass hooks ------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        raise NotImplementedError

    def _stop_reason(self, response: httpx.Response) -> str | None:
        """A reason to stop the run for a non-auth error response (e.g. quota), or None."""
        return None

    # -- plumbing ------------------------------------------------------------

    @property
    def has_key(self) -> bool:
        return self._api_key is not None

    def scrub(self, text: str) -> str:
        return text.replace(self._api_key, "***") if self._api_key else text

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def _http(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                import httpx

                self._client = httpx.Client(
                    timeout=httpx.Timeout(self.timeout, connect=min(self.timeout, 15.0)),
                    headers=self._headers(),
                    transport=self._transport,
                )
            return self._client

    def _delay(self, attempt: int, response: httpx.Response | None) -> float:
        delay = self.backoff * (2**attempt)
        if response is not None:
            after = _retry_after(response)
            if after is not None:
                delay = max(delay, min(after, self.max_retry_after))
        return delay

    def post_json(self, url: str, body: dict[str, Any], *, task: str) -> dict[str, Any]:
        """POST ``body``; the JSON response of the first 2xx answer, else an error."""
        import httpx

        client = self._http()
        where = f"{task} via {self.kind} {url}"
        last = ""
        for attempt in range(self.max_tries):
            response: httpx.Response | None = None
            try:
                response = client.post(url, json=body)
            except httpx.TimeoutException:
                last = f"timed out after {self.timeout:g}s"
            except httpx.TransportError as e:
                last = f"connection failed ({type(e).__name__}: {self.scrub(str(e))})"
            else:
                status = response.status_code
                if 200 <= status < 300:
                    try:
                        doc = response.json()
                    except (json.JSONDecodeError, ValueError):
                        raise LLMError(
                            f"{where}: HTTP {status} with a body that is not JSON"
                        ) from None
                    if not isinstance(doc, dict):
                        raise LLMError(f"{where}: HTTP {status} with a non-object JSON body")
                    return doc
                detail = self.scrub(error_text(response))
                if status in (401, 403):
                    raise ProviderAuthError(
                        f"{self.kind} {url} refused the request with HTTP {status} "
                        f"({'unauthorized' if status == 401 else 'forbidden'}): check the API "
                        f"key and its permissions for model {self.model!r}. "
                        f"Provider said: {detail}",
                        status=status,
                        provider=self.name,
                    )
                if status == 402:
                    raise ProviderStopError(
                        f"{self.kind} {url} answered HTTP 402 (payment required): the account "
                        f"is out of credit or over its quota. Provider said: {detail}",
                        status=status,
                        provider=self.name,
                    )
                stop = self._stop_reason(response)
                if stop:
                    raise ProviderStopError(
                        f"{self.kind} {url} answered HTTP {status}: {stop}. Provider said: "
                        f"{detail}",
                        status=status,
                        provider=self.name,
                    )
                if status not in RETRY_STATUSES and status < 500:
                    raise LLMError(f"{where}: HTTP {status}: {detail}")
                last = f"HTTP {status}: {detail}"
            if attempt + 1 < self.max_tries:
                self._sleep(self._delay(attempt, response))
        raise LLMError(f"{where} failed after {self.max_tries} tries; last error: {last}")
