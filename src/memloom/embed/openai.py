"""Embeddings from any OpenAI-compatible ``POST {base_url}/embeddings`` endpoint.

Works with OpenAI itself and with local servers that copy its API (Ollama,
llama.cpp, vLLM, LM Studio, text-embeddings-inference). httpx is imported on
first use to keep CLI start-up fast.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from memloom.errors import EmbedderUnavailableError

from .base import EmbeddingError, as_text_list, l2_normalise

if TYPE_CHECKING:
    import httpx

__all__ = ["OpenAIEmbedder"]

_PROBE_TEXT = "dimension probe"
_RETRY_STATUSES = frozenset({408, 429})
_MAX_RETRY_AFTER = 30.0


class OpenAIEmbedder:
    """Remote embedder; vectors are re-normalised locally whatever the server sends.

    ``dimensions`` is sent to the server only when given (OpenAI's
    text-embedding-3 models shorten vectors with it); otherwise the dimension is
    learnt from the first response, and reading ``dim`` before any call embeds a
    short probe text.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        dimensions: int | None = None,
        timeout: float = 30.0,
        batch_size: int = 128,
        *,
        max_tries: int = 3,
        backoff: float = 0.5,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not base_url:
            raise ValueError("base_url is required, e.g. https://api.openai.com/v1")
        if not model:
            raise ValueError("model is required, e.g. text-embedding-3-small")
        if dimensions is not None and dimensions < 1:
            raise ValueError("dimensions must be a positive integer")
        if batch_size < 1 or max_tries < 1:
            raise ValueError("batch_size and max_tries must be >= 1")
        self.name = f"openai:{model}"
        self.model = model
        self.url = base_url.rstrip("/") + "/embeddings"
        self.timeout = timeout
        self.batch_size = batch_size
        self.max_tries = max_tries
        self.backoff = backoff
        self._api_key = api_key or None
        self._requested_dim = dimensions
        self._dim: int | None = dimensions
        self._sleep = sleep
        self._transport = transport
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:  # never show the key
        key = "set" if self._api_key else "none"
        return f"OpenAIEmbedder(url={self.url!r}, model={self.model!r}, api_key={key})"

    @property
    def dim(self) -> int:
        if self._dim is None:
            self.embed([_PROBE_TEXT])
        assert self._dim is not None
        return self._dim

    @property
    def fingerprint(self) -> str:
        return f"{self.name}@{self.dim}"

    def close(self) -> None:
        """Close pooled connections (the embedder is still usable afterwards)."""
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def __enter__(self) -> OpenAIEmbedder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- HTTP --------------------------------------------------------------

    def _http(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                import httpx

                headers = {"Content-Type": "application/json"}
                if self._api_key:
                    headers["Authorization"] = f"Bearer {self._api_key}"
                self._client = httpx.Client(
                    timeout=self.timeout, headers=headers, transport=self._transport
                )
            return self._client

    def _scrub(self, text: str) -> str:
        return text.replace(self._api_key, "***") if self._api_key else text

    def _delay(self, attempt: int, response: httpx.Response | None) -> float:
        delay = self.backoff * (2**attempt)
        if response is not None:
            try:
                retry_after = float(response.headers.get("retry-after", ""))
            except ValueError:
                retry_after = 0.0
            delay = max(delay, min(retry_after, _MAX_RETRY_AFTER))
        return delay

    def _post(self, payload: dict[str, Any]) -> Any:
        """POST with retries on 429/5xx/timeouts/connection errors; JSON body on success."""
        import httpx

        client = self._http()
        last = ""
        for attempt in range(self.max_tries):
            response: httpx.Response | None = None
            try:
                response = client.post(self.url, json=payload)
            except httpx.TimeoutException:
                last = f"timed out after {self.timeout}s"
            except httpx.TransportError as e:
                last = f"connection failed ({type(e).__name__}: {self._scrub(str(e))})"
            else:
                status = response.status_code
                if status in (401, 403):
                    raise EmbeddingError(
                        f"embedding endpoint {self.url} refused the request with HTTP {status} "
                        f"({response.reason_phrase}); check the API key "
                        "(MEMLOOM_EMBED_API_KEY or OPENAI_API_KEY)"
                    )
                if status < 300:
                    try:
                        return response.json()
                    except ValueError as e:
                        raise EmbeddingError(
                            f"embedding endpoint {self.url} returned invalid JSON"
                        ) from e
                body = self._scrub(response.text[:300]).strip()
                if status not in _RETRY_STATUSES and status < 500:
                    raise EmbeddingError(
                        f"embedding endpoint {self.url} rejected the request with HTTP "
                        f"{status} ({response.reason_phrase}): {body}"
                    )
                last = f"HTTP {status} ({response.reason_phrase}): {body}"
            if attempt + 1 < self.max_tries:
                self._sleep(self._delay(attempt, response))
        raise EmbedderUnavailableError(
            f"embedding endpoint {self.url} failed after {self.max_tries} tries; last error: {last}"
        )

    # -- embedding ---------------------------------------------------------

    def _embed_batch(self, batch: list[str]) -> np.ndarray:
        payload: dict[str, Any] = {"model": self.model, "input": batch}
        if self._requested_dim is not None:
            payload["dimensions"] = self._requested_dim
        body = self._post(payload)
        try:
            data = sorted(body["data"], key=lambda item: int(item["index"]))
            vectors = [item["embedding"] for item in data]
            indices = [int(item["index"]) for item in data]
        except (KeyError, TypeError, ValueError) as e:
            raise EmbeddingError(
                f"embedding endpoint {self.url} returned an unexpected body (no data[].index/"
                f"embedding): {e!r}"
            ) from e
        if indices != list(range(len(batch))):
            raise EmbeddingError(
                f"embedding endpoint {self.url} returned {len(indices)} vectors for "
                f"{len(batch)} inputs (indices {indices[:10]})"
            )
        try:
            arr = np.asarray(vectors, dtype=np.float32)
        except (ValueError, TypeError) as e:
            raise EmbeddingError(f"embedding endpoint {self.url} returned ragged vectors") from e
        if arr.ndim != 2 or arr.shape[1] == 0:
            raise EmbeddingError(
                f"embedding endpoint {self.url} returned vectors of shape {arr.shape}"
            )
        return arr

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        items = as_text_list(texts)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        # OpenAI rejects "" in `input` with HTTP 400; a space embeds as "nothing".
        items = [t if t else " " for t in items]
        parts = [
            self._embed_batch(items[i : i + self.batch_size])
            for i in range(0, len(items), self.batch_size)
        ]
        widths = {p.shape[1] for p in parts}
        if self._dim is not None:
            widths.add(self._dim)
        if len(widths) != 1:
            raise EmbeddingError(
                f"embedding endpoint {self.url} returned {sorted(widths)}-dimensional vectors; "
                f"expected {self._dim or 'one dimension'} for model {self.model!r}"
            )
        self._dim = parts[0].shape[1]
        return l2_normalise(np.concatenate(parts, axis=0))

    def embed_query(self, text: str) -> np.ndarray:
        if not isinstance(text, str):
            raise TypeError(f"embed_query() takes a str, not {type(text).__name__}")
        return self.embed([text])[0]
