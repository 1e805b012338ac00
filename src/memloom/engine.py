"""Memloom: the one facade every shell (CLI, HTTP, MCP, daemon) calls.

Methods take and return the JSON documents of the HTTP contract (as pydantic
models; plain dicts are accepted as input), so every shell returns the same JSON.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

import numpy as np
from pydantic import BaseModel

from memloom import beliefs, decay, ranking
from memloom.config import ConfigError, Settings, load_settings
from memloom.embed import Embedder, check_fingerprint, make_embedder
from memloom.errors import ValidationError
from memloom.hashing import content_hash, new_id
from memloom.models import (
    ConflictDocument,
    ConflictInfo,
    ConflictList,
    ConflictSide,
    DecayResponse,
    ExpireRequest,
    ExpireResponse,
    ForgetRequest,
    ForgetResponse,
    HistoryResponse,
    ListRequest,
    ListResponse,
    MemoryDocument,
    ProvenanceInfo,
    RecalledMemory,
    RecallRequest,
    RecallResponse,
    RecallStats,
    ResolveRequest,
    SaveRequest,
    SaveResponse,
    SensitiveChunk,
    StatsResponse,
    StoreEntry,
    StoreRequest,
    StoreResponse,
    SupersedeRequest,
    SupersedeResponse,
    UpdateRequest,
    UpdateResponse,
    VersionInfo,
)
from memloom.store import open_store
from memloom.store.base import (
    ConflictRow,
    ConflictStateError,
    DimensionError,
    MemoryRow,
    NotFoundError,
    Principal,
    SearchFilter,
    Store,
    StoreError,
)

log = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)


def _as(model: type[M], value: M | Mapping[str, Any]) -> M:
    return value if isinstance(value, model) else model.model_validate(value)


def _ts(value: datetime | None) -> float | None:
    return None if value is None else value.timestamp()


def _dt(value: float | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value, UTC)


def _normalize(vec: Sequence[float] | np.ndarray) -> np.ndarray:
    arr = np.asarray(vec, dtype=np.float32)
    norm = float(np.linalg.norm(arr))
    if norm == 0.0 or not np.isfinite(norm):
        raise ValidationError("embedding must be a non-zero finite vector")
    return arr / norm


class Memloom:
    """A memory store with its embedder. Thread-safe; share one per process."""

    def __init__(
        self, settings: Settings, store: Store, embedder: Embedder, *, check_embedder: bool = True
    ) -> None:
        self.settings = settings
        self.backend = store
        self.embedder = embedder
        self._lock = threading.RLock()
        self._llm: Any = None
        self._detector: Any = None
        if check_embedder:
            check_fingerprint(store.get_meta("embedder"), embedder)

    @property
    def detector(self) -> Any:
        """Secret/PII rules (with config.toml's ``[redact]`` extras), compiled once."""
        if self._detector is None:
            from memloom.config import detector_for

            self._detector = detector_for(self.settings)
        return self._detector

    def _classify_sensitivity(self, text: str) -> int:
        level, _ = self.detector.classify(text)
        return int(level)

    @property
    def llm(self) -> Any:
        """The configured LLM provider (``MEMLOOM_LLM``…), resolved on first use."""
        if self._llm is None:
            from memloom.llm import resolve_llm

            self._llm = resolve_llm()
        return self._llm

    @llm.setter
    def llm(self, value: Any) -> None:
        self._llm = value

    # ------------------------------------------------------------ lifecycle

    def scoped(self, principal: Principal | None) -> Memloom:
        """This engine acting for ``principal`` (an API token's owner): same store,
        embedder and models; reads limited to its owner and shared scopes."""
        scope = getattr(self.backend, "scoped", None)
        if scope is None:
            raise StoreError("owners need a shared PostgreSQL store (MEMLOOM_DATABASE_URL)")
        view = Memloom(self.settings, scope(principal), self.embedder, check_embedder=False)
        view._llm, view._detector = self._llm, self._detector
        return view

    def close(self) -> None:
        with self._lock:
            self.backend.close()

    def __enter__(self) -> Memloom:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ embedding

    @property
    def can_embed(self) -> bool:
        """False when the store holds vectors of another dimension (caller-supplied)."""
        dim = self.backend.dimension
        return dim is None or dim == self.embedder.dim

    def _embed_texts(self, texts: Sequence[str]) -> np.ndarray | None:
        if not texts or not self.can_embed:
            return None
        vectors = self.embedder.embed(list(texts))
        if self.backend.get_meta("embedder") is None:
            with self.backend.transaction():
                self.backend.set_meta("embedder", self.embedder.fingerprint)
        return vectors

    def embed_query(self, text: str) -> np.ndarray | None:
        return self.embedder.embed_query(text) if self.can_embed else None

    # ------------------------------------------------------------ Distill API

    def store(self, request: StoreRequest | Mapping[str, Any]) -> StoreResponse:
        """``POST /v1/memory/store``: bulk writes with Distill's distance bands."""
        req = _as(StoreRequest, request)
        now = time.time()
        vectors = self._prepare_vectors(req.entries)
        sensitivities = [
            self._sensitivity(e.text, e.sensitivity, e.auto_classify) for e in req.entries
        ]
        out = StoreResponse()
        with self._lock, self.backend.transaction():
            self.backend.expire_due(now)
            for entry, vec, sens in zip(req.entries, vectors, sensitivities, strict=True):
                outcome, memory_id, conflicts = self._write_banded(
                    text=entry.text,
                    vec=vec,
                    type_=(entry.type.value if entry.type else "fact"),
                    tags=entry.tags,
                    source=entry.source,
                    metadata=entry.metadata,
                    project=entry.project,
                    sensitivity=sens,
                    expires_at=_ts(entry.expires_at),
                    session_id=req.session_id,
                    now=now,
                )
                out.ids.append(memory_id)
                out.conflicts.extend(conflicts)
                if outcome == "merged":
                    out.merged += 1
                elif outcome == "deduplicated":
                    out.deduplicated += 1
                else:
                    out.stored += 1
            out.total_memories = self.backend.count()
        return out

    def _prepare_vectors(self, entries: Sequence[StoreEntry]) -> list[np.ndarray | None]:
        dim = self.backend.dimension
        vectors: list[np.ndarray | None] = [None] * len(entries)
        missing: list[int] = []
        given_dim: int | None = None
        for i, entry in enumerate(entries):
            if entry.embedding is None:
                missing.append(i)
                continue
            d = len(entry.embedding)
            expected = dim if dim is not None else given_dim
            if expected is not None and d != expected:
                raise DimensionError(
                    f"entries[{i}].embedding has {d} dimensions; this store uses {expected}"
                )
            given_dim = d
            vectors[i] = _normalize(entry.embedding)
        if missing:
            if dim is None and given_dim is not None and given_dim != self.embedder.dim:
                embedded = None  # the caller's dimension wins; the rest go keyword-only
            else:
                embedded = self._embed_texts([entries[i].text for i in missing])
            if embedded is not None:
                for j, i in enumerate(missing):
                    vectors[i] = embedded[j]
        return vectors

    def _sensitivity(self, text: str, explicit: int | None, auto: bool) -> int:
        level = explicit or 0
        if auto:
            level = max(level, self._classify_sensitivity(text))
        return level

    def _new_row(
        self,
        *,
        text: str,
        vec: np.ndarray | None,
        type_: str,
        tags: Sequence[str],
        source: str | None,
        metadata: dict[str, Any],
        project: str | None,
        sensitivity: int,
        expires_at: float | None,
        session_id: str | None,
        now: float,
        root: MemoryRow | None = None,
    ) -> MemoryRow:
        memory_id = new_id()
        return MemoryRow(
            id=memory_id,
            root_id=root.root_id if root else memory_id,
            version=(root.version + 1) if root else 1,
            status="active",
            type=type_,
            text=text,
            original_text=None,
            content_hash=content_hash(text),
            embedding=vec,
            source=source,
            tags=list(tags),
            metadata=dict(metadata),
            project=project,
            sensitivity=sensitivity,
            session_id=session_id,
            created_at=now,
            asserted_at=now,
            last_referenced=now,
            expires_at=expires_at,
        )

    def _merge_into(
        self,
        existing: MemoryRow,
        *,
        tags: Sequence[str],
        source: str | None,
        metadata: dict[str, Any],
        sensitivity: int,
        expires_at: float | None,
        now: float,
    ) -> None:
        """Fold a duplicate into the belief it repeats, losing nothing it carried."""
        meta = beliefs.merge_metadata(existing.metadata, metadata)
        if source and existing.source and source != existing.source:
            sources = list(meta.get("also_sources", []))
            if source not in sources:
                sources.append(source)
            meta["also_sources"] = sources
        self.backend.update(
            existing.id,
            tags=beliefs.merge_tags(existing.tags, tags),
            metadata=meta,
            source=existing.source or source,
            sensitivity=max(existing.sensitivity, sensitivity),
            expires_at=beliefs.later_expiry(existing.expires_at, expires_at),
            last_referenced=now,
            access_count=existing.access_count + 1,
        )

    def _neighbours(
        self, vec: np.ndarray | None, project: str | None, now: float, k: int = 5
    ) -> list[beliefs.Neighbour]:
        if vec is None:
            return []
        flt = SearchFilter(project=project, project_mode="exact", alive_at=now, own_only=True)
        hits = self.backend.vector_search(vec, k, flt)
        rows = {r.id: r for r in self.backend.get_many([h[0] for h in hits])}
        return [beliefs.Neighbour(rows[i], s) for i, s in hits if i in rows]

    def _write_banded(
        self, *, text: str, vec: np.ndarray | None, now: float, **fields: Any
    ) -> tuple[str, str, list[ConflictInfo]]:
        """One write on the distance-band path: merged | deduplicated | stored."""
        project = fields["project"]
        merge_args = {
            "tags": fields["tags"],
            "source": fields["source"],
            "metadata": fields["metadata"],
            "sensitivity": fields["sensitivity"],
            "expires_at": fields["expires_at"],
            "now": now,
        }
        same = self.backend.find_by_hash(content_hash(text), project)
        if same is not None:
            self._merge_into(same, **merge_args)
            return "merged", same.id, []
        neighbours = self._neighbours(vec, project, now)
        if neighbours and beliefs.band(neighbours[0].distance) == "duplicate":
            self._merge_into(neighbours[0].row, **merge_args)
            return "deduplicated", neighbours[0].row.id, []
        row = self._new_row(text=text, vec=vec, now=now, **fields)
        self.backend.insert(row)
        conflicts = [
            self._record_conflict(row, n.row, n.distance, "distance band", now)
            for n in neighbours
            if beliefs.band(n.distance) == "conflict"
        ]
        return "stored", row.id, conflicts

    def _record_conflict(
        self, new: MemoryRow, existing: MemoryRow, distance: float | None, reason: str, now: float
    ) -> ConflictInfo:
        conflict = ConflictRow(
            id=new_id(),
            new_id=new.id,
            existing_id=existing.id,
            distance=distance,
            reason=reason,
            status="pending",
            resolution=None,
            created_at=now,
        )
        self.backend.add_conflict(conflict)
        return ConflictInfo(
            conflict_id=conflict.id,
            new_id=new.id,
            new_text=new.text,
            existing_id=existing.id,
            existing_text=existing.text,
            distance=round(distance, 6) if distance is not None else 0.0,
        )

    def recall(self, request: RecallRequest | Mapping[str, Any]) -> RecallResponse:
        """``POST /v1/memory/recall``: hybrid search, Distill's score, a token budget."""
        req = _as(RecallRequest, request)
        now = time.time()
        with self._lock:
            if self.backend.has_due(now):  # type: ignore[attr-defined]
                with self.backend.transaction():
                    self.backend.expire_due(now)
            flt = SearchFilter(
                statuses=frozenset({"active", "expired"} if req.include_expired else {"active"}),
                project=req.project,
                project_mode="scoped" if req.project is not None else "any",
                types=frozenset(t.value for t in req.types) if req.types else None,
                tags=frozenset(req.tags) if req.tags else None,
                max_sensitivity=req.max_sensitivity,
                alive_at=None if req.include_expired else now,
            )
            reranked = bool(
                req.recency_weight or req.boost_tags or req.task_context or req.max_tokens
            )
            # Candidates beyond max_results only matter when something reorders them.
            pool = max(req.max_results * 5, 50) if reranked else max(req.max_results * 2, 20)
            if req.mode == "hybrid" and req.query_embedding is None:
                pool = max(pool, req.max_results * 5, 50)  # fusion re-orders both arms
            cosine: dict[str, float] = {}
            scorer: ranking.KeywordScorer | None = None
            bm25: dict[str, float] = {}
            if req.query_embedding is not None:
                qvec = _normalize(req.query_embedding)
                dim = self.backend.dimension
                if dim is not None and dim != len(qvec):
                    raise DimensionError(
                        f"query_embedding has {len(qvec)} dimensions; this store uses {dim}"
                    )
                cosine.update(self.backend.vector_search(qvec, pool, flt))
            else:
                query = req.query or ""
                qvec = self.embed_query(query) if req.mode != "keyword" else None
                if qvec is not None:
                    cosine.update(self.backend.vector_search(qvec, pool, flt))
                terms = ranking.query_terms(query) if req.mode != "vector" else []
                if terms:
                    df, total = self.backend.document_frequencies([ranking.stem(t) for t in terms])
                    scorer = ranking.KeywordScorer.build(terms, df, total)
                    selective = ranking.selective_terms(terms, df, total)
                    bm25.update(self.backend.keyword_search(selective, pool, flt))
            ids = list(dict.fromkeys([*cosine, *bm25]))
            # Checked again on the rows as read: a write committed between the searches
            # and this read (another process) must not surface a superseded version.
            rows = [r for r in self.backend.get_many(ids) if _passes(r, flt, now)]
            if qvec is not None and bm25:
                lacking = [r.id for r in rows if r.id not in cosine]
                for mid, vec in self.backend.embeddings_for(lacking).items():
                    cosine[mid] = float(np.dot(vec, qvec))
            top_bm25 = max(bm25.values(), default=0.0)
            boost = set(req.boost_tags)
            task = (req.task_context or "").lower()
            scored: list[tuple[float, float, MemoryRow]] = []

            def similarity_of(mid: str, cos: float, present: frozenset[str]) -> float:
                """Fused similarity of memory ``mid`` for cosine ``cos`` and the stems present."""
                if req.mode == "keyword":
                    return bm25.get(mid, 0.0) / top_bm25 if top_bm25 > 0 else 0.0
                if scorer is None:
                    return cos
                share = bm25.get(mid, 0.0) / top_bm25 if top_bm25 > 0 else 0.0
                keyword = 0.5 * share + 0.5 * scorer.coverage_of(present)
                return ranking.fuse(cos, keyword)

            def similarity(row: MemoryRow) -> float:
                present = ranking.stem_set(row.text) if scorer is not None else frozenset()
                return similarity_of(row.id, cosine.get(row.id, 0.0), present)

            sims = {row.id: similarity(row) for row in rows}
            if scorer is not None and req.mode == "hybrid" and rows:
                rows = self._with_conversation_context(
                    rows, sims, similarity, similarity_of, cosine, flt, qvec, now
                )
            for row in rows:
                sim = sims[row.id]
                rel = ranking.relevance(
                    sim,
                    ranking.recency(row.last_referenced, now),
                    req.recency_weight,
                    boosted=bool(boost.intersection(row.tags)),
                    task_hit=bool(task and row.source and row.source.lower() in task),
                )
                if req.min_relevance and rel < req.min_relevance:
                    continue
                scored.append((rel, sim, row))
            scored.sort(key=lambda item: (-item[0], -item[1], -item[2].last_referenced))
            chosen, tokens = ranking.within_budget(
                scored, lambda item: item[2].text, req.max_results, req.max_tokens
            )
            if chosen and req.touch:
                with self.backend.transaction():
                    self.backend.touch([item[2].id for item in chosen], now)
        provenance: dict[str, list[ProvenanceInfo]] = {}
        if chosen:
            for p in self.backend.provenance([item[2].id for item in chosen]):
                provenance.setdefault(p.memory_id, []).append(
                    ProvenanceInfo(
                        session_id=p.session_id,
                        path=p.path,
                        project=p.project,
                        start_line=p.start_line,
                        end_line=p.end_line,
                        excerpt=p.excerpt,
                    )
                )
        memories = [
            RecalledMemory(
                id=row.id,
                text=row.text,
                type=row.type,  # type: ignore[arg-type]
                source=row.source,
                tags=row.tags,
                relevance=round(rel, 6),
                similarity=round(min(1.0, sim), 6),
                decay_level=row.decay_level,
                sensitivity=row.sensitivity,
                last_referenced=_dt(now),  # type: ignore[arg-type]
                created_at=_dt(row.created_at),  # type: ignore[arg-type]
                project=row.project,
                provenance=provenance.get(row.id, []),
            )
            for rel, sim, row in chosen
        ]
        sensitive = [
            SensitiveChunk(chunk_id=m.id, sensitivity=m.sensitivity)
            for m in memories
            if m.sensitivity > 0
        ]
        return RecallResponse(
            memories=memories,
            stats=RecallStats(candidates=len(scored), returned=len(memories), token_count=tokens),
            max_sensitivity=max((m.sensitivity for m in memories), default=0),
            sensitive_chunks=sensitive,
        )

    def _with_conversation_context(
        self,
        rows: list[MemoryRow],
        sims: dict[str, float],
        similarity: Any,
        similarity_of: Any,
        cosine: dict[str, float],
        flt: SearchFilter,
        qvec: np.ndarray | None,
        now: float,
    ) -> list[MemoryRow]:
        """Score memories in their conversation, not only on their own.

        Memories stored as the turns of one conversation (same ``session_id``, in
        order) answer questions together: the reply to a matching turn is often
        the answer, and a question and its answer share the words between them.
        Three steps, each measured on LoCoMo (docs/benchmarks.md):

        * the candidates' neighbours join the candidates if they pass the filter;
        * a memory with neighbours is scored half on itself and half on its
          window — the text of the previous turn, itself and the next turn, and
          its embedding plus WINDOW_NEIGHBOUR_WEIGHT times theirs;
        * then it gains CONTEXT_WEIGHT times its best neighbour's score.

        The joined neighbours go through the last two steps as well, with what is
        at hand of their own neighbours.

        Scores are left uncapped so that the ordering keeps telling apart
        memories above 1; the caller caps what it reports.
        """
        neighbours = self.backend.session_neighbours([r.id for r in rows])
        if not neighbours:
            return rows

        def vectors_of(of: Sequence[MemoryRow]) -> dict[str, np.ndarray]:
            """The stored embeddings of ``of``: from the rows when they carry them."""
            out = {r.id: r.embedding for r in of if r.embedding is not None}
            missing = [r.id for r in of if r.embedding is None]
            if missing:
                out.update(self.backend.embeddings_for(missing))
            return out

        vecs: dict[str, np.ndarray] = {}
        extra_ids = {n for ns in neighbours.values() for n in ns} - sims.keys()
        extra = self.backend.get_many(sorted(extra_ids)) if extra_ids else []
        if extra and qvec is not None:
            vecs.update(vectors_of(extra))
            for row in extra:
                if row.id in vecs:
                    cosine[row.id] = float(np.dot(vecs[row.id], qvec))
        for row in extra:
            sims[row.id] = similarity(row)
        if extra:
            # the joined neighbours are scored in their own context too, from the
            # memories already at hand (the matching turn they answer among them)
            neighbours.update(self.backend.session_neighbours([r.id for r in extra]))
        if qvec is not None:
            by_id = {r.id: r for r in [*rows, *extra]}
            vecs.update(vectors_of([by_id[m] for m in neighbours if m in by_id]))
            mids = [m for m in neighbours if m in vecs and m in by_id]
            if mids:
                order = list(vecs)
                at = {m: i for i, m in enumerate(order)}
                none = len(order)  # a zero row stands in for a missing neighbour
                matrix = np.vstack([np.stack([vecs[m] for m in order]), np.zeros(len(qvec))])
                ends = [[*neighbours[m], "", ""] for m in mids]  # "" is no neighbour
                first = [at.get(e[0], none) for e in ends]
                second = [at.get(e[1], none) for e in ends]
                window = matrix[[at[m] for m in mids]] + ranking.WINDOW_NEIGHBOUR_WEIGHT * (
                    matrix[first] + matrix[second]
                )
                norms = np.linalg.norm(window, axis=1)
                in_cosine = (window @ qvec) / np.where(norms > 0, norms, 1.0)
                for mid, cos in zip(mids, in_cosine.tolist(), strict=True):
                    around = [mid, *neighbours[mid]]
                    present = frozenset().union(
                        *(ranking.stem_set(by_id[x].text) for x in around if x in by_id)
                    )
                    in_window = similarity_of(mid, cos, present)
                    sims[mid] = ranking.window_mix(sims[mid], in_window)
        base = dict(sims)
        for mid, ns in neighbours.items():
            best = max((base.get(n, 0.0) for n in ns), default=0.0)
            sims[mid] = base[mid] + ranking.CONTEXT_WEIGHT * best
        kept = [r for r in extra if _passes(r, flt, now)]
        return rows + kept

    def expire(self, request: ExpireRequest | Mapping[str, Any]) -> ExpireResponse:
        req = _as(ExpireRequest, request)
        with self._lock, self.backend.transaction():
            count = self.backend.expire_ids(req.ids, time.time())
        return ExpireResponse(expired=count)

    def supersede(self, request: SupersedeRequest | Mapping[str, Any]) -> SupersedeResponse:
        """Expire ``old_id`` with a forward pointer to ``new_id`` (404 unknown, 409 expired)."""
        req = _as(SupersedeRequest, request)
        if req.new_id == req.old_id:
            raise ValidationError("a memory cannot supersede itself")
        with self._lock, self.backend.transaction():
            old = self.backend.get(req.old_id)
            if old is None:
                raise NotFoundError(f"memory {req.old_id} not found")
            if old.status != "active":
                raise ConflictStateError(f"memory {req.old_id} is already {old.status}")
            if req.new_id is not None and self.backend.get(req.new_id) is None:
                raise NotFoundError(f"memory {req.new_id} not found")
            self.backend.update(
                old.id, status="expired", expired_at=time.time(), superseded_by=req.new_id
            )
        return SupersedeResponse(superseded=True)

    def forget(self, request: ForgetRequest | Mapping[str, Any]) -> ForgetResponse:
        """Delete matching memories with every version of them (criteria combine with AND)."""
        req = _as(ForgetRequest, request)
        with self._lock, self.backend.transaction():
            removed = 0
            if not req.is_empty:
                matched = self.backend.select_ids(req.ids, req.tags, _ts(req.before))
                removed = self._delete_chains(matched)
            total = self.backend.count()
        if removed:
            self.backend.purge()  # forgotten means gone from the files too
        return ForgetResponse(removed=removed, total_memories=total)

    def _delete_chains(self, memory_ids: Sequence[str]) -> int:
        roots = {r.root_id for r in self.backend.get_many(memory_ids)}
        chain_ids = {v.id for root in roots for v in self.backend.versions(root)}
        return self.backend.delete(sorted(chain_ids | set(memory_ids)))

    def stats(self) -> StatsResponse:
        with self._lock:
            now = time.time()
            if self.backend.has_due(now):  # type: ignore[attr-defined]
                with self.backend.transaction():
                    self.backend.expire_due(now)
            raw = self.backend.stats()
        by_status = raw["by_status"]
        return StatsResponse(
            total_memories=raw["total_memories"],
            active_count=by_status.get("active", 0),
            expired_count=by_status.get("expired", 0),
            stale_count=by_status.get("stale", 0),
            by_decay_level=raw["by_decay_level"],
            by_source=raw["by_source"],
            by_type=raw["by_type"],
            by_project=raw["by_project"],
            conflicts_pending=raw["conflicts_pending"],
            oldest_memory=_dt(raw["oldest"]),
            newest_memory=_dt(raw["newest"]),
            embedder=self.backend.get_meta("embedder"),
            dimension=self.backend.dimension,
        )

    # ------------------------------------------------------------ memloom API

    def save(self, request: SaveRequest | Mapping[str, Any]) -> SaveResponse:
        """One memory, checked against what is already believed.

        With an LLM configured the belief pipeline decides (identical → a new
        version, contradictory → a conflict); without one, the distance bands.
        """
        req = _as(SaveRequest, request)
        now = time.time()
        vectors = self._embed_texts([req.text])
        vec = None if vectors is None else vectors[0]
        sens = self._sensitivity(req.text, req.sensitivity, req.auto_classify)
        llm = self._llm if self._llm is not None else self._configured_llm()
        if llm is not None and not getattr(llm, "offline", True) and req.expires_at is None:
            out = beliefs.BeliefPipeline(self, llm, judge=False).write(
                beliefs.NewBelief(
                    text=req.text,
                    vec=vec,
                    type=req.type.value,
                    project=req.project,
                    sensitivity=sens,
                    tags=req.tags,
                    source=req.source,
                    metadata=req.metadata,
                )
            )
            return SaveResponse(id=out.memory_id, outcome=out.outcome, conflicts=out.conflicts)
        with self._lock, self.backend.transaction():
            self.backend.expire_due(now)
            outcome, memory_id, conflicts = self._write_banded(
                text=req.text,
                vec=vec,
                type_=req.type.value,
                tags=req.tags,
                source=req.source,
                metadata=req.metadata,
                project=req.project,
                sensitivity=sens,
                expires_at=_ts(req.expires_at),
                session_id=None,
                now=now,
            )
        if outcome in ("merged", "deduplicated"):
            return SaveResponse(id=memory_id, outcome="merged")
        return SaveResponse(
            id=memory_id, outcome="conflict" if conflicts else "added", conflicts=conflicts
        )

    def _configured_llm(self) -> Any:
        """The LLM only if the environment names one (never probes for ``claude``)."""
        from memloom.config import llm_requested

        return self.llm if llm_requested() else None

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
    ) -> Any:
        """Distill Claude Code transcripts into memories (see ``memloom.sessions``)."""
        from pathlib import Path

        from memloom.sessions.importer import Importer, ImportOptions

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
        )
        return Importer(self, llm or self.llm, options).run()

    def resolve_id(self, memory_id: str) -> str:
        """Accept a unique prefix (at least 4 characters) as people type ids by hand."""
        if self.backend.get(memory_id) is not None:
            return memory_id
        if len(memory_id) >= 4:
            found = self.backend.resolve_prefix(memory_id)
            if len(found) == 1:
                return found[0]
            if len(found) > 1:
                raise ValidationError(f"id prefix {memory_id!r} is ambiguous: {', '.join(found)}")
        raise NotFoundError(f"memory {memory_id} not found")

    def _require(self, memory_id: str) -> MemoryRow:
        row = self.backend.get(memory_id)
        if row is None:
            raise NotFoundError(f"memory {memory_id} not found")
        return row

    def update(
        self, memory_id: str, request: UpdateRequest | Mapping[str, Any] | str
    ) -> UpdateResponse:
        """A new version of the belief; the old version turns stale and points forward."""
        req = (
            UpdateRequest(text=request) if isinstance(request, str) else _as(UpdateRequest, request)
        )
        vectors = self._embed_texts([req.text])
        vec = None if vectors is None else vectors[0]
        now = time.time()
        with self._lock, self.backend.transaction():
            old = self._require(memory_id)
            if old.status != "active":
                head = self.backend.versions(old.root_id)[0]
                raise ConflictStateError(
                    f"memory {memory_id} is {old.status}; update the current version {head.id}"
                )
            sens = max(req.sensitivity or 0, self._classify_sensitivity(req.text))
            if req.sensitivity is not None:
                sens = max(req.sensitivity, sens)
            row = self._new_row(
                text=req.text,
                vec=vec,
                type_=(req.type.value if req.type else old.type),
                tags=req.tags if req.tags is not None else old.tags,
                source=old.source,
                metadata=req.metadata if req.metadata is not None else old.metadata,
                project=old.project,
                sensitivity=sens,
                expires_at=old.expires_at,
                session_id=old.session_id,
                now=now,
                root=self.backend.versions(old.root_id)[0],
            )
            row.pinned = old.pinned
            row.access_count = old.access_count
            self.backend.insert(row)
            self.backend.update(old.id, status="stale", superseded_by=row.id)
        return UpdateResponse(id=row.id, root_id=row.root_id, version=row.version)

    def history(self, memory_id: str) -> HistoryResponse:
        with self._lock:
            row = self._require(memory_id)
            versions = self.backend.versions(row.root_id)
        return HistoryResponse(versions=[self._version(v) for v in versions])

    @staticmethod
    def _version(row: MemoryRow) -> VersionInfo:
        return VersionInfo(
            id=row.id,
            version=row.version,
            text=row.text,
            status=row.status,  # type: ignore[arg-type]
            created_at=_dt(row.created_at),  # type: ignore[arg-type]
        )

    def _document(
        self, row: MemoryRow, versions: list[MemoryRow], provenance: list[Any]
    ) -> MemoryDocument:
        return MemoryDocument(
            id=row.id,
            root_id=row.root_id,
            version=row.version,
            status=row.status,  # type: ignore[arg-type]
            type=row.type,  # type: ignore[arg-type]
            text=row.text,
            original_text=row.original_text,
            source=row.source,
            tags=row.tags,
            metadata=row.metadata,
            project=row.project,
            sensitivity=row.sensitivity,
            session_id=row.session_id,
            created_at=_dt(row.created_at),  # type: ignore[arg-type]
            asserted_at=_dt(row.asserted_at),  # type: ignore[arg-type]
            last_referenced=_dt(row.last_referenced),  # type: ignore[arg-type]
            access_count=row.access_count,
            expires_at=_dt(row.expires_at),
            expired_at=_dt(row.expired_at),
            superseded_by=row.superseded_by,
            decay_level=row.decay_level,
            pinned=row.pinned,
            versions=[self._version(v) for v in versions],
            provenance=[
                ProvenanceInfo(
                    session_id=p.session_id,
                    path=p.path,
                    project=p.project,
                    start_line=p.start_line,
                    end_line=p.end_line,
                    excerpt=p.excerpt,
                )
                for p in provenance
            ],
        )

    def get(self, memory_id: str) -> MemoryDocument:
        """``GET /v1/memories/{id}``: the memory, its versions and its provenance."""
        with self._lock:
            row = self._require(memory_id)
            versions = self.backend.versions(row.root_id)
            provenance = self.backend.provenance([v.id for v in versions])
        return self._document(row, versions, provenance)

    def list(self, request: ListRequest | Mapping[str, Any] | None = None) -> ListResponse:
        req = _as(ListRequest, request or {})
        flt = SearchFilter(
            statuses=frozenset(s.value for s in req.statuses),
            project=req.project,
            project_mode="exact" if req.project is not None else "any",
            types=frozenset(t.value for t in req.types) if req.types else None,
            tags=frozenset(req.tags) if req.tags else None,
            max_sensitivity=req.max_sensitivity,
        )
        with self._lock:
            page = self.backend.list(
                flt,
                source=req.source,
                min_sensitivity=req.min_sensitivity,
                order=req.order,
                limit=req.limit,
                cursor=req.cursor,
            )
        return ListResponse(
            memories=[self._document(r, [], []) for r in page.rows],
            next_cursor=page.next_cursor,
            total=page.total,
        )

    def export(self) -> Iterator[MemoryDocument]:
        """Every memory with its versions and provenance, oldest first (backups, diffs)."""
        with self._lock:
            rows = list(self.backend.iter_all())
        chains: dict[str, list[MemoryRow]] = {}
        for row in rows:
            chains.setdefault(row.root_id, []).append(row)
        for row in rows:
            versions = sorted(chains[row.root_id], key=lambda v: -v.version)
            yield self._document(row, versions, self.backend.provenance([row.id]))

    def activity(self, days: int = 30) -> dict[str, Any]:
        """Memories saved per day and type, and the import ledger: what the viewer charts."""
        since = time.time() - days * 86400
        with self._lock:
            per_day: dict[str, dict[str, int]] = {}
            for day, type_, count in self.backend.saved_per_day(since):
                per_day.setdefault(day, {})[type_] = count
            imports = self.backend.ledger_stats()
            recent = self.backend.ledger_recent(10)
            by_type = self.stats().by_type
        return {
            "days": days,
            "per_day": [{"day": d, **counts} for d, counts in sorted(per_day.items())],
            "by_type": by_type,
            "imports": {**imports, "last_import_at": _dt(imports.get("last_import"))},
            "recent_sessions": [
                {
                    "path": r.path,
                    "session_id": r.session_id,
                    "project": r.project,
                    "status": r.status,
                    "memories": r.memories,
                    "error": r.last_error,
                    "updated_at": _dt(r.updated_at),
                }
                for r in recent
            ],
        }

    def memory_context(self, memory_id: str, around: int = 5) -> dict[str, Any]:
        """The transcript lines each provenance row points at, with ``around`` lines either
        side, read from the session file if it still exists (redacted as on import)."""
        from pathlib import Path

        from memloom.sessions.parse import parse_bytes

        doc = self.get(memory_id)
        out = []
        for p in doc.provenance:
            entry: dict[str, Any] = {
                "path": p.path,
                "start_line": p.start_line,
                "end_line": p.end_line,
                "exists": False,
                "lines": [],
            }
            path = Path(p.path) if p.path else None
            if path is not None and path.is_file() and p.start_line and p.end_line:
                entry["exists"] = True
                first = max(1, p.start_line - around)
                last = p.end_line + around
                chunk = bytearray()
                with path.open("rb") as fh:
                    for number, raw in enumerate(fh, start=1):
                        if number > last:
                            break
                        if number >= first:
                            chunk += raw
                parsed = parse_bytes(bytes(chunk), first_line=first, final=True)
                for unit in parsed.units:
                    text, _ = self.detector.redact(unit.text)
                    entry["lines"].append(
                        {
                            "start_line": unit.start_line,
                            "end_line": unit.end_line,
                            "role": unit.role,
                            "text": text,
                            "cited": unit.end_line >= p.start_line
                            and unit.start_line <= p.end_line,
                        }
                    )
            out.append(entry)
        return {"id": doc.id, "provenance": out}

    def pin(self, memory_id: str, pinned: bool = True) -> MemoryDocument:
        with self._lock, self.backend.transaction():
            self._require(memory_id)
            self.backend.update(memory_id, pinned=pinned)
        return self.get(memory_id)

    def restore(self, memory_id: str) -> MemoryDocument:
        """Undo decay: put the original text back."""
        with self._lock, self.backend.transaction():
            row = self._require(memory_id)
            if row.decay_level and row.original_text is not None:
                self.backend.update(
                    memory_id,
                    text=row.original_text,
                    original_text=None,
                    decay_level=0,
                    last_referenced=time.time(),
                )
        return self.get(memory_id)

    # ------------------------------------------------------------ re-embedding

    def reembed(self, batch: int = 256, progress: Any = None) -> dict[str, Any]:
        """Re-embed every memory with the configured embedder and restamp the store."""
        with self._lock:
            rows = [(r.id, r.original_text or r.text) for r in self.backend.iter_all()]
        vectors: dict[str, np.ndarray | None] = {}
        for start in range(0, len(rows), batch):
            part = rows[start : start + batch]
            embedded = self.embedder.embed([t for _, t in part])
            for (mid, _), vec in zip(part, embedded, strict=True):
                vectors[mid] = vec
            if progress is not None:
                progress(min(start + batch, len(rows)), len(rows))
        with self._lock, self.backend.transaction():
            self.backend.replace_embeddings(vectors, self.embedder.dim)  # type: ignore[attr-defined]
            self.backend.set_meta("embedder", self.embedder.fingerprint)
        self.backend.reload_index()  # type: ignore[attr-defined]
        return {"reembedded": len(vectors), "embedder": self.embedder.fingerprint}

    # ------------------------------------------------------------ conflicts

    def _side(self, row: MemoryRow) -> ConflictSide:
        prov = self.backend.provenance([row.id])
        return ConflictSide(
            id=row.id,
            text=row.text,
            status=row.status,  # type: ignore[arg-type]
            type=row.type,  # type: ignore[arg-type]
            project=row.project,
            created_at=_dt(row.created_at),  # type: ignore[arg-type]
            excerpt=prov[0].excerpt if prov else None,
        )

    def _conflict_doc(self, c: ConflictRow) -> ConflictDocument:
        new = self._require(c.new_id)
        existing = self._require(c.existing_id)
        return ConflictDocument(
            id=c.id,
            status=c.status,  # type: ignore[arg-type]
            resolution=c.resolution,
            resolved_by=c.detail.get("by") if c.status == "resolved" else None,
            merged_id=c.detail.get("merged_id"),
            reason=c.reason,
            distance=c.distance,
            created_at=_dt(c.created_at),  # type: ignore[arg-type]
            resolved_at=_dt(c.resolved_at),
            new=self._side(new),
            existing=self._side(existing),
        )

    def conflicts(
        self, status: str | None = "pending", limit: int = 50, offset: int = 0
    ) -> ConflictList:
        """Conflicts, newest first; ``status`` None lists resolved ones too."""
        if status not in (None, "pending", "resolved"):
            raise ValidationError("status must be pending, resolved or omitted")
        if limit < 1 or offset < 0:
            raise ValidationError("limit must be positive and offset not negative")
        with self._lock:
            rows, total = self.backend.list_conflicts(status, limit, offset)
            docs = [self._conflict_doc(c) for c in rows]
        return ConflictList(conflicts=docs, total=total)

    def conflict(self, conflict_id: str) -> ConflictDocument:
        with self._lock:
            c = self.backend.get_conflict(conflict_id)
            if c is None:
                raise NotFoundError(f"conflict {conflict_id} not found")
            return self._conflict_doc(c)

    def resolve(
        self, conflict_id: str, request: ResolveRequest | Mapping[str, Any]
    ) -> ConflictDocument:
        """Settle a conflict; every change is recorded so :meth:`revert` can undo it."""
        req = _as(ResolveRequest, request)
        merged_vec = None
        if req.action == "merge":
            vectors = self._embed_texts([req.text or ""])
            merged_vec = None if vectors is None else vectors[0]
        now = time.time()
        with self._lock, self.backend.transaction():
            c = self.backend.get_conflict(conflict_id)
            if c is None:
                raise NotFoundError(f"conflict {conflict_id} not found")
            if c.status != "pending":
                raise ConflictStateError(f"conflict {conflict_id} is already {c.status}")
            if req.candidate_id is not None and req.candidate_id not in (c.new_id, c.existing_id):
                raise ValidationError("candidate_id must be the conflict's new or existing id")
            new = self._require(c.new_id)
            existing = self._require(c.existing_id)
            self._apply_resolution(c, req.action, new, existing, req.text, merged_vec, now)
        return self.conflict(conflict_id)

    def _apply_resolution(
        self,
        c: ConflictRow,
        action: str,
        new: MemoryRow,
        existing: MemoryRow,
        text: str | None,
        merged_vec: np.ndarray | None,
        now: float,
        by: str = "user",
    ) -> None:
        def state(row: MemoryRow) -> dict[str, Any]:
            return {
                "id": row.id,
                "status": row.status,
                "superseded_by": row.superseded_by,
                "expired_at": row.expired_at,
            }

        detail: dict[str, Any] = {"before": [state(new), state(existing)], "by": by}
        if action in ("keep_new", "keep_existing"):
            loser, winner = (existing, new) if action == "keep_new" else (new, existing)
            if loser.status == "active":
                self.backend.update(
                    loser.id, status="expired", expired_at=now, superseded_by=winner.id
                )
        elif action == "merge":
            head = self.backend.versions(existing.root_id)[0]
            merged = self._new_row(
                text=text or "",
                vec=merged_vec,
                type_=existing.type,
                tags=beliefs.merge_tags(existing.tags, new.tags),
                source=existing.source or new.source,
                metadata=beliefs.merge_metadata(existing.metadata, new.metadata),
                project=existing.project,
                sensitivity=max(
                    existing.sensitivity, new.sensitivity, self._classify_sensitivity(text or "")
                ),
                expires_at=None,
                session_id=new.session_id,
                now=now,
                root=head,
            )
            self.backend.insert(merged)
            for row, status in ((existing, "stale"), (new, "expired")):
                if row.status == "active":
                    self.backend.update(
                        row.id, status=status, expired_at=now, superseded_by=merged.id
                    )
            for p in self.backend.provenance([new.id, existing.id]):
                p.memory_id = merged.id
                self.backend.add_provenance(p)
            detail["merged_id"] = merged.id
        self.backend.update_conflict(
            c.id, status="resolved", resolution=action, detail=detail, resolved_at=now
        )

    def revert(self, conflict_id: str) -> ConflictDocument:
        """Undo a resolution: both memories return to how they were; the conflict is pending."""
        with self._lock, self.backend.transaction():
            c = self.backend.get_conflict(conflict_id)
            if c is None:
                raise NotFoundError(f"conflict {conflict_id} not found")
            if c.status != "resolved":
                raise ConflictStateError(f"conflict {conflict_id} is not resolved")
            merged_id = c.detail.get("merged_id")
            if merged_id:
                self.backend.delete([merged_id])
            for before in c.detail.get("before", []):
                if self.backend.get(before["id"]) is not None:
                    self.backend.update(
                        before["id"],
                        status=before["status"],
                        superseded_by=before["superseded_by"],
                        expired_at=before["expired_at"],
                    )
            self.backend.update_conflict(
                c.id, status="pending", resolution=None, detail={}, resolved_at=None
            )
        return self.conflict(conflict_id)

    def auto_resolve(self, progress: Any = None, limit: int = 500) -> dict[str, Any]:
        """Run the judge over pending conflicts; decisive verdicts are applied (revertable)."""
        llm = self.llm
        pending = self.conflicts("pending", limit=limit).conflicts
        out = {
            "pending": len(pending),
            "judged": 0,
            "resolved": 0,
            "unsure": 0,
            "failed": 0,
            "llm": getattr(llm, "description", ""),
        }
        if getattr(llm, "offline", False):
            out["skipped"] = len(pending)
            out["reason"] = "no LLM configured: the offline judge is always unsure"
            return out
        from memloom.llm import tasks

        for i, conflict in enumerate(pending, start=1):
            new, existing = conflict.new, conflict.existing
            payload = {
                "new": {
                    "text": new.text,
                    "asserted_at": new.created_at.isoformat(),
                    "excerpt": new.excerpt or "",
                },
                "existing": [
                    {
                        "index": 0,
                        "text": existing.text,
                        "asserted_at": existing.created_at.isoformat(),
                        "excerpt": existing.excerpt or "",
                    }
                ],
                "reason": conflict.reason or "",
            }
            try:
                reply = llm.complete(tasks.JUDGE, tasks.JUDGE_SYSTEM, payload, tasks.JUDGE_SCHEMA)
                verdict, _ = tasks.validate_judge(reply, 1)
            except Exception as exc:
                out["failed"] += 1
                log.warning("judge failed on conflict %s: %s", conflict.id, exc)
                verdict = None
            else:
                out["judged"] += 1
            if verdict is not None and verdict.verdict in (
                "keep_new",
                "keep_existing",
                "keep_both",
            ):
                with self._lock, self.backend.transaction():
                    c = self.backend.get_conflict(conflict.id)
                    n, e = self.backend.get(new.id), self.backend.get(existing.id)
                    if c is not None and c.status == "pending" and n and e:
                        self._apply_resolution(
                            c, verdict.verdict, n, e, None, None, time.time(), by="judge"
                        )
                        out["resolved"] += 1
            elif verdict is not None:
                out["unsure"] += 1
            if progress is not None:
                progress(
                    {
                        "event": "judged",
                        "done": i,
                        "total": len(pending),
                        "conflict_id": conflict.id,
                        "verdict": None if verdict is None else verdict.verdict,
                    }
                )
        return out

    # ------------------------------------------------------------ decay

    def decay(self, now: float | None = None) -> DecayResponse:
        """One decay pass: each memory moves at most one level."""
        now = time.time() if now is None else now
        cfg = self.settings.decay
        out = DecayResponse()
        moved: set[str] = set()
        with self._lock, self.backend.transaction():
            self.backend.expire_due(now)
            for level in (2, 1, 0):  # highest first, so nothing moves twice
                hours = decay.threshold_hours(level, cfg)
                candidates = self.backend.decay_candidates(now - hours * 3600, level, 100_000)
                evict: list[str] = []
                for row in candidates:
                    out.examined += 1
                    if row.id in moved:
                        continue
                    age_h = (now - row.last_referenced) / 3600
                    if age_h < hours * decay.age_factor(row.access_count, cfg):
                        continue
                    moved.add(row.id)
                    if level == 2:
                        evict.append(row.id)
                        continue
                    original = row.original_text or row.text
                    shorter = decay.summarize(original) if level == 0 else decay.keywords(original)
                    self.backend.update(
                        row.id, text=shorter, original_text=original, decay_level=level + 1
                    )
                    if level == 0:
                        out.summarized += 1
                    else:
                        out.keywords += 1
                if evict:
                    out.evicted += self._delete_chains(evict)
        return out


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
        return Memloom(settings, store, embedder, check_embedder=check_embedder)
    except Exception:
        store.close()
        raise


def _passes(row: MemoryRow, flt: SearchFilter, now: float) -> bool:
    """The recall filter, applied in Python to a row fetched outside the search."""
    return flt.matches(row, now)
