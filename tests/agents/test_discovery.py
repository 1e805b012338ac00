"""Every agent's discovery stays in its folder and reads only the user's own files.

Each case copies a real session home from tests/fixtures/agents/ into a temporary
agent home, then tries what an attacker (another local user, or a planted symlink)
would: a symlink out of the folder, a file another user owns, a file its group or
everyone can write, a world-writable folder. Both the automatic discovery and the
``--path`` walk are tried, and the reader itself on the open descriptor (a file
swapped after discovery). The tests run as root: uid/gid 65534 is "another user".
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from memloom.agents import get_agent, session_container
from memloom.agents.base import Agent, DiscoverOptions, Discovery
from memloom.agents.discovery import Fence, unsafe_reason, walk_named
from memloom.agents.files import UnsafeFile, file_problem, open_regular

pytestmark = pytest.mark.security

FIXTURES = Path(__file__).parents[1] / "fixtures" / "agents"
NOBODY = 65534


@dataclass(frozen=True)
class Case:
    agent: str
    home: str  # a real agent home under tests/fixtures/agents/

    def __str__(self) -> str:
        return self.agent


CASES = [
    Case("claude-code", "claude-code/e2e-2.1.328/.claude"),
    Case("codex", "codex/e2e-0.169.0/.codex"),
    Case("gemini", "gemini/e2e-0.61.0/.gemini"),
    Case("copilot", "copilot/e2e-1.0.102/.copilot"),
    Case("aider", "aider/e2e-0.86.2/shop"),
    Case("opencode", "opencode/e2e-1.18.33/.local/share/opencode"),
    Case("qwen", "qwen/e2e-0.24.4/.qwen"),
    Case("cursor", "cursor/home/.cursor"),
]


@pytest.fixture(params=CASES, ids=str)
def case(request) -> Case:
    return request.param


def fresh(case: Case) -> Agent:
    """A new adapter of the case's agent (no roots left over from another test)."""
    return type(get_agent(case.agent))()


def home_of(case: Case, tmp_path: Path) -> Path:
    home = tmp_path / "agent-home"
    shutil.copytree(FIXTURES / case.home, home, symlinks=True)
    return home


def automatic(case: Case, home: Path) -> Discovery:
    options = DiscoverOptions(root=home, days=None, max_sessions=None, quiet_seconds=0)
    return fresh(case).discover(options)


def walked(case: Case, home: Path) -> Discovery:
    return fresh(case).discover(DiscoverOptions(paths=[home]))


def files_of(found: Discovery) -> set[str]:
    """The session files found (the store file for an OpenCode session), resolved."""
    return {os.path.realpath(session_container(f.path)) for f in found.files}


def victim(case: Case, home: Path) -> Path:
    """The first session file the untouched home yields (the store file for OpenCode)."""
    found = automatic(case, home)
    assert found.files, f"{case}: the fixture home yields no session"
    assert found.skipped.get("unsafe", 0) == 0
    return Path(session_container(found.files[0].path))


def both(case: Case, home: Path) -> list[Discovery]:
    return [automatic(case, home), walked(case, home)]


# ---------------------------------------------------------------- symlinks


def test_a_symlink_that_stays_in_the_agents_folder_is_read(case, tmp_path):
    home = home_of(case, tmp_path)
    session = victim(case, home)
    kept = session.with_name(session.name + ".kept")  # a name no agent takes for a session
    session.rename(kept)
    session.symlink_to(kept.name)
    for found in both(case, home):
        assert str(kept) in files_of(found), found.skipped
        assert found.skipped.get("unsafe", 0) == 0, found.skipped_paths["unsafe"]


def test_a_symlink_out_of_the_agents_folder_is_refused(case, tmp_path):
    home = home_of(case, tmp_path)
    session = victim(case, home)
    outside = tmp_path / "elsewhere" / session.name  # e.g. ../../.bash_history
    outside.parent.mkdir()
    session.rename(outside)
    session.symlink_to(outside)
    for found in both(case, home):
        assert str(outside) not in files_of(found)
        assert str(session) in found.skipped_paths["unsafe"], found.skipped


def test_a_symlinked_folder_out_of_the_agents_folder_is_refused(case, tmp_path):
    home = home_of(case, tmp_path)
    session = victim(case, home)
    folder = session.parent
    if folder == home:
        pytest.skip("the session lies in the root itself (named by the caller)")
    outside = tmp_path / "elsewhere"
    folder.rename(outside)
    folder.symlink_to(outside, target_is_directory=True)
    for found in both(case, home):
        assert str(outside / session.name) not in files_of(found)


# ---------------------------------------------------------------- ownership and modes


def test_another_users_file_is_refused(case, tmp_path):
    home = home_of(case, tmp_path)
    session = victim(case, home)
    os.chown(session, NOBODY, -1)
    for found in both(case, home):
        assert str(session) not in files_of(found)
        assert found.skipped["unsafe"] >= 1, found.skipped


