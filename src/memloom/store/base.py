"""The storage boundary: what the engine needs from a database, nothing more.

SQLite (embedded, default) and PostgreSQL (teams) implement :class:`Store`; the
engine makes every decision (dedup, conflicts, scoring) on top of these calls,
so both backends behave the same.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from memloom.errors import (  # noqa: F401  (re-exported)
    ConflictStateError,
    DimensionError,
    NotFoundError,
    ReadOnlyError,
    StoreError,
    UnavailableError,
)
from memloom.store.filters import SearchFilter

#: The owner of every row written without a principal (one person, one machine).
LOCAL_OWNER = "local"


@dataclass(frozen=True)
class Principal:
    """Who a request acts for: rows it writes belong to ``owner``; it reads its own
    rows and those of the team scopes in ``shared`` (read-only)."""

    owner: str
    shared: frozenset[str] = frozenset()

    @property
    def readable(self) -> frozenset[str]:
        return self.shared | {self.owner}


@dataclass
class TokenRow:
    """An API token as stored: only a hash of the secret is kept."""

    id: str
    name: str | None
    owner: str
    shared: list[str]
    created_at: float
    last_used_at: float | None = None
    revoked_at: float | None = None


@dataclass
class MemoryRow:
    """One belief version, as stored. Times are Unix seconds (UTC)."""

    id: str
    root_id: str
    version: int
    status: str
    type: str
    text: str
    original_text: str | None
    content_hash: str
    embedding: np.ndarray | None
    source: str | None
    tags: list[str]
    metadata: dict[str, Any]
    project: str | None
    sensitivity: int
    session_id: str | None
    created_at: float
    asserted_at: float
    last_referenced: float
    access_count: int = 0
    expires_at: float | None = None
    expired_at: float | None = None
    superseded_by: str | None = None
    decay_level: int = 0
    pinned: bool = False
    #: The code it is about (:mod:`memloom.anchors`): ``{"path", "symbols", "commit",
    #: "root", "via"}`` objects, data carried like the text.
    anchors: list[dict[str, Any]] = field(default_factory=list)


#: MemoryRow fields :meth:`Store.update` may change.
UPDATABLE = frozenset(
    {
        "status",
        "type",
        "text",
        "original_text",
        "content_hash",
        "source",
        "tags",
        "metadata",
        "project",
        "sensitivity",
        "last_referenced",
        "access_count",
        "expires_at",
        "expired_at",
        "superseded_by",
        "decay_level",
        "pinned",
        "asserted_at",
        "anchors",
    }
)


@dataclass
class ConflictRow:
    id: str
    new_id: str
    existing_id: str
    distance: float | None
    reason: str | None
    status: str  # pending | resolved
    resolution: str | None
    detail: dict[str, Any] = field(default_factory=dict)
    created_at: float = 0.0
    resolved_at: float | None = None


@dataclass
class ProvenanceRow:
    memory_id: str
    session_id: str | None
    path: str | None
    project: str | None
    start_line: int | None
    end_line: int | None
    excerpt: str | None
    created_at: float = 0.0
    #: The coding agent whose session it came from (``claude-code``, ``codex``…);
    #: None for rows written before agents were recorded.
    agent: str | None = None


@dataclass
class LedgerRow:
    """How far one transcript file has been imported."""

    path: str
    session_id: str | None
    project: str | None
    size: int  # file size when last read
    mtime: float
    offset: int  # byte offset just past the last line fully processed (the watermark)
    lines: int  # physical lines before ``offset``
    hash: str  # sha256 of the file's bytes [0, offset)
    status: str  # complete | partial (a run stopped part-way; resume from offset)
    memories: int = 0
    last_error: str | None = None
    updated_at: float = 0.0
    #: The coding agent the session belongs to (its ``source`` name: ``claude-code``,
    #: ``codex``…); None only for rows written by a caller that did not say.
    agent: str | None = None
    #: The folder the owner named with ``import sessions --path`` (the named folder, or a
    #: named file's folder), resolved: their own choice, so ``/context`` may serve the
    #: file's lines from there though it is no agent's folder. None: found by discovery
    #: or a hook. Never taken from a backup (``memloom.backup`` drops it on restore).
    named_root: str | None = None


@dataclass
class NativeRow:
    """One note of an agent's own memory file, as memloom last read it (the
    ``native_notes`` table). ``key`` names the note within its file; the row with
    ``key == ""`` is the file's own (its size and mtime: an unchanged file is
    skipped). ``memory_id`` is the memory version the note wrote or merged into;
    ``text_hash`` the hash of the note's text as written (redacted)."""

    path: str
    key: str
    agent: str
    folder: str
    project: str | None
    memory_id: str | None
    text_hash: str | None
    start_line: int | None
    end_line: int | None
    size: int | None
    mtime: float | None
    #: The note made its memory (inserted it): only then does the note's removal expire
    #: it. A note that merged into a memory already there (saved by the user, distilled
    #: from a session) or versioned another's leaves it be.
    owned: bool = False
    updated_at: float = 0.0


