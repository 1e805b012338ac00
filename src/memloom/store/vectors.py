"""The vector index over a store's embeddings.

Two parts, searched together:

* the *base*: rows covered by an int8 HNSW graph (usearch), with a float16 copy of
  their vectors for the exact re-score of the graph's candidates and for filters too
  selective for the graph. A SQLite store saves it as files (:mod:`.vector_files`) and
  the next process opens them memory-mapped -- opening does not read them;
* the *delta*: rows added since, float32 in memory, searched exactly. A small store is
  all delta (exact search is the answer below ``ann_threshold`` live rows); once it
  crosses the threshold its rows become the base, and the delta is folded into it
  again when it grows (or, for a saved base, when the store closes).

Filters are never approximated: the graph's candidates are checked against the same
filter columns (store/filters.py clauses read as masks), and a filter that leaves few
rows is answered exactly.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memloom.cores import idle_cores
from memloom.store import vector_files
from memloom.store.filters import Clause, SearchFilter

log = logging.getLogger(__name__)

STATUS_CODES = {"active": 0, "stale": 1, "expired": 2}
DELETED = 3
TYPE_CODES = {"fact": 0, "preference": 1, "episode": 2, "procedure": 3}
DEFAULT_ANN_THRESHOLD = 20_000
#: Graph search breadth and candidates for a write's duplicate and conflict neighbours
#: (:meth:`VectorIndex.search_many`): they sit at cosine >= 0.65, near by definition.
#: Measured at 100k with planted paraphrase clusters: breadth 16 with 10 candidates
#: already finds every neighbour above 0.65 that exact search finds; 32 and 16 keep a
#: margin at 0.1 ms a write (64 and 40 cost 0.2 ms).
WRITE_EXPANSION = 32
WRITE_CANDIDATES = 16
#: A batch's graph search is split over the idle cores once it holds this many queries
#: (the graph walk is most of a write into a large store: 0.5-1 ms a query at 1M on one
#: core); fewer are not worth starting threads for. Beside busy processes it stays on
#: one thread: a split search waits for its slowest, descheduled, thread.
THREADED_BATCH = 64
#: The delta is folded into the base when it reaches this many rows, or a fiftieth of
#: the base; a saved base is rewritten on close after this many changes.
MERGE_MIN = 2_000
SAMPLE = 8  # saved rows compared with the database when the files are opened
#: Blocks of :meth:`Rows.top_many`: at most 256 x 16,384 similarities (16 MB) at a time.
QUERY_BLOCK = 256
ROW_BLOCK = 16_384


#: Links per node of a graph memloom builds. Measured on bench/recall.py's clustered
#: vectors (int8 graph, 40 candidates re-scored, top-10 overlap with exact search):
#: at 100k, M 48 finds 0.982 at breadth 40 (0.25 ms a query) where M 32 needs 128 for
#: 0.986 (0.61 ms); at 1M, 0.981 at 192 (2.2 ms) where M 32 needs about 300 (2.6 ms).
#: It costs about 15 % more time to build the graph and 128 bytes a vector more links;
#: a 0 -> 100k fill through ``Memloom.store`` ran about a quarter slower (docs/benchmarks.md).
CONNECTIVITY = 48


def expansion_for(n: int, connectivity: int = CONNECTIVITY) -> int:
    """HNSW search breadth for a graph of ``n`` vectors with ``connectivity`` links a node
    (a graph saved by an older memloom has 32), chosen for top-10 overlap >= 0.98.

    M 48 (see :data:`CONNECTIVITY`): 0.987 at 100k with 64, 0.988 at 1M with 256.
    M 32 (bench/scale.py): 0.990 at 100k with 128, 0.987 at 1M with 384.
    """
    if connectivity >= CONNECTIVITY:
        if n < 200_000:
            return 64
        if n < 500_000:
            return 128
        if n < 3_000_000:
            return 256
        return 384
    if n < 300_000:
        return 128
    if n < 3_000_000:
        return 384
    return 512


#: The rowids a search's tag clauses read: those carrying any of its ``tags`` (None:
#: no such clause), and those carrying any of its ``exclude_tags`` (None: none).
TagRows = tuple[np.ndarray | None, np.ndarray | None]


def _narrows(flt: SearchFilter) -> bool:
    """Whether ``flt`` may leave few rows through the columns the index holds (project,
    type, sensitivity): such a filter is answered exactly when it does."""
    return flt.project_mode != "any" or flt.types is not None or flt.max_sensitivity is not None


#: Breadth of the search that checks a batch of new graph nodes can be found.
REACH_EXPANSION = 32


def add_reachable(ann: Any, keys: np.ndarray, vecs: np.ndarray) -> None:
    """Add ``vecs`` to the usearch graph on all cores, then re-add one at a time the few
    it cannot find again.

    usearch's concurrent ``add`` can leave a node stored but with no way in
    (unum-cloud/USearch#735): a memory no vector search ever returns, however wide.
    Measured with clustered data, about 1 node in 1,500 per build; a single-threaded
    build has none but takes twice as long on two cores. Each new node is searched for
    by its own vector (a narrow search: a node it misses is merely re-added), and the
    ones not found are removed and added again on one thread -- at 100k x 384 the check
    and repair cost about a quarter of the build.
    """
    ann.add(keys, vecs)
    breadth = ann.expansion_search
    ann.expansion_search = REACH_EXPANSION
    try:
        found = np.asarray(ann.search(vecs, 1).keys, dtype=np.int64).reshape(len(keys))
    finally:
        ann.expansion_search = breadth
    lost = found != keys
    if lost.any():
        ann.remove(keys[lost])
        ann.add(keys[lost], vecs[lost], threads=1)


@dataclass
class RowMeta:
    status: str
    project: str | None
    type: str
    sensitivity: int
    expires_at: float | None


class Rows:
    """Row-aligned arrays: rowids, filter columns and vectors of one part of the index.

    ``sorted_keys``: rows are found by binary search over ``keys`` (the base, which can
    be memory-mapped); otherwise by a dict (the delta)."""

    def __init__(
        self,
        dim: int,
        dtype: type = np.float32,
        arrays: dict[str, np.ndarray] | None = None,
        vecs: np.ndarray | None = None,
        sorted_keys: bool = False,
    ) -> None:
        self.dim = dim
        if arrays is None:
            arrays = {
                "keys": np.zeros(0, dtype=np.int64),
                "status": np.zeros(0, dtype=np.int8),
                "project": np.zeros(0, dtype=np.int32),
                "type": np.zeros(0, dtype=np.int8),
                "sens": np.zeros(0, dtype=np.int8),
                "expires": np.zeros(0, dtype=np.float64),
            }
            vecs = np.zeros((0, dim), dtype=dtype)
        assert vecs is not None
        self.keys = arrays["keys"]
        self.status = arrays["status"]
        self.project = arrays["project"]
        self.type = arrays["type"]
        self.sens = arrays["sens"]
        self.expires = arrays["expires"]
        self.vecs = vecs
        self.n = len(self.keys)
        self._cap = self.n
        self.deleted = int(np.count_nonzero(self.status == DELETED)) if self.n else 0
        self.pos: dict[int, int] | None = (
            None if sorted_keys else {int(k): i for i, k in enumerate(self.keys.tolist())}
        )

    @property
    def live(self) -> int:
        return self.n - self.deleted

    def arrays(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name)[: self.n] for name in vector_files.COLUMNS}

    def _grow(self, need: int) -> None:
        if need <= self._cap:
            return
        cap = max(need, self._cap * 2, 1024)

        def grow(arr: np.ndarray, fill: float | None = 0) -> np.ndarray:
            # Vectors are left unfilled: pages never written are never resident.
            shape = (cap, *arr.shape[1:])
            out = np.empty(shape, arr.dtype) if fill is None else np.full(shape, fill, arr.dtype)
            out[: self.n] = arr[: self.n]
            return out

        self.keys = grow(self.keys)
        self.vecs = grow(self.vecs, None)
        self.status = grow(self.status, DELETED)
        self.project = grow(self.project)
        self.type = grow(self.type)
        self.sens = grow(self.sens)
        self.expires = grow(self.expires, math.inf)
        self._cap = cap

    def append(self, keys: np.ndarray, vecs: np.ndarray, cols: dict[str, np.ndarray]) -> None:
        count = len(keys)
        if count == 0:
            return
        self._grow(self.n + count)
        start, end = self.n, self.n + count
        in_order = self.pos is not None or start == 0 or int(keys[0]) > int(self.keys[start - 1])
        self.keys[start:end] = keys
        self.vecs[start:end] = vecs
        for name in ("status", "project", "type", "sens", "expires"):
            getattr(self, name)[start:end] = cols[name]
        self.deleted += int(np.count_nonzero(cols["status"] == DELETED))
        self.n = end
        if self.pos is not None:
            for i, rowid in enumerate(keys.tolist()):
                self.pos[rowid] = start + i
        elif not (in_order and np.all(np.diff(keys) > 0)):
            self._sort()

    def _sort(self) -> None:
        order = np.argsort(self.keys[: self.n], kind="stable")
        for name in (*vector_files.COLUMNS, "vecs"):
            arr = getattr(self, name)
            arr[: self.n] = arr[: self.n][order]

    def find(self, rowid: int) -> int | None:
        if self.pos is not None:
            return self.pos.get(rowid)
        p = int(np.searchsorted(self.keys[: self.n], rowid))
        return p if p < self.n and int(self.keys[p]) == rowid else None

    def find_many(self, rowids: np.ndarray) -> np.ndarray:
        """Positions of ``rowids`` (-1 where absent)."""
        if self.pos is not None:
            pos = self.pos
            return np.fromiter((pos.get(int(x), -1) for x in rowids), np.int64, len(rowids))
        if self.n == 0:
            return np.full(len(rowids), -1, dtype=np.int64)
        keys = self.keys[: self.n]
        p = np.minimum(np.searchsorted(keys, rowids), self.n - 1)
        return np.where(keys[p] == rowids, p, -1)

    def set_meta(self, p: int, meta: RowMeta, project_code: int) -> None:
        if self.status[p] == DELETED:
            self.deleted -= 1
        self.status[p] = STATUS_CODES[meta.status]
        self.project[p] = project_code
        self.type[p] = TYPE_CODES[meta.type]
        self.sens[p] = meta.sensitivity
        self.expires[p] = math.inf if meta.expires_at is None else meta.expires_at

    def drop(self, rowid: int) -> bool:
        p = self.pos.pop(rowid, None) if self.pos is not None else self.find(rowid)
        if p is None or self.status[p] == DELETED:
            return False
        self.status[p] = DELETED
        self.deleted += 1
        return True

    def live_positions(self) -> np.ndarray:
        return np.flatnonzero(self.status[: self.n] != DELETED)

    def take(self, positions: np.ndarray, dtype: type) -> Rows:
        """A new sorted part holding these rows (their vectors cast to ``dtype``)."""
        order = positions[np.argsort(self.keys[positions], kind="stable")]
        arrays = {name: np.array(getattr(self, name)[order]) for name in vector_files.COLUMNS}
        return Rows(self.dim, arrays=arrays, vecs=self.vecs[order].astype(dtype), sorted_keys=True)

    # ------------------------------------------------------------ search

    def mask(
        self,
        flt: SearchFilter,
        positions: np.ndarray | slice,
        allowed: TagRows | None,
        projects: dict[str | None, int],
    ) -> np.ndarray:
        """The rows at ``positions`` passing ``flt``: its clauses (see
        :mod:`memloom.store.filters`) read over the columns. Tags are not here:
        ``allowed`` carries the rowids the store found for them."""
        mask: np.ndarray | None = None
        for clause in flt.clauses():
            part = self._clause_mask(clause, positions, allowed, projects)
            if part is None:
                continue
            if mask is None:
                mask = part  # every part is a fresh array: safe to narrow in place
            else:
                mask &= part
        assert mask is not None  # the status clause is always there
        return mask

    def _clause_mask(
        self,
        c: Clause,
        positions: np.ndarray | slice,
        allowed: TagRows | None,
        projects: dict[str | None, int],
    ) -> np.ndarray | None:
        if c.column == "status":
            codes = [STATUS_CODES[s] for s in c.value]
            status = self.status[positions]
            return np.isin(status, codes) if len(codes) > 1 else status == codes[0]
        if c.column == "project":
            code = projects.get(c.value)
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
        # The tag clauses: answered by the store as sets of rowids.
        rows = None if allowed is None else allowed[c.kind == "no_tag"]
        if rows is None:
            return None
        found = np.isin(self.keys[positions], rows)
        return ~found if c.kind == "no_tag" else found

    def exact(self, q: np.ndarray, k: int, mask: np.ndarray) -> list[tuple[int, float]]:
        """Top-k (rowid, cosine) among the rows in ``mask``, every one scored."""
        return self.top(q, k, np.flatnonzero(mask))

    def top(self, q: np.ndarray, k: int, idx: np.ndarray) -> list[tuple[int, float]]:
        """Top-k (rowid, cosine) among the rows at positions ``idx``."""
        if idx.size == 0:
            return []
        vecs = self.vecs
        if vecs.dtype != np.float32:
            sims = self._dot16(vecs, idx, q)
        elif idx.size == self.n:
            sims = vecs[: self.n] @ q
        elif idx.size < self.n // 4:
            sims = vecs[idx] @ q
        else:
            sims = (vecs[: self.n] @ q)[idx]
        take = min(k, idx.size)
        top = np.argpartition(-sims, take - 1)[:take] if take < idx.size else np.arange(idx.size)
        top = top[np.argsort(-sims[top], kind="stable")]
        return [(int(self.keys[idx[i]]), float(sims[i])) for i in top]

    def top_many(self, qs: np.ndarray, k: int, idx: np.ndarray) -> list[list[tuple[int, float]]]:
        """:meth:`top` for each row of ``qs``: one product per block of queries and rows
        (float16 rows are converted a block at a time), for a batch of writes."""
        if idx.size == 0 or k <= 0:
            return [[] for _ in qs]
        take = min(k, idx.size)
        out: list[list[tuple[int, float]]] = []
        for qstart in range(0, len(qs), QUERY_BLOCK):
            block = qs[qstart : qstart + QUERY_BLOCK]
            best_s = np.empty((len(block), 0), dtype=np.float32)
            best_p = np.empty((len(block), 0), dtype=np.int64)
            for rstart in range(0, idx.size, ROW_BLOCK):
                part = idx[rstart : rstart + ROW_BLOCK]
                sims = block @ self.vecs[part].astype(np.float32, copy=False).T
                if sims.shape[1] > take:
                    sel = np.argpartition(-sims, take - 1, axis=1)[:, :take]
                    sims = np.take_along_axis(sims, sel, axis=1)
                    found = part[sel]
                else:
                    found = np.broadcast_to(part, sims.shape)
                best_s = np.concatenate([best_s, sims], axis=1)
                best_p = np.concatenate([best_p, found], axis=1)
                if best_s.shape[1] > take:
                    sel = np.argpartition(-best_s, take - 1, axis=1)[:, :take]
                    best_s = np.take_along_axis(best_s, sel, axis=1)
                    best_p = np.take_along_axis(best_p, sel, axis=1)
            order = np.argsort(-best_s, axis=1, kind="stable")
            best_s = np.take_along_axis(best_s, order, axis=1)
            best_k = self.keys[np.take_along_axis(best_p, order, axis=1)]
            out.extend(
                list(zip(keys, sims, strict=True))
                for keys, sims in zip(best_k.tolist(), best_s.tolist(), strict=True)
            )
        return out

    @staticmethod
    def _dot16(vecs: np.ndarray, idx: np.ndarray, q: np.ndarray, step: int = 65_536) -> np.ndarray:
        """float16 rows times q in float32, a slice at a time (bounded memory)."""
        out = np.empty(idx.size, dtype=np.float32)
        for start in range(0, idx.size, step):
            part = idx[start : start + step]
            out[start : start + step] = vecs[part].astype(np.float32) @ q
        return out


class VectorIndex:
    """A store's rows with an embedding: a graph-covered base and an exact delta."""

    def __init__(self, dim: int, ann_threshold: int | None = None) -> None:
        self.dim = dim
        env = os.environ.get("MEMLOOM_ANN_THRESHOLD")
        self.ann_threshold = (
            ann_threshold if ann_threshold is not None else int(env or DEFAULT_ANN_THRESHOLD)
        )
        self.delta = Rows(dim)
        self.base: Rows | None = None
        self._ann: Any = None  # usearch.index.Index over the base rows
        self._ann_view = False  # the graph is a read-only view of _graph_file
        self._graph_file: Path | None = None  # a file holding exactly this graph
        self._vectors_file: Path | None = None  # a file holding exactly the base's vectors
        self._projects: dict[str | None, int] = {None: 0}
        self.ann_dirty = False  # the base differs from its files (or has none)
        self._changes = 0  # base rows changed since its files were written
        #: Rows deleted whose vectors may still be in the files (erase_deleted).
        self._unerased: list[int] = []

    # ------------------------------------------------------------ updates

    def __len__(self) -> int:
        return self.delta.live + (self.base.live if self.base is not None else 0)

    def __contains__(self, rowid: int) -> bool:
        return self._locate(rowid) is not None

    def _locate(self, rowid: int) -> tuple[Rows, int] | None:
        p = self.delta.find(rowid)
        if p is not None:
            return self.delta, p
        if self.base is not None:
            p = self.base.find(rowid)
            if p is not None and self.base.status[p] != DELETED:
                return self.base, p
        return None

    def _project_code(self, project: str | None) -> int:
        code = self._projects.get(project)
        if code is None:
            code = len(self._projects)
            self._projects[project] = code
        return code

    def _columns(self, metas: list[RowMeta]) -> dict[str, np.ndarray]:
        return {
            "status": np.array([STATUS_CODES[m.status] for m in metas], dtype=np.int8),
            "project": np.array([self._project_code(m.project) for m in metas], dtype=np.int32),
            "type": np.array([TYPE_CODES[m.type] for m in metas], dtype=np.int8),
            "sens": np.array([m.sensitivity for m in metas], dtype=np.int8),
            "expires": np.array(
                [math.inf if m.expires_at is None else m.expires_at for m in metas],
                dtype=np.float64,
            ),
        }

    def upsert(self, rowid: int, vector: np.ndarray | None, meta: RowMeta) -> None:
        """Add a row or refresh its filter columns (embeddings never change)."""
        found = self._locate(rowid)
        if found is not None:
            part, p = found
            part.set_meta(p, meta, self._project_code(meta.project))
            if part is self.base:
                self._changes += 1
            return
        if vector is None:
            return
        self.bulk_load(np.array([rowid], dtype=np.int64), np.asarray(vector)[None, :], [meta])

    def bulk_load(self, rowids: np.ndarray, vectors: np.ndarray, metas: list[RowMeta]) -> None:
        """Add many new rows at once (a store opened without saved vector files)."""
        self.delta.append(
            np.asarray(rowids, dtype=np.int64),
            np.asarray(vectors, dtype=np.float32),
            self._columns(metas),
        )

    def remove(self, rowid: int) -> None:
        # Noted wherever the row was: another process may have written it into files
        # this one has in its delta (a newer generation it has not opened).
        self._unerased.append(rowid)
        if self.delta.drop(rowid):
            return
        if self.base is not None and self.base.drop(rowid):
            self._changes += 1

    def erase_deleted(self, path: Path) -> int:
        """Zero, in place in the vector files in folder ``path``, the vectors of the rows
        deleted since the last call (see :func:`.vector_files.erase`); how many rows
        were zeroed."""
        rowids, self._unerased = self._unerased, []
        try:
            return vector_files.erase(path, np.asarray(rowids, dtype=np.int64))
        except BaseException:
            self._unerased = rowids + self._unerased  # still owed
            raise

    @property
    def generation(self) -> Path | None:
        """The generation folder the base was opened from, if it still is that one."""
        return None if self._graph_file is None else self._graph_file.parent

    def vector(self, rowid: int) -> np.ndarray | None:
        """A row's float32 vector if held in memory (the delta's); None otherwise."""
        p = self.delta.find(rowid)
        return None if p is None else self.delta.vecs[p]

    # ------------------------------------------------------------ search

    def search(
        self,
        query: np.ndarray,
        k: int,
        flt: SearchFilter,
        allowed: TagRows | None = None,
    ) -> list[tuple[int, float]]:
        """Top-k (rowid, cosine) among rows passing ``flt``; its tag clauses are read
        from ``allowed``: the rowids carrying its ``tags``, and those carrying its
        ``exclude_tags`` (:data:`TagRows`)."""
        if k <= 0 or len(self) == 0:
            return []
        q = np.asarray(query, dtype=np.float32)
        self._fold_if_due()
        hits: list[tuple[int, float]] = []
        if self.base is not None and self.base.live:
            hits = self._search_base(self.base, q, k, flt, allowed)
        if self.delta.live:
            mask = self.delta.mask(flt, slice(0, self.delta.n), allowed, self._projects)
            more = self.delta.exact(q, k, mask)
            hits = sorted(hits + more, key=lambda h: -h[1])[:k] if hits else more
        return hits

    def _fold_if_due(self) -> None:
        """Build the graph once the store crosses the threshold; fold a grown delta in."""
        if self.base is None:
            if len(self) >= self.ann_threshold:
                self.build_ann()
        elif self.delta.live >= max(MERGE_MIN, self.base.n // 50):
            self.build_ann()

    def _search_base(
        self,
        base: Rows,
        q: np.ndarray,
        k: int,
        flt: SearchFilter,
        allowed: TagRows | None,
    ) -> list[tuple[int, float]]:
        mask = None
        if allowed is None or allowed[0] is None:
            if _narrows(flt):
                # A filter that leaves few rows is answered exactly: cheap, and never
                # at the mercy of how many of the graph's candidates pass it.
                mask = base.mask(flt, slice(0, base.n), allowed, self._projects)
            if mask is None or int(mask.sum()) > self.ann_threshold:
                hits = self._ann_search(base, q, k, flt, allowed)
                if hits is not None:
                    return hits
        if mask is None:
            mask = base.mask(flt, slice(0, base.n), allowed, self._projects)
        return base.exact(q, k, mask)

    def _ann_search(
        self, base: Rows, q: np.ndarray, k: int, flt: SearchFilter, allowed: TagRows | None = None
    ) -> list[tuple[int, float]] | None:
        """Graph candidates re-checked against the filter and re-scored from the float16
        vectors; None means use exact search."""
        assert self._ann is not None
        # A restored graph comes back with the library's default breadth; set ours.
        breadth = expansion_for(base.live, self._ann.connectivity)
        if self._ann.expansion_search != breadth:
            self._ann.expansion_search = breadth
        # Twice k candidates (at least 40) re-scored: recall asks for a pool of 20 for
        # its top 10, and 80 candidates would widen the search past the breadth chosen.
        want = max(k * 2, 40)
        size = len(self._ann)
        for _ in range(3):
            want = min(want, size)
            # One query on the calling thread: a pool would wait for a descheduled worker.
            found = self._ann.search(q, want, threads=1)
            keys = np.asarray(found.keys, dtype=np.int64)
            if keys.size == 0:
                return []
            positions = base.find_many(keys)
            positions = positions[positions >= 0]
            mask = base.mask(flt, positions, allowed, self._projects)
            if mask.sum() >= k or want >= size:
                return base.top(q, k, positions[mask])
            # A selective filter: widen once or twice, then fall back to exact.
            if mask.mean() < 0.05:
                return None
            want *= 8
        return None

    # ------------------------------------------------------------ the graph

    def build_ann(self, graph: Any = None) -> None:
        """Fold every delta row into the base and its graph (made here if there is none).

        ``graph``: an existing usearch index to adopt for the base (a graph saved by an
        older memloom): rows it lacks are added, rows it has that are gone are removed.
        """
        from usearch.index import Index

        live = self.delta.live_positions()
        if self.base is None:
            ann = graph
            if ann is None:
                # int8 graph, dense links (see CONNECTIVITY): faster at the same overlap
                # than f16 or f32 graphs once the candidates are re-scored.
                ann = Index(
                    ndim=self.dim,
                    metric="ip",
                    dtype="i8",
                    connectivity=CONNECTIVITY,
                    expansion_add=128,
                    expansion_search=expansion_for(int(live.size)),
                )
            else:
                stale = np.setdiff1d(np.asarray(ann.keys, dtype=np.int64), self.delta.keys[live])
                if stale.size:
                    ann.remove(stale)
            self.base = self.delta.take(live, np.float16)
        else:
            ann = self._graph_without_deleted()
            base = self.base
            new = self.delta.take(live, np.float16)
            if base.deleted and np.isin(new.keys, base.keys[: base.n]).any():
                # A reused rowid: drop the deleted rows so every key is found once.
                base = base.take(base.live_positions(), np.float16)
            base.append(new.keys, new.vecs, new.arrays())
            self.base = base
        keys = self.delta.keys[live]
        if keys.size:
            present = np.asarray(ann.contains(keys), dtype=bool)
            if not present.all():
                add_reachable(ann, keys[~present], self.delta.vecs[live][~present])
        self._ann = ann
        self._ann_view = False
        self._graph_file = self._vectors_file = None
        self.delta = Rows(self.dim)
        self.ann_dirty = True

    def adopt_graph(self, path: Path) -> None:
        """Make a saved usearch graph file (an older memloom's) this index's graph."""
        graph = vector_files.read_graph(path, self.dim)
        if graph is not None:
            self.build_ann(graph)

    def _graph_without_deleted(self) -> Any:
        """The graph, mutable, with the deleted base rows removed from it."""
        ann = self._mutable_graph()
        base = self.base
        assert base is not None
        gone = base.keys[: base.n][base.status[: base.n] == DELETED]
        if gone.size:
            gone = gone[np.asarray(ann.contains(gone), dtype=bool)]
            if gone.size:
                ann.remove(gone)
        return ann

    def _mutable_graph(self) -> Any:
        """The graph, loaded into memory if it is a read-only view of a file."""
        if self._ann_view:
            from usearch.index import Index

            # Copied from the view, not re-read from its file: another process may have
            # written newer files and removed this generation since it was opened.
            self._ann = Index.restore(self._ann.save())
            self._ann_view = False
        return self._ann

    # ------------------------------------------------------------ files

    @property
    def ann_saved(self) -> bool:
        """Whether the graph is the one in the vector files (opened or written)."""
        return self._graph_file is not None

    def save_ann(self, path: Path, seq: int) -> None:
        """Write the base as files in folder ``path`` if it changed (see
        :mod:`.vector_files`); a delta is folded in first when it is worth it."""
        if self.base is None:
            return
        if self.delta.live and (self.ann_dirty or self.delta.live >= MERGE_MIN):
            self.build_ann()
        if not self.ann_dirty and self._changes < MERGE_MIN:
            return
        projects = sorted(self._projects, key=self._projects.__getitem__)
        self._graph_file, self._vectors_file = vector_files.write(
            path,
            seq=seq,
            dim=self.dim,
            projects=projects,
            graph=self._ann,
            graph_file=self._graph_file,
            vectors=self.base.vecs[: self.base.n],
            vectors_file=self._vectors_file,
            columns=self.base.arrays(),
        )
        self.ann_dirty = False
        self._changes = 0

    def load_ann(self, path: Path) -> int | None:
        """Open the files in folder ``path`` as the base (memory-mapped, nothing read);
        returns the store sequence number they reflect, or None. The caller replays the
        changes after it and checks :meth:`matches` against the database."""
        snap = vector_files.read(path, self.dim)
        if snap is None:
            return None
        self.base = Rows(self.dim, arrays=snap.columns, vecs=snap.vectors, sorted_keys=True)
        self._projects = {p: i for i, p in enumerate(snap.projects)}
        self._ann = snap.graph
        self._ann_view = True
        self._graph_file, self._vectors_file = snap.graph_file, snap.vectors_file
        self.ann_dirty = False
        self._changes = 0
        return snap.seq

    def sample(self) -> list[int]:
        """A few base rowids spread over the base, for :meth:`matches`."""
        if self.base is None or self.base.n == 0:
            return []
        picks = np.linspace(0, self.base.n - 1, min(SAMPLE, self.base.n)).astype(np.int64)
        return sorted({int(self.base.keys[p]) for p in picks})

    def matches(self, fetch: Callable[[list[int]], dict[int, np.ndarray]]) -> bool:
        """Whether the opened files belong to this database: the sampled rows' vectors,
        as ``fetch`` reads them from it, equal the saved float16 copies."""
        keys = self.sample()
        if not keys or self.base is None:
            return False
        found = fetch(keys)
        compared = 0
        for rowid in keys:
            p = self.base.find(rowid)
            assert p is not None
            if self.base.status[p] == DELETED:
                continue  # deleted since (the caller replayed the tombstones)
            vec = found.get(rowid)
            saved = self.base.vecs[p].astype(np.float32)
            if vec is None or vec.shape != saved.shape:
                return False
            if not np.allclose(saved, vec, rtol=2e-3, atol=1e-4):
                return False
            compared += 1
        return compared > 0

    def search_many(
        self, queries: np.ndarray, k: int, flt: SearchFilter, min_similarity: float = -1.0
    ) -> list[list[tuple[int, float]]]:
        """:meth:`search` for each row of ``queries`` (no tag filter) without the hits
        below ``min_similarity``, for a batch of writes. The delta answers with one
        matrix product per block of queries; the base with one graph call at
        ``WRITE_EXPANSION`` (a duplicate or conflict is near), its candidates re-checked
        and re-scored as :meth:`search` does. A query whose graph candidates the filter
        thins out, or a filter that leaves few base rows, is answered as by :meth:`search`."""
        qs = np.asarray(queries, dtype=np.float32)
        if k <= 0 or len(self) == 0:
            return [[] for _ in qs]
        self._fold_if_due()
        found: list[list[tuple[int, float]]] = [[] for _ in qs]
        if self.base is not None and self.base.live:
            found = self._base_many(self.base, qs, k, flt)
        if self.delta.live:
            delta = self.delta
            idx = np.flatnonzero(delta.mask(flt, slice(0, delta.n), None, self._projects))
            for j, more in enumerate(delta.top_many(qs, k, idx)):
                if more:
                    found[j] = sorted(found[j] + more, key=lambda h: -h[1])[:k]
        return [[h for h in hits if h[1] >= min_similarity] for hits in found]

    def _base_many(
        self, base: Rows, qs: np.ndarray, k: int, flt: SearchFilter
    ) -> list[list[tuple[int, float]]]:
        if _narrows(flt):
            mask = base.mask(flt, slice(0, base.n), None, self._projects)
            if int(mask.sum()) <= self.ann_threshold:  # as _search_base: answered exactly
                return base.top_many(qs, k, np.flatnonzero(mask))
        assert self._ann is not None
        want = min(max(k * 3, WRITE_CANDIDATES), len(self._ann))
        breadth = self._ann.expansion_search
        self._ann.expansion_search = max(WRITE_EXPANSION, want)
        threads = idle_cores() if len(qs) >= THREADED_BATCH else 1
        try:
            result = self._ann.search(qs, want, threads=threads)
        finally:
            self._ann.expansion_search = breadth
        keys = np.asarray(result.keys, dtype=np.int64).reshape(len(qs), -1)
        out: list[list[tuple[int, float]]] = []
        # Blocks of queries whose candidates' vectors stay within QUERY_BLOCK x ROW_BLOCK floats.
        step = max(1, min(QUERY_BLOCK, QUERY_BLOCK * ROW_BLOCK // (keys.shape[1] * self.dim)))
        for start in range(0, len(qs), step):
            end = start + step
            out.extend(self._rescore_many(base, qs[start:end], keys[start:end], k, flt))
        return out

    def _rescore_many(
        self, base: Rows, qs: np.ndarray, keys: np.ndarray, k: int, flt: SearchFilter
    ) -> list[list[tuple[int, float]]]:
        """Each query's graph candidates (a row of ``keys``) checked against the filter and
        re-scored from the float16 vectors, as :meth:`_ann_search` does, for a block of
        queries at once; a query whose candidates the filter thins out below ``k`` is
        answered by :meth:`_search_base`."""
        pos = base.find_many(keys.ravel()).reshape(keys.shape)
        valid = pos >= 0
        flat = np.where(valid, pos, 0).ravel()
        ok = valid & base.mask(flt, flat, None, self._projects).reshape(keys.shape)
        rows = base.vecs[flat].astype(np.float32).reshape(*keys.shape, self.dim)
        sims = np.where(ok, np.matmul(rows, qs[:, :, None])[..., 0], -np.inf)
        take = min(k, keys.shape[1])
        top = np.argpartition(-sims, take - 1, axis=1)[:, :take]
        top = np.take_along_axis(top, np.argsort(-np.take_along_axis(sims, top, 1), 1), 1)
        counts = ok.sum(axis=1)
        need = min(k, base.live)
        out: list[list[tuple[int, float]]] = []
        for i, picked in enumerate(top):
            if counts[i] < need:  # thinned out: the one-query path
                out.append(self._search_base(base, qs[i], k, flt, None))
                continue
            picked = picked[ok[i, picked]]
            out.append(list(zip(keys[i, picked].tolist(), sims[i, picked].tolist(), strict=True)))
        return out
