"""``/v1/memories/{id}/context`` (``Activity.memory_context``) never serves more than
the ledger read, from a file that is still in the agent's folder -- or, imported by
its owner with ``--path``, in the folder they named --, capped in bytes.

Attacks tried: lines appended after the import, a provenance row no import wrote
(a backup restored), a session file swapped for a symlink to a secret outside the
folder, neighbours far larger than a page; for a file the owner named: the same
swaps, another user's file in its place, a path a hook or an HTTP client named, and
a backup (edited or not) restored into another store."""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path

import pytest

import memloom
from memloom.core.activity import CONTEXT_ROW_BYTES
from memloom.store.base import ProvenanceRow

pytestmark = pytest.mark.security

CWD = "/home/dev/acme"


def record(role: str, text: str) -> str:
    return json.dumps(
        {
            "type": role,
            "uuid": str(uuid.uuid4()),
            "sessionId": "s1",
            "cwd": CWD,
            "timestamp": "2026-01-02T03:04:05Z",
            "message": {"role": role, "content": text},
        }
    )


def write(path: Path, turns: list[tuple[str, str]], mode: str = "w") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open(mode, encoding="utf-8") as fh:
        for role, text in turns:
            fh.write(record(role, text) + "\n")
    then = time.time() - 3600
    os.utime(path, (then, then))


@pytest.fixture
def claude(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(folder))
    return folder


@pytest.fixture
def m(tmp_path):
    engine = memloom.open(home=str(tmp_path / "home"))
    yield engine
    engine.close()


def imported(
    m, claude: Path, turns: list[tuple[str, str]], word: str = "staging"
) -> tuple[Path, str]:
    path = claude / "projects" / "-home-dev-acme" / f"{uuid.uuid4()}.jsonl"
    write(path, turns)
    report = m.import_sessions([path])
    assert report.saved >= 1, report.model_dump()
    memory = next(r for r in m.list({"limit": 10}).memories if word in r.text)
    return path, memory.id


TURNS = [
    ("user", "hello"),
    ("assistant", "Hi."),
    ("user", "REMEMBER: staging listens on port 5433"),
    ("assistant", "Noted."),
]


def test_lines_appended_after_the_import_are_not_served(m, claude):
    path, mid = imported(m, claude, TURNS)
    write(path, [("user", "appended after the import: password hunter2")], mode="a")
    (entry,) = m.memory_context(mid, around=50)["provenance"]
    assert entry["withheld"] is None and entry["lines"], entry
    assert max(line["end_line"] for line in entry["lines"]) <= len(TURNS)
    assert not any("appended" in line["text"] for line in entry["lines"])


def test_a_provenance_row_no_import_wrote_serves_nothing(m, claude):
    secret = claude / "projects" / "-home-dev-acme" / f"{uuid.uuid4()}.jsonl"
    write(secret, [("user", "machine h login u password hunter2")])
    saved = m.save({"text": "deploys go through ArgoCD", "project": CWD})
    m.add_provenance(
        ProvenanceRow(
            memory_id=saved.id,
            session_id="s1",
            path=str(secret),
            project=CWD,
            start_line=1,
            end_line=1,
            excerpt=None,
            agent="claude-code",
        )
    )
    (entry,) = m.memory_context(saved.id, around=50)["provenance"]
    assert entry["exists"] and entry["lines"] == [] and entry["withheld"] == "not_imported"


def test_a_session_swapped_for_a_symlink_out_of_the_folder_serves_nothing(m, claude, tmp_path):
    path, mid = imported(m, claude, TURNS)
    netrc = tmp_path / "dotfiles" / "netrc.jsonl"
    write(netrc, [("user", "machine h login u password hunter2")] * len(TURNS))
    path.unlink()
    path.symlink_to(netrc)
    (entry,) = m.memory_context(mid, around=50)["provenance"]
    assert entry["lines"] == [] and entry["withheld"] == "outside", entry
    path.unlink()
    write(path, TURNS)
    os.chmod(path, 0o666)  # rewritten by someone else: every user can write it
    (entry,) = m.memory_context(mid, around=50)["provenance"]
    assert entry["lines"] == [] and entry["withheld"] == "world_writable", entry


