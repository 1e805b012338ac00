"""Memloom: the one facade every shell (CLI, HTTP, MCP, daemon) calls.

Methods take and return the JSON documents of the HTTP contract (as pydantic
models; plain dicts are accepted as input), so every shell returns the same JSON.
The work is done by the services in :mod:`memloom.core`, one concept each; this
class wires them to one store, embedder and lock, and keeps the public surface.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np

from memloom.config import ConfigError, Settings, load_settings
from memloom.core.activity import Activity
from memloom.core.beliefs import BeliefPipeline, Beliefs
from memloom.core.conflicts import Conflicts
from memloom.core.context import CoreContext
from memloom.core.embedding import Embedding
from memloom.core.lifecycle import Lifecycle
from memloom.core.maintenance import Maintenance
from memloom.core.native import FileNotes, FileOutcome, Native
from memloom.core.projects import relabel, relabel_once
from memloom.core.recall import Recall
from memloom.core.writes import Observer, Writer
from memloom.embed import Embedder, check_fingerprint, make_embedder
from memloom.errors import StoreError, ValidationError
from memloom.models import (
    ConflictDocument,
    ConflictList,
    DecayResponse,
    ExpireRequest,
    ExpireResponse,
    ForgetRequest,
    ForgetResponse,
    HistoryResponse,
    ListRequest,
    ListResponse,
    MemoryDocument,
    RecallRequest,
    RecallResponse,
    ResolveRequest,
    SaveRequest,
    SaveResponse,
    StaleResponse,
    StatsResponse,
    StoreRequest,
    StoreResponse,
    SupersedeRequest,
    SupersedeResponse,
    UpdateRequest,
    UpdateResponse,
)
from memloom.store import open_store
from memloom.store.base import (
    LedgerRow,
    NativeRow,
    Principal,
    ProvenanceRow,
    Store,
    TeamStore,
)

__all__ = ["BLAS_THREADS", "Memloom", "ValidationError", "limit_blas_threads", "open"]

#: Threads for BLAS (numpy's matrix products). memloom's products are small (a query
#: against a store, a batch against its neighbours), where a second thread gains
#: little; on a busy machine a pool that waits for a descheduled thread turns a
#: 0.1 ms product into 10 ms. One thread: latency, not throughput.
BLAS_THREADS = 1
_blas_limited = False


def limit_blas_threads() -> None:
    """Set BLAS to :data:`BLAS_THREADS` for this process, once (the engine does it
    when it opens, so the daemon never depends on OMP_NUM_THREADS and friends)."""
    global _blas_limited
    if _blas_limited:
        return
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=BLAS_THREADS, user_api="blas")
    _blas_limited = True


class Memloom:
    """A memory store with its embedder. Thread-safe; share one per process."""

    def __init__(
        self, settings: Settings, store: Store, embedder: Embedder, *, check_embedder: bool = True
    ) -> None:
        limit_blas_threads()
        # One context for every service: they share its store, embedder and lock.
        self._ctx = ctx = CoreContext(settings, store, embedder)
        self._writer = Writer(ctx)
        self._embedding = Embedding(ctx)
        self._conflicts = Conflicts(ctx, self._writer, self._embedding)
        self._beliefs = Beliefs(self._writer, self._conflicts, self._embedding)
        self._recall = Recall(ctx, self._embedding)
        self._lifecycle = Lifecycle(ctx, self._writer, self._embedding)
        self._maintenance = Maintenance(ctx, self._writer)
        self._activity = Activity(ctx)
        self._native = Native(ctx, self._writer)
        if check_embedder:
            check_fingerprint(store.get_meta("embedder"), embedder)

    @property
    def settings(self) -> Settings:
        return self._ctx.settings

    @property
    def backend(self) -> Store:
        return self._ctx.store

    @property
    def embedder(self) -> Embedder:
        return self._ctx.embedder

    @embedder.setter
    def embedder(self, value: Embedder) -> None:
        self._ctx.embedder = value

    @property
    def detector(self) -> Any:
        """Secret/PII rules (with config.toml's ``[redact]`` extras), compiled once."""
        return self._ctx.detector

    @detector.setter
    def detector(self, value: Any) -> None:
        self._ctx.resolved_detector = value

    @property
    def llm(self) -> Any:
        """The configured LLM provider (``MEMLOOM_LLM``…), resolved on first use."""
        return self._ctx.llm

    @llm.setter
    def llm(self, value: Any) -> None:
        self._ctx.resolved_llm = value

    # ------------------------------------------------------------ lifecycle

    def scoped(self, principal: Principal | None) -> Memloom:
        """This engine acting for ``principal`` (an API token's owner): same store,
        embedder and models; reads limited to its owner and shared scopes."""
        store = self.backend
        if not isinstance(store, TeamStore):
            raise StoreError("owners need a shared PostgreSQL store (MEMLOOM_DATABASE_URL)")
        view = Memloom(self.settings, store.scoped(principal), self.embedder, check_embedder=False)
        view.llm, view.detector = self._ctx.resolved_llm, self._ctx.resolved_detector
        return view

    def close(self) -> None:
        with self._ctx.lock:
            self.backend.close()

    def __enter__(self) -> Memloom:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ embedding

    @property
    def can_embed(self) -> bool:
        """False when the store holds vectors of another dimension (caller-supplied)."""
        return self._embedding.can_embed

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray | None:
        """Vectors for ``texts`` from the configured embedder (None: this store cannot
        take them); stamps a fresh store with the embedder's fingerprint."""
        return self._embedding.embed_texts(texts)

    def embed_query(self, text: str) -> np.ndarray | None:
        return self._embedding.embed_query(text)

    # ------------------------------------------------------------ Distill API

    def store(self, request: StoreRequest | Mapping[str, Any]) -> StoreResponse:
        """``POST /v1/memory/store``: bulk writes with Distill's distance bands."""
        return self._beliefs.store(request)

    def recall(self, request: RecallRequest | Mapping[str, Any]) -> RecallResponse:
        """``POST /v1/memory/recall``: hybrid search, Distill's score, a token budget."""
        return self._recall.recall(request)

    def expire(self, request: ExpireRequest | Mapping[str, Any]) -> ExpireResponse:
        return self._lifecycle.expire(request)

    def stale(self, folder: str, project: str | None = None) -> StaleResponse:
        """The memories of ``project`` (default: ``folder``'s) whose code changed in
        ``folder``'s working tree (:mod:`memloom.staleness`), for review: read only."""
        return self._recall.stale(folder, project)

    def supersede(self, request: SupersedeRequest | Mapping[str, Any]) -> SupersedeResponse:
        """Expire ``old_id`` with a forward pointer to ``new_id`` (404 unknown, 409 expired)."""
        return self._lifecycle.supersede(request)

    def forget(self, request: ForgetRequest | Mapping[str, Any]) -> ForgetResponse:
        """Delete matching memories with every version of them (criteria combine with AND)."""
        return self._lifecycle.forget(request)

    def stats(self) -> StatsResponse:
        return self._activity.stats()

    # ------------------------------------------------------------ memloom API

    def save(
        self, request: SaveRequest | Mapping[str, Any], *, folder: str | None = None
    ) -> SaveResponse:
        """One memory, checked against what is already believed (the belief pipeline
        with an LLM configured, else the distance bands). ``folder``: the project folder
        it was written in (a local caller's own); the files its text names there are
        anchored (:mod:`memloom.anchors`). The HTTP API never passes one."""
        return self._beliefs.save(request, folder)

    def belief_pipeline(
        self,
        llm: Any,
        *,
        judge: bool = False,
        observer: Observer | None = None,
        strict: bool = False,
    ) -> BeliefPipeline:
        """The belief pipeline over this store; ``observer(memory_id, inserted)`` runs
        inside the transaction of each insert and merge it makes (import journaling);
        ``strict``: a failed classifier or judge call raises (the importer retries)."""
        return self._beliefs.pipeline(llm, judge=judge, observer=observer, strict=strict)

    def add_provenance(self, row: ProvenanceRow) -> None:
        """Record where a memory came from, in a transaction of its own."""
        with self._ctx.lock, self.backend.transaction():
            self.backend.add_provenance(row)

    # ------------------------------------------------------------ session import

    def import_sessions(
        self,
        paths: Sequence[str | os.PathLike[str]] | None = None,
        *,
        days: float | None = 14,
        sessions: int | None = 20,
        project: str | None = None,
        dry_run: bool = False,
        force: bool = False,
        root: str | os.PathLike[str] | None = None,
        progress: Any = None,
        allow_call: Any = None,
        llm: Any = None,
        agent: str | None = None,
        named: bool = False,
    ) -> Any:
        """Distill coding agents' sessions into memories (see ``memloom.sessions``).

        ``agent``: one agent's registry name (``claude-code``, ``codex``, …), or None /
        ``"all"`` for every agent found on this machine; ``paths`` given, each file goes
        to the agent that recognises it. ``root`` (one agent's home) implies Claude Code
        unless ``agent`` names another. ``named``: the owner chose ``paths`` (``import
        sessions --path``), so the transcript lines of what they hold may be served
        from where they are (``memory_context``), though it is no agent's folder.
        """
        from memloom.agents import DEFAULT_AGENT
        from memloom.sessions.importer import ImportOptions
        from memloom.sessions.runs import import_agents

        options = ImportOptions(
            paths=[Path(p) for p in paths] if paths else None,
            days=days,
            sessions=sessions,
            project=project,
            dry_run=dry_run,
            force=force,
            root=Path(root) if root else None,
            progress=progress,
            allow_call=allow_call,
            named=named and bool(paths),
        )
        if root is not None and agent in (None, "all"):
            agent = DEFAULT_AGENT
        return import_agents(self, llm or self.llm, options, agent)

    # ------------------------------------------------------------ the agents' own memories

    def import_native(
        self,
        agents: Sequence[str] | None = None,
        *,
        force: bool = False,
        dry_run: bool = False,
        covers: Any = None,
        configured: bool = False,
    ) -> Any:
        """Follow the coding agents' own memory files (``memloom.sessions.native``): no
        LLM call. ``agents``: registry names (None: those config.toml's ``[native]``
        names, by default every agent that keeps a memory of its own); ``covers``:
        which projects may be read (capture's scope); ``configured``: of ``agents``, only
        those ``[native]`` names (capture asks so; a command names what it reads)."""
        from memloom.sessions.native import NativeOptions, import_native, native_agents

        if agents is None or configured:
            try:
                allowed = native_agents(self.settings.raw)
            except ValueError as exc:
                raise ConfigError(str(exc)) from exc
            agents = allowed if agents is None else [a for a in agents if a in allowed]
        options = NativeOptions(agents=agents, force=force, dry_run=dry_run, covers=covers)
        return import_native(self, options)

    def native_apply(self, file: FileNotes) -> FileOutcome:
        return self._native.apply(file)

    def native_rows(self, folders: Sequence[str]) -> list[NativeRow]:
        return self._native.rows(folders)

    def native_summary(self) -> list[dict[str, Any]]:
        """Per agent and folder of its own memory: files, notes, memories, when read."""
        return self.backend.native_summary()

    def relabel_projects(self, *, once: bool = False) -> dict[str, str]:
        """File folder labels of git repositories here under their repository's project
        (``core/projects.py``); ``once``: only the first time this version opens it."""
        return (relabel_once if once else relabel)(self._ctx)

    def resolve_id(self, memory_id: str) -> str:
        """Accept a unique prefix (at least 4 characters) as people type ids by hand."""
        return self._lifecycle.resolve_id(memory_id)

    def update(
        self,
        memory_id: str,
        request: UpdateRequest | Mapping[str, Any] | str,
        *,
        folder: str | None = None,
    ) -> UpdateResponse:
        """A new version of the belief; the old version turns stale and points forward.
        ``folder``: as :meth:`save`'s."""
        return self._lifecycle.update(memory_id, request, folder)

    def history(self, memory_id: str) -> HistoryResponse:
        return self._activity.history(memory_id)

    def get(self, memory_id: str, folder: str | None = None) -> MemoryDocument:
        """``GET /v1/memories/{id}``: the memory, its versions and its provenance.
        ``folder``: check its anchors in that working tree (``stale``), as a recall's."""
        return self._activity.get(memory_id, folder)

    def list(self, request: ListRequest | Mapping[str, Any] | None = None) -> ListResponse:
        return self._activity.list(request)

    def export(self) -> Iterator[MemoryDocument]:
        """Every memory with its versions and provenance, oldest first (backups, diffs)."""
        return self._activity.export()

    def activity(self, days: int = 30) -> dict[str, Any]:
        """Memories saved per day and type, and the import ledger: what the viewer charts."""
        return self._activity.activity(days)

    def memory_context(self, memory_id: str, around: int = 5) -> dict[str, Any]:
        """The transcript lines each provenance row points at, with ``around`` lines either
        side, read from the session file if it still exists (redacted as on import)."""
        return self._activity.memory_context(memory_id, around)

    def pin(self, memory_id: str, pinned: bool = True) -> MemoryDocument:
        self._lifecycle.pin(memory_id, pinned)
        return self.get(memory_id)

    def restore(self, memory_id: str) -> MemoryDocument:
        """Undo decay: put the original text back."""
        self._lifecycle.restore(memory_id)
        return self.get(memory_id)

    # ------------------------------------------------------------ maintenance

    def reembed(self, batch: int = 256, progress: Any = None) -> dict[str, Any]:
        """Re-embed every memory with the configured embedder and restamp the store."""
        return self._maintenance.reembed(batch, progress)

    def decay(self, now: float | None = None) -> DecayResponse:
        """One decay pass: each memory moves at most one level."""
        return self._maintenance.decay(now)

    # ------------------------------------------------------------ conflicts

    def conflicts(
        self, status: str | None = "pending", limit: int = 50, offset: int = 0
    ) -> ConflictList:
        """Conflicts, newest first; ``status`` None lists resolved ones too."""
        return self._conflicts.list(status, limit, offset)

    def conflict(self, conflict_id: str) -> ConflictDocument:
        return self._conflicts.get(conflict_id)

    def resolve(
        self, conflict_id: str, request: ResolveRequest | Mapping[str, Any]
    ) -> ConflictDocument:
        """Settle a conflict; every change is recorded so :meth:`revert` can undo it."""
        return self._conflicts.resolve(conflict_id, request)

    def revert(self, conflict_id: str) -> ConflictDocument:
        """Undo a resolution: both memories return to how they were; the conflict is pending."""
        return self._conflicts.revert(conflict_id)

    def auto_resolve(
        self,
        progress: Any = None,
        limit: int = 500,
        allow_call: Callable[[], bool] | None = None,
    ) -> dict[str, Any]:
        """Run the judge over pending conflicts; decisive verdicts are applied (revertable).
        ``allow_call``, asked before each judge call, caps a run (the daily budget)."""
        return self._conflicts.auto_resolve(progress, limit, allow_call)

    # ------------------------------------------------------------ for the shells
    # What CLI, server and capture need from the store, so they need not reach `.backend`.

    def embedder_fingerprint(self) -> str | None:
        """The embedder the store's vectors come from (``name@dim``), None on a fresh store."""
        return self.backend.get_meta("embedder")

    def ledger_stats(self) -> dict[str, Any]:
        """The import ledger's totals (sessions, memories, last import)."""
        return self.backend.ledger_stats()

    def ledger_rows(self, paths: Sequence[str]) -> dict[str, LedgerRow]:
        """The import ledger's rows for these transcript paths (missing ones left out)."""
        return self.backend.ledger_get_many(paths)

    def token_principal(self, secret: str) -> Principal | None:
        """Who an API token acts for; None when unknown (or the store has no tokens)."""
        store = self.backend
        return store.token_principal(secret) if isinstance(store, TeamStore) else None

    def has_tokens(self) -> bool:
        """Whether the store holds API tokens (only a shared PostgreSQL store can)."""
        store = self.backend
        return bool(store.has_tokens()) if isinstance(store, TeamStore) else False

    @property
    def supports_tokens(self) -> bool:
        """Whether this store keeps API tokens at all (a shared PostgreSQL store)."""
        return isinstance(self.backend, TeamStore)

    def dump_backup(self, out: IO[str], *, embeddings: bool = False, version: str = "") -> Any:
        """``memloom export``: the whole store as JSON lines (see :mod:`memloom.backup`);
        ``version`` is the memloom version the header names."""
        from memloom.backup import dump

        return dump(self.backend, out, embeddings=embeddings, version=version)

    def restore_backup(self, path: Path) -> Any:
        """``memloom import-backup``: load a backup, embedding rows that lack vectors."""
        from memloom.backup import restore

        return restore(
            self.backend,
            path,
            embed=self.embed_texts,
            embedder=self.embedder.fingerprint if self.can_embed else None,
        )


def open(
    home: str | None = None,
    database_url: str | None = None,
    *,
    embedder: Embedder | None = None,
    settings: Settings | None = None,
    check_embedder: bool = True,
) -> Memloom:
    """Open (creating if needed) the store under ``home`` with the configured embedder."""
    settings = settings or load_settings(home, database_url)
    if embedder is None:
        e = settings.embedder
        try:
            embedder = make_embedder(
                e.kind,
                model=e.model,
                base_url=e.base_url,
                api_key=e.api_key,
                dimensions=e.dimensions,
            )
        except ValueError as exc:
            raise ConfigError(f"embedder settings: {exc}") from exc
    store = open_store(settings)
    try:
        engine = Memloom(settings, store, embedder, check_embedder=check_embedder)
        engine.relabel_projects(once=True)  # a store from before projects were repositories
    except Exception:
        store.close()
        raise
    return engine
