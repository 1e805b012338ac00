"""The Aider adapter: the real chat history (slash commands only), a hand-made
history with prompts and replies, resume after an appended session, damaged files,
discovery from known project roots, no hooks, and an import through the importer."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

import memloom
from memloom import agents
from memloom.agents.aider import Aider
from memloom.agents.aider import parse as parse_mod
from memloom.agents.base import Agent, DiscoverOptions
from memloom.errors import NotificationRefused, SettingsError
from memloom.sessions.importer import Importer, ImportOptions
from tests.sessions.test_importer import model  # noqa: F401  (fixture)

ROOT = Path(__file__).resolve().parents[1] / "fixtures" / "agents"
REAL = ROOT / "aider" / "BeehiveInnovations__zen-mcp-server__.aider.chat.history.md"
SYNTH = ROOT / "synthetic" / "aider" / "chat.history.md"
APPENDED = ROOT / "synthetic" / "aider" / "appended.history.md"
HEADER = "# aider chat started at {}\n\n> Aider v0.86.1  \n"


@pytest.fixture
def agent() -> Aider:
    return Aider()


def history(folder: Path, text: str, name: str = ".aider.chat.history.md") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------- registry, no hooks


def test_registered_as_aider(tmp_path):
    a = agents.get_agent("aider")
    assert isinstance(a, Aider) and isinstance(a, Agent) and a.name == "aider"
    assert a.installed_hooks() == {}
    with pytest.raises(SettingsError, match="periodic sweep"):
        a.install_hooks("memloom")
    assert not a.remove_hooks().changed
    with pytest.raises(NotificationRefused, match="no hooks"):
        a.parse_hook_payload({"transcript_path": str(tmp_path / "x.md")})


# ---------------------------------------------------------------- the real file


def test_real_history_holds_only_slash_commands(agent):
    res = agent.read(REAL, final=True)
    text = REAL.read_text(encoding="utf-8")
    assert len(re.findall(r"(?m)^# aider chat started at ", text)) == 4
    assert res.units == []  # /add and /copy-context only: no statements, no replies
    assert res.dropped["slash_command"] == 8  # the 8 prompt blocks (one spans 8 lines)
    assert res.dropped["tool_output"] == text.count("\n>")
    assert res.malformed == 0 and res.lines_read == text.count("\n")
    assert res.end_offset == REAL.stat().st_size
    assert res.session_id == f"aider:{REAL.absolute()}:2025-10-20 21:49:17"


# ---------------------------------------------------------------- the hand-made file


def test_prompts_replies_and_sessions(agent):
    res = agent.read(SYNTH, final=True)
    assert [(u.role, u.start_line, u.end_line) for u in res.units] == [
        ("user", 15, 15),
        ("assistant", 17, 29),
        ("user", 35, 37),
        ("assistant", 39, 48),
        ("assistant", 59, 59),
        ("user", 67, 67),
        ("assistant", 69, 69),
    ]
    users = [u.text for u in res.units if u.role == "user"]
    assert users[1] == (
        "The test for three items of 0.335 still fails.\n"
        "Expected 1.01, got 1.00.\n"
        "Can you check the fixture data too?"
    )
    assert users[2] == "/ask where do we read the tax rate from?"  # a question to the model
    assert res.dropped == {"tool_output": 24, "slash_command": 2, "yes_no": 1, "empty": 1}
    for u in res.units:  # tool output never reaches a unit
        assert "Applied edit" not in u.text and "Tokens:" not in u.text and "Commit " not in u.text
    label = str(SYNTH.absolute())
    assert {u.session_id for u in res.units} == {
        f"aider:{label}:2025-11-03 09:14:02",
        f"aider:{label}:2025-11-04 16:40:55",
    }
    assert res.units[0].timestamp == "2025-11-03T09:14:02"
    assert res.cwd == str(SYNTH.absolute().parent) == agent.project_of(SYNTH)
    again = agent.read(SYNTH, final=True)
    assert [u.uuid for u in again.units] == [u.uuid for u in res.units]  # stable ids
    assert len({u.uuid for u in res.units}) == len(res.units)


def test_an_appended_session_resumes_at_the_watermark(tmp_path, agent):
    path = history(tmp_path / "repo", SYNTH.read_text(encoding="utf-8"))
    first = agent.read(path)
    assert len(first.units) == 7 and first.end_offset == path.stat().st_size
    with path.open("a", encoding="utf-8") as f:
        f.write(APPENDED.read_text(encoding="utf-8"))
    rest = agent.read(path, start_offset=first.end_offset, start_line=first.lines_read)
    assert [(u.role, u.text) for u in rest.units] == [
        ("user", "Remember: staging runs Postgres on port 5433, not 5432."),
        ("assistant", "Noted. I'll use port 5433 whenever I connect to staging."),
    ]
    assert {u.session_id for u in rest.units} == {f"aider:{path.absolute()}:2025-11-05 08:02:31"}
    assert rest.units[0].start_line == first.lines_read + 7 and rest.dropped["slash_command"] == 1
    whole = agent.read(path, final=True)
    assert [u.uuid for u in whole.units] == [u.uuid for u in (*first.units, *rest.units)]


def test_a_resume_inside_a_session_finds_its_header(tmp_path, agent):
    path = history(tmp_path, HEADER.format("2025-12-01 10:00:00") + "\n#### first question  \n")
    first = agent.read(path)
    with path.open("a") as f:
        f.write("\nfirst answer\n\n#### second question  \n")
    rest = agent.read(path, start_offset=first.end_offset, start_line=first.lines_read)
    assert [u.text for u in rest.units] == ["first answer", "second question"]
    assert rest.session_id == f"aider:{path.absolute()}:2025-12-01 10:00:00"
    assert {u.session_id for u in rest.units} == {rest.session_id}


def test_unterminated_last_line_waits(tmp_path, agent):
    path = history(tmp_path, HEADER.format("2025-12-01 10:00:00") + "\n#### half a prom")
    res = agent.read(path)
    assert res.units == [] and res.end_offset < path.stat().st_size
    assert [u.text for u in agent.read(path, final=True).units] == ["half a prom"]


def test_prompt_rules(tmp_path, agent):
    recall = "<memloom-context>\nremembered: port 5433\n</memloom-context>"
    text = HEADER.format("2025-12-01 10:00:00") + "".join(
        f"\n{block}\n"
        for block in (
            "#### /ask   ",  # no message: a command
            "#### /code add a retry to the uploader  ",
            "#### /architect  \n#### split the parser in two  ",
            "#### !ls -la  ",
            "#### /run make test  ",
            "#### Yes  ",
            "#### " + recall.replace("\n", "  \n#### ") + "  \n#### why is CI red?  ",
            "#### " + recall.replace("\n", "  \n#### ") + "  ",
            "##### a heading in a reply is text",
        )
    )
    res = agent.read(history(tmp_path, text), final=True)
    assert [(u.role, u.text) for u in res.units] == [
        ("user", "/code add a retry to the uploader"),
        ("user", "/architect\nsplit the parser in two"),
        ("user", "why is CI red?"),
        ("assistant", "##### a heading in a reply is text"),
    ]
    assert res.dropped["slash_command"] == 3 and res.dropped["yes_no"] == 1
    assert res.dropped["empty"] == 1  # only memloom's block


def test_damaged_empty_and_abandoned_files(tmp_path, agent, monkeypatch):
    for content in (b"", b"\n\n", HEADER.format("2025-12-01 10:00:00").encode()):
        res = agent.read(history(tmp_path, content.decode()), final=True)
        assert res.units == [] and res.malformed == 0
    path = tmp_path / "bad.md"
    path.write_bytes(
        HEADER.format("2025-12-01 10:00:00").encode()
        + b"\n\x00\x00\x00\n#### caf\xe9 \xff\xfe  \n\nan answer\x00 with a NUL\r\n"
    )
    res = agent.read(path, final=True)
    assert res.malformed == 1
    assert [u.text for u in res.units] == ["caf\ufffd \ufffd\ufffd", "an answer with a NUL"]
    monkeypatch.setattr(parse_mod, "MAX_LINE_BYTES", 100)
    path.write_text("#### " + "x" * 300 + "\n\n#### short  \n")
    res = agent.read(path, final=True)
    assert [u.text for u in res.units] == ["short"] and res.oversized == 1


# ---------------------------------------------------------------- discovery


def make_repos(tmp_path: Path) -> tuple[list[Path], float]:
    now = time.time()
    repos = []
    for name, age in (("alpha", 3600), ("beta", 7200), ("live", 5), ("old", 40 * 86400)):
        repo = tmp_path / name
        (repo / ".git").mkdir(parents=True)
        path = history(repo, SYNTH.read_text(encoding="utf-8"))
        os.utime(path, (now - age, now - age))
        repos.append(repo)
    (tmp_path / "no-aider" / ".git").mkdir(parents=True)
    (repos[0] / "src" / "pkg").mkdir(parents=True)
    return repos, now


def test_discovery_from_known_roots(tmp_path):
    repos, now = make_repos(tmp_path)
    alpha, beta, live, old = repos
    roots = [alpha / "src" / "pkg", beta, live, old, tmp_path / "no-aider", tmp_path / "gone"]
    agent = Aider(roots=roots)
    assert agent.found()
    found = agent.discover(DiscoverOptions(now=now, max_sessions=None))
    assert [f.path for f in found.files] == [
        (alpha / ".aider.chat.history.md").absolute(),  # found from a cwd inside the repo
        (beta / ".aider.chat.history.md").absolute(),
    ]
    assert found.skipped["active"] == 1 and found.skipped["outside_window"] == 1
    assert sum(found.skipped.values()) == 2  # roots without a history are not counted
    f = found.files[0]
    assert agent.ledger_identity(f) == str(f.path) and f.project_dir == str(alpha.absolute())
    capped = agent.discover(DiscoverOptions(now=now, max_sessions=1))
    assert len(capped.files) == 1 and capped.skipped["over_cap"] == 1
    beta_only = agent.discover(DiscoverOptions(now=now, project="BETA"))
    assert [f.project_dir for f in beta_only.files] == [str(beta.absolute())]
    assert beta_only.skipped["project_filter"] == 3
    extra = Aider().discover(DiscoverOptions(root=beta, now=now))  # DiscoverOptions.root too
    assert len(extra.files) == 1
    assert not Aider(roots=[tmp_path / "no-aider"]).found() and not Aider().found()


def test_discover_named_paths(tmp_path, agent):
    make_repos(tmp_path)
    renamed = history(tmp_path / "elsewhere", SYNTH.read_text(), name="chat-log.md")
    notes = history(tmp_path / "elsewhere", "# Notes\n\nnot aider\n", name="notes.md")
    deps = tmp_path / "alpha" / "node_modules" / "x"
    history(deps, SYNTH.read_text())  # never walked into
    found = agent.discover(
        DiscoverOptions(paths=[renamed, notes, tmp_path / "alpha", tmp_path / "missing.md"])
    )
    assert sorted(f.path.name for f in found.files) == [".aider.chat.history.md", "chat-log.md"]
    assert found.skipped["not_transcripts"] == 1 and found.skipped["missing"] == 1
    assert agent.recognises(SYNTH) and not agent.recognises(notes)


# ---------------------------------------------------------------- through the importer


def test_import_through_the_importer(tmp_path, model):  # noqa: F811
    repo = tmp_path / "acme"
    path = history(
        repo,
        HEADER.format("2025-12-01 10:00:00")
        + "\n#### /add config.py  \n> Added config.py to the chat  \n"
        + "\n#### REMEMBER: staging listens on port 5433  \n\nNoted.\n\n",
    )
    m = memloom.open(home=str(tmp_path / "home"))
    try:
        options = ImportOptions(paths=[path], agent="aider")
        report = Importer(m, m.llm, options).run()
        assert (report.sessions, report.saved) == (1, 1)
        (mem,) = m.list({"limit": 10}).memories
        assert mem.source == "aider" and mem.project == str(repo.absolute())
        assert "/add config.py" not in " ".join(model.bodies())
        again = Importer(m, m.llm, options).run()
        assert again.sessions == 0 and again.skipped["up_to_date"] == 1
    finally:
        m.close()


def test_each_memory_names_the_session_of_the_file_it_came_from(tmp_path, model):  # noqa: F811
    """One history file, two sessions: each memory and its provenance carry its own."""
    repo = tmp_path / "acme"
    path = history(
        repo,
        HEADER.format("2025-12-01 10:00:00")
        + "\n#### REMEMBER: staging listens on port 5433  \n\nNoted.\n\n"
        + HEADER.format("2025-12-02 09:30:00")
        + "\n#### REMEMBER: deploys go out on tuesdays  \n\nNoted.\n\n",
    )
    m = memloom.open(home=str(tmp_path / "home"))
    try:
        report = Importer(m, m.llm, ImportOptions(paths=[path], agent="aider")).run()
        assert report.saved == 2
        by_text = {mem.text: mem for mem in m.list({"limit": 10}).memories}
        first = by_text["staging listens on port 5433"]
        second = by_text["deploys go out on tuesdays"]
        assert first.session_id == f"aider:{path}:2025-12-01 10:00:00"
        assert second.session_id == f"aider:{path}:2025-12-02 09:30:00"
        for mem in (first, second):
            (prov,) = m.get(mem.id).provenance
            assert (prov.session_id, prov.agent) == (mem.session_id, "aider")
    finally:
        m.close()


# ---------------------------------------------------------------- connect aider, the sweep


def cli(tmp_path: Path, *args: str, cwd: Path | None = None):
    """``memloom ARGS`` with its own HOME and data folder, the offline extractor."""
    import json
    import subprocess
    import sys

    drop = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "MEMLOOM_LLM", "MEMLOOM_DAILY_CAP")
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("CLAUDE")}
    env.update(
        HOME=str(tmp_path),
        MEMLOOM_HOME=str(tmp_path / ".memloom"),
        MEMLOOM_LLM="offline",
    )
    proc = subprocess.run(
        [sys.executable, "-m", "memloom._entry", *args],
        cwd=str(cwd or tmp_path),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout) if "--json" in args else proc


def settled(path: Path) -> Path:
    """A history last written 10 minutes ago: past the sweep's quiet period."""
    then = time.time() - 600
    os.utime(path, (then, then))
    return path


