"""The read hook (``memloom hook read``): the memories anchored to the file the agent's
read tool opened, and nothing else.

The payloads are the pinned agents' own (tests/fixtures/hooks/reads), moved into a
real git repository made here; the hook runs as a real process on both backends.
An attacker picks the path (the model chose it): nothing outside the repository's top
folder is ever looked up or read.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path

import pytest

import memloom
from memloom.agents import get_agent
from memloom.capture.reads import opened_file
from tests.capture.test_capture import memloom as run_memloom
from tests.support.git import git

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hooks" / "reads"
#: Each agent's captured payload of a successful read, and the project folder it ran in.
PAYLOADS = {
    "claude-code": "claude-code-2.1.328.PostToolUse-Read.json",
    "gemini": "gemini-0.61.0.AfterTool-read_file.json",
    "qwen": "qwen-0.24.4.PostToolUse-read_file.json",
}
CAPTURED_AT = "/tmp/capreads/sb-{agent}/home/shop"

OPENED = "svc/retry.py"
OTHER = "billing/invoice.py"
OPENED_FACT = "The retry loop keeps MAX_RETRIES at 3: the payment gateway bans clients above"
SECOND_FACT = "Retries back off exponentially, starting at two hundred milliseconds"
OTHER_FACT = "Invoices round every total to whole cents before adding the tax"


def payload(agent: str, repo: Path, path: str | None = None, **extra: object) -> dict:
    """The agent's captured payload, as if it ran in ``repo`` (``path``: the file the
    read tool was given instead of ``svc/retry.py``)."""
    raw = (FIXTURES / PAYLOADS[agent]).read_text()
    doc = json.loads(raw.replace(CAPTURED_AT.format(agent=agent), str(repo)))
    if path is not None:
        doc["tool_input"]["file_path"] = path
    return {**doc, **extra}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with the two files the memories are about."""
    top = tmp_path / "work" / "shop"
    git(top, "init", "-q")
    git(top, "remote", "add", "origin", "git@github.com:acme/shop.git")
    files = (
        (OPENED, "MAX_RETRIES = 3\n"),
        (OTHER, "def t(x):\n    return x\n"),
        (f"lib/{OPENED}", ""),
    )
    for rel, body in files:
        (top / rel).parent.mkdir(parents=True, exist_ok=True)
        (top / rel).write_text(body)
    git(top, "add", ".")
    git(top, "commit", "-q", "-m", "init")
    return top


@pytest.fixture
def store(tmp_path: Path, backend: str, monkeypatch, repo: Path):
    """A memloom home on each backend holding memories anchored to the two files (and
    one of another repository anchored to a file of the same name)."""
    monkeypatch.setenv("MEMLOOM_DATABASE_URL", backend)
    home, claude = tmp_path / "home", tmp_path / "claude"
    claude.mkdir()
    m = memloom.open(home=str(home))
    ids = {}
    try:
        for key, text, rel, project in (
            ("opened", OPENED_FACT, OPENED, str(repo)),
            ("second", SECOND_FACT, OPENED, str(repo)),
            ("other", OTHER_FACT, OTHER, str(repo)),
            ("elsewhere", "Another repository's retry module is generated", OPENED, "/x/y"),
            ("suffix", "The vendored copy under lib is older", f"lib/{OPENED}", str(repo)),
        ):
            request = {"text": text, "project": project, "anchors": [{"path": rel}]}
            ids[key] = m.save(request, folder=str(repo) if project == str(repo) else None).id
        stored = {k: m.get(v) for k, v in ids.items()}
    finally:
        m.close()
    for key, rel in (("opened", OPENED), ("other", OTHER), ("suffix", f"lib/{OPENED}")):
        assert [a.path for a in stored[key].anchors] == [rel], key
    assert [a.path for a in stored["elsewhere"].anchors] == [OPENED]
    home.mkdir(exist_ok=True)  # config.toml and capture.json go there (PostgreSQL too)
    return home, claude, stored["opened"].project


def hook(home: Path, claude: Path, agent: str, doc: object, **env: str) -> tuple[str, float]:
    """``memloom hook read --agent AGENT`` with ``doc`` on stdin: its stdout, seconds."""
    started = time.perf_counter()
    text = doc if isinstance(doc, str) else json.dumps(doc)
    res = run_memloom(home, claude, "hook", "read", "--agent", agent, stdin=text, **env)
    assert (res.returncode, res.stderr) == (0, ""), res.stderr
    return res.stdout, time.perf_counter() - started


def context(agent: str, out: str) -> str:
    """The text the agent adds to the model's context from the hook's stdout."""
    if not out:
        return ""
    doc = json.loads(out)  # every agent's after-tool contract is JSON
    event = {"claude-code": "PostToolUse", "gemini": "AfterTool", "qwen": "PostToolUse"}[agent]
    assert doc["hookSpecificOutput"]["hookEventName"] == event
    return doc["hookSpecificOutput"]["additionalContext"]


