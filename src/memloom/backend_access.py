"""Every place a shell still reaches past the facade into the store, in one spot.

The rule is that shells (cli, server, mcp, capture) reach storage only through
:class:`memloom.Memloom`. These few calls do not yet have a facade method; each
function here names one, so switching a shell over is a change to this file and
its callers only. Nothing else in cli/, server/, mcp.py or status.py touches
``.backend`` (capture/worker.py still does, on its own).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memloom.config import Settings
    from memloom.engine import Memloom


def store_of(m: Memloom) -> Any:
    """The engine's store itself (backups read and write it row by row)."""
    return m.backend


def embed_texts(m: Memloom, texts: Sequence[str]) -> Any:
    """Vectors for ``texts`` with the engine's embedder (a restore fills missing ones)."""
    return m._embed_texts(texts)


def stored_embedder(m: Memloom) -> str | None:
    """The embedder fingerprint the store is stamped with (``name@dim``), if any."""
    return m.backend.get_meta("embedder")


def ledger_stats(m: Memloom) -> dict[str, Any]:
    """Sessions imported and memories they gave, from the import ledger."""
    return m.backend.ledger_stats()


def token_lookup(m: Memloom) -> Callable[[str], Any] | None:
    """The store's API-token lookup (a shared PostgreSQL store), or None."""
    return getattr(m.backend, "token_principal", None)


def tokens_exist(m: Memloom) -> Callable[[], bool] | None:
    """Whether the store holds API tokens, as a callable (asked per request), or None."""
    return getattr(m.backend, "has_tokens", None)


def has_tokens(m: Memloom) -> bool:
    """Whether the store holds API tokens now."""
    check = tokens_exist(m)
    return bool(check()) if check is not None else False


def open_configured_store(settings: Settings) -> Any:
    """The store the settings name, without an engine (tokens, online backups)."""
    from memloom.store import open_store

    return open_store(settings)
