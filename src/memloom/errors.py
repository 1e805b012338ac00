"""Every exception memloom raises on purpose, in one leaf module.

A leaf: it imports nothing of memloom (and only the standard library), so any
module — the stdlib-only hook path included — can raise or catch these without
pulling anything else in. Shells map them to exit codes and HTTP statuses.
"""

from __future__ import annotations

__all__ = [
    "BackupError",
    "CliError",
    "ConfigError",
    "ConflictStateError",
    "DaemonError",
    "DimensionError",
    "EmbedderMismatchError",
    "EmbedderUnavailableError",
    "EmbeddingError",
    "LLMError",
    "NotFoundError",
    "NotificationRefused",
    "ProviderAuthError",
    "ProviderStopError",
    "ProviderUnavailableError",
    "ReadOnlyError",
    "SettingsError",
    "StoreError",
    "UnavailableError",
    "ValidationError",
]


# ---------------------------------------------------------------- storage and the engine


class StoreError(Exception):
    """A storage failure the caller can act on (the message says how)."""


class NotFoundError(StoreError):
    """No record with that id (HTTP 404)."""


class ConflictStateError(StoreError):
    """The operation is not valid in the record's current state (HTTP 409)."""


class DimensionError(StoreError):
    """A vector does not match the store's dimension (HTTP 422)."""


class UnavailableError(StoreError):
    """The database cannot be reached right now (HTTP 503); retrying may succeed."""


class ReadOnlyError(StoreError):
    """The record is shared with this caller for reading only (HTTP 403)."""


class ValidationError(StoreError):
    """Input that parses but cannot be honoured (HTTP 400/422)."""


class BackupError(StoreError):
    """The file is not a (complete, compatible) memloom backup."""


# ---------------------------------------------------------------- configuration


class ConfigError(ValueError):
    """A setting is present but unusable; the message says which and why."""


class SettingsError(ValueError):
    """An agent's settings file is unusable; it has not been touched."""


# ---------------------------------------------------------------- embedders and LLMs


class EmbeddingError(Exception):
    """An embedder could not load or could not produce vectors."""


class EmbedderUnavailableError(EmbeddingError):
    """A remote embedder did not answer after its retries (429, 5xx, timeouts, no
    connection): a passing outage, not the input's fault; an import stops and resumes."""


class EmbedderMismatchError(EmbeddingError):
    """The store was built with a different embedder than the configured one."""

    def __init__(self, stored: str, configured: str) -> None:
        self.stored = stored
        self.configured = configured
        super().__init__(
            f"this memory store was built with embedder {stored!r}, but {configured!r} "
            "is configured now; vectors from different embedders are not comparable. "
            "Run `memloom reembed` to migrate the store to the configured embedder, "
            f"or configure {stored!r} again."
        )


class LLMError(RuntimeError):
    """An LLM call failed; the chunk it was for is not distilled."""


class ProviderStopError(LLMError):
    """The provider will not serve us (auth, payment, quota): stop the run, keep progress.

    ``status`` is the HTTP status when there was one (401, 402, 403, ...).
    """

    def __init__(self, message: str, *, status: int | None = None, provider: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.provider = provider


class ProviderUnavailableError(LLMError):
    """The provider did not answer after the retries (429, 5xx, timeouts, no connection).

    Not the input's fault: an import stops here, keeping its progress, rather than
    going on with later sessions, so the next run resumes in the order an
    uninterrupted run would have written.
    """


class ProviderAuthError(ProviderStopError):
    """HTTP 401/403 or an equivalent "not logged in": the credentials are wrong or missing."""


# ---------------------------------------------------------------- shells


class NotificationRefused(ValueError):
    """A hook payload does not name a session file memloom may read."""


class DaemonError(Exception):
    """The daemon cannot start or stop; the message says why."""


class CliError(Exception):
    """A message for the user; the command exits with status 1."""
