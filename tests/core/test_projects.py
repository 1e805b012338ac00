"""A project is its repository, on both backends: two worktrees of one repository
recall each other's memories, and a store written when projects were folders keeps
every memory when it is upgraded (core/projects.py)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import memloom
from memloom import project
from memloom.core.projects import META_KEY
from tests.test_project import git, make_repo

DIM = 8


@pytest.fixture(autouse=True)
def _fresh_cache():
    project._cache.clear()
    yield
    project._cache.clear()


def vec(seed: int) -> list[float]:
    v = np.random.default_rng(seed).normal(size=DIM)
    return (v / np.linalg.norm(v)).tolist()


def entry(text: str, where: str | None, seed: int) -> dict:
    return {"text": text, "embedding": vec(seed), "project": where}


def recall(m: memloom.Memloom, where: str, seed: int) -> list[str]:
    found = m.recall(
        {"query_embedding": vec(seed), "project": where, "max_results": 20, "touch": False}
    )
    return sorted(r.text for r in found.memories)


def test_two_worktrees_recall_each_others_memories(tmp_path, backend):
    main = make_repo(tmp_path / "cli", "git@github.com:acme/cli.git")
    second = main / ".worktrees" / "2"
    git(main, "worktree", "add", "-q", str(second), "-b", "two")
    other = make_repo(tmp_path / "web", "https://github.com/acme/web")
    with memloom.open(home=str(tmp_path / "home"), database_url=backend) as m:
        m.store({"entries": [entry("cli tests run with just check", str(main), 1)]})
        m.store({"entries": [entry("cli release tags are signed", str(second), 2)]})
        m.store({"entries": [entry("web uses vite", str(other), 3)]})
        both = ["cli release tags are signed", "cli tests run with just check"]
        assert recall(m, str(main), 1) == both
        (second / "src").mkdir()
        assert recall(m, str(second / "src"), 2) == both
        assert recall(m, str(second), 2) == both
        assert recall(m, str(other), 3) == ["web uses vite"]
        # A clone of the same remote, in its https form, is the same project.
        clone = make_repo(tmp_path / "clone", "https://github.com/acme/cli.git")
        assert recall(m, str(clone), 1) == both
        listed = m.list({"project": str(second)})
        assert sorted(d.text for d in listed.memories) == both
        assert {d.project for d in listed.memories} == {"github.com/acme/cli"}


def test_an_upgraded_store_keeps_every_memory(tmp_path, backend):
    """Written when a project was its folder: the main checkout, a worktree, a subfolder,
    a folder gone from this machine, a folder outside git and a plain label."""
    main = tmp_path / "cli"
    worktree = tmp_path / "cli-wt"
    plain = tmp_path / "notes"
    gone = tmp_path / "deleted-checkout"
    for folder in (main, worktree, plain, gone):
        folder.mkdir()
    home = str(tmp_path / "home")
    labels = {
        "main": str(main),
        "worktree": str(worktree),
        "sub": str(main / "src"),
        "gone": str(gone),
        "plain": str(plain),
        "label": "acme-api",
        "global": None,
    }
    with memloom.open(home=home, database_url=backend) as m:
        for i, (name, where) in enumerate(labels.items()):
            m.store({"entries": [entry(f"memory of {name}", where, i)]})
        before = {d.id: d.project for d in m.export()}
        assert sorted(before.values(), key=str) == sorted(labels.values(), key=str)
        m.backend.set_meta(META_KEY, "0")  # as a store of the previous version
    # Then the folders become one repository and its worktree; one goes away.
    git(main.parent, "init", "-q", "-b", "main", str(main))
    git(main, "commit", "-q", "--allow-empty", "-m", "start")
    worktree.rmdir()
    git(main, "worktree", "add", "-q", str(worktree), "-b", "wt")
    (main / "src").mkdir()
    gone.rmdir()
    project._cache.clear()
    with memloom.open(home=home, database_url=backend) as m:
        after = {d.id: d.project for d in m.export()}
        assert set(after) == set(before)  # every memory kept
        repo = os.path.realpath(main)
        assert after == {
            i: (repo if p in (labels["main"], labels["worktree"], labels["sub"]) else p)
            for i, p in before.items()
        }
        assert m.backend.get_meta(META_KEY) == "1"
        seen = recall(m, str(worktree), 0)
        assert seen == ["memory of global", "memory of main", "memory of sub", "memory of worktree"]
        # The vector arm's project mask follows the move too.
        found = m.recall(
            {"query_embedding": vec(1), "project": str(main), "mode": "vector", "touch": False}
        )
        assert "memory of worktree" in {r.text for r in found.memories}
        # Nothing left to move: a second pass (the decay schedule's) changes nothing.
        assert m.relabel_projects() == {}
        m.decay()
        assert {d.id: d.project for d in m.export()} == after


def test_a_remote_added_later_moves_the_folder_label(tmp_path, backend):
    main = make_repo(tmp_path / "tool")
    with memloom.open(home=str(tmp_path / "home"), database_url=backend) as m:
        m.store({"entries": [entry("tool builds with make", str(main), 5)]})
        assert [d.project for d in m.export()] == [os.path.realpath(main)]
        git(main, "remote", "add", "origin", "git@github.com:acme/tool.git")
        project._cache.clear()
        assert m.relabel_projects() == {os.path.realpath(main): "github.com/acme/tool"}
        assert [d.project for d in m.export()] == ["github.com/acme/tool"]
        assert recall(m, str(main), 5) == ["tool builds with make"]
