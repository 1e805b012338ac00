"""Backups: export → import-backup round-trips a store exactly; online copies are consistent."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import memloom
from memloom.backup import BackupError, dump, restore
from memloom.store.base import LedgerRow, ProvenanceRow

_RNG = np.random.default_rng(5)


def vec(dim: int = 24) -> list[float]:
    return _RNG.normal(size=dim).tolist()


def fill(m: memloom.Memloom) -> None:
    """A store with every kind of state: versions, expiry, pins, TTLs, a conflict,
    provenance, a ledger entry and transcript record ids."""
    base = vec()
    ids = m.store(
        {
            "session_id": "s1",
            "entries": [
                {"text": "deploys run on Fridays", "embedding": base, "tags": ["ops"]},
                {
                    "text": "the API key lives in 1Password",
                    "embedding": vec(),
                    "metadata": {"k": [1, 2]},
                    "project": "api",
                    "sensitivity": 2,
                },
                {
                    "text": "temporary note",
                    "embedding": vec(),
                    "expires_at": "2999-01-01T00:00:00Z",
                },
                {"text": "obsolete note", "embedding": vec()},
            ],
        }
    ).ids
    b = np.array(base) / np.linalg.norm(base)
    o = np.array(vec())
    o -= o.dot(b) * b
    o /= np.linalg.norm(o)
    near = (0.75 * b + np.sqrt(1 - 0.75**2) * o).tolist()  # cosine distance 0.25: a conflict
    res = m.store(
        {
            "entries": [
                {"text": "deploys never run on Fridays during a release freeze", "embedding": near}
            ]
        }
    )
    assert len(res.conflicts) == 1, res
    m.update(ids[0], "deploys run on Thursdays")
    m.expire({"ids": [ids[3]]})
    m.pin(ids[1])
    with m.backend.transaction():
        m.backend.add_provenance(ProvenanceRow(ids[1], "s1", "/p/s1.jsonl", "api", 4, 9, "ex"))
        m.backend.ledger_put(LedgerRow("/p/s1.jsonl", "s1", "api", 99, 1.5, 99, 7, "h", "complete"))
        m.backend.records_add(["u2", "u1"], "/p/s1.jsonl")


def lines_of(m: memloom.Memloom, embeddings: bool = True) -> list[str]:
    out = io.StringIO()
    dump(m.backend, out, embeddings=embeddings)
    lines = out.getvalue().splitlines()
    header = json.loads(lines[0])
    header.pop("created_at")
    return [json.dumps(header), *lines[1:]]


def test_export_then_import_backup_round_trips_exactly(tmp_path, backend, pg_url_or_none):
    source = memloom.open(home=str(tmp_path / "a"), database_url=backend)
    fill(source)
    before = lines_of(source)
    path = tmp_path / "backup.jsonl"
    with path.open("w") as fh:
        report = dump(source.backend, fh, embeddings=True)
    assert (report.memories, report.conflicts, report.provenance) == (6, 1, 1)
    assert (report.ledger, report.records) == (1, 2)
    query = {"query_embedding": vec(), "max_results": 10, "touch": False}
    want = [r.id for r in source.recall(query).memories]
    source.close()

    target_url = pg_url_or_none(backend) or str(tmp_path / "b" / "memloom.db")
    target = memloom.open(home=str(tmp_path / "b"), database_url=target_url)
    try:
        got = restore(target.backend, path)
        assert (got.memories, got.conflicts, got.provenance, got.skipped) == (6, 1, 1, 0)
        assert lines_of(target) == before  # every field of every row, exactly
        assert [r.id for r in target.recall(query).memories] == want
        again = restore(target.backend, path)
        assert (again.memories, again.skipped) == (0, 6)
        assert lines_of(target) == before
    finally:
        target.close()


@pytest.fixture
def pg_url_or_none(request):
    """A second fresh database for the PostgreSQL run (None on SQLite)."""

    def make(backend: str) -> str | None:
        if not backend.startswith("postgresql"):
            return None
        server = request.getfixturevalue("postgres_server")
        name, url = server.create_database()
        request.addfinalizer(lambda: server.drop_database(name))
        return url

    return make


def test_truncated_corrupt_or_foreign_backups_are_refused_whole(tmp_path):
    with memloom.open(home=str(tmp_path / "a")) as m:
        fill(m)
        path = tmp_path / "b.jsonl"
        with path.open("w") as fh:
            dump(m.backend, fh, embeddings=True)
    lines = path.read_text().splitlines()
    with memloom.open(home=str(tmp_path / "fresh")) as fresh:
        cases = {
            "truncated": ("\n".join(lines[:-1]), "no end line"),
            "cut short": ("\n".join(lines[:3] + lines[-1:]), "incomplete"),
            "corrupt": ("\n".join([lines[0], "{not json", *lines[1:]]), ":2: not JSON"),
            "foreign": ('{"hello": 1}\n', "not a memloom backup"),
            "empty": ("", "is empty"),
            "future": (lines[0].replace('"version":1', '"version":9'), "version 9"),
        }
        for name, (text, message) in cases.items():
            bad = tmp_path / f"{name}.jsonl"
            bad.write_text(text + "\n")
            with pytest.raises(BackupError, match=message):
                restore(fresh.backend, bad)
            assert fresh.backend.count() == 0, name  # nothing half-restored
    with memloom.open(home=str(tmp_path / "other")) as other:
        with other.backend.transaction():
            other.backend.set_meta("embedder", "openai:text-embedding-3-small@1536")
        with pytest.raises(BackupError, match="24 dimensions, this store's have 1536"):
            restore(other.backend, path)
        with other.backend.transaction():
            other.backend.set_meta("embedder", "openai:text-embedding-3-small@24")
        bad = tmp_path / "stamped.jsonl"
        bad.write_text(path.read_text().replace('"embedder":null', '"embedder":"local:x@24"', 1))
        with pytest.raises(BackupError, match="vectors come from local:x@24"):
            restore(other.backend, bad)
        assert other.backend.count() == 0


@pytest.mark.slow
def test_a_backup_without_vectors_is_re_embedded_on_restore(tmp_path):
    with memloom.open(home=str(tmp_path / "a")) as m:
        m.save({"text": "The staging database listens on port 5433"})
        m.save({"text": "Releases are cut from main every Tuesday"})
        path = tmp_path / "b.jsonl"
        with path.open("w") as fh:
            dump(m.backend, fh, embeddings=False)
        want = m.backend.embeddings_for([d.id for d in m.export()])
    assert '"embedding"' not in path.read_text()
    with memloom.open(home=str(tmp_path / "b")) as m:
        report = restore(m.backend, path, embed=m.embed_texts, embedder=m.embedder.fingerprint)
        assert (report.memories, report.embedded) == (2, 2)
        got = m.backend.embeddings_for(list(want))
        for mid, v in want.items():
            assert np.allclose(got[mid], v, atol=1e-6)
        top = m.recall({"query": "which port is staging on?"}).memories[0]
        assert top.text.endswith("port 5433")


def run_cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memloom.cli", *args],
        env={**os.environ, "MEMLOOM_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_cli_export_and_import_backup(tmp_path):
    with memloom.open(home=str(tmp_path / "a")) as m:
        fill(m)
    out = tmp_path / "backup.jsonl"
    made = run_cli(tmp_path / "a", "export", "--embeddings", "-o", str(out))
    assert made.returncode == 0, made.stderr
    assert "exported 6 memories" in made.stderr
    assert oct(out.stat().st_mode & 0o777) == "0o600"
    again = run_cli(tmp_path / "a", "export", "-o", str(out))
    assert again.returncode == 1 and "exists" in again.stderr
    loaded = run_cli(tmp_path / "b", "import-backup", str(out), "--json")
    assert loaded.returncode == 0, loaded.stderr
    assert json.loads(loaded.stdout)["memories"] == 6
    missing = run_cli(tmp_path / "b", "import-backup", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 1 and "no backup file" in missing.stderr
    streamed = run_cli(tmp_path / "b", "export")
    assert streamed.returncode == 0 and streamed.stdout.count("\n") == 6 + 1 + 1 + 1 + 1 + 1 + 1


WRITER = """
import sys, time, numpy as np, memloom
rng = np.random.default_rng(int(sys.argv[2]))
with memloom.open(home=sys.argv[1]) as m:
    i = 0
    while True:
        v = rng.normal(size=16).tolist()
        m.store({"entries": [{"text": f"note {sys.argv[2]}-{i}", "embedding": v}]})
        i += 1
        if i % 25 == 0:
            print(i, flush=True)