def test_neighbours_are_capped_in_bytes(m, claude):
    big = "x" * (CONTEXT_ROW_BYTES // 2)
    turns = [("user", big), ("assistant", big), *TURNS, ("assistant", big), ("user", big)]
    _path, mid = imported(m, claude, turns)
    (entry,) = m.memory_context(mid, around=50)["provenance"]
    served = sum(len(line["text"].encode()) for line in entry["lines"])
    assert entry["truncated"] is True and served <= CONTEXT_ROW_BYTES, served
    other = [*TURNS[:2], ("user", "REMEMBER: invoices are archived in bucket ledger-seven")]
    _small_path, small = imported(m, claude, [*other, TURNS[3]], "invoices")
    (whole,) = m.memory_context(small, around=50)["provenance"]
    assert whole["truncated"] is False and len(whole["lines"]) == len(TURNS)


# ---------------------------------------------------------------- named with --path

#: A neighbour line that holds a credential: served redacted.
SECRET_TURN = ("assistant", "Run: sshpass -p Hunter2Secret ssh deploy@staging")


def named(m, folder: Path, owner_chose: bool = True) -> tuple[Path, str]:
    """A session outside every agent's folder, imported as ``import sessions --path
    FOLDER`` does (``owner_chose``), or as a hook or an HTTP client names a path."""
    path = folder / f"{uuid.uuid4()}.jsonl"
    write(path, [*TURNS, SECRET_TURN])
    report = m.import_sessions([folder], named=owner_chose)
    assert report.saved >= 1, report.model_dump()
    memory = next(r for r in m.list({"limit": 10}).memories if "staging" in r.text)
    return path, memory.id


def test_a_session_the_owner_named_with_path_serves_its_lines_redacted(m, claude, tmp_path):
    path, mid = named(m, tmp_path / "examples")
    (entry,) = m.memory_context(mid, around=50)["provenance"]
    assert entry["path"] == str(path.resolve()) and entry["withheld"] is None, entry
    texts = [line["text"] for line in entry["lines"]]
    assert len(texts) == len(TURNS) + 1 and any("5433" in t for t in texts), texts
    assert not any("Hunter2Secret" in t for t in texts)
    assert any("[redacted" in t for t in texts), texts
    assert any(line["cited"] for line in entry["lines"])


def test_a_path_a_hook_or_a_client_named_vouches_for_nothing(m, claude, tmp_path):
    """The capture worker and ``POST /v1/import/sessions`` name paths too: not the
    owner's choice of a folder, so only the agents' own folders are served."""
    _path, mid = named(m, tmp_path / "elsewhere", owner_chose=False)
    (entry,) = m.memory_context(mid, around=50)["provenance"]
    assert entry["lines"] == [] and entry["withheld"] == "outside", entry


def test_a_named_session_swapped_afterwards_serves_nothing(m, claude, tmp_path):
    path, mid = named(m, tmp_path / "examples")
    netrc = tmp_path / "dotfiles" / "netrc.jsonl"
    write(netrc, [("user", "machine h login u password hunter2")] * (len(TURNS) + 1))
    path.unlink()
    path.symlink_to(netrc)  # out of the folder the owner named
    (entry,) = m.memory_context(mid, around=50)["provenance"]
    assert entry["lines"] == [] and entry["withheld"] == "outside", entry
    path.unlink()
    write(path, [*TURNS, SECRET_TURN])
    os.chmod(path, 0o666)
    (entry,) = m.memory_context(mid, around=50)["provenance"]
    assert entry["lines"] == [] and entry["withheld"] == "world_writable", entry
    os.chmod(path, 0o644)
    os.chmod(path.parent, 0o777)  # the folder named: now every user can swap what is in it
    (entry,) = m.memory_context(mid, around=50)["provenance"]
    assert entry["lines"] == [] and entry["withheld"] == "outside", entry
    os.chmod(path.parent, 0o755)
    if os.geteuid() == 0:  # as CI runs: another user's file in its place
        os.chown(path, 65534, 65534)
        (entry,) = m.memory_context(mid, around=50)["provenance"]
        assert entry["lines"] == [] and entry["withheld"] == "foreign_owner", entry
        os.chown(path, 0, 0)
    (entry,) = m.memory_context(mid, around=50)["provenance"]
    assert entry["withheld"] is None and entry["lines"]  # as it was: served again


def test_a_restored_backup_never_names_a_folder(m, claude, tmp_path):
    """The folder the owner named is not taken from a backup, even one edited to say
    it: in the store it is restored into, the file is outside every agent's folder."""
    from memloom.backup import dump

    path, mid = named(m, tmp_path / "examples")
    assert m.backend.ledger_get_many([str(path.resolve())])[str(path.resolve())].named_root
    out = tmp_path / "backup.jsonl"
    with out.open("w") as fh:
        dump(m.backend, fh)
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    for doc in lines:  # an edited backup naming the root outright
        if doc.get("kind") == "ledger":
            doc["named_root"] = "/"
    edited = tmp_path / "edited.jsonl"
    edited.write_text("".join(json.dumps(doc) + "\n" for doc in lines))
    for backup in (out, edited):
        other = memloom.open(home=str(tmp_path / f"restored-{backup.stem}"))
        try:
            other.restore_backup(backup)
            row = other.backend.ledger_get_many([str(path.resolve())])[str(path.resolve())]
            assert row.named_root is None and row.lines >= len(TURNS)
            (entry,) = other.memory_context(mid, around=50)["provenance"]
            assert entry["lines"] == [] and entry["withheld"] == "outside", entry
        finally:
            other.close()
