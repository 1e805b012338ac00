"""The vector index's files beside a SQLite store, opened without reading them.

One folder ``<db>.vectors`` holds generations: each a sub-folder written whole under a
temporary name, renamed, and only then named by ``current.json`` (replaced atomically),
so a reader sees a complete generation or none. A generation holds

* ``graph.usearch`` -- the int8 HNSW graph, opened with usearch's ``view`` (memory-mapped);
* ``vectors.npy`` -- float16 vectors, row-aligned with ``keys.npy`` (sorted rowids);
* one ``.npy`` per filter column (status, project code, type, sensitivity, expiry),
  memory-mapped copy-on-write: the process changes them in memory, never the file.

``current.json`` records the store sequence number the generation reflects, the
dimension and the project codes. The database stays the truth: a reader replays what
changed after that sequence number, and a generation that does not match the database
(another store's, a damaged one) is ignored and rebuilt.
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
