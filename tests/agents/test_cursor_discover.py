"""Cursor discovery (memloom.agents.cursor.discover): the agent-transcripts layout, the
shared rules (quiet window, days, cap, project needle), ``--path`` by content, and the
workspace slug."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from memloom.agents import get_agent
from memloom.agents.base import DiscoverOptions
from memloom.agents.cursor.discover import slug_path

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "agents" / "cursor"
SID = "5b1c2d3e-0000-4a11-9b22-3c4d5e6f7a81"
TXT_ID = "0f9e8d7c-1111-4b22-8c33-4d5e6f708192"
NOW = time.time()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A HOME holding the fixture's ~/.cursor, every file an hour old."""
    shutil.copytree(FIX / "home", tmp_path, dirs_exist_ok=True)
    for path in (tmp_path / ".cursor").rglob("*"):
        if path.is_file():
            os.utime(path, (NOW - 3600, NOW - 3600))
    return tmp_path


def transcripts(home: Path, slug: str = "home-dev-acme-api") -> Path:
    return home / ".cursor" / "projects" / slug / "agent-transcripts"


def discover(home: Path, **rules) -> object:
    rules.setdefault("quiet_seconds", 300)
    rules.setdefault("now", NOW)
    return get_agent("cursor").discover(DiscoverOptions(root=home / ".cursor", **rules))


def test_finds_nested_jsonl_and_text_transcripts_not_subagents(home):
    found = discover(home)
    assert sorted(f.session_id for f in found.files) == sorted([SID, TXT_ID])
    assert found.skipped["sidecars"] == 1
    assert {f.project_dir for f in found.files} == {"home-dev-acme-api"}  # not on this machine
    agent = get_agent("cursor")
    assert {agent.ledger_identity(f) for f in found.files} == {
        f"cursor:{SID}",
        f"cursor-txt:{TXT_ID}",
    }


def test_flat_jsonl_other_files_and_other_folders(home):
    t = transcripts(home)
    (t / "abc.jsonl").write_text(json.dumps({"role": "user", "message": {"content": "x"}}) + "\n")
    (t / "notes.md").write_text("mine")
    (t / SID / "state.json").write_text("{}")
    (home / ".cursor" / "projects" / "home-dev-acme-api" / "terminals").mkdir()
    (home / ".cursor" / "projects" / "home-dev-acme-api" / "terminals" / "1.txt").write_text("$ ls")
    for p in (t / "abc.jsonl", t / "notes.md", t / SID / "state.json"):
        os.utime(p, (NOW - 60, NOW - 3600))
    found = discover(home)
    assert "abc" in {f.session_id for f in found.files}
    assert found.skipped["not_transcripts"] == 2  # notes.md, state.json; terminals/ unseen


def test_quiet_window_days_and_cap(home):
    jsonl = transcripts(home) / SID / f"{SID}.jsonl"
    os.utime(jsonl, (NOW - 10, NOW - 10))
    found = discover(home)
    assert [f.session_id for f in found.files] == [TXT_ID]
    assert found.skipped["active"] == 1
    assert len(discover(home, quiet_seconds=0).files) == 2
    old = discover(home, quiet_seconds=0, days=1 / 24 / 2)  # half an hour: the text is older
    assert [f.session_id for f in old.files] == [SID] and old.skipped["outside_window"] == 1
    capped = discover(home, quiet_seconds=0, max_sessions=1)
    assert [f.session_id for f in capped.files] == [SID] and capped.skipped["over_cap"] == 1


def test_project_needle_matches_the_workspace_folder_or_slug(home, tmp_path):
    other = transcripts(home, "srv-billing")
    other.mkdir(parents=True)
    (other / "b.txt").write_text("user:\n<user_query>\nhi\n</user_query>\n")
    os.utime(other / "b.txt", (NOW - 3600, NOW - 3600))
    found = discover(home, project="ACME-api")
    assert len(found.files) == 2 and found.skipped["project_filter"] == 1
    assert [f.session_id for f in discover(home, project="billing").files] == ["b"]


def test_slug_path_finds_the_folder_even_with_dashes_in_names(tmp_path):
    ws = tmp_path / "my-repo" / "sub-dir"
    ws.mkdir(parents=True)
    (tmp_path / "my").mkdir()  # a decoy: "my" exists, "my/repo" does not
    slug = str(ws).lstrip("/").replace("/", "-")
    assert slug_path(slug) == str(ws)
    assert slug_path(slug + "-gone") is None
    assert slug_path("") is None


def test_a_session_is_filed_under_its_workspace_when_it_exists(tmp_path):
    ws = tmp_path / "acme-api"
    ws.mkdir()
    slug = str(ws).lstrip("/").replace("/", "-")
    t = tmp_path / "h" / ".cursor" / "projects" / slug / "agent-transcripts"
    t.mkdir(parents=True)
    shutil.copy(
        FIX
        / "home"
        / ".cursor"
        / "projects"
        / "home-dev-acme-api"
        / "agent-transcripts"
        / f"{TXT_ID}.txt",
        t / "s.txt",
    )
    os.utime(t / "s.txt", (NOW - 3600, NOW - 3600))
    found = get_agent("cursor").discover(DiscoverOptions(root=tmp_path / "h" / ".cursor", now=NOW))
    (f,) = found.files
    assert f.project_dir == str(ws)
    assert get_agent("cursor").project_of(f.path) == str(ws)


def test_path_option_by_content(home, tmp_path):
    t = transcripts(home)
    folder = tmp_path / "loose"
    folder.mkdir()
    shutil.copy(t / SID / f"{SID}.jsonl", folder / "cursor.jsonl")
    (folder / "claude.jsonl").write_text(
        json.dumps({"type": "user", "sessionId": "s", "message": {"role": "user", "content": "x"}})
        + "\n"
    )
    (folder / "readme.txt").write_text("just some notes\n")
    agent = get_agent("cursor")
    found = agent.discover(DiscoverOptions(paths=[folder]))
    assert [f.path.name for f in found.files] == ["cursor.jsonl"]
    assert found.skipped["not_transcripts"] == 2
    named = agent.discover(DiscoverOptions(paths=[t / SID / "subagents" / "explore-1.jsonl"]))
    assert named.files == [] and named.skipped["sidecars"] == 1
    gone = agent.discover(DiscoverOptions(paths=[tmp_path / "nope.jsonl"]))
    assert gone.skipped["missing"] == 1
    mine = agent.discover(DiscoverOptions(paths=[t / f"{TXT_ID}.txt"], project="nomatch"))
    assert mine.files == [] and mine.skipped["project_filter"] == 1


def test_found_only_when_the_home_exists(tmp_path):
    agent = get_agent("cursor")
    assert not agent.found({"HOME": str(tmp_path)})
    (tmp_path / ".cursor").mkdir()
    assert agent.found({"HOME": str(tmp_path)})
    assert agent.settings_path({"HOME": str(tmp_path)}) == tmp_path / ".cursor" / "hooks.json"