def last_error(home: Path) -> str | None:
    """The detail of the read hook's last recorded failure (the capture queue's event
    log, on the configured backend)."""
    from memloom.capture.queues import open_queue

    queue = open_queue(home)
    try:
        found = queue.last_event("hook_read_error")
    finally:
        queue.close()
    return None if found is None else found[1]


# ---------------------------------------------------------------- the agents' payloads


@pytest.mark.parametrize("agent", sorted(PAYLOADS))
def test_each_agent_s_real_payload_names_the_file_its_read_tool_opened(agent, repo):
    adapter = get_agent(agent)
    doc = payload(agent, repo)
    assert adapter.read_path(doc) == str(repo / OPENED)
    assert adapter.hook_cwd(doc) == str(repo)
    assert adapter.format_context("read", "") == ""
    # Another tool, the other agents' read tool, garbage: not a read of a file.
    assert adapter.read_path({**doc, "tool_name": "Bash"}) is None
    assert adapter.read_path({**doc, "tool_input": "svc/retry.py"}) is None
    assert adapter.read_path({**doc, "tool_input": {"file_path": 7}}) is None
    assert adapter.read_path({**doc, "tool_input": {"file_path": "a\x00b"}}) is None
    assert adapter.read_path({}) is None


@pytest.mark.parametrize("case", ["missing", "directory"])
def test_a_failed_gemini_read_is_not_a_read(case, repo):
    """Gemini CLI runs AfterTool on a failed call too (Claude Code and Qwen Code run
    PostToolUseFailure instead): its ``tool_response.error`` says so."""
    raw = (FIXTURES / f"gemini-0.61.0.AfterTool-read_file-{case}.json").read_text()
    doc = json.loads(raw.replace(CAPTURED_AT.format(agent="gemini"), str(repo)))
    assert doc["tool_response"]["error"]
    assert get_agent("gemini").read_path(doc) is None


def test_agents_without_a_read_hook_name_no_file(repo):
    """Claude Code's Read payload names no file for an agent whose read is another tool
    (Codex: a shell command; Copilot: ``view``'s ``path``; OpenCode: the plugin's
    ``read``), nor for Aider (no hooks). Cursor's ``Read`` has this very shape (Cursor
    runs Claude Code's hooks too): it names the file."""
    doc = payload("claude-code", repo)
    for name in ("codex", "copilot", "opencode", "aider"):
        assert get_agent(name).read_path(doc) is None, name
    assert get_agent("cursor").read_path(doc) == doc["tool_input"]["file_path"]


# ---------------------------------------------------------------- the fence


def test_a_file_is_named_relative_to_the_repository_s_top(repo):
    top = str(repo)
    assert opened_file(top, str(repo / OPENED)) == (top, OPENED)
    assert opened_file(top, OPENED) == (top, OPENED)  # relative to the agent's folder
    assert opened_file(str(repo / "svc"), "retry.py") == (top, OPENED)  # from a subfolder
    assert opened_file(str(repo / "svc"), f"../{OTHER}") == (top, OTHER)  # inside the top


def test_an_attacker_s_path_leads_nowhere(repo, tmp_path):
    top = str(repo)
    outside = tmp_path / "secret.txt"
    outside.write_text("s3cret")
    (repo / "link-out").symlink_to(outside)
    (repo / "dir-out").symlink_to(tmp_path)
    (repo / "dev-null").symlink_to("/dev/null")
    os.mkfifo(repo / "pipe")
    (repo / ".ssh").mkdir()
    (repo / ".ssh" / "id_rsa").write_text("key")
    (repo / "shared").mkdir()
    (repo / "shared" / "x.py").write_text("x")
    (repo / "shared").chmod(0o777)  # others may swap the file: never read there
    (repo / "group-writable.py").write_text("x")
    (repo / "group-writable.py").chmod(0o666)
    for path in (
        "/etc/passwd",
        "../../.ssh/id_rsa",
        f"../{repo.name}-other/x.py",
        str(outside),
        "link-out",
        "dir-out/secret.txt",
        "dev-null",
        "pipe",  # a FIFO would hang a reader; it is never opened, and not a file
        ".ssh/id_rsa",
        ".git/config",
        "shared/x.py",
        "group-writable.py",
        "svc",  # a folder
        "missing.py",
        "~/.bashrc",
        "svc/retry.py\x00.txt",
        "",
        ".",
    ):
        assert opened_file(top, path) is None, path
    assert opened_file("relative/cwd", OPENED) is None
    assert opened_file(None, OPENED) is None
    assert opened_file(top, None) is None


