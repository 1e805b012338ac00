"""In-memory vector index over a store's embeddings.

Exact search (one matrix-vector product) is the floor and stays the answer for
small stores and selective filters; above ``ann_threshold`` live rows an HNSW
graph (usearch) answers unfiltered or lightly filtered queries, re-checked
against the same filter columns so a filter is never approximated.
"""

from __future__ import annotations

import json
import logging
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from memloom.store.filters import Clause, SearchFilter

log = logging.getLogger(__name__)

STATUS_CODES = {"active": 0, "stale": 1, "expired": 2}
DELETED = 3
TYPE_CODES = {"fact": 0, "preference": 1, "episode": 2, "procedure": 3}
DEFAULT_ANN_THRESHOLD = 20_000
#: Graph search breadth for a write's duplicate and conflict neighbours
#: (:meth:`VectorIndex.search_many`): they sit at cosine >= 0.65, near by definition.
WRITE_EXPANSION = 64


def expansion_for(n: int) -> int:
    """HNSW search breadth for a graph of ``n`` vectors.

    Measured with bench/scale.py (int8 graph, M = 32, 40 candidates re-scored in
    float32): top-10 overlap with exact search 0.990 at 100k with 128, 0.987 at
    1M with 384 (128 gives only 0.939 there).
    """
    if n < 300_000:
        return 128
    if n < 3_000_000:
        return 384
    return 512


@dataclass
class RowMeta:
    status: str
    project: str | None
    type: str
    sensitivity: int
    expires_at: float | None


