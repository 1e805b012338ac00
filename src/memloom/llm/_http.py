"""The HTTP provider: everything the OpenAI-compatible and Anthropic providers share.

:class:`HTTPProvider` holds construction and validation, ``__repr__``,
building a provider from :class:`memloom.config.LLMSettings`, and the
``complete()`` template (request body -> POST with retries -> usage
accounting -> reply parsing). A subclass declares data (name, defaults, the
endpoint path, the key variable) and four small hooks: ``headers``,
``request_body``, ``usage_tokens`` and ``parse_reply`` (plus ``stop_reason``
for provider-specific billing stops).

One POST with retries: 408/409/425/429/5xx, timeouts and connection errors are
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
from typing import TYPE_CHECKING, Any, ClassVar, TypedDict
from urllib.parse import urlsplit

from memloom.config import LLM_BASE_URL_VAR, LLM_MODEL_VAR, ConfigError, LLMSettings
from memloom.errors import ProviderUnavailableError

from .base import BaseLLM, LLMError, ProviderAuthError, ProviderStopError

if TYPE_CHECKING:
    from typing import Self

    import httpx

__all__ = ["DEFAULT_TIMEOUT", "RETRY_STATUSES", "HTTPOptions", "HTTPProvider", "error_text"]

RETRY_STATUSES = frozenset({408, 409, 425, 429})
DEFAULT_TIMEOUT = 180.0
_LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "0.0.0.0")


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


class HTTPOptions(TypedDict, total=False):
    """The constructor options every HTTP provider takes (for subclasses' ``**options``)."""

    base_url: str | None
    model: str | None
    api_key: str | None
    timeout: float
    max_tries: int
    backoff: float
    max_retry_after: float
    sleep: Callable[[float], None] | None
    transport: httpx.BaseTransport | None
    description: str | None


class HTTPProvider(BaseLLM):
    """A provider that POSTs one JSON request per task; subclasses declare the wire format."""

    # -- what a subclass declares --------------------------------------------

    #: Provider name (``MEMLOOM_LLM`` value, ``usage()["provider"]``).
    name: str = "http"
    #: Human name used in error messages ("OpenAI-compatible endpoint", ...).
    kind: ClassVar[str] = "LLM endpoint"
    #: Start of the description ("OpenAI-compatible API", ...).
    label: ClassVar[str] = "LLM API"
    default_base_url: ClassVar[str] = ""
    default_model: ClassVar[str] = ""
    #: Appended to the base URL to give the endpoint.
    path: ClassVar[str] = ""
    #: The provider's own key variable (``MEMLOOM_LLM_API_KEY`` wins over it).
    key_variable: ClassVar[str] = ""
    #: The vendor's host: without a key, any other host is taken for a keyless local server.
    official_host: ClassVar[str] = ""
    #: ConfigError text when the official host is used without a key.
    missing_key: ClassVar[str] = "needs an API key"
    #: Example models for a non-official base URL; when set, such a URL needs MEMLOOM_LLM_MODEL.
    model_examples: ClassVar[str | None] = None
    #: Whether the description marks a localhost base URL as a "(local server)".
    marks_local_servers: ClassVar[bool] = False

    def __init__(
        self,
        *,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_tries: int = 4,
        backoff: float = 1.0,
        max_retry_after: float = 60.0,
        sleep: Callable[[float], None] | None = None,
        transport: httpx.BaseTransport | None = None,
        description: str | None = None,
    ) -> None:
        """``base_url``/``model`` default to the class's; an empty one is a ValueError."""
        super().__init__()
        base_url = self.default_base_url if base_url is None else base_url
        model = self.default_model if model is None else model
        if not base_url:
            raise ValueError(f"base_url is required, e.g. {self.default_base_url}")
        if not model:
            raise ValueError(f"model is required, e.g. {self.default_model}")
        if max_tries < 1:
            raise ValueError("max_tries must be >= 1")
        self.model = model
        self.offline = False
        self.timeout = timeout
        self.max_tries = max_tries
        self.backoff = backoff
        self.max_retry_after = max_retry_after
        self.base_url = self.normalise_base_url(base_url)
        self.url = self.base_url + self.path
        self.description = description or f"{self.label} at {self.base_url}, model {model}"
        self._api_key = api_key or None
        self._sleep = sleep if sleep is not None else time.sleep
        self._transport = transport
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_settings(
        cls, settings: LLMSettings, why: str, which: Callable[[str], str | None] | None = None
    ) -> Self:
        """The provider the environment describes; ConfigError says what to set.

        ``why`` ends the description ("auto-detected from OPENAI_API_KEY");
        ``which`` is unused (the registry passes it to every provider).
        """
        key, key_var = settings.key_for(cls.key_variable)
        base = settings.base_url
        official = base is None or (urlsplit(base).hostname or "") == cls.official_host
        if key is None and official:
            raise ConfigError(cls.missing_key)
        if settings.model is None and not official and cls.model_examples:
            raise ConfigError(
                f"{LLM_BASE_URL_VAR} is {base}: set {LLM_MODEL_VAR} to a model that server "
                f"serves ({cls.model_examples})"
            )
        provider = cls(
            base_url=base,
            model=settings.model,
            api_key=key,
            timeout=settings.timeout(DEFAULT_TIMEOUT),
        )
        host = urlsplit(provider.base_url).hostname or ""
        local = " (local server)" if cls.marks_local_servers and host in _LOCAL_HOSTS else ""
        keyed = f", key from {key_var}" if key_var else ", no API key"
        provider.description = (
            f"{cls.label} at {provider.base_url}{local}, model {provider.model}{keyed}; {why}"
        )
        return provider

    def __repr__(self) -> str:  # never show the key
        key = "set" if self.has_key else "none"
        return f"{type(self).__name__}(url={self.url!r}, model={self.model!r}, api_key={key})"

    # -- subclass hooks ------------------------------------------------------

    @classmethod
    def normalise_base_url(cls, base_url: str) -> str:
        """The base URL as stored (the endpoint is this plus :attr:`path`)."""
        return base_url.rstrip("/")

    def headers(self) -> dict[str, str]:
        """Headers besides ``Content-Type`` (the key goes here, when there is one)."""
        return {}

    def request_body(
        self, task: str, system: str, user: str, schema: dict[str, Any]
    ) -> dict[str, Any]:
        """The JSON request but its leading ``model``; ``user`` is the task input as JSON text."""
        raise NotImplementedError

    def usage_tokens(self, usage: dict[str, Any]) -> tuple[Any, Any]:
        """(input tokens, output tokens) from the reply's ``usage`` object."""
        raise NotImplementedError

    def parse_reply(self, task: str, doc: dict[str, Any]) -> dict[str, Any]:
        """The task's reply JSON from the response document, or :class:`LLMError`."""
        raise NotImplementedError

    def stop_reason(self, response: httpx.Response) -> str | None:
        """A reason to stop the run for a non-auth error response (e.g. quota), or None."""
        return None

    # -- the template --------------------------------------------------------

    def complete(
        self, task: str, system: str, payload: dict[str, Any], schema: dict[str, Any]
    ) -> dict[str, Any]:
        user = json.dumps(payload, ensure_ascii=False)
        body = {"model": self.model, **self.request_body(task, system, user, schema)}
        self._count_call(task, len(system) + len(user))
        try:
            doc = self.post_json(self.url, body, task=task)
            usage = doc.get("usage")
            if isinstance(usage, dict):
                self._count_tokens(*self.usage_tokens(usage))
            return self.parse_reply(task, doc)
        except LLMError:
            self._count_failure(task)
            raise

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
                    headers={"Content-Type": "application/json", **self.headers()},
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
                stop = self.stop_reason(response)
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
        raise ProviderUnavailableError(
            f"{where} failed after {self.max_tries} tries; last error: {last}"
        )