@dataclass
class ListPage:
    rows: list[MemoryRow]
    total: int
    next_cursor: str | None


class Store(Protocol):
    """Everything the rest of memloom calls on a store. Writes happen inside
    :meth:`transaction`."""

    def transaction(self) -> AbstractContextManager[None]: ...
    def close(self) -> None: ...
    @property
    def schema_version(self) -> int: ...

    # meta
    def get_meta(self, key: str) -> str | None: ...
    def set_meta(self, key: str, value: str) -> None: ...

    # memories
    def insert(self, row: MemoryRow) -> None: ...
    def update(self, memory_id: str, **fields: Any) -> None: ...
    def get(self, memory_id: str) -> MemoryRow | None: ...
    def get_many(self, memory_ids: Sequence[str]) -> list[MemoryRow]: ...
    def resolve_prefix(self, prefix: str) -> list[str]: ...
    def versions(self, root_id: str) -> list[MemoryRow]: ...
    def find_by_hash(self, content_hash: str, project: str | None) -> MemoryRow | None: ...
    def find_by_hashes(
        self, hashes: Sequence[str], project: str | None
    ) -> dict[str, MemoryRow]: ...
    def ids_with_hash(self, content_hash: str) -> list[str]: ...
    def touch(self, memory_ids: Sequence[str], at: float) -> None: ...
    def expire_ids(self, memory_ids: Sequence[str], at: float) -> int: ...
    def expire_due(self, now: float) -> int: ...
    def has_due(self, now: float) -> bool: ...
    def delete(self, memory_ids: Sequence[str]) -> int: ...
    def purge(self) -> None: ...
    def select_ids(
        self,
        ids: Sequence[str],
        tags: Sequence[str],
        before: float | None,
        project: str | None = None,
    ) -> list[str]: ...
    def list(
        self,
        flt: SearchFilter,
        *,
        source: str | None,
        min_sensitivity: int | None,
        order: str,
        limit: int,
        cursor: str | None,
    ) -> ListPage: ...
    def anchored_to(self, path: str, flt: SearchFilter, limit: int) -> list[MemoryRow]: ...
    def iter_all(self) -> Iterator[MemoryRow]: ...
    def count(self, status: str | None = None) -> int: ...
    def stats(self) -> dict[str, Any]: ...
    def decay_candidates(self, older_than: float, level: int, limit: int) -> list[MemoryRow]: ...
    def project_labels(self) -> list[str]:
        """The project labels of this owner's rows (a store's own, unscoped)."""
        ...

    def rename_project(self, old: str, new: str) -> int:
        """File this owner's rows of project ``old`` under ``new``; how many moved."""
        ...

    # search
    def vector_search(
        self, query: np.ndarray, k: int, flt: SearchFilter
    ) -> list[tuple[str, float]]: ...
    def vector_search_many(
        self, queries: np.ndarray, k: int, flt: SearchFilter, min_similarity: float = -1.0
    ) -> list[list[tuple[str, float]]]:
        """The top ``k`` for each row of ``queries`` (one matrix product or one round
        trip for the batch), without the hits less similar than ``min_similarity``:
        what a write checks for duplicates and conflicts. The search may be narrower
        than :meth:`vector_search`'s (a duplicate is near by definition)."""
        ...

    def keyword_search(
        self, terms: Sequence[str], k: int, flt: SearchFilter
    ) -> list[tuple[str, float]]: ...
    def document_frequencies(self, stems: Sequence[str]) -> tuple[dict[str, int], int]: ...
    def embeddings_for(self, memory_ids: Sequence[str]) -> dict[str, np.ndarray]: ...
    @property
    def dimension(self) -> int | None: ...

    # index maintenance
    def replace_embeddings(self, vectors: dict[str, np.ndarray | None], dim: int) -> None: ...
    def reload_index(self) -> None: ...
    def save_index(self) -> None: ...

    # conflicts and provenance
    def add_conflict(self, row: ConflictRow) -> None: ...
    def update_conflict(self, conflict_id: str, **fields: Any) -> None: ...
    def get_conflict(self, conflict_id: str) -> ConflictRow | None: ...
    def kept_both(self, first: MemoryRow, second: MemoryRow) -> bool:
        """Whether a conflict resolved as ``keep_both`` joins the two rows' beliefs (either
        side the new one). A row's belief is every version of its root, and of each row
        of its project with the same words (``content_hash``: said again after its row
        was versioned or expired)."""
        ...

    def list_conflicts(
        self, status: str | None, limit: int, offset: int
    ) -> tuple[list[ConflictRow], int]: ...
    def add_provenance(self, row: ProvenanceRow) -> None: ...
    def provenance(self, memory_ids: Sequence[str]) -> list[ProvenanceRow]: ...

    # session import
    def ledger_get_many(self, paths: Sequence[str]) -> dict[str, LedgerRow]: ...
    def ledger_put(self, row: LedgerRow) -> None: ...
    def ledger_stats(self) -> dict[str, Any]: ...
    def records_seen(self, uuids: Sequence[str], exclude_path: str) -> set[str]: ...
    def records_add(self, uuids: Sequence[str], path: str) -> None: ...
    def ledger_recent(self, limit: int = 10) -> list[LedgerRow]: ...
    def session_neighbours(self, memory_ids: Sequence[str]) -> dict[str, list[str]]: ...
    def saved_per_day(self, since: float) -> list[tuple[str, str, int]]: ...

    # the agents' own memories (memloom.sessions.native)
    def native_rows(self, folders: Sequence[str], path: str | None = None) -> list[NativeRow]: ...
    def native_for_memories(self, memory_ids: Sequence[str]) -> list[NativeRow]: ...
    def native_put(self, rows: Sequence[NativeRow]) -> None: ...
    def native_delete(self, path: str, keys: Sequence[str] | None = None) -> None: ...
    def native_summary(self) -> list[dict[str, Any]]: ...

    # export (backups, memloom migrate)
    def iter_rows(self, batch: int = 1000) -> Iterator[list[MemoryRow]]: ...
    def all_conflicts(self) -> list[ConflictRow]: ...
    def all_provenance(self) -> list[ProvenanceRow]: ...
    def all_ledger(self) -> list[LedgerRow]: ...
    def all_records(self) -> list[tuple[str, str]]: ...
    def all_native(self) -> list[NativeRow]: ...


@runtime_checkable
class TeamStore(Protocol):
    """What only a store with owners (PostgreSQL) has, beside :class:`Store`: views
    acting for a principal, and the API tokens that name them. Test with
    ``isinstance(store, TeamStore)`` (methods and plain attributes only, so the
    check runs no query)."""

    principal: Principal | None
    owner: str

    def scoped(self, principal: Principal | None) -> TeamStore: ...
    def insert_many(self, rows: Sequence[MemoryRow]) -> None: ...
    def token_create(
        self, owner: str, shared: Sequence[str] = (), name: str | None = None
    ) -> tuple[TokenRow, str]: ...
    def token_list(self) -> list[TokenRow]: ...
    def token_revoke(self, token_id: str) -> TokenRow: ...
    def token_principal(self, secret: str) -> Principal | None: ...
    def has_tokens(self) -> bool: ...
