"""A forgotten memory leaves no trace under the data folder (issue 25).

Real stores big enough to have the HNSW graph and its files (the graph threshold
lowered to 100 rows); a marker text and a marker vector are planted, found in the
files first (so each test can fail), forgotten, and then every file's bytes under
the home folder are scanned for the text, the float32 vector the database holds,
its float16 copy (vectors.npy) and its int8 copy (the usearch graph's vector matrix).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import memloom
from memloom.store import vector_files

DIM = 32
ROWS = 300
MARKER = "wombatquartz"  # a word found nowhere else


@pytest.fixture(autouse=True)
def small_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMLOOM_ANN_THRESHOLD", "100")
    monkeypatch.setenv("MEMLOOM_LLM", "offline")


def unit(rng: np.random.Generator) -> list[float]:
    v = rng.normal(size=DIM)
    return (v / np.linalg.norm(v)).tolist()


def fill(home: Path, secrets: int, seed: int = 3) -> list[str]:
    """ROWS ordinary memories and ``secrets`` marker ones (tagged "secret"); closed,
    so the vector files hold the graph with them. Returns the markers' ids."""
    rng = np.random.default_rng(seed)
    with memloom.open(home=str(home)) as m:
        m.store({"entries": [{"text": f"note {i}", "embedding": unit(rng)} for i in range(ROWS)]})
        ids = m.store(
            {
                "entries": [
                    {"text": f"{MARKER} {i} opens the vault", "embedding": unit(rng),
                     "tags": ["secret"]}
                    for i in range(secrets)
                ]
            }
        ).ids  # fmt: skip
        m.recall({"query_embedding": unit(rng)})  # the graph is built (closed: saved)
    return ids


def generation(home: Path) -> Path:
    (gen,) = [p for p in (home / "memloom.db.vectors").iterdir() if p.is_dir()]
    return gen


def patterns(home: Path, ids: list[str]) -> dict[str, list[bytes]]:
    """The byte patterns a marker leaves: its text, and its vector as float32 (the
    database), float16 (vectors.npy) and int8 (the graph, as usearch quantized it)."""
    from usearch.index import Index

    with memloom.open(home=str(home)) as m:
        rows = m.backend.db.execute(
            f"SELECT rowid, text, embedding FROM memories WHERE id IN ({','.join('?' * len(ids))})",
            ids,
        ).fetchall()
    graph = Index.restore(str(generation(home) / "graph.usearch"), view=True)
    out: dict[str, list[bytes]] = {"text": [], "float32": [], "float16": [], "int8": []}
    for rowid, text, blob in rows:
        vec = np.frombuffer(blob, dtype=np.float32)
        out["text"].append(text.encode())
        out["float32"].append(blob)
        out["float16"].append(vec.astype(np.float16).tobytes())
        out["int8"].append(graph.get(rowid, dtype=np.int8).tobytes())
    del graph
    return out


def traces(home: Path, found: dict[str, list[bytes]]) -> dict[str, list[str]]:
    """Which files under ``home`` (recursively: database, WAL, shm, vector files,
    graph) hold any of the patterns, per kind."""
    files = {str(p.relative_to(home)): p.read_bytes() for p in home.rglob("*") if p.is_file()}
    return {
        kind: sorted(name for name, data in files.items() if any(n in data for n in needles))
        for kind, needles in found.items()
    }


def assert_planted(home: Path, found: dict[str, list[bytes]]) -> None:
    where = traces(home, found)
    assert where["text"] and where["float32"], where  # the database (or its WAL)
    gen = generation(home).name
    assert where["float16"] == [f"memloom.db.vectors/{gen}/vectors.npy"], where
    assert where["int8"] == [f"memloom.db.vectors/{gen}/graph.usearch"], where


def assert_gone(home: Path, found: dict[str, list[bytes]]) -> None:
    assert traces(home, found) == {"text": [], "float32": [], "float16": [], "int8": []}


def test_a_single_forget_leaves_no_trace_in_any_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (secret,) = fill(home, 1)
    found = patterns(home, [secret])
    assert_planted(home, found)
    with memloom.open(home=str(home)) as m:
        assert m.forget({"ids": [secret]}).removed == 1
        assert_gone(home, found)  # at once, with the store still open
        assert m.recall({"query": MARKER}).memories == []
        assert m.stats().total_memories == ROWS
    assert_gone(home, found)  # and after the close wrote whatever it writes
    with memloom.open(home=str(home)) as m:
        assert m.backend.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert len(m.recall({"query": "note 7", "max_results": 3}).memories) == 3


def test_a_forget_by_tag_leaves_no_trace_of_any_of_its_memories(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ids = fill(home, 25)
    found = patterns(home, ids)
    assert len(found["int8"]) == 25
    assert_planted(home, found)
    with memloom.open(home=str(home)) as m:
        assert m.forget({"tags": ["secret"]}).removed == 25
        assert_gone(home, found)
    assert_gone(home, found)


KILLED = """
    import os, sys
    import memloom
    from memloom.store.sqlite import SQLiteStore

    def killed(self):  # the process dies after the delete committed, before the purge
        os._exit(9)

    SQLiteStore.purge = killed
    with memloom.open(home=sys.argv[1]) as m:
        m.forget({"ids": [sys.argv[2]]})
"""


def test_a_process_killed_between_the_delete_and_the_erasure_leaves_no_trace_on_reopen(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    (secret,) = fill(home, 1)
    found = patterns(home, [secret])
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(KILLED), str(home), secret],
        env=os.environ.copy(),
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 9, done.stderr.decode()
    where = traces(home, found)
    assert where["float16"] and where["int8"]  # the kill came before the erasure
    with memloom.open(home=str(home)) as m:  # the open finishes the purge
        assert m.stats().total_memories == ROWS
        assert m.backend.get_meta("purge_pending") is None
        assert_gone(home, found)
    assert_gone(home, found)


def test_a_generation_an_older_memloom_wrote_is_scrubbed_once_on_open(tmp_path: Path) -> None:
    """Older memloom removed a forgotten row's node from the graph and saved it: usearch
    keeps a removed node's vector in the file. The first open zeroes such slots."""
    from usearch.index import Index

    home = tmp_path / "home"
    (secret,) = fill(home, 1)
    found = patterns(home, [secret])
    gen = generation(home)
    with memloom.open(home=str(home)) as m:
        (rowid,) = m.backend.db.execute(
            "SELECT rowid FROM memories WHERE id = ?", (secret,)
        ).fetchone()
    graph = Index.restore(str(gen / "graph.usearch"))
    graph.remove(rowid)
    graph.save(str(gen / "old.usearch"))  # as the old purge saved it (a new file)
    os.replace(gen / "old.usearch", gen / "graph.usearch")
    (gen / vector_files.ERASED).unlink()
    assert found["int8"][0] in (gen / "graph.usearch").read_bytes()
    with memloom.open(home=str(home)):
        pass
    assert found["int8"][0] not in (gen / "graph.usearch").read_bytes()
    assert vector_files.scrubbed(gen)