class VectorIndex:
    """Row-aligned arrays: one slot per stored row that has an embedding."""

    def __init__(self, dim: int, ann_threshold: int | None = None) -> None:
        self.dim = dim
        env = os.environ.get("MEMLOOM_ANN_THRESHOLD")
        self.ann_threshold = (
            ann_threshold if ann_threshold is not None else int(env or DEFAULT_ANN_THRESHOLD)
        )
        self.n = 0
        self._cap = 0
        self.keys = np.zeros(0, dtype=np.int64)
        self.mat = np.zeros((0, dim), dtype=np.float32)
        self.status = np.zeros(0, dtype=np.int8)
        self.project = np.zeros(0, dtype=np.int32)
        self.type = np.zeros(0, dtype=np.int8)
        self.sens = np.zeros(0, dtype=np.int8)
        self.expires = np.zeros(0, dtype=np.float64)
        self.pos: dict[int, int] = {}
        self._projects: dict[str | None, int] = {None: 0}
        self._deleted = 0
        self._ann = None  # usearch.index.Index, built lazily
        self.ann_dirty = False

    # ------------------------------------------------------------ updates

    def __len__(self) -> int:
        return self.n - self._deleted

    def _grow(self, need: int) -> None:
        if need <= self._cap:
            return
        cap = max(need, self._cap * 2, 1024)

        def grow(arr: np.ndarray, fill: float = 0) -> np.ndarray:
            shape = (cap, *arr.shape[1:])
            out = np.full(shape, fill, dtype=arr.dtype)
            out[: self.n] = arr[: self.n]
            return out

        self.keys = grow(self.keys)
        self.mat = grow(self.mat)
        self.status = grow(self.status, DELETED)
        self.project = grow(self.project)
        self.type = grow(self.type)
        self.sens = grow(self.sens)
        self.expires = grow(self.expires, math.inf)
        self._cap = cap

    def _project_code(self, project: str | None) -> int:
        code = self._projects.get(project)
        if code is None:
            code = len(self._projects)
            self._projects[project] = code
        return code

    def upsert(self, rowid: int, vector: np.ndarray | None, meta: RowMeta) -> None:
        """Add a row or refresh its filter columns (embeddings never change)."""
        p = self.pos.get(rowid)
        if p is None:
            if vector is None:
                return
            self._grow(self.n + 1)
            p = self.n
            self.n += 1
            self.pos[rowid] = p
            self.keys[p] = rowid
            self.mat[p] = vector
            if self._ann is not None:
                self._ann.add(rowid, vector)
                self.ann_dirty = True
        self.status[p] = STATUS_CODES[meta.status]
        self.project[p] = self._project_code(meta.project)
        self.type[p] = TYPE_CODES[meta.type]
        self.sens[p] = meta.sensitivity
        self.expires[p] = math.inf if meta.expires_at is None else meta.expires_at

    def bulk_load(self, rowids: np.ndarray, vectors: np.ndarray, metas: list[RowMeta]) -> None:
        """Load many new rows at once (store open)."""
        count = len(rowids)
        if count == 0:
            return
        self._grow(self.n + count)
        start = self.n
        end = start + count
        self.keys[start:end] = rowids
        self.mat[start:end] = vectors
        self.status[start:end] = [STATUS_CODES[m.status] for m in metas]
        self.project[start:end] = [self._project_code(m.project) for m in metas]
        self.type[start:end] = [TYPE_CODES[m.type] for m in metas]
        self.sens[start:end] = [m.sensitivity for m in metas]
        self.expires[start:end] = [
            math.inf if m.expires_at is None else m.expires_at for m in metas
        ]
        for i, rowid in enumerate(rowids.tolist()):
            self.pos[rowid] = start + i
        self.n = end
        if self._ann is not None:
            present = np.asarray(self._ann.contains(rowids), dtype=bool)
            if not present.all():
                self._ann.add(rowids[~present], vectors[~present])
                self.ann_dirty = True

    def remove(self, rowid: int) -> None:
        p = self.pos.pop(rowid, None)
        if p is None:
            return
        self.status[p] = DELETED
        self._deleted += 1
        if self._ann is not None:
            self._ann.remove(rowid)
            self.ann_dirty = True

    def vector(self, rowid: int) -> np.ndarray | None:
        p = self.pos.get(rowid)
        return None if p is None else self.mat[p]

    # ------------------------------------------------------------ search

    def _mask(
        self, flt: SearchFilter, positions: np.ndarray | slice, allowed: np.ndarray | None
    ) -> np.ndarray:
        """The rows at ``positions`` passing ``flt``: its clauses (see
        :mod:`memloom.store.filters`) read over the index's columns. Tags are not in
        the index: ``allowed`` carries the rowids the store found for them."""
        mask: np.ndarray | None = None
        for clause in flt.clauses():
            part = self._clause_mask(clause, positions, allowed)
            if part is None:
                continue
            if mask is None:
                mask = part  # every part is a fresh array: safe to narrow in place
            else:
                mask &= part
        assert mask is not None  # the status clause is always there
        return mask

    def _clause_mask(
        self, c: Clause, positions: np.ndarray | slice, allowed: np.ndarray | None
    ) -> np.ndarray | None:
        if c.column == "status":
            codes = [STATUS_CODES[s] for s in c.value]
            status = self.status[positions]
            return np.isin(status, codes) if len(codes) > 1 else status == codes[0]
        if c.column == "project":
            code = self._projects.get(c.value)
            proj = self.project[positions]
            if c.kind == "null_eq_or_null":
                # An unknown project matches nothing of its own; global rows still pass.
                return proj == 0 if code is None else (proj == code) | (proj == 0)
            return np.zeros(proj.shape, dtype=bool) if code is None else proj == code
        if c.column == "type":
            return np.isin(self.type[positions], [TYPE_CODES[t] for t in c.value])
        if c.column == "sensitivity":
            return self.sens[positions] <= c.value
        if c.column == "expires_at":
            return self.expires[positions] > c.value
        # any_tag: answered by the store as a set of rowids.
        return None if allowed is None else np.isin(self.keys[positions], allowed)

    def search(
        self,
        query: np.ndarray,
        k: int,
        flt: SearchFilter,
        allowed: np.ndarray | None = None,
    ) -> list[tuple[int, float]]:
        """Top-k (rowid, cosine) among rows passing ``flt`` (and ``allowed`` rowids)."""
        if self.n == 0 or k <= 0:
            return []
        q = np.asarray(query, dtype=np.float32)
        if self._ann is None and len(self) >= self.ann_threshold:
            self.build_ann()
        mask = None
        if self._ann is not None and allowed is None:
            narrowed = (
                flt.project_mode != "any"
                or flt.types is not None
                or flt.max_sensitivity is not None
            )
            if narrowed:
                # A filter that leaves few rows is answered exactly: cheap, and never
                # at the mercy of how many of the graph's candidates pass it.
                mask = self._mask(flt, slice(0, self.n), None)
            if mask is None or int(mask.sum()) > self.ann_threshold:
                hits = self._ann_search(q, k, flt)
                if hits is not None:
                    return hits
        return self._exact(q, k, flt, allowed, mask)

    def _exact(
        self,
        q: np.ndarray,
        k: int,
        flt: SearchFilter,
        allowed: np.ndarray | None,
        mask: np.ndarray | None = None,
    ) -> list[tuple[int, float]]:
        if mask is None:
            mask = self._mask(flt, slice(0, self.n), allowed)
        idx = np.flatnonzero(mask)
        if idx.size == 0:
            return []
        if idx.size == self.n:
            sims = self.mat[: self.n] @ q
        elif idx.size < self.n // 4:
            sims = self.mat[idx] @ q
        else:
            sims = (self.mat[: self.n] @ q)[idx]
        take = min(k, idx.size)
        top = np.argpartition(-sims, take - 1)[:take] if take < idx.size else np.arange(idx.size)
        top = top[np.argsort(-sims[top], kind="stable")]
        return [(int(self.keys[idx[i]]), float(sims[i])) for i in top]

    # ------------------------------------------------------------ ANN

    def build_ann(self) -> None:
        from usearch.index import Index

        live = np.flatnonzero(self.status[: self.n] != DELETED)
        # int8 graph, denser links: measured at 100k x 384 (bench/recall.py) this is
        # faster than f32 with M=16 and finds 0.99 of the exact top-10 once the
        # candidates are re-scored in float32 below.
        ann = Index(
            ndim=self.dim,
            metric="ip",
            dtype="i8",
            connectivity=32,
            expansion_add=128,
            expansion_search=expansion_for(int(live.size)),
        )
        if live.size:
            ann.add(self.keys[live], self.mat[live])
        self._ann = ann
        self.ann_dirty = True

    def _ann_search(self, q: np.ndarray, k: int, flt: SearchFilter) -> list[tuple[int, float]]:
        """HNSW candidates re-checked against the filter; None means use exact search."""
        assert self._ann is not None
        # A restored graph comes back with the library's default breadth; set ours.
        breadth = expansion_for(len(self))
        if self._ann.expansion_search != breadth:
            self._ann.expansion_search = breadth
        want = max(k * 4, 40)
        for _ in range(3):
            want = min(want, len(self))
            found = self._ann.search(q, want)
            keys = np.asarray(found.keys, dtype=np.int64)
            if keys.size == 0:
                return []
            positions = np.fromiter((self.pos.get(int(x), -1) for x in keys), dtype=np.int64)
            ok = positions >= 0
            keys, positions = keys[ok], positions[ok]
            mask = self._mask(flt, positions, None)
            if mask.sum() >= k or want >= len(self):
                sims = self.mat[positions[mask]] @ q
                order = np.argsort(-sims, kind="stable")[:k]
                return [(int(keys[mask][i]), float(sims[i])) for i in order]
            # A selective filter: widen once or twice, then fall back to exact.
            if mask.mean() < 0.05:
                return None  # type: ignore[return-value]
            want *= 8
        return None  # type: ignore[return-value]

    def save_ann(self, path: Path, seq: int) -> None:
        if self._ann is None or not self.ann_dirty:
            return
        tmp = path.with_suffix(".tmp")
        self._ann.save(str(tmp))
        os.chmod(tmp, 0o600)  # vectors say much about the text: as private as the database
        os.replace(tmp, path)
        meta = path.with_suffix(".json")
        meta.write_text(json.dumps({"seq": seq, "dim": self.dim}))
        os.chmod(meta, 0o600)
        self.ann_dirty = False

    def load_ann(self, path: Path) -> int | None:
        """Restore a saved graph; returns the store sequence it reflects, or None."""
        meta_path = path.with_suffix(".json")
        if not path.exists() or not meta_path.exists():
            return None
        try:
            from usearch.index import Index

            meta = json.loads(meta_path.read_text())
            if meta.get("dim") != self.dim:
                return None
            ann = Index.restore(str(path))
            if ann is None:
                return None
        except Exception as exc:  # a damaged cache is rebuilt, never fatal
            log.warning("ignoring unreadable vector index %s: %s", path, exc)
            return None
        self._ann = ann
        return int(meta["seq"])

    def reconcile_ann(self, deleted_rowids: list[int]) -> None:
        """After :meth:`load_ann`: add rows the saved graph lacks, drop deleted ones."""
        if self._ann is None:
            return
        for rowid in deleted_rowids:
            if self._ann.contains(rowid):
                self._ann.remove(rowid)
                self.ann_dirty = True
        live = np.flatnonzero(self.status[: self.n] != DELETED)
        if live.size:
            present = np.asarray(self._ann.contains(self.keys[live]), dtype=bool)
            missing = live[~present]
            if missing.size:
                self._ann.add(self.keys[missing], self.mat[missing])
                self.ann_dirty = True

    def search_many(
        self, queries: np.ndarray, k: int, flt: SearchFilter, min_similarity: float = -1.0
    ) -> list[list[tuple[int, float]]]:
        """:meth:`search` for each row of ``queries`` (no tag filter) without the hits
        below ``min_similarity``, for a batch of writes: the filter's mask is read
        once; exact answers come from one matrix product per block of queries, graph
        answers from one graph call at ``WRITE_EXPANSION`` (a duplicate or conflict is
        near), candidates re-checked and re-scored as :meth:`search` does. A query
        whose candidates the filter thins out is answered by :meth:`search`."""
        if self.n == 0 or k <= 0:
            return [[] for _ in queries]
        if self._ann is None and len(self) >= self.ann_threshold:
            self.build_ann()
        mask = self._mask(flt, slice(0, self.n), None)
        qs = np.asarray(queries, dtype=np.float32)
        out: list[list[tuple[int, float]]] = []
        if self._ann is not None and int(mask.sum()) > self.ann_threshold:
            want = min(max(k * 4, 40), len(self))
            breadth = self._ann.expansion_search
            self._ann.expansion_search = max(WRITE_EXPANSION, want)
            try:  # one thread, as BLAS: a busy machine must not stall a split search
                found = self._ann.search(qs, want, threads=1)
            finally:
                self._ann.expansion_search = breadth
            keys = np.asarray(found.keys, dtype=np.int64).reshape(len(qs), -1)
            pos = np.fromiter((self.pos.get(int(x), -1) for x in keys.ravel()), np.int64)
            pos = pos.reshape(keys.shape)
            ok = pos >= 0
            ok[ok] = self._mask(flt, pos[ok], None)
            for q, p_row, ok_row in zip(qs, pos, ok, strict=True):
                if ok_row.sum() < k:  # thinned out by the filter: the one-query path
                    hits = self.search(q, k, flt)
                else:
                    cand = p_row[ok_row]
                    sims = self.mat[cand] @ q
                    top = np.argsort(-sims, kind="stable")[:k]
                    hits = [(int(self.keys[cand[i]]), float(sims[i])) for i in top]
                out.append([h for h in hits if h[1] >= min_similarity])
            return out
        idx = np.flatnonzero(mask)
        if idx.size == 0:
            return [[] for _ in qs]
        rows = self.mat[idx] if idx.size < self.n else self.mat[: self.n]
        for start in range(0, len(qs), 256):  # bounds the block of similarities held
            sims = qs[start : start + 256] @ rows.T
            for row in sims:
                cand = np.flatnonzero(row >= min_similarity)
                if cand.size > k:
                    cand = cand[np.argpartition(-row[cand], k - 1)[:k]]
                cand = cand[np.argsort(-row[cand], kind="stable")]
                out.append([(int(self.keys[idx[i]]), float(row[i])) for i in cand])
        return out