def test_a_symlink_inside_the_top_is_followed(repo):
    (repo / "alias.py").symlink_to(repo / OPENED)
    assert opened_file(str(repo), "alias.py") == (str(repo), "alias.py")


def test_no_project_root_is_the_home_folder(tmp_path, monkeypatch):
    """An agent run in the home folder (or /) has no project: nothing is looked up."""
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".netrc").write_text("machine x password y")
    (tmp_path / "notes.md").write_text("x")
    assert opened_file(str(tmp_path), "notes.md") is None
    assert opened_file("/", "etc/hostname") is None


# ---------------------------------------------------------------- the hook, both backends


@pytest.mark.parametrize("agent", sorted(PAYLOADS))
def test_the_opened_file_s_memories_once_per_session(store, repo, agent):
    home, claude, project = store
    assert project == "github.com/acme/shop"  # a project is its repository
    session = str(uuid.uuid4())
    doc = payload(agent, repo, session_id=session)
    out, _ = hook(home, claude, agent, doc)
    shown = context(agent, out)
    assert OPENED_FACT in shown and SECOND_FACT in shown
    assert OTHER_FACT not in shown  # another file's
    assert "generated" not in shown  # the same path in another repository
    assert "vendored" not in shown  # a path that merely ends the same
    assert shown.startswith("<memloom-context>")  # the prompt hook's block and header

    assert hook(home, claude, agent, doc)[0] == ""  # the same file again: nothing
    again = payload(agent, repo, OPENED, session_id=session)  # named relatively this time
    assert hook(home, claude, agent, again)[0] == ""
    other = context(agent, hook(home, claude, agent, payload(agent, repo, OTHER, **_s(session)))[0])
    assert OTHER_FACT in other and OPENED_FACT not in other
    fresh = context(agent, hook(home, claude, agent, payload(agent, repo, **_s("s-2")))[0])
    assert OPENED_FACT in fresh  # another session is given it


def _s(session: str) -> dict[str, str]:
    return {"session_id": session}


def test_a_global_memory_anchored_in_this_repository_is_shown(tmp_path, backend, monkeypatch, repo):
    """``memloom save`` without ``--project`` keeps a memory global; written in this
    repository, its anchor is of it, and reading the file shows it. A global memory
    anchored to the same path of another repository, or given over HTTP with no
    folder, is not shown."""
    monkeypatch.setenv("MEMLOOM_DATABASE_URL", backend)
    home, claude = tmp_path / "home", tmp_path / "claude"
    claude.mkdir()
    other = tmp_path / "work" / "other"
    git(other, "init", "-q")
    (other / "svc").mkdir()
    (other / OPENED).write_text("MAX_RETRIES = 9\n")
    m = memloom.open(home=str(home))
    try:
        here = m.save({"text": OPENED_FACT, "anchors": [{"path": OPENED}]}, folder=str(repo))
        there = m.save(
            {"text": "The other checkout retries nine times", "anchors": [{"path": OPENED}]},
            folder=str(other),
        )
        given = m.save(
            {"text": "A caller over HTTP named this retry module", "anchors": [{"path": OPENED}]}
        )
        assert m.get(here.id).project is None and m.get(there.id).project is None
        assert m.get(given.id).anchors[0].root is None
    finally:
        m.close()
    shown = context(
        "claude-code", hook(home, claude, "claude-code", payload("claude-code", repo))[0]
    )
    assert OPENED_FACT in shown
    assert "nine times" not in shown and "over HTTP" not in shown


def test_a_memory_whose_identifier_left_the_file_says_it_may_be_out_of_date(store, repo):
    """The read hook checks what it shows as the prompt hook does (point 2): the file is
    there, but ``MAX_RETRIES`` is gone from it; the memory is shown with the reason."""
    home, claude, _ = store
    (repo / OPENED).write_text("RETRY_LIMIT = 3\n")
    git(repo, "commit", "-q", "-am", "rename the constant")
    shown = context(
        "claude-code", hook(home, claude, "claude-code", payload("claude-code", repo))[0]
    )
    line = next(x for x in shown.splitlines() if OPENED_FACT[:40] in x)
    assert "may be out of date" in line and "MAX_RETRIES no longer in svc/retry.py" in line
    second = next(x for x in shown.splitlines() if SECOND_FACT[:40] in x)
    assert "may be out of date" not in second  # it names nothing that changed


def test_a_memory_the_session_was_shown_is_not_shown_again(store, repo):
    """The prompt hook showed it (recorded like every shown memory): the read gives the
    file's other memory alone."""
    home, claude, _ = store
    prompt = {
        "session_id": "s-prompt",
        "cwd": str(repo),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "how many retries does the payment gateway allow before it bans clients?",
    }
    res = run_memloom(home, claude, "hook", "prompt-recall", stdin=json.dumps(prompt))
    assert OPENED_FACT in res.stdout
    shown = context(
        "claude-code",
        hook(home, claude, "claude-code", payload("claude-code", repo, session_id="s-prompt"))[0],
    )
    assert SECOND_FACT in shown and OPENED_FACT not in shown