def test_a_file_its_group_can_write_is_refused(case, tmp_path):
    home = home_of(case, tmp_path)
    session = victim(case, home)
    os.chown(session, -1, NOBODY)  # a group of another user's, not the owner's own
    os.chmod(session, 0o664)
    for found in both(case, home):
        assert str(session) not in files_of(found)
        assert found.skipped["unsafe"] >= 1, found.skipped


def test_a_file_every_user_can_write_is_refused(case, tmp_path):
    home = home_of(case, tmp_path)
    session = victim(case, home)
    os.chmod(session, 0o646)
    for found in both(case, home):
        assert str(session) not in files_of(found)
        assert found.skipped["unsafe"] >= 1, found.skipped


@pytest.mark.parametrize("mode", [0o1777, 0o777], ids=["sticky", "not-sticky"])
def test_a_folder_every_user_can_write_is_not_read(case, tmp_path, mode):
    """A /tmp-like folder (sticky or not) holding the session: others could have put it there."""
    home = home_of(case, tmp_path)
    session = victim(case, home)
    os.chmod(session.parent, mode)
    for found in both(case, home):
        assert str(session) not in files_of(found)
        assert found.skipped["unsafe"] >= 1, found.skipped


def test_the_reader_checks_the_open_file_again(case, tmp_path):
    """Swapped after discovery (TOCTOU): the reader refuses on the descriptor it reads."""
    home = home_of(case, tmp_path)
    agent = fresh(case)
    found = automatic(case, home)
    path = found.files[0].path
    agent.read(path)  # the untouched session reads
    os.chown(session_container(path), NOBODY, -1)
    with pytest.raises(UnsafeFile) as refused:
        agent.read(path)
    assert refused.value.rule == "foreign_owner"


# ---------------------------------------------------------------- the shared rules


def test_a_root_every_user_can_write_is_refused_whole(tmp_path):
    """``memloom import --path /tmp``: a sticky world-writable root is not walked."""
    shared = tmp_path / "tmp-like"
    shared.mkdir()
    (shared / "mine.jsonl").write_text("{}\n")
    os.chmod(shared, 0o1777)
    out = Discovery()
    seen: list[Path] = []
    walk_named([shared], out, lambda p, named: seen.append(p))
    assert seen == [] and out.skipped_paths["unsafe"] == [str(shared)]
    named = Discovery()
    walk_named([shared / "mine.jsonl"], named, lambda p, named: seen.append(p))
    assert seen == [] and named.skipped["unsafe"] == 1  # a named file's folder is its root


def test_a_root_inside_a_folder_others_can_swap_is_refused(tmp_path):
    """A private root below a world-writable folder that is not sticky: others can
    rename the root itself; below a sticky one (/tmp) they cannot."""
    swap = tmp_path / "swap"
    root = swap / "root"
    root.mkdir(parents=True)
    os.chmod(swap, 0o777)
    assert Fence(root, Discovery()).problem == "shared_root"
    os.chmod(swap, 0o1777)
    assert Fence(root, Discovery()).problem is None


def test_a_folder_of_another_user_on_the_way_is_refused(tmp_path):
    root = tmp_path / "root"
    inner = root / "theirs"
    inner.mkdir(parents=True)
    (inner / "s.jsonl").write_text("{}\n")
    os.chown(inner, NOBODY, NOBODY)
    out = Discovery()
    assert Fence(root, out).regular_stat(inner / "s.jsonl") is None
    assert out.skipped["unsafe"] == 1


def test_a_file_of_the_owners_private_group_is_read(tmp_path):
    """Debian's and Ubuntu's umask 002 makes files group-writable by the user's own
    group: still the user's (as Debian's OpenSSH StrictModes allows)."""
    import grp
    import pwd

    me = pwd.getpwuid(os.geteuid())
    group = grp.getgrgid(me.pw_gid)
    others = [p.pw_name for p in pwd.getpwall() if p.pw_gid == me.pw_gid and p.pw_uid != me.pw_uid]
    if others or any(m != me.pw_name for m in group.gr_mem):
        pytest.skip(f"group {group.gr_name} is not private to {me.pw_name} here")
    path = tmp_path / "s.jsonl"
    path.write_text("{}\n")
    os.chmod(path, 0o664)
    assert file_problem(path.stat()) is None
    with open_regular(path) as fh:
        assert fh.read() == b"{}\n"
    os.chown(path, -1, NOBODY)
    assert file_problem(path.stat()) == "group_writable"


def test_unsafe_reason_names_the_rule(tmp_path):
    folder = tmp_path / "agent"
    folder.mkdir()
    own = folder / "s.jsonl"
    own.write_text("{}\n")
    secret = tmp_path / ".netrc"
    secret.write_text("machine h login u password X\n")
    (folder / "link.jsonl").symlink_to(secret)
    assert unsafe_reason(own, [folder]) is None
    assert unsafe_reason(secret, [folder]) == "outside"
    assert unsafe_reason(folder / "link.jsonl", [folder]) == "outside"
    os.chmod(own, 0o666)
    assert unsafe_reason(own, [folder]) == "world_writable"
