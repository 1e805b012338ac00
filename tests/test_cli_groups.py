"""Command groups run alone, as real processes: a group with a natural default action
takes that action's options (``memloom conflicts --json`` is ``memloom conflicts list
--json``); a group without one shows its help."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import typer.main

import memloom
from memloom.cli import app

#: Every command group and what it does alone: its default command, or None (help).
#: ``import`` and ``capture`` alone would spend LLM calls; ``connect``, ``disconnect``
#: and ``hook`` need an agent or an event.
DEFAULTS = {
    "conflicts": "list",
    "tokens": "list",
    "llm": "show",
    "import": None,
    "connect": None,
    "disconnect": None,
    "capture": None,
    "hook": None,
}


def run(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memloom.cli", *args],
        env={**os.environ, "MEMLOOM_HOME": str(home), **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def json_of(home: Path, *args: str, **env: str) -> object:
    res = run(home, *args, **env)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_every_group_has_a_decided_default():
    groups = typer.main.get_command(app).commands
    named = {g.name for g in app.registered_groups}
    assert named == set(DEFAULTS)
    for name, default in DEFAULTS.items():
        group = groups[name]
        assert group.invoke_without_command == (default is not None), name
        assert group.no_args_is_help == (default is None), name
        if default is not None:
            # The group's options are exactly its default command's.
            mine = sorted(p.name for p in group.params)
            assert mine == sorted(p.name for p in group.commands[default].params), name


def vec(deg: float) -> list[float]:
    return [math.cos(math.radians(deg)), math.sin(math.radians(deg)), 0.0]


def test_conflicts_alone_is_list_with_its_options(tmp_path, backend):
    with memloom.open(home=str(tmp_path), database_url=backend) as m:
        for i in range(3):  # 40 degrees apart: distance 0.23, the conflict band
            for text, deg in ((f"claim {i} alpha", 0), (f"claim {i} beta, said otherwise", 40)):
                m.store({"entries": [{"text": text, "embedding": vec(deg), "project": f"p{i}"}]})
        first = m.conflicts("pending").conflicts[-1].id
        m.resolve(first, {"action": "keep_both"})
    db = {"MEMLOOM_DATABASE_URL": backend}

    alone = json_of(tmp_path, "conflicts", "--json", **db)
    assert alone == json_of(tmp_path, "conflicts", "list", "--json", **db)
    assert alone["total"] == 2 and {c["status"] for c in alone["conflicts"]} == {"pending"}

    paged = ("--status", "all", "--limit", "2", "--page", "2", "--json")
    second = json_of(tmp_path, "conflicts", *paged, **db)
    assert second == json_of(tmp_path, "conflicts", "list", *paged, **db)
    assert second["total"] == 3 and len(second["conflicts"]) == 1

    human = run(tmp_path, "conflicts", "--limit", "1", **db)
    assert human.returncode == 0 and "1-1 of 2" in human.stdout
    assert human.stdout == run(tmp_path, "conflicts", "list", "--limit", "1", **db).stdout

    # Before another command the options are list's, so refused rather than dropped.
    wrong = run(tmp_path, "conflicts", "--json", "show", first, **db)
    assert wrong.returncode == 1 and wrong.stdout == ""
    assert "put it after the command: memloom conflicts show … --json" in wrong.stderr
    bad = run(tmp_path, "conflicts", "--status", "later", **db)
    assert bad.returncode == 1 and "--status must be pending, resolved or all" in bad.stderr

    helped = run(tmp_path, "conflicts", "--help")
    assert helped.returncode == 0
    assert "`memloom conflicts` is `memloom conflicts list`" in " ".join(helped.stdout.split())
    for option in ("--status", "--limit", "--page", "--json", "resolve", "revert"):
        assert option in helped.stdout


def test_tokens_alone_is_list(tmp_path, pg_url):
    db = {"MEMLOOM_DATABASE_URL": pg_url}
    for owner in ("alice", "bob"):
        assert run(tmp_path, "tokens", "create", "--owner", owner, **db).returncode == 0
    alone = json_of(tmp_path, "tokens", "--json", **db)
    assert alone == json_of(tmp_path, "tokens", "list", "--json", **db)
    assert [t["owner"] for t in alone["tokens"]] == ["alice", "bob"]
    human = run(tmp_path, "tokens", **db)
    assert human.returncode == 0 and human.stdout.count(" owner ") == 2
    assert human.stdout == run(tmp_path, "tokens", "list", **db).stdout
    # On SQLite, alone or not, the same clear refusal.
    local = run(tmp_path, "tokens", "--json")
    assert local.returncode == 1 and "need a shared PostgreSQL store" in local.stderr


def test_groups_without_a_default_show_their_help(tmp_path):
    for name, default in DEFAULTS.items():
        if default is None:
            res = run(tmp_path, name)
            assert res.returncode == 2 and f"Usage: memloom {name} " in res.stderr, name
