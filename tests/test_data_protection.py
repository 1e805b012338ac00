"""Private files, and forgotten text that is really gone from them."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import numpy as np

import memloom
from memloom.store.sqlite import SQLiteStore

MARKER = "quokkafjord"  # a word found nowhere else


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def files_containing(folder: Path, needle: bytes) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.is_file() and needle in p.read_bytes())


_RNG = np.random.default_rng(11)


def vec() -> list[float]:
    """A random direction in 32-d: unrelated to every other (no dedup, no conflict)."""
    return _RNG.normal(size=32).tolist()


def test_forgotten_text_leaves_no_trace_in_the_database_files(tmp_path):
    home = tmp_path / "home"
    with memloom.open(home=str(home)) as m:
        for i in range(200):  # enough rows that the keyword index has several pages
            m.store({"entries": [{"text": f"ordinary note {i} about builds", "embedding": vec()}]})
        secret = m.store(
            {
                "entries": [
                    {
                        "text": f"the {MARKER} vault opens with the blue key",
                        "embedding": vec(),
                        "tags": ["private"],
                    }
                ]
            }
        ).ids[0]
        m.update(secret, f"the {MARKER} vault opens with the red key")  # a second version
        m.backend.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        # the test can fail: before forgetting, the text is in the file
        assert files_containing(home, MARKER.encode()) == ["memloom.db"]
        assert m.forget({"tags": ["private"]}).removed == 2  # both versions
        assert m.recall({"query": MARKER}).memories == []
    assert files_containing(home, MARKER.encode()) == []
    assert files_containing(home, b"blue key") == []
    store = SQLiteStore(home / "memloom.db")
    assert store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert store.count() == 200
    store.close()


def test_database_queue_index_and_home_are_private(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMLOOM_ANN_THRESHOLD", "50")  # a small store gets its HNSW graph
    home = tmp_path / "home"
    rng = np.random.default_rng(0)
    with memloom.open(home=str(home)) as m:
        for v in rng.normal(size=(120, 8)):
            m.store({"entries": [{"text": f"note {v[0]:.6f}", "embedding": v.tolist()}]})
        m.recall({"query_embedding": rng.normal(size=8).tolist()})
        for name in ("memloom.db-wal", "memloom.db-shm"):
            assert mode(home / name) == 0o600, name
    from memloom.capture.queue import CaptureQueue

    CaptureQueue(home).close()
    assert mode(home) == 0o700
    written = {p.name for p in home.iterdir()}
    assert {"memloom.db", "memloom.db.vectors", "capture.db"} <= written
    for p in home.iterdir():
        if p.is_file():
            assert mode(p) == 0o600, p.name
    for p in (home / "memloom.db.vectors").rglob("*"):  # the vector index's files
        assert mode(p) == (0o700 if p.is_dir() else 0o600), p
    assert mode(home / "memloom.db.vectors") == 0o700
    assert os.stat(home).st_uid == os.getuid()