def test_the_block_stays_within_read_tokens(store, repo):
    home, claude, _ = store
    (home / "config.toml").write_text("[recall]\nread_tokens = 30\n")
    shown = context(
        "claude-code",
        hook(home, claude, "claude-code", payload("claude-code", repo, session_id="s-small"))[0],
    )
    lines = [line for line in shown.splitlines() if line.startswith("- (")]
    assert len(lines) == 1  # one memory fits 30 tokens, two do not
    (home / "config.toml").write_text("[recall]\nread_tokens = 0\n")
    out, _ = hook(home, claude, "claude-code", payload("claude-code", repo, session_id="s-bad"))
    assert out == ""  # refused, said in the event log
    assert "read_tokens" in (last_error(home) or "")


def test_recall_off_gives_nothing(store, repo):
    home, claude, _ = store
    (home / "capture.json").write_text(json.dumps({"all": True, "projects": [], "recall": False}))
    assert hook(home, claude, "qwen", payload("qwen", repo, session_id="s-off"))[0] == ""


def test_an_attacker_s_read_gives_nothing_and_exits_0(store, repo):
    home, claude, _ = store
    for path in ("/etc/passwd", "../../.ssh/id_rsa", "svc", "missing.py"):
        out, _ = hook(home, claude, "gemini", payload("gemini", repo, path, session_id="s-x"))
        assert out == "", path


@pytest.mark.parametrize("doc", ["{not json", "[1, 2]", '"text"', "", json.dumps({"cwd": 5})])
def test_garbage_on_stdin_fails_open(store, doc):
    home, claude, _ = store
    assert hook(home, claude, "claude-code", doc)[0] == ""


def test_a_broken_store_fails_open(tmp_path, repo):
    home, claude = tmp_path / "home", tmp_path / "claude"
    home.mkdir()
    claude.mkdir()
    (home / "memloom.db").write_bytes(b"this is not a database" * 100)
    out, _ = hook(
        home,
        claude,
        "claude-code",
        payload("claude-code", repo, session_id="s"),
        MEMLOOM_DATABASE_URL=str(home / "memloom.db"),
    )
    assert out == ""
    assert last_error(home)


def test_a_store_not_yet_migrated_to_the_path_index_is_scanned(tmp_path):
    """The hook opens the store read-only and never migrates it: a store written by the
    memloom before this one (schema 10, no ``memory_anchor_paths``) still answers, by
    a scan of the anchors' JSON; only the file's own anchors match."""
    import sqlite3

    from memloom.capture.reads import anchored_memories
    from memloom.location import locate
    from memloom.store.sqlite_migrations import MIGRATIONS

    home = tmp_path / "home"
    home.mkdir()
    db = sqlite3.connect(home / "memloom.db", isolation_level=None)
    db.executescript(f"BEGIN; {' '.join(MIGRATIONS[:10])} PRAGMA user_version = 10; COMMIT;")
    for mid, anchors in (
        ("a1", [{"path": "svc/retry.py"}]),
        ("a2", [{"path": "lib/svc/retry.py"}, "svc/retry.py", {"symbols": ["svc/retry.py"]}]),
        ("a3", [{"path": "docs/a.md"}, {"path": "svc/retry.py"}]),
    ):
        db.execute(
            "INSERT INTO memories (id, root_id, text, content_hash, created_at, asserted_at, "
            "last_referenced, project, anchors) VALUES (?, ?, ?, 'h', 1, 1, 1, 'p', ?)",
            (mid, mid, f"memory {mid}", json.dumps(anchors)),
        )
    db.close()
    location = locate(home)
    assert location.sqlite_path == home / "memloom.db"
    found = anchored_memories(location, "p", "svc/retry.py")
    assert sorted(m["id"] for m in found) == ["a1", "a3"]
    assert anchored_memories(location, "q", "svc/retry.py") == []
    db = sqlite3.connect(home / "memloom.db")
    assert db.execute("PRAGMA user_version").fetchone()[0] == 10  # left as it was
    db.close()


def test_silent_inside_memloom_s_own_distillation_call(store, repo):
    """memloom's distiller runs the agent's CLI (MEMLOOM_LLM_CHILD): its reads get
    nothing, and nothing is recorded as shown to the session."""
    home, claude, _ = store
    doc = payload("claude-code", repo, session_id="s-child")
    assert hook(home, claude, "claude-code", doc, MEMLOOM_LLM_CHILD="1")[0] == ""
    assert OPENED_FACT in context("claude-code", hook(home, claude, "claude-code", doc)[0])