"""


def test_online_backup_of_a_store_being_written_is_consistent(tmp_path):
    home = tmp_path / "home"
    with memloom.open(home=str(home)) as m:
        m.store({"entries": [{"text": "seed", "embedding": vec(16)}]})
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(home), str(seed)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for seed in (1, 2)
    ]
    try:
        for w in writers:
            assert w.stdout is not None and w.stdout.readline()  # both are writing
        counts = []
        for i in range(3):
            dest = tmp_path / f"copy{i}.db"
            res = run_cli(home, "backup", str(dest), "--json")
            assert res.returncode == 0, res.stderr
            counts.append(json.loads(res.stdout)["memories"])
            assert oct(dest.stat().st_mode & 0o777) == "0o600"
            with memloom.open(home=str(tmp_path / f"h{i}"), database_url=str(dest)) as copy:
                assert copy.backend.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
                assert copy.backend.count() == counts[-1]
                # the copy's keyword index agrees with its rows (raises if not)
                copy.backend.db.execute(
                    "INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')"
                )
                assert copy.recall({"query": "seed"}).memories[0].text == "seed"
            time.sleep(0.2)
        assert counts == sorted(counts) and counts[-1] > counts[0] > 1
    finally:
        for w in writers:
            w.kill()
            w.wait()
    exists = run_cli(home, "backup", str(tmp_path / "copy0.db"))
    assert exists.returncode == 1 and "exists" in exists.stderr
