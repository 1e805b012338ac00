"""A project is its repository, as the agents' hooks see it: a memory written in one
worktree of a repository reaches the prompts of a session in another worktree of it
(the issue's ``…/cli/.worktrees/2`` case), and a clone of the same remote elsewhere;
an unrelated repository's session is not given it. The hooks run as real processes
with the payload Claude Code sends; both backends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.capture.test_capture import memloom, save_json
from tests.support.git import git

FACT = "Integration tests need the fake payment gateway running on port 7311"
ASK = "which port does the fake payment gateway use?"


@pytest.fixture
def repos(tmp_path, backend, monkeypatch):
    """``cli`` with a worktree ``cli/.worktrees/2``, a clone of its remote elsewhere, and
    an unrelated repository; Claude Code connected."""
    if backend.startswith("postgresql"):
        monkeypatch.setenv("MEMLOOM_DATABASE_URL", backend)
    home, claude = tmp_path / "home", tmp_path / "claude"
    (claude / "projects").mkdir(parents=True)
    cli = tmp_path / "work" / "cli"
    git(cli, "init", "-q")
    git(cli, "remote", "add", "origin", "git@github.com:acme/cli.git")
    git(cli, "commit", "-q", "--allow-empty", "-m", "init")
    git(cli, "worktree", "add", "-q", cli / ".worktrees" / "2")
    clone = tmp_path / "elsewhere" / "cli-copy"
    git(clone, "init", "-q")
    git(clone, "remote", "add", "origin", "https://github.com/acme/cli")
    other = tmp_path / "work" / "billing"
    git(other, "init", "-q")
    assert memloom(home, claude, "connect", "claude-code", "--all").returncode == 0
    return home, claude, cli, cli / ".worktrees" / "2", clone, other


def prompt(home: Path, claude: Path, cwd: Path, session: str) -> str:
    doc = {
        "session_id": session,
        "cwd": str(cwd),
        "hook_event_name": "UserPromptSubmit",
        "prompt": ASK,
        "transcript_path": str(claude / "projects" / "x" / f"{session}.jsonl"),
    }
    res = memloom(
        home, claude, "hook", "prompt-recall", "--agent", "claude-code", stdin=json.dumps(doc)
    )
    assert (res.returncode, res.stderr) == (0, ""), res.stderr
    return res.stdout


def test_a_worktree_s_memory_reaches_the_main_checkout_and_a_clone(repos):
    home, claude, cli, worktree, clone, other = repos
    saved = save_json(home, claude, FACT, "--project", str(worktree))
    shown = json.loads(memloom(home, claude, "show", saved["id"], "--json").stdout)
    assert shown["project"] == "github.com/acme/cli"  # not ".worktrees/2", not a path

    assert FACT in prompt(home, claude, cli, "s-main")
    deep = worktree / "pkg" / "api"
    deep.mkdir(parents=True)
    assert FACT in prompt(home, claude, deep, "s-sub")  # a subfolder of the worktree
    assert FACT in prompt(home, claude, clone, "s-clone")
    assert FACT not in prompt(home, claude, other, "s-other")  # another repository