def test_connect_aider_names_the_folder_the_sweep_imports_from(tmp_path):
    """Found by the e2e suite: an Aider-only user had no way to tell memloom where
    Aider works (``memloom connect aider``: "No such command"); the sweep only looked
    in folders the store already knew from memories or other agents' sessions, so a
    fresh history was never captured."""
    repo = tmp_path / "shop"
    settled(
        history(
            repo,
            HEADER.format("2026-12-04 05:41:23")
            + "\n> aider --openai-api-key ...ummy --message hi  \n\n"
            + "#### Remember that deploys of the shop go through ArgoCD on Fridays.  \n\n"
            + "Noted.\n\n> Tokens: 607 sent, 7 received.  \n",
        )
    )
    doc = cli(tmp_path, "connect", "aider", "--json", cwd=repo)
    assert doc["roots"] == [str(repo)] and doc["hooks"] == []
    assert doc["scope"]["projects"] == [str(repo)]  # no scope yet: the folder is the scope
    out = cli(tmp_path, "capture", "run-once", "--json")
    assert (out["swept"], out["processed"]) == (1, 1), out
    found = cli(tmp_path, "recall", "deploys ArgoCD", "--json")
    assert any("ArgoCD" in m["text"] for m in found["memories"])
    assert not any("ummy" in m["text"] or "Tokens" in m["text"] for m in found["memories"])
    again = cli(tmp_path, "capture", "run-once", "--json")
    assert again["swept"] == 0


