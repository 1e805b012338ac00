"""A project is its repository (memloom.project): worktrees, subfolders and clones of
one repository are one project, read from real git repositories; what is not one keeps
its folder; a hostile .git never leads the reader out of what git itself reads."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memloom import project
from memloom.project import normalise_remote, project_key, repository
from tests.support.git import git


@pytest.fixture(autouse=True)
def _fresh_cache():
    project._cache.clear()
    yield
    project._cache.clear()


def make_repo(path: Path, remote: str | None = None) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "commit", "-q", "--allow-empty", "-m", "start")
    if remote:
        git(path, "remote", "add", "origin", remote)
    return path


def test_worktrees_and_subfolders_are_one_project(tmp_path):
    main = make_repo(tmp_path / "cli")
    (main / "src" / "deep").mkdir(parents=True)
    git(main, "worktree", "add", "-q", str(main / ".worktrees" / "2"), "-b", "two")
    git(main, "worktree", "add", "-q", str(tmp_path / "elsewhere"), "-b", "three")
    want = os.path.realpath(main)
    for folder in (main, main / "src" / "deep", main / ".worktrees" / "2", tmp_path / "elsewhere"):
        assert project_key(str(folder)) == want, folder
    repo = repository(str(tmp_path / "elsewhere"))
    assert repo is not None
    assert repo.root == os.path.realpath(tmp_path / "elsewhere")
    assert repo.common_dir == os.path.realpath(main / ".git")


def test_clones_of_one_remote_are_one_project_whatever_its_form(tmp_path):
    ssh = make_repo(tmp_path / "a", "git@github.com:Acme/API.git")
    https = make_repo(tmp_path / "b", "https://ci:ghp_secret@github.com/acme/api")
    other = make_repo(tmp_path / "c", "https://github.com/acme/web.git")
    assert project_key(str(ssh)) == project_key(str(https)) == "github.com/acme/api"
    assert project_key(str(other)) == "github.com/acme/web"
    # A worktree of a clone follows the clone's remote.
    git(https, "worktree", "add", "-q", str(tmp_path / "b-wt"), "-b", "x")
    assert project_key(str(tmp_path / "b-wt")) == "github.com/acme/api"


def test_origin_first_else_the_first_remote(tmp_path):
    repo = make_repo(tmp_path / "r", None)
    git(repo, "remote", "add", "upstream", "https://gitlab.example.org/team/r.git")
    assert project_key(str(repo)) == "gitlab.example.org/team/r"
    git(repo, "remote", "add", "origin", "ssh://git@gitlab.example.org:2222/me/r.git")
    project._cache.clear()
    assert project_key(str(repo)) == "gitlab.example.org/me/r"


def test_outside_git_and_labels_keep_todays_behaviour(tmp_path):
    plain = tmp_path / "notes"
    plain.mkdir()
    assert project_key(str(plain)) == str(plain)
    assert project_key(str(tmp_path / "gone")) == str(tmp_path / "gone")
    assert project_key("acme-api") == "acme-api"
    assert project_key("github.com/acme/api") == "github.com/acme/api"
    assert project_key(None) is None
    assert project_key("") == ""


def test_a_key_is_its_own_key(tmp_path):
    main = make_repo(tmp_path / "solo")
    key = project_key(str(main))
    assert key == os.path.realpath(main)
    assert project_key(key) == key


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("git@github.com:acme/api.git", "github.com/acme/api"),
        ("https://github.com/Acme/Api", "github.com/acme/api"),
        ("https://user:token@github.com:443/acme/api.git/", "github.com/acme/api"),
        ("ssh://git@github.com:22/acme/api", "github.com/acme/api"),
        ("git+ssh://git@host.example/~me/tool.git", "host.example/me/tool"),
        ("git://host.example/a/b.git?x=1#frag", "host.example/a/b"),
        ("https://Git.Example.org/Team/Tool", "git.example.org/Team/Tool"),
        ("file:///srv/git/tool/.git", "/srv/git/tool"),
        ("/srv/git/tool.git", "/srv/git/tool.git"),
        ("../relative/clone", None),
        ("C:\\src\\tool", None),
        ("https://host/../etc", None),
        ("ext::sh -c touch% /tmp/pwned", None),
        ("https://host.example/", None),
        ("", None),
        ("x" * 3000, None),
    ],
)
def test_remote_urls(url, key):
    assert normalise_remote(url) == key


# ------------------------------------------------------------------ hostile .git


def test_a_gitdir_file_pointing_at_etc_is_no_repository(tmp_path):
    folder = tmp_path / "evil"
    folder.mkdir()
    (folder / ".git").write_text("gitdir: /etc\n")
    assert repository(str(folder)) is None
    assert project_key(str(folder)) == str(folder)


def test_a_gitdir_file_cannot_claim_another_repository(tmp_path):
    """An untrusted folder whose .git file names the user's private repository (or one
    of its worktrees) must not be filed under it: its memories would be shown there."""
    private = make_repo(tmp_path / "private", "git@github.com:me/private.git")
    git(private, "worktree", "add", "-q", str(tmp_path / "private-wt"), "-b", "wt")
    admin = private / ".git" / "worktrees" / "private-wt"
    assert admin.is_dir()
    for target in (private / ".git", admin):
        folder = tmp_path / f"evil-{target.name}"
        folder.mkdir()
        (folder / ".git").write_text(f"gitdir: {target}\n")
        assert repository(str(folder)) is None, target
        assert project_key(str(folder)) == str(folder)
    assert project_key(str(tmp_path / "private-wt")) == "github.com/me/private"


def test_a_symlinked_git_is_not_followed(tmp_path):
    private = make_repo(tmp_path / "private", "git@github.com:me/private.git")
    folder = tmp_path / "linked"
    folder.mkdir()
    (folder / ".git").symlink_to(private / ".git")
    assert repository(str(folder)) is None
    assert project_key(str(folder)) == str(folder)


def test_a_git_that_is_a_fifo_or_no_git_dir_is_no_repository(tmp_path):
    fifo = tmp_path / "fifo"
    fifo.mkdir()
    os.mkfifo(fifo / ".git")
    assert repository(str(fifo)) is None  # never opened: it would block
    empty = tmp_path / "empty"
    (empty / ".git").mkdir(parents=True)
    assert repository(str(empty)) is None
    # The first .git up the tree decides: a broken one is not its parent's project.
    outer = make_repo(tmp_path / "outer", "git@github.com:me/outer.git")
    broken = outer / "vendored"
    broken.mkdir()
    (broken / ".git").write_text("not a pointer\n")
    assert project_key(str(broken)) == str(broken)


def test_a_huge_config_is_read_only_up_to_its_bound(tmp_path):
    repo = make_repo(tmp_path / "big")
    config = repo / ".git" / "config"
    padding = "# " + "x" * 1000 + "\n"
    text = config.read_text() + padding * (project.CONFIG_BYTES // len(padding) + 10)
    config.write_text(text + '[remote "origin"]\n\turl = git@github.com:me/big.git\n')
    assert os.path.getsize(config) > project.CONFIG_BYTES
    # The remote lies past the bound: not read, so the repository is its folder.
    assert project_key(str(repo)) == os.path.realpath(repo)


def test_a_config_that_is_a_fifo_is_not_read(tmp_path):
    repo = make_repo(tmp_path / "r", "git@github.com:me/r.git")
    config = repo / ".git" / "config"
    config.unlink()
    os.mkfifo(config)
    assert project_key(str(repo)) == os.path.realpath(repo)


def test_a_submodule_is_its_own_repository(tmp_path):
    sub_origin = make_repo(tmp_path / "lib", "https://github.com/acme/lib.git")
    top = make_repo(tmp_path / "app", "https://github.com/acme/app.git")
    git(top, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub_origin), "lib")
    assert (top / "lib" / ".git").is_file()
    # The submodule's origin is the folder it was cloned from.
    assert project_key(str(top / "lib")) == str(sub_origin)
    assert project_key(str(top)) == "github.com/acme/app"
