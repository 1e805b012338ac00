"""``memloom tokens`` and ``memloom migrate``, run as real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def run(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "MEMLOOM_HOME": str(home), **env}
    return subprocess.run(
        [sys.executable, "-m", "memloom.cli", *args],
        env=full,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_tokens_need_a_shared_store_and_owners_need_postgres(tmp_path):
    res = run(tmp_path, "tokens", "create", "--owner", "alice")
    assert res.returncode == 1
    assert res.stderr.strip() == (
        "memloom: error: API tokens need a shared PostgreSQL store: "
        "set MEMLOOM_DATABASE_URL=postgresql://…"
    )
    res = run(tmp_path, "stats", MEMLOOM_OWNER="alice")
    assert res.returncode == 1 and "need a shared PostgreSQL store" in res.stderr


def test_tokens_create_list_revoke(tmp_path, pg_url):
    db = {"MEMLOOM_DATABASE_URL": pg_url}
    made = run(tmp_path, "tokens", "create", "--owner", "alice", "--share", "team", "--json", **db)
    assert made.returncode == 0, made.stderr
    doc = json.loads(made.stdout)
    assert doc["owner"] == "alice" and doc["shared"] == ["team"] and doc["token"].startswith("mlt_")
    human = run(tmp_path, "tokens", "create", "--owner", "bob", **db)
    assert human.returncode == 0 and human.stdout.splitlines()[1].startswith("mlt_")
    assert "not shown again" in human.stderr
    listed = run(tmp_path, "tokens", "list", "--json", **db)
    tokens = json.loads(listed.stdout)["tokens"]
    assert [t["owner"] for t in tokens] == ["alice", "bob"]
    assert doc["token"] not in listed.stdout and "token" not in tokens[0]
    gone = run(tmp_path, "tokens", "revoke", doc["id"], **db)
    assert gone.returncode == 0 and gone.stdout.startswith(f"revoked {doc['id']}")
    again = json.loads(run(tmp_path, "tokens", "list", "--json", **db).stdout)["tokens"]
    assert again[0]["revoked_at"] is not None and again[1]["revoked_at"] is None
    missing = run(tmp_path, "tokens", "revoke", "nope", **db)
    assert missing.returncode == 1 and "no token nope" in missing.stderr
    blank = run(tmp_path, "tokens", "create", "--owner", " ", **db)
    assert blank.returncode == 1 and "--owner" in blank.stderr


def test_migrate_copies_a_store_into_postgres_and_is_safe_to_rerun(tmp_path, pg_url):
    home = tmp_path / "home"
    for text in (
        "The staging database listens on port 5433",
        "Releases are cut from the main branch every Tuesday",
    ):
        assert run(home, "save", text, "--project", "api").returncode == 0
    bad = run(home, "migrate", "--to", "mysql://nope")
    assert bad.returncode == 1 and "postgresql://" in bad.stderr

    first = run(home, "migrate", "--to", pg_url, "--owner", "alice", "--json")
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert (report["memories"], report["skipped"], report["target_total"]) == (2, 0, 2)
    again = json.loads(run(home, "migrate", "--to", pg_url, "--json").stdout)
    assert (again["memories"], again["skipped"]) == (0, 2)

    shared = {"MEMLOOM_DATABASE_URL": pg_url, "MEMLOOM_OWNER": "alice"}
    found = run(tmp_path / "elsewhere", "recall", "which port is staging on", "--json", **shared)
    assert found.returncode == 0, found.stderr
    top = json.loads(found.stdout)["memories"][0]
    assert top["text"] == "The staging database listens on port 5433"
    nobody = run(
        tmp_path / "elsewhere", "stats", "--json", MEMLOOM_DATABASE_URL=pg_url, MEMLOOM_OWNER="bob"
    )
    assert json.loads(nobody.stdout)["total_memories"] == 0