def test_the_aider_folders_outlive_other_agents_connect_and_disconnect(tmp_path):
    from memloom.capture.scope import load_scope

    data = tmp_path / ".memloom"
    repo = tmp_path / "shop"
    repo.mkdir()
    cli(tmp_path, "connect", "aider", "--path", str(repo), "--json")
    cli(tmp_path, "connect", "claude-code", "--all", "--json")
    scope = load_scope(data)
    assert scope.all and scope.roots == [str(repo)]
    cli(tmp_path, "disconnect", "claude-code", "--json")
    assert load_scope(data).roots == [str(repo)], "disconnecting Claude Code dropped Aider's"
    assert cli(tmp_path, "disconnect", "aider", "--json")["changed"]
    assert not (data / "capture.json").exists(), "the last agent gone: nothing is captured"


# ---------------------------------------------------------------- where the sweep may look


@pytest.mark.security
def test_the_climb_stops_at_the_repository_root_and_home(tmp_path, monkeypatch):
    """A root outside any repository is looked at alone: before, it climbed eight
    levels, reading whatever history sat in a folder above (another user's /srv, /)."""
    from memloom.agents.aider.discover import HISTORY_FILE, candidates

    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    planted = settled(history(tmp_path, SYNTH.read_text()))  # above every root below
    loose = tmp_path / "srv" / "data" / "x"
    loose.mkdir(parents=True)
    assert candidates([loose]) == [loose / HISTORY_FILE]
    found = Aider(roots=[loose]).discover(DiscoverOptions(days=None, max_sessions=None))
    assert planted not in [f.path for f in found.files]
    repo = home / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "pkg").mkdir(parents=True)
    assert candidates([repo / "src" / "pkg"]) == [
        repo / "src" / "pkg" / HISTORY_FILE,
        repo / "src" / HISTORY_FILE,
        repo / HISTORY_FILE,
    ]
    (tmp_path / ".git").mkdir()  # a repository above $HOME: never climbed into
    notes = home / "notes"
    notes.mkdir()
    assert candidates([notes]) == [notes / HISTORY_FILE]


