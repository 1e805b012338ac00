"""Anchors as data on a memory, on both backends: save (with the writer's folder, and
as given), recall, show, update, merges, and a backup's round trip."""

from __future__ import annotations

import io
import json

import pytest
from pydantic import ValidationError as PydanticError

import memloom
from memloom.backup import dump, restore
from tests.test_anchors import RETRY, git, make_repo


def test_save_in_a_project_folder_anchors_its_files_and_recall_and_show_carry_them(
    engine, tmp_path
):
    repo = make_repo(tmp_path)
    head = git(repo, "rev-parse", "HEAD")
    saved = engine.save({"text": RETRY, "type": "fact"}, folder=str(repo))
    doc = engine.get(saved.id)
    assert [(a.path, a.symbols, a.commit, a.via) for a in doc.anchors] == [
        ("svc/net/retry.py", ["MAX_RETRIES", "RetryPolicy.backoff_delay"], head, "text")
    ]
    hits = engine.recall({"query": "how many retries", "max_results": 3}).memories
    assert hits[0].id == saved.id and hits[0].stale is None
    assert [a.model_dump(exclude={"moved_from", "note"}) for a in hits[0].anchors] == [
        a.model_dump() for a in doc.anchors
    ]
    assert json.loads(hits[0].model_dump_json())["anchors"][0]["path"] == "svc/net/retry.py"


def test_update_finds_anchors_again_and_a_remote_update_keeps_what_the_text_names(engine, tmp_path):
    repo = make_repo(tmp_path)
    first = engine.save({"text": RETRY}, folder=str(repo))
    second = engine.update(
        first.id,
        "MAX_RETRIES in svc/net/retry.py is read by load_settings() in svc/config.py",
        folder=str(repo),
    )
    got = {a.path: a.symbols for a in engine.get(second.id).anchors}
    assert got == {"svc/net/retry.py": ["MAX_RETRIES"], "svc/config.py": ["load_settings"]}
    # No folder (HTTP): the old anchors the new text still names are carried.
    third = engine.update(second.id, "MAX_RETRIES in retry.py is now 5")
    assert [(a.path, a.symbols) for a in engine.get(third.id).anchors] == [
        ("svc/net/retry.py", ["MAX_RETRIES"])
    ]
    # Every version keeps its own.
    assert {a.path for a in engine.get(second.id).anchors} == {"svc/net/retry.py", "svc/config.py"}


def test_given_anchors_without_a_folder_are_kept_as_given_and_never_read(engine):
    saved = engine.save(
        {
            "text": "the retry policy",
            "anchors": [{"path": "svc/net/retry.py", "symbols": ["MAX_RETRIES"]}],
        }
    )
    [anchor] = engine.get(saved.id).anchors
    assert (anchor.path, anchor.symbols, anchor.root, anchor.via) == (
        "svc/net/retry.py",
        ["MAX_RETRIES"],
        None,
        "given",
    )


@pytest.mark.parametrize(
    "path", ["/etc/passwd", "../../.ssh/id_rsa", "a/../../b", "~/.netrc", "a\x00b", ""]
)
def test_a_caller_cannot_anchor_outside_the_project(engine, path):
    with pytest.raises((PydanticError, ValueError)):
        engine.save({"text": "about a file", "anchors": [{"path": path}]})


def test_a_duplicate_merges_its_anchors_into_the_memory_it_repeats(engine, tmp_path):
    repo = make_repo(tmp_path)
    first = engine.save({"text": "The retry loop is svc/net/retry.py"}, folder=str(repo))
    again = engine.save(
        {"text": "The retry loop is svc/net/retry.py", "anchors": [{"path": "svc/config.py"}]},
        folder=str(repo),
    )
    assert again.outcome == "merged" and again.id == first.id
    assert {a.path for a in engine.get(first.id).anchors} == {"svc/net/retry.py", "svc/config.py"}


def test_anchors_survive_a_backup_round_trip_and_a_forged_one_is_refused(engine, tmp_path):
    repo = make_repo(tmp_path)
    engine.save({"text": RETRY}, folder=str(repo))
    out = io.StringIO()
    dump(engine.backend, out, embeddings=True)
    lines = out.getvalue().splitlines()
    path = tmp_path / "b.jsonl"
    path.write_text("\n".join(lines) + "\n")
    target = memloom.open(home=str(tmp_path / "t"), database_url=str(tmp_path / "t" / "m.db"))
    try:
        restore(target.backend, path)
        [row] = list(target.backend.iter_all())
        assert row.anchors[0]["path"] == "svc/net/retry.py"
        forged = [
            json.dumps({**json.loads(ln), "anchors": [{"path": "/etc/passwd"}]})
            if json.loads(ln).get("kind") == "memory"
            else ln
            for ln in lines
        ]
        bad = tmp_path / "forged.jsonl"
        bad.write_text("\n".join(forged) + "\n")
        with pytest.raises(Exception, match="no path inside a project"):
            restore(target.backend, bad)
    finally:
        target.close()


def test_recall_in_a_folder_checks_the_anchors_there_and_deletes_nothing(engine, tmp_path):
    repo = make_repo(tmp_path)
    saved = engine.save({"text": RETRY, "type": "fact"}, folder=str(repo))
    query = {"query": "how many retries", "max_results": 3, "folder": str(repo)}
    [hit] = [m for m in engine.recall(query).memories if m.id == saved.id]
    assert hit.stale is None
    git(repo, "mv", "svc/net/retry.py", "svc/net/retries.py")
    [hit] = [m for m in engine.recall(query).memories if m.id == saved.id]
    assert hit.stale is None
    assert (hit.anchors[0].path, hit.anchors[0].moved_from) == (
        "svc/net/retries.py",
        "svc/net/retry.py",
    )
    (repo / "svc/net/retries.py").unlink()
    [hit] = [m for m in engine.recall(query).memories if m.id == saved.id]
    assert hit.stale == "file gone: svc/net/retry.py"
    assert json.loads(hit.model_dump_json())["stale"] == "file gone: svc/net/retry.py"
    # Never expired nor deleted for it; without a folder nothing is checked.
    assert engine.get(saved.id).status == "active"
    [hit] = [m for m in engine.recall({**query, "folder": None}).memories if m.id == saved.id]
    assert hit.stale is None
    # A folder that is no usable working tree checks nothing.
    for bad in ("relative/repo", "/etc", str(tmp_path / "missing")):
        [hit] = [m for m in engine.recall({**query, "folder": bad}).memories if m.id == saved.id]
        assert hit.stale is None, bad
