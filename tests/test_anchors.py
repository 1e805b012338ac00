"""memloom.anchors: the files, identifiers and commit a memory is about, found at write
time, never outside the project (tests/fixtures/anchors/repo as a real git repository)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from memloom import anchors
from memloom.errors import ValidationError
from tests.support.git import git

FIXTURE = Path(__file__).parent / "fixtures" / "anchors" / "repo"
RETRY = "Retries are capped by `MAX_RETRIES` in svc/net/retry.py (see RetryPolicy.backoff_delay())"


def make_repo(where: Path, *, commit: bool = True) -> Path:
    """The fixture project as a git repository with one commit."""
    repo = where / "repo"
    shutil.copytree(FIXTURE, repo)
    git(repo, "init", "-q", "-b", "main")
    if commit:
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "first")
    return repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


def by_path(found: anchors.Found) -> dict[str, dict]:
    return {a["path"]: a for a in found.anchors}


# ---------------------------------------------------------------- reading the text


def test_paths_and_identifiers_are_read_off_the_text():
    text = (
        "Run `just check`; `MAX_RETRIES` in svc/net/retry.py:12, and config.load_settings() "
        "reads DATABASE_URL. HttpClient and parseHeaders, not API nor HTTP."
    )
    paths = anchors.paths_in(text)
    assert "svc/net/retry.py" in paths and "just check" not in paths  # :12 cut, spaces no path
    names = anchors.names_in(text)
    for name in ("MAX_RETRIES", "config.load_settings", "DATABASE_URL", "HttpClient"):
        assert name in names
    assert "parseHeaders" in names
    assert "API" not in names and "HTTP" not in names  # a bare word only when backticked


def test_a_memory_anchors_the_files_it_names_with_the_names_found_there(repo):
    head = git(repo, "rev-parse", "HEAD")
    found = anchors.find(RETRY + ". Deploys: docs/deploy.md and the justfile.", str(repo))
    got = by_path(found)
    assert set(got) == {"svc/net/retry.py", "docs/deploy.md"}
    retry = got["svc/net/retry.py"]
    assert retry["symbols"] == ["MAX_RETRIES", "RetryPolicy.backoff_delay"]
    assert (retry["commit"], retry["root"], retry["via"]) == (head, str(repo), "text")
    assert got["docs/deploy.md"]["symbols"] == []
    assert found.note is None


def test_a_name_alone_finds_its_one_tracked_file_and_a_subfolder_reads_from_the_top(repo):
    got = by_path(anchors.find("load_settings() lives in config.py", str(repo / "svc" / "net")))
    assert list(got) == ["svc/config.py"] and got["svc/config.py"]["symbols"] == ["load_settings"]
    got = by_path(anchors.find("see svc/net/retry.py", str(repo / "svc")))
    assert list(got) == ["svc/net/retry.py"]


def test_an_identifier_not_in_the_named_file_is_not_anchored(repo):
    got = by_path(anchors.find("svc/config.py sets MAX_RETRIES and NO_SUCH_NAME", str(repo)))
    assert got["svc/config.py"]["symbols"] == []


def test_binary_files_are_never_searched(repo):
    got = by_path(anchors.find("docs/logo.bin holds MAX_RETRIES and load_settings()", str(repo)))
    assert got["docs/logo.bin"]["symbols"] == []


def test_files_are_read_up_to_the_bound(repo, monkeypatch):
    big = repo / "svc" / "big.py"
    big.write_text("x = 1\n" * 1000 + "LATE_NAME = 2\n")
    monkeypatch.setattr(anchors, "MAX_FILE_BYTES", 1024)
    found = by_path(anchors.find("svc/big.py has LATE_NAME", str(repo)))
    assert found["svc/big.py"]["symbols"] == []


# ---------------------------------------------------------------- hostile text


def test_paths_outside_the_project_are_never_anchored_nor_read(repo, tmp_path, monkeypatch):
    secret = tmp_path / "outside.py"
    secret.write_text("SECRET_NAME = 1\n")
    ssh = tmp_path / ".ssh"
    ssh.mkdir()
    (ssh / "id_rsa").write_text("KEY_MATERIAL\n")
    (repo / "leak.py").symlink_to(secret)
    (repo / "linked").symlink_to(tmp_path)
    opened: list[str] = []
    real_open = anchors.open_regular
    monkeypatch.setattr(anchors, "open_regular", lambda p: opened.append(str(p)) or real_open(p))
    text = (
        f"/etc/passwd, ../../.ssh/id_rsa, ../outside.py, {secret}, leak.py, linked/outside.py, "
        "~/.ssh/id_rsa, /dev/zero, and SECRET_NAME"
    )
    assert anchors.find(text, str(repo)).anchors == []
    assert opened == []


def test_a_fifo_a_device_and_private_folders_inside_the_project_are_not_anchored(repo):
    os.mkfifo(repo / "queue.fifo")
    os.symlink("/dev/zero", repo / "zero.dev")
    (repo / ".ssh").mkdir()
    (repo / ".ssh" / "config").write_text("Host x\n")
    found = anchors.find("queue.fifo and zero.dev and .ssh/config and .git/config", str(repo))
    assert found.anchors == []  # returned at once: nothing was opened to hang on


def test_files_others_could_write_or_own_are_not_anchored(repo):
    shared = repo / "shared.py"
    shared.write_text("SHARED = 1\n")
    shared.chmod(0o666)
    theirs = repo / "theirs.py"
    theirs.write_text("THEIRS = 1\n")
    if os.geteuid() == 0:
        os.chown(theirs, 65534, 65534)
        assert anchors.find("theirs.py", str(repo)).anchors == []
    assert anchors.find("shared.py", str(repo)).anchors == []


def test_the_home_folder_or_the_root_is_no_project(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / "proj").mkdir(parents=True)
    (home / ".netrc").write_text("machine x password y\n")
    (home / "proj" / "a.py").write_text("A_NAME = 1\n")
    monkeypatch.setenv("HOME", str(home))
    assert anchors.find(".netrc and proj/a.py", str(home)).anchors == []
    assert anchors.find("etc/hostname", "/").anchors == []
    assert [a["path"] for a in anchors.find("a.py", str(home / "proj")).anchors] == ["a.py"]


def test_a_given_file_must_be_a_file_of_the_project(repo):
    got = anchors.find(
        "about retries",
        str(repo),
        given=[{"path": "svc/net/retry.py", "symbols": ["BACKOFF_SECONDS", "GONE"]}],
    )
    assert got.anchors[0]["via"] == "given"
    assert got.anchors[0]["symbols"] == ["BACKOFF_SECONDS"]
    for bad in ("missing.py", "../outside.py", "/etc/passwd", ".ssh/id_rsa"):
        with pytest.raises(ValidationError, match="is not a file of the project"):
            anchors.find("x", str(repo), given=[{"path": bad}])


# ---------------------------------------------------------------- git states


def test_no_git_no_commit_and_said_so(tmp_path):
    folder = tmp_path / "plain"
    shutil.copytree(FIXTURE, folder)
    found = anchors.find(RETRY, str(folder))
    assert [a["path"] for a in found.anchors] == ["svc/net/retry.py"]
    assert found.anchors[0]["commit"] is None and found.note == "not a git repository"


def test_git_missing(repo, monkeypatch):
    monkeypatch.setenv("PATH", str(repo / "nothing-here"))
    found = anchors.find(RETRY, str(repo))
    assert found.note == "git is not installed" and found.anchors[0]["commit"] is None


def test_unborn_branch(tmp_path):
    repo = make_repo(tmp_path, commit=False)
    found = anchors.find(RETRY, str(repo))
    assert found.note == "no commit yet" and found.anchors[0]["root"] == str(repo)


def test_detached_head_and_a_rebase_in_progress_keep_their_commit(repo):
    first = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "--detach")
    assert anchors.find(RETRY, str(repo)).anchors[0]["commit"] == first
    git(repo, "checkout", "-q", "main")
    (repo / "svc/net/retry.py").write_text("MAX_RETRIES = 5\n")
    git(repo, "commit", "-qam", "five")
    git(repo, "checkout", "-q", "-b", "other", first)
    (repo / "svc/net/retry.py").write_text("MAX_RETRIES = 7\n")
    git(repo, "commit", "-qam", "seven")
    with pytest.raises(subprocess.CalledProcessError):
        git(repo, "rebase", "main")  # a conflict: the rebase stops part-way
    assert (repo / ".git" / "rebase-merge").exists() or (repo / ".git" / "rebase-apply").exists()
    found = anchors.find(RETRY, str(repo))
    assert found.anchors[0]["commit"] == git(repo, "rev-parse", "HEAD")


def test_bare_and_shallow_repositories(repo, tmp_path):
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    found = anchors.find("svc/net/retry.py", str(bare))
    assert found.anchors == [] and found.note == "a bare repository (no working tree)"
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", str(shallow))
    found = anchors.find(RETRY, str(shallow))
    assert found.anchors[0]["commit"] == git(repo, "rev-parse", "HEAD")


def test_a_git_dir_in_the_environment_is_not_followed(repo, tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere"))
    assert anchors.find(RETRY, str(repo)).anchors[0]["commit"] == git(repo, "rev-parse", "HEAD")


# ---------------------------------------------------------------- versions, merges, backups


def test_a_new_version_keeps_what_its_text_still_names():
    old = [
        {"path": "svc/net/retry.py", "symbols": ["MAX_RETRIES", "RetryPolicy"], "via": "text"},
        {"path": "docs/deploy.md", "symbols": [], "via": "text"},
        {"path": "svc/config.py", "symbols": [], "via": "given"},
    ]
    kept = anchors.carry(old, "MAX_RETRIES is now 5 in retry.py")
    assert [(a["path"], a["symbols"]) for a in kept] == [
        ("svc/net/retry.py", ["MAX_RETRIES"]),
        ("svc/config.py", []),
    ]


def test_merge_joins_names_per_file():
    a = [{"path": "x.py", "symbols": ["A_B"], "root": "/r", "commit": "1", "via": "text"}]
    b = [{"path": "x.py", "symbols": ["C_D"], "root": "/r", "commit": "2", "via": "text"}]
    assert anchors.merge(a, b) == [{**a[0], "symbols": ["A_B", "C_D"]}]


@pytest.mark.parametrize(
    "bad",
    [
        "not a list",
        [{"path": "/etc/passwd"}],
        [{"path": "../../.ssh/id_rsa"}],
        [{"path": "a.py", "symbols": "A"}],
        [{"path": "a.py", "commit": 5}],
        [{"path": "a.py", "via": "shell"}],
        [{"path": "a.py"}] * (anchors.MAX_ANCHORS + 1),
    ],
)
def test_anchors_from_outside_are_checked(bad):
    with pytest.raises(ValueError):
        anchors.checked(bad)


# ---------------------------------------------------------------- files the tool calls touched


def test_tool_touched_files_are_anchored_with_the_names_found_there(repo):
    head = git(repo, "rev-parse", "HEAD")
    text = "Retries stop after `MAX_RETRIES`; load_settings() reads the rest"
    touched = [str(repo / "svc/net/retry.py"), "svc/config.py", "svc/net/retry.py"]
    got = {a["path"]: a for a in anchors.from_tools(text, str(repo), touched)}
    assert list(got) == ["svc/net/retry.py", "svc/config.py"]  # each once, in call order
    assert got["svc/net/retry.py"] == {
        "path": "svc/net/retry.py",
        "symbols": ["MAX_RETRIES"],
        "commit": head,
        "root": str(repo),
        "via": "tool",
    }
    assert got["svc/config.py"]["symbols"] == ["load_settings"]
    # Relative to the folder the session ran in (a subfolder), absolute under the root.
    sub = anchors.from_tools("x", str(repo / "svc"), ["net/retry.py"])
    assert [a["path"] for a in sub] == ["svc/net/retry.py"]


def test_find_merges_tool_files_after_the_text_named_ones(repo):
    text = "`MAX_RETRIES` is in svc/net/retry.py and DATABASE_URL in the settings"
    found = anchors.find(text, str(repo), touched=["svc/config.py", str(repo / "svc/net/retry.py")])
    assert [(a["path"], a["via"]) for a in found.anchors] == [
        ("svc/net/retry.py", "text"),  # text-named first; also read by a tool: one anchor
        ("svc/config.py", "tool"),
    ]
    assert found.anchors[0]["symbols"] == ["MAX_RETRIES"]
    assert anchors.checked(found.anchors) == found.anchors  # a backup takes them back


def test_tool_anchors_stop_at_the_cap(repo, monkeypatch):
    monkeypatch.setattr(anchors, "MAX_ANCHORS", 2)
    many = ["svc/net/retry.py", "svc/config.py", "docs/deploy.md", "justfile"]
    assert len(anchors.from_tools("x", str(repo), many)) == 2
    assert len(anchors.find("see justfile", str(repo), touched=many).anchors) == 2


def test_a_tool_path_that_is_gone_or_no_file_is_simply_not_anchored(repo):
    text = "MAX_RETRIES"
    touched = ["svc/deleted_later.py", "svc", str(repo), "", "docs/logo.bin"]
    got = anchors.from_tools(text, str(repo), touched)
    assert [(a["path"], a["symbols"]) for a in got] == [("docs/logo.bin", [])]  # binary: unsearched
    assert anchors.from_tools(text, None, touched) == []
    assert anchors.from_tools(text, str(repo), []) == []


def test_tool_paths_outside_the_project_are_never_anchored_nor_read(repo, tmp_path, monkeypatch):
    """A transcript is untrusted: its tool calls may name anything."""
    secret = tmp_path / "outside.py"
    secret.write_text("SECRET_NAME = 1\n")
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "id_rsa").write_text("KEY_MATERIAL\n")
    (repo / "leak.py").symlink_to(secret)
    (repo / "linked").symlink_to(tmp_path)
    os.mkfifo(repo / "queue.fifo")
    os.symlink("/dev/zero", repo / "zero.dev")
    (repo / ".git" / "secret.py").write_text("SECRET_NAME = 2\n")
    opened: list[str] = []
    real_open = anchors.open_regular
    monkeypatch.setattr(anchors, "open_regular", lambda p: opened.append(str(p)) or real_open(p))
    touched = [
        "/etc/passwd",
        "../../.ssh/id_rsa",
        "../outside.py",
        str(secret),
        f"{repo}/../outside.py",
        f"{repo}/svc/../../outside.py",
        "leak.py",
        "linked/outside.py",
        "~/.ssh/id_rsa",
        "/dev/zero",
        "queue.fifo",
        "zero.dev",
        ".git/secret.py",
        "svc/\x00.py",
    ]
    assert anchors.from_tools("SECRET_NAME and KEY_MATERIAL", str(repo), touched) == []
    assert anchors.find("SECRET_NAME", str(repo), touched=touched).anchors == []
    assert opened == []


def test_a_huge_touched_file_is_read_up_to_the_bound(repo, monkeypatch):
    big = repo / "svc" / "huge.py"
    with big.open("w") as fh:
        fh.write("EARLY_NAME = 1\n")
        fh.write("x = 1\n" * 400_000)  # 2.4 MB
        fh.write("LATE_NAME = 2\n")
    reads: list[int] = []
    real_open = anchors.open_regular

    def counting(path):
        fh = real_open(path)
        real_read = fh.read
        fh.read = lambda n=-1: reads.append(n) or real_read(n)  # type: ignore[method-assign]
        return fh

    monkeypatch.setattr(anchors, "open_regular", counting)
    (got,) = anchors.from_tools("EARLY_NAME then LATE_NAME", str(repo), ["svc/huge.py"])
    assert got["symbols"] == ["EARLY_NAME"] and reads == [anchors.MAX_FILE_BYTES]