@pytest.mark.security
def test_a_repository_root_others_can_write_is_refused(tmp_path):
    """A .git planted in a /tmp-like folder above a root does not open it to the sweep."""
    shared = tmp_path / "shared"
    mine = shared / "mine"
    mine.mkdir(parents=True)
    (shared / ".git").mkdir()
    planted = settled(history(shared, SYNTH.read_text()))
    os.chmod(shared, 0o1777)
    found = Aider(roots=[mine]).discover(DiscoverOptions(days=None, max_sessions=None))
    assert planted not in [f.path for f in found.files]
    assert found.skipped["unsafe"] == 1


@pytest.mark.security
def test_the_sweep_follows_no_symlink_out_of_the_repository(tmp_path):
    """The attack: .aider.chat.history.md -> ../../.bash_history, imported and sent
    to the LLM by the sweep."""
    repo = tmp_path / "home" / "work" / "repo"
    (repo / ".git").mkdir(parents=True)
    secret = settled(history(tmp_path / "home", SYNTH.read_text(), name=".bash_history"))
    (repo / ".aider.chat.history.md").symlink_to("../../.bash_history")
    found = Aider(roots=[repo]).discover(DiscoverOptions(days=None, max_sessions=None))
    assert found.files == [] and found.skipped["unsafe"] == 1
    walked = Aider().discover(DiscoverOptions(paths=[repo]))
    assert secret not in [f.path for f in walked.files] and walked.skipped["unsafe"] == 1
