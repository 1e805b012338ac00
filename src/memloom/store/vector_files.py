"""The vector index's files beside a SQLite store, opened without reading them.

One folder ``<db>.vectors`` holds generations: each a sub-folder written whole under a
temporary name, renamed, and only then named by ``current.json`` (replaced atomically),
so a reader sees a complete generation or none. A generation holds

* ``graph.usearch`` -- the int8 HNSW graph, opened with usearch's ``view`` (memory-mapped);
* ``vectors.npy`` -- float16 vectors, row-aligned with ``keys.npy`` (sorted rowids);
* one ``.npy`` per filter column (status, project code, type, sensitivity, expiry),
  memory-mapped copy-on-write: the process changes them in memory, never the file;
* ``erased`` -- an empty marker: no vector of a row deleted before the generation was
  written is left in its files (a generation an older memloom wrote lacks it and is
  scrubbed once, see :func:`scrub`).

``current.json`` records the store sequence number the generation reflects, the
dimension and the project codes. The database stays the truth: a reader replays what
changed after that sequence number, and a generation that does not match the database
(another store's, a damaged one) is ignored and rebuilt.

A forgotten row's vectors are erased in place (:func:`erase`): its float16 row in
``vectors.npy`` and its int8 row in the graph's vector matrix are overwritten with
zeros through a shared memory map, so every process that has the files mapped sees
the zeros and no file is rewritten. The graph keeps the node (its links still route
searches; a zero vector is far from every query) until the next generation leaves it
out. Where a key's vector lives in the graph file is read from usearch's own layout
(:func:`graph_layout`).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

CURRENT = "current.json"
GRAPH = "graph.usearch"
VECTORS = "vectors.npy"
COLUMNS = ("keys", "status", "project", "type", "sens", "expires")
ERASED = "erased"
DELETED = 3  # the status code of a deleted row (vectors.DELETED)
#: The key usearch gives a removed node's slot (its vector stays in the file).
FREE_KEY = np.uint64(2**64 - 1)
STALE_TMP_S = 3600  # a temporary generation this old was left by a killed writer


@dataclass
class Snapshot:
    seq: int
    dim: int
    projects: list[str | None]
    graph: Any  # usearch.index.Index, viewed (read-only)
    graph_file: Path
    vectors: np.ndarray  # float16, read-only memory map
    vectors_file: Path
    columns: dict[str, np.ndarray]  # copy-on-write memory maps


def _private_dir(path: Path) -> None:
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path, 0o700)


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def write(
    folder: Path,
    *,
    seq: int,
    dim: int,
    projects: list[str | None],
    graph: Any,
    graph_file: Path | None,
    vectors: np.ndarray,
    vectors_file: Path | None,
    columns: dict[str, np.ndarray],
) -> tuple[Path, Path]:
    """Write a new generation and make it current; returns its graph and vectors files.
    ``graph_file``/``vectors_file``: a file already holding exactly that graph or those
    vectors, hard-linked instead of written again."""
    _private_dir(folder)
    gen = uuid.uuid4().hex
    tmp = folder / f"{gen}.tmp"
    _private_dir(tmp)
    try:
        if graph_file is not None:
            _link_or_copy(graph_file, tmp / GRAPH)
        else:
            graph.save(str(tmp / GRAPH))
        if vectors_file is not None:
            _link_or_copy(vectors_file, tmp / VECTORS)
        else:
            np.save(tmp / VECTORS, np.ascontiguousarray(vectors, dtype=np.float16))
        for name in COLUMNS:
            np.save(tmp / f"{name}.npy", np.ascontiguousarray(columns[name]))
        # Rows deleted before this generation, and nodes usearch removed but kept the
        # vector of, are zeroed before the generation is named anywhere.
        scrub(tmp)
        for p in tmp.iterdir():
            os.chmod(p, 0o600)  # vectors say much about the text: as private as the database
        os.rename(tmp, folder / gen)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    previous = _current_gen(folder)
    meta = {"gen": gen, "seq": seq, "dim": dim, "projects": projects}
    pointer = folder / f"{CURRENT}.{gen}.tmp"
    pointer.write_text(json.dumps(meta))
    os.chmod(pointer, 0o600)
    os.replace(pointer, folder / CURRENT)
    # Processes that have the old generation open keep their mappings; new ones read this.
    if previous is not None and previous != gen:
        shutil.rmtree(folder / previous, ignore_errors=True)
    _sweep_stale(folder)
    return folder / gen / GRAPH, folder / gen / VECTORS


def _current_gen(folder: Path) -> str | None:
    try:
        gen = json.loads((folder / CURRENT).read_text()).get("gen")
    except (OSError, ValueError):
        return None
    return gen if isinstance(gen, str) else None


def _sweep_stale(folder: Path) -> None:
    """Remove what killed or racing writers left: temporary generations and pointers,
    and generations no longer current (an hour on: whoever opened one has it mapped)."""
    cutoff = time.time() - STALE_TMP_S
    current = _current_gen(folder)
    for p in folder.iterdir():
        if p.name in (CURRENT, current):
            continue
        try:
            if p.stat().st_mtime >= cutoff:
                continue
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)
        except OSError as exc:
            log.info("could not remove %s: %s", p, exc)


def read(folder: Path, dim: int) -> Snapshot | None:
    """The current generation, opened memory-mapped; None if there is none usable."""
    current = folder / CURRENT
    if not current.exists():
        return None
    try:
        meta = json.loads(current.read_text())
        if meta.get("dim") != dim:
            return None
        gen = folder / str(meta["gen"])
        from usearch.index import Index

        graph = Index.restore(str(gen / GRAPH), view=True)
        if graph is None or graph.ndim != dim:
            raise ValueError("not a usearch index of this dimension")
        vectors = np.load(gen / VECTORS, mmap_mode="r")
        columns = {name: np.load(gen / f"{name}.npy", mmap_mode="c") for name in COLUMNS}
        rows = len(columns["keys"])
        if vectors.shape != (rows, dim) or any(len(c) != rows for c in columns.values()):
            raise ValueError("columns and vectors disagree in length")
        return Snapshot(
            seq=int(meta["seq"]),
            dim=dim,
            projects=list(meta["projects"]),
            graph=graph,
            graph_file=gen / GRAPH,
            vectors=vectors,
            vectors_file=gen / VECTORS,
            columns=columns,
        )
    except Exception as exc:  # a damaged cache is rebuilt from the database, never fatal
        log.warning("ignoring unreadable vector files in %s: %s", folder, exc)
        return None


def read_graph(path: Path, dim: int) -> Any:
    """A usearch graph file loaded into memory (mutable); None if unreadable."""
    try:
        from usearch.index import Index

        graph = Index.restore(str(path))
        if graph is None or graph.ndim != dim:
            raise ValueError("not a usearch index of this dimension")
    except Exception as exc:  # a damaged cache is rebuilt from the database, never fatal
        log.warning("ignoring unreadable vector graph %s: %s", path, exc)
        return None
    return graph


def remove(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)


# ------------------------------------------------------------------ erasure in place


@dataclass
class GraphLayout:
    """Where the vectors are in a usearch file: ``rows`` x ``row_bytes`` from
    ``matrix_offset``, row ``slot`` holding the vector of ``slot_keys[slot]``."""

    matrix_offset: int
    rows: int
    row_bytes: int
    slot_keys: np.ndarray  # uint64, FREE_KEY for a removed node
    order: np.ndarray  # argsort of slot_keys, for key -> slot look-ups
    sorted_keys: np.ndarray  # slot_keys[order]

    def slots_of(self, keys: np.ndarray) -> np.ndarray:
        """The slots holding ``keys`` (those the graph has)."""
        keys = np.asarray(keys, dtype=np.uint64)
        sorted_keys = self.sorted_keys
        if not len(sorted_keys):
            return np.zeros(0, dtype=np.int64)
        p = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
        hit = sorted_keys[p] == keys
        return self.order[p[hit]]


_LAYOUTS: dict[tuple[int, int, int], GraphLayout] = {}


def graph_layout(path: Path) -> GraphLayout:
    """Read usearch's file layout (format v2, docs/format.md of usearch): a matrix of
    ``rows`` x ``cols`` bytes after two uint32 counts; then the dense index's 64-byte
    header; the graph's header (size, connectivity, base connectivity, max level, entry
    slot: five uint64); one int16 level per node; then the nodes in slot order, each an
    uint64 key, an int16 level, the base neighbour list (uint32 count + base
    connectivity uint32 slots) and one list of connectivity slots per level above.
    Cached per file (a generation's graph file is never rewritten, only zeroed).
    Raises ValueError when the file is not of that version or does not add up to that
    layout (a usearch with another format fails loudly, never zeroes the wrong bytes)."""
    st = path.stat()
    cache_key = (st.st_dev, st.st_ino, st.st_size)
    cached = _LAYOUTS.get(cache_key)
    if cached is not None:
        return cached
    mm = np.memmap(path, dtype=np.uint8, mode="r")
    if len(mm) < 8:
        raise ValueError(f"{path}: too short for a usearch index")
    rows, cols = (int(v) for v in mm[:8].view("<u4"))
    head = 8 + rows * cols
    if bytes(mm[head : head + 7]) != b"usearch" or int(mm[head + 7]) != 2:
        raise ValueError(f"{path}: no usearch v2 header after the vector matrix")
    core = head + 64
    size, connectivity, base, _, _ = (int(v) for v in mm[core : core + 40].view("<u8"))
    if size != rows:
        raise ValueError(f"{path}: {size} nodes but {rows} vectors")
    levels_at = core + 40
    levels = mm[levels_at : levels_at + 2 * size].view("<i2").astype(np.int64)
    node_bytes = 8 + 2 + (4 + 4 * base) + levels * (4 + 4 * connectivity)
    ends = levels_at + 2 * size + np.cumsum(node_bytes)
    if size and int(ends[-1]) != len(mm):
        raise ValueError(f"{path}: nodes do not end where the file does")
    starts = ends - node_bytes
    keys = mm[starts[:, None] + np.arange(8)].view("<u8").ravel().copy()
    order = np.argsort(keys, kind="stable")
    layout = GraphLayout(8, rows, cols, keys, order, keys[order])
    del mm
    if len(_LAYOUTS) >= 4:
        _LAYOUTS.clear()
    _LAYOUTS[cache_key] = layout
    return layout


def _zero_graph_slots(path: Path, layout: GraphLayout, slots: np.ndarray) -> None:
    if not slots.size:
        return
    matrix = np.memmap(
        path,
        dtype=np.uint8,
        mode="r+",
        offset=layout.matrix_offset,
        shape=(layout.rows, layout.row_bytes),
    )
    matrix[np.sort(slots)] = 0
    matrix.flush()
    del matrix


def erase(folder: Path, rowids: np.ndarray) -> int:
    """Zero the vectors of deleted ``rowids`` in place in every complete generation in
    ``folder``: the graph's int8 row first, then the float16 row, so a zero float16 row
    means the row is erased (checked first: rows erased already cost one read). Returns
    how many rows were zeroed. A generation removed meanwhile (another process wrote a
    newer one) is skipped; any other failure is raised: the caller promised erasure."""
    rowids = np.unique(np.asarray(rowids, dtype=np.int64))
    if not rowids.size or not folder.is_dir():
        return 0
    zeroed = 0
    for gen in sorted(folder.iterdir()):
        if not gen.is_dir() or gen.name.endswith(".tmp"):
            continue
        try:
            zeroed += _erase_in(gen, rowids)
        except FileNotFoundError:
            continue
    return zeroed


def _erase_in(gen: Path, rowids: np.ndarray) -> int:
    keys = np.load(gen / "keys.npy", mmap_mode="r")
    if not len(keys):
        return 0
    p = np.minimum(np.searchsorted(keys, rowids), len(keys) - 1)
    positions = p[keys[p] == rowids]
    if not positions.size:
        return 0
    vectors = np.load(gen / VECTORS, mmap_mode="r+")
    positions = positions[np.asarray(vectors[positions] != 0).any(axis=1)]
    if not positions.size:
        return 0  # erased already (by this process or another)
    graph = gen / GRAPH
    layout = graph_layout(graph)
    _zero_graph_slots(graph, layout, layout.slots_of(keys[positions]))
    vectors[positions] = 0
    vectors.flush()
    del vectors
    return int(positions.size)


def scrub(gen: Path) -> None:
    """Zero, in generation folder ``gen``, every vector no live row owns: float16 rows
    whose status is deleted, and graph slots whose key is not a live row's (usearch's
    ``remove`` frees a node's slot but leaves its vector in the file). Then mark the
    generation :data:`ERASED`. For a generation being written, and once for one an
    older memloom wrote."""
    keys = np.load(gen / "keys.npy", mmap_mode="r")
    status = np.load(gen / "status.npy", mmap_mode="r")
    dead = np.flatnonzero(np.asarray(status) == DELETED)
    graph = gen / GRAPH
    layout = graph_layout(graph)
    live = np.asarray(keys)[np.asarray(status) != DELETED].astype(np.uint64)
    _zero_graph_slots(graph, layout, np.flatnonzero(~np.isin(layout.slot_keys, live)))
    if dead.size:
        vectors = np.load(gen / VECTORS, mmap_mode="r+")
        vectors[dead] = 0
        vectors.flush()
        del vectors
    (gen / ERASED).touch(mode=0o600)


def scrubbed(gen: Path) -> bool:
    return (gen / ERASED).exists()
