"""memloom.staleness: a memory's anchors checked against the working tree of the folder a
recall runs in (real git repositories made from tests/fixtures/anchors/repo)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from memloom import anchors, staleness
from tests.support.git import git

FIXTURE = Path(__file__).parent / "fixtures" / "anchors" / "repo"
RETRY = "Retries are capped by `MAX_RETRIES` in svc/net/retry.py (see RetryPolicy.backoff_delay())"
CONFIG = "Settings come from load_settings() in svc/config.py"


@pytest.fixture(autouse=True)
def _fresh_caches():
    staleness._texts.clear()
    staleness._answers.clear()
    staleness._trees.clear()
    staleness._git_answers.clear()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE, repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "first")
    return repo


def anchored(text: str, folder: Path) -> list[dict]:
    found = anchors.find(text, str(folder))
    assert found.anchors, text
    return found.anchors


def check(found: list[dict], folder: Path, project: str | None = None) -> staleness.Check:
    staleness._git_answers.clear()
    return staleness.Tree(str(folder)).check(found, project)


def test_untouched_code_is_not_stale(repo):
    found = anchored(RETRY, repo)
    assert found[0]["symbols"] == ["MAX_RETRIES", "RetryPolicy.backoff_delay"]
    result = check(found, repo)
    assert result.stale is None and result.note is None
    assert result.anchors[0]["path"] == "svc/net/retry.py"


def test_a_file_gone_committed_or_not(repo):
    found = anchored(RETRY, repo)
    (repo / "svc/net/retry.py").unlink()
    assert check(found, repo).stale == "file gone: svc/net/retry.py"
    git(repo, "commit", "-qam", "drop retries")
    assert check(found, repo).stale == "file gone: svc/net/retry.py"


@pytest.mark.parametrize("how", ["committed", "staged", "mv-and-add"])
def test_a_renamed_file_moves_the_anchor(repo, how):
    found = anchored(RETRY, repo)
    if how == "mv-and-add":
        (repo / "svc/net/retry.py").rename(repo / "svc/net/retries.py")
        git(repo, "add", "svc/net/retries.py")
    else:
        git(repo, "mv", "svc/net/retry.py", "svc/net/retries.py")
        if how == "committed":
            git(repo, "commit", "-qm", "rename")
    result = check(found, repo)
    assert result.stale is None
    assert result.anchors[0]["path"] == "svc/net/retries.py"
    assert result.anchors[0]["moved_from"] == "svc/net/retry.py"


def test_a_rename_followed_by_removing_the_identifier_is_stale(repo):
    found = anchored(RETRY, repo)
    git(repo, "mv", "svc/net/retry.py", "svc/net/retries.py")
    path = repo / "svc/net/retries.py"
    path.write_text(path.read_text().replace("MAX_RETRIES", "RETRY_LIMIT"))
    assert check(found, repo).stale == "MAX_RETRIES no longer in svc/net/retries.py"


def test_a_plain_mv_not_told_to_git_is_not_called_gone(repo):
    found = anchored(RETRY, repo)
    (repo / "svc/net/retry.py").rename(repo / "svc/retry.py")
    result = check(found, repo)
    assert result.stale is None
    assert "may have moved to svc/retry.py" in result.anchors[0]["note"]


def test_a_plain_mv_to_a_new_name_is_found_by_its_content(repo):
    found = anchored(RETRY, repo)
    (repo / "svc/net/retry.py").rename(repo / "svc/backoff.py")
    (repo / "svc/unrelated.py").write_text("print('nothing alike')\n")
    result = check(found, repo)
    assert result.stale is None
    assert "may have moved to svc/backoff.py" in result.anchors[0]["note"]
    (repo / "svc/backoff.py").write_text("print('rewritten entirely')\n")
    assert check(found, repo).stale == "file gone: svc/net/retry.py"


def test_an_edit_that_removes_the_identifier_is_stale(repo):
    found = anchored(RETRY, repo)
    path = repo / "svc/net/retry.py"
    path.write_text(path.read_text().replace("MAX_RETRIES", "RETRY_LIMIT"))
    assert check(found, repo).stale == "MAX_RETRIES no longer in svc/net/retry.py"


def test_an_edit_that_keeps_the_identifiers_is_not_stale(repo):
    found = anchored(RETRY, repo)
    path = repo / "svc/net/retry.py"
    path.write_text(path.read_text().replace("MAX_RETRIES = 3", "MAX_RETRIES = 5"))
    assert check(found, repo).stale is None


def test_a_dotted_name_passes_on_its_last_part(repo):
    found = anchored(RETRY, repo)
    path = repo / "svc/net/retry.py"
    path.write_text(path.read_text().replace("class RetryPolicy", "class Policy"))
    assert check(found, repo).stale is None  # backoff_delay is still there
    path.write_text(path.read_text().replace("backoff_delay", "delay"))
    assert check(found, repo).stale == "RetryPolicy.backoff_delay no longer in svc/net/retry.py"


def test_an_identifier_moved_to_another_file_is_stale_for_its_anchor(repo):
    found = anchored(RETRY, repo)
    path = repo / "svc/net/retry.py"
    path.write_text(path.read_text().replace("MAX_RETRIES = 3\n", ""))
    (repo / "svc/limits.py").write_text("MAX_RETRIES = 3\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "move the limit")
    assert check(found, repo).stale == "MAX_RETRIES no longer in svc/net/retry.py"


def test_detached_head_still_checks(repo):
    found = anchored(RETRY, repo)
    git(repo, "rm", "-q", "svc/net/retry.py")
    git(repo, "commit", "-qm", "drop")
    git(repo, "checkout", "-q", "--detach")
    assert check(found, repo).stale == "file gone: svc/net/retry.py"


def test_mid_rebase_a_missing_file_is_unchecked_not_stale(repo):
    found = anchored(RETRY, repo) + anchored(CONFIG, repo)
    first = git(repo, "rev-parse", "HEAD")
    (repo / "svc/net/retry.py").write_text("MAX_RETRIES = 5\n")
    git(repo, "commit", "-qam", "five")
    git(repo, "checkout", "-q", "-b", "other", first)
    (repo / "svc/net/retry.py").write_text("MAX_RETRIES = 7\n")
    git(repo, "commit", "-qam", "seven")
    with pytest.raises(subprocess.CalledProcessError):
        git(repo, "rebase", "main")
    (repo / "svc/config.py").unlink()
    result = check(found, repo)
    assert result.stale is None
    by = {a["path"]: a for a in result.anchors}
    assert by["svc/config.py"]["note"] == "not checked: a rebase in progress"
    assert by["svc/net/retry.py"]["note"] == "not checked: a rebase in progress"


def test_no_git_a_missing_file_is_unchecked_but_a_lost_identifier_is_stale(tmp_path):
    plain = tmp_path / "plain"
    shutil.copytree(FIXTURE, plain)
    found = anchored(RETRY, plain) + anchored(CONFIG, plain)
    assert found[0]["commit"] is None
    (plain / "svc/config.py").unlink()
    result = check(found, plain)
    assert result.stale is None and "no git repository" in result.note
    path = plain / "svc/net/retry.py"
    path.write_text(path.read_text().replace("MAX_RETRIES", "LIMIT"))
    assert check(found, plain).stale == "MAX_RETRIES no longer in svc/net/retry.py"


def test_git_missing_is_unchecked(repo, monkeypatch):
    found = anchored(RETRY, repo)
    (repo / "svc/net/retry.py").unlink()
    monkeypatch.setenv("PATH", str(repo / "nothing-here"))
    result = check(found, repo)
    assert result.stale is None and "git is not installed" in result.note


def test_bare_repository_is_no_tree_to_check(repo, tmp_path):
    found = anchored(RETRY, repo)
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    result = check(found, bare)
    assert result.stale is None and result.note.startswith("svc/net/retry.py: not checked")


def test_shallow_clone_without_the_commit_is_unchecked(repo, tmp_path):
    found = anchored(RETRY, repo)
    (repo / "README").write_text("later\n")
    git(repo, "add", "README")
    git(repo, "commit", "-qm", "later")
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", str(shallow))
    (shallow / "svc/net/retry.py").unlink()
    # The clone is the same repository only by its remote: its memories' project says so.
    from memloom.project import project_key

    result = check(found, shallow, project=project_key(str(shallow)))
    assert result.stale is None
    assert "unknown to this clone" in result.anchors[0]["note"]


def test_a_worktree_checks_its_own_tree_not_the_stored_root(repo, tmp_path):
    found = anchored(RETRY, repo)
    worktree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "side", str(worktree))
    path = worktree / "svc/net/retry.py"
    path.write_text(path.read_text().replace("MAX_RETRIES", "LIMIT"))
    from memloom.project import project_key

    key = project_key(str(repo))
    assert key == project_key(str(worktree))
    assert check(found, worktree, key).stale == "MAX_RETRIES no longer in svc/net/retry.py"
    assert check(found, repo, key).stale is None


def test_a_branch_without_the_file_is_not_a_deletion(repo):
    found = anchored(RETRY, repo)
    git(repo, "checkout", "-q", "-b", "feature")
    git(repo, "rm", "-q", "svc/net/retry.py")
    git(repo, "commit", "-qm", "not here")
    result = check(found, repo)
    assert result.stale is None
    assert result.anchors[0]["note"] == "not on this branch (the default branch main has it)"
    git(repo, "checkout", "-q", "main")
    git(repo, "rm", "-q", "svc/net/retry.py")
    git(repo, "commit", "-qm", "gone on main too")
    git(repo, "checkout", "-q", "feature")
    assert check(found, repo).stale == "file gone: svc/net/retry.py"


def test_an_anchor_of_another_repository_is_not_checked(repo, tmp_path):
    found = anchored(RETRY, repo)
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    result = check(found, other, project="github.com/someone/else")
    assert result.stale is None
    assert result.anchors[0]["note"] == "not checked: another repository"


def test_a_symlink_out_and_a_fifo_are_never_read(repo, tmp_path):
    outside = tmp_path / "secret.py"
    outside.write_text("nothing of the names\n")
    found = anchored(RETRY, repo)
    target = repo / "svc/net/retry.py"
    target.unlink()
    target.symlink_to(outside)
    result = check(found, repo)
    assert result.stale is None and "refused" in result.anchors[0]["note"]
    target.unlink()
    os.mkfifo(target)
    result = check(found, repo)  # would hang if the FIFO were opened
    assert result.stale is None and "refused" in result.anchors[0]["note"]


def test_a_climbing_stored_path_is_not_followed(repo):
    bad = [{"path": "../../etc/passwd", "symbols": ["root"], "commit": None, "root": str(repo)}]
    result = check(bad, repo)
    assert result.stale is None and "no path inside" in result.anchors[0]["note"]


def test_binary_files_are_not_searched(repo):
    found = [{"path": "docs/logo.bin", "symbols": ["ABSENT_NAME"], "commit": None,
              "root": str(repo), "via": "given"}]  # fmt: skip
    result = check(found, repo)
    assert result.stale is None and "binary" in result.anchors[0]["note"]


def test_many_memories_ask_git_once_per_commit(repo, monkeypatch):
    found = anchored(RETRY, repo)
    (repo / "svc/net/retry.py").unlink()
    calls = []
    real = staleness._git

    def counting(folder, *args, **kw):
        calls.append(args[0])
        return real(folder, *args, **kw)

    monkeypatch.setattr(staleness, "_git", counting)
    tree = staleness.Tree(str(repo))
    results = tree.check_many([(found, None)] * 50)
    assert {r.stale for r in results} == {"file gone: svc/net/retry.py"}
    assert calls == ["diff", "ls-files", "cat-file"]  # on main: no branch listing needed
    calls.clear()
    staleness.Tree(str(repo)).check_many([(found, None)] * 50)
    assert calls == []  # cached while HEAD and the index stay as they are
    calls.clear()
    staleness.Tree(str(repo)).check(anchored(CONFIG, repo))
    assert calls == []  # nothing missing: no git at all


def test_usable_folder_refuses_what_a_caller_should_not_point_at(repo, tmp_path):
    assert staleness.usable_folder(str(repo)) == str(repo.resolve())
    assert staleness.usable_folder("relative/path") is None
    assert staleness.usable_folder("/etc") is None  # root's
    assert staleness.usable_folder("/") is None
    assert staleness.usable_folder(os.path.expanduser("~")) is None
    assert staleness.usable_folder(str(tmp_path / "missing")) is None
    link = tmp_path / "to-etc"
    link.symlink_to("/etc")
    assert staleness.usable_folder(str(link)) is None
    assert staleness.usable_folder(str(repo / "justfile")) is None
    assert staleness.usable_folder(None) is None


def test_mark_sets_stale_on_plain_rows(repo):
    rows = [
        {"id": "a", "text": RETRY, "anchors": anchored(RETRY, repo)},
        {"id": "b", "text": CONFIG, "anchors": anchored(CONFIG, repo)},
        {"id": "c", "text": "no code", "anchors": []},
    ]
    (repo / "svc/net/retry.py").unlink()
    staleness.mark(rows, str(repo))
    assert rows[0]["stale"] == "file gone: svc/net/retry.py"
    assert rows[1]["stale"] is None and "stale" not in rows[2]
    untouched = [{"id": "a", "anchors": anchored(CONFIG, repo)}]
    staleness.mark(untouched, "relative")
    assert "stale" not in untouched[0]


def test_git_time_is_bounded_per_recall(repo, monkeypatch):
    found = anchored(RETRY, repo)
    (repo / "svc/net/retry.py").unlink()
    monkeypatch.setattr(staleness, "GIT_BUDGET", 0.0)
    result = check(found, repo)
    assert result.stale is None and "git took too long" in result.note


def test_a_stored_commit_is_never_handed_to_git_as_an_option(repo, tmp_path):
    found = anchored(RETRY, repo)
    (repo / "svc/net/retry.py").unlink()
    target = tmp_path / "written-by-git"
    bad = [{**found[0], "commit": f"--output={target}"}]
    result = check(bad, repo)
    assert result.stale is None and "no commit to compare with" in result.note
    assert not target.exists()
