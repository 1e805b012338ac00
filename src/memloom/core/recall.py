"""Recall: hybrid search (vector + keyword), Distill's score, conversation windows, a
token budget. Recall touches what it returns.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from memloom import ranking, staleness
from memloom.core.context import CoreContext
from memloom.core.documents import as_model, provenance_info, recalled_memory
from memloom.core.embedding import Embedding, normalize
from memloom.core.writes import expire_if_due
from memloom.errors import DimensionError
from memloom.models import (
    CheckedAnchor,
    MemoryDocument,
    ProvenanceInfo,
    RecalledMemory,
    RecallRequest,
    RecallResponse,
    RecallStats,
    SensitiveChunk,
    StaleMemory,
    StaleResponse,
)
from memloom.project import project_key
from memloom.store.base import MemoryRow, SearchFilter

#: similarity_of(memory_id, cosine, stems present) -> fused similarity
SimilarityOf = Callable[[str, float, frozenset[str]], float]


def recall_filter(req: RecallRequest, now: float) -> SearchFilter:
    return SearchFilter(
        statuses=frozenset({"active", "expired"} if req.include_expired else {"active"}),
        project=req.project,
        project_mode="scoped" if req.project is not None else "any",
        types=frozenset(t.value for t in req.types) if req.types else None,
        tags=frozenset(req.tags) if req.tags else None,
        exclude_tags=frozenset(req.exclude_tags) if req.exclude_tags else None,
        max_sensitivity=req.max_sensitivity,
        alive_at=None if req.include_expired else now,
    )


def mark_stale(memories: Sequence[RecalledMemory | MemoryDocument], folder: str) -> None:
    """Check the memories' anchors in ``folder``'s working tree (:mod:`memloom.staleness`):
    ``stale`` and the anchors as they are now. A folder that is not usable (relative,
    missing, not the owner's, a system folder) checks nothing."""
    real = staleness.usable_folder(folder)
    todo = [m for m in memories if m.anchors]
    if real is None or not todo:
        return
    tree = staleness.Tree(real)
    checks = tree.check_many([([a.model_dump() for a in m.anchors], m.project) for m in todo])
    for mem, check in zip(todo, checks, strict=True):
        mem.stale = check.stale
        mem.anchors = [CheckedAnchor.model_validate(a) for a in check.anchors]


#: Rows read per page by :meth:`Recall.stale`, and the most it looks at.
STALE_PAGE = 500
STALE_MAX_ROWS = 100_000


class Recall:
    def __init__(self, ctx: CoreContext, embedding: Embedding) -> None:
        self.ctx = ctx
        self.embedding = embedding

    def stale(self, folder: str, project: str | None = None) -> StaleResponse:
        """The active memories of ``project`` (default: ``folder``'s) and global ones
        whose anchors no longer hold in ``folder``'s working tree, for review. Reads
        only: nothing is expired, deleted or touched."""
        real = staleness.usable_folder(folder)
        if real is None:
            return StaleResponse(
                folder=None,
                project=project,
                note=f"{folder!r} is no folder of yours to check anchors in",
            )
        key = project if project is not None else project_key(real)
        flt = SearchFilter(
            statuses=frozenset({"active"}),
            project=key,
            project_mode="scoped" if key else "any",
            alive_at=time.time(),
        )
        rows: list[MemoryRow] = []
        cursor: str | None = None
        seen = 0
        while seen < STALE_MAX_ROWS:
            with self.ctx.lock:
                page = self.ctx.store.list(
                    flt,
                    source=None,
                    min_sensitivity=None,
                    order="created",
                    limit=STALE_PAGE,
                    cursor=cursor,
                )
            seen += len(page.rows)
            rows.extend(r for r in page.rows if r.anchors)
            cursor = page.next_cursor
            if not cursor or not page.rows:
                break
        tree = staleness.Tree(real)
        checks = tree.check_many([(r.anchors, r.project) for r in rows])
        found = [
            StaleMemory(
                id=r.id,
                text=r.text,
                type=r.type,  # type: ignore[arg-type]
                project=r.project,
                stale=c.stale,
                anchors=[CheckedAnchor.model_validate(a) for a in c.anchors],
            )
            for r, c in zip(rows, checks, strict=True)
            if c.stale
        ]
        return StaleResponse(folder=real, project=key, checked=len(rows), memories=found)

    def recall(self, request: RecallRequest | Mapping[str, Any]) -> RecallResponse:
        """``POST /v1/memory/recall``: hybrid search, Distill's score, a token budget."""
        req = as_model(RecallRequest, request)
        store = self.ctx.store
        now = time.time()
        with self.ctx.lock:
            expire_if_due(store, now)
            flt = recall_filter(req, now)
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
                qvec = normalize(req.query_embedding)
                dim = store.dimension
                if dim is not None and dim != len(qvec):
                    raise DimensionError(
                        f"query_embedding has {len(qvec)} dimensions; this store uses {dim}"
                    )
                cosine.update(store.vector_search(qvec, pool, flt))
            else:
                query = req.query or ""
                qvec = self.embedding.embed_query(query) if req.mode != "keyword" else None
                if qvec is not None:
                    cosine.update(store.vector_search(qvec, pool, flt))
                terms = ranking.query_terms(query) if req.mode != "vector" else []
                if terms:
                    df, total = store.document_frequencies([ranking.stem(t) for t in terms])
                    scorer = ranking.KeywordScorer.build(terms, df, total)
                    selective = ranking.selective_terms(terms, df, total)
                    bm25.update(store.keyword_search(selective, pool, flt))
            ids = list(dict.fromkeys([*cosine, *bm25]))
            # Checked again on the rows as read: a write committed between the searches
            # and this read (another process) must not surface a superseded version.
            rows = [r for r in store.get_many(ids) if flt.matches(r, now)]
            if qvec is not None and bm25:
                lacking = [r.id for r in rows if r.id not in cosine]
                for mid, vec in store.embeddings_for(lacking).items():
                    cosine[mid] = float(np.dot(vec, qvec))
            top_bm25 = max(bm25.values(), default=0.0)
            floor = ranking.AUTO_MIN_RELEVANCE if req.min_relevance == "auto" else req.min_relevance
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
                keyword = ranking.keyword_evidence(share, scorer.coverage_of(present))
                return ranking.fuse(cos, keyword)

            def similarity(row: MemoryRow) -> float:
                present = ranking.stem_set(row.text) if scorer is not None else frozenset()
                return similarity_of(row.id, cosine.get(row.id, 0.0), present)

            sims = {row.id: similarity(row) for row in rows}
            if scorer is not None and req.mode == "hybrid" and rows:
                rows = self.with_conversation_context(
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
                if floor and rel < floor:
                    continue
                scored.append((rel, sim, row))
            scored.sort(key=lambda item: (-item[0], -item[1], -item[2].last_referenced))
            chosen, tokens = ranking.within_budget(
                scored, lambda item: item[2].text, req.max_results, req.max_tokens
            )
            if chosen and req.touch:
                with store.transaction():
                    store.touch([item[2].id for item in chosen], now)
        provenance: dict[str, list[ProvenanceInfo]] = {}
        if chosen:
            for p in store.provenance([item[2].id for item in chosen]):
                provenance.setdefault(p.memory_id, []).append(provenance_info(p))
        memories = [
            recalled_memory(row, rel, sim, now, provenance.get(row.id, []))
            for rel, sim, row in chosen
        ]
        if req.folder is not None:
            mark_stale(memories, req.folder)
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

    def with_conversation_context(
        self,
        rows: list[MemoryRow],
        sims: dict[str, float],
        similarity: Callable[[MemoryRow], float],
        similarity_of: SimilarityOf,
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
        * then it is averaged with its best neighbour's score, that one weighing
          CONTEXT_WEIGHT (:func:`ranking.with_context`).

        The joined neighbours go through the last two steps as well, with what is
        at hand of their own neighbours.

        The average keeps a turn's score on the scale of a memory stored alone, so
        one relevance threshold (``min_relevance: "auto"``) fits both.
        """
        store = self.ctx.store
        neighbours = store.session_neighbours([r.id for r in rows])
        if not neighbours:
            return rows

        def vectors_of(of: Sequence[MemoryRow]) -> dict[str, np.ndarray]:
            """The stored embeddings of ``of``: from the rows when they carry them."""
            out = {r.id: r.embedding for r in of if r.embedding is not None}
            missing = [r.id for r in of if r.embedding is None]
            if missing:
                out.update(store.embeddings_for(missing))
            return out

        vecs: dict[str, np.ndarray] = {}
        extra_ids = {n for ns in neighbours.values() for n in ns} - sims.keys()
        extra = store.get_many(sorted(extra_ids)) if extra_ids else []
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
            neighbours.update(store.session_neighbours([r.id for r in extra]))
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
            sims[mid] = ranking.with_context(base[mid], best)
        kept = [r for r in extra if flt.matches(r, now)]
        return rows + kept
