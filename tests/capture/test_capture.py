"""The capture loop end to end: hook processes, the queue, the worker, budget and status."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from memloom.agents.native import sanitized_key
from memloom.capture.background import wait_settled
from tests.server.conftest import start_daemon, stop


def env_for(home: Path, claude: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "MEMLOOM_HOME": str(home), "CLAUDE_CONFIG_DIR": str(claude)}
    env["HOME"] = str(claude.parent / "user-home")  # no other agent's real folders
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "MEMLOOM_LLM", "MEMLOOM_DAILY_CAP"):
        env.pop(name, None)
    env["MEMLOOM_LLM"] = "offline"
    return {**env, **extra}


def memloom(home: Path, claude: Path, *args: str, stdin: str = "", **extra: str):
    return subprocess.run(
        [sys.executable, "-m", "memloom._entry", *args],
        env=env_for(home, claude, **extra),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def transcript(claude: Path, project: str, lines: list[str]) -> Path:
    path = (
        claude / "projects" / ("-" + project.strip("/").replace("/", "-")) / f"{uuid.uuid4()}.jsonl"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as fh:
        for text in lines:
            fh.write(
                json.dumps(
                    {
                        "type": "user",
                        "uuid": str(uuid.uuid4()),
                        "sessionId": path.stem,
                        "cwd": project,
                        "timestamp": "2026-11-29T09:00:00.000Z",
                        "message": {"role": "user", "content": text},
                    }
                )
                + "\n"
            )
    old = time.time() - 3600
    os.utime(path, (old, old))
    return path


def session_end(path: Path, cwd: str) -> str:
    return json.dumps(
        {
            "session_id": path.stem,
            "transcript_path": str(path),
            "cwd": cwd,
            "hook_event_name": "SessionEnd",
            "reason": "prompt_input_exit",
        }
    )


def status(home: Path, claude: Path, **extra: str) -> dict:
    res = memloom(home, claude, "status", "--json", **extra)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


@pytest.fixture
def dirs(tmp_path, backend, monkeypatch):
    """MEMLOOM_HOME and CLAUDE_CONFIG_DIR; on the PostgreSQL run every process the test
    starts (hooks, CLI, daemon) finds the shared store in MEMLOOM_DATABASE_URL."""
    home, claude = tmp_path / "home", tmp_path / "claude"
    (claude / "projects").mkdir(parents=True)
    if backend.startswith("postgresql"):
        monkeypatch.setenv("MEMLOOM_DATABASE_URL", backend)
    return home, claude


def test_notify_with_the_daemon_down_queues_then_run_once_imports(dirs):
    home, claude = dirs
    memloom(home, claude, "connect", "claude-code", "--project", "acme")
    path = transcript(claude, "/home/dev/acme", ["I prefer pnpm over npm in this repository."])
    res = memloom(home, claude, "hook", "notify", stdin=session_end(path, "/home/dev/acme"))
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
    doc = status(home, claude)
    assert doc["capture"]["queued"] == 1 and doc["daemon"]["running"] is False
    assert doc["capture"]["last_hook"]["detail"] == str(path)
    assert doc["hooks"]["notify"] and doc["hooks"]["prompt_recall"]

    run = memloom(home, claude, "capture", "run-once", "--no-sweep", "--json")
    assert json.loads(run.stdout)["processed"] == 1
    doc = status(home, claude)
    assert doc["capture"]["queued"] == 0
    assert doc["imports"]["sessions"] == 1 and doc["memories"]["active"] == 1
    assert doc["budget"]["used"] == 1


def test_notify_with_the_daemon_up_is_imported_by_the_worker(dirs):
    home, claude = dirs
    memloom(home, claude, "connect", "claude-code", "--all")
    daemon = start_daemon(home, claude)
    try:
        path = transcript(claude, "/srv/web", ["Always run the linter before committing."])
        res = memloom(home, claude, "hook", "notify", stdin=session_end(path, "/srv/web"))
        assert res.returncode == 0 and res.stdout == ""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with daemon.client() as api:
                if api.get("/v1/memory/stats").json()["active_count"] >= 1:
                    break
            time.sleep(0.2)
        with daemon.client() as api:
            found = api.post("/v1/memory/recall", json={"query": "linter before committing"}).json()
        assert "linter" in found["memories"][0]["text"]
        assert status(home, claude)["daemon"]["running"] is True
    finally:
        stop(daemon)


def test_paths_outside_the_projects_folder_are_refused_and_logged(dirs, tmp_path):
    home, claude = dirs
    memloom(home, claude, "connect", "claude-code", "--all")
    outside = tmp_path / "elsewhere" / f"{uuid.uuid4()}.jsonl"
    outside.parent.mkdir()
    outside.write_text("{}\n")
    for payload in (
        session_end(outside, "/x"),
        json.dumps({"transcript_path": str(claude / "projects" / "x" / "notes.txt")}),
        json.dumps({"transcript_path": str(claude / "projects" / ".." / "settings.jsonl")}),
        "not json at all",
        "",
    ):
        res = memloom(home, claude, "hook", "notify", stdin=payload)
        assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
    doc = status(home, claude)
    assert doc["capture"]["queued"] == 0
    assert doc["capture"]["last_failure"]["kind"] in ("hook_refused", "hook_notify_error")


def test_scope_off_out_of_scope_and_in_scope(dirs):
    home, claude = dirs
    inside = transcript(claude, "/home/dev/acme-api", ["Remember that staging runs on port 5433."])
    other = transcript(claude, "/home/dev/blog", ["I prefer tabs over spaces."])

    # Not connected: queued sessions are skipped, nothing imported.
    memloom(home, claude, "hook", "notify", stdin=session_end(inside, "/home/dev/acme-api"))
    memloom(home, claude, "capture", "run-once", "--no-sweep")
    assert status(home, claude)["imports"]["sessions"] == 0

    memloom(home, claude, "connect", "claude-code", "--project", "acme")
    memloom(home, claude, "hook", "notify", stdin=session_end(other, "/home/dev/blog"))
    memloom(home, claude, "hook", "notify", stdin=session_end(inside, "/home/dev/acme-api"))
    out = json.loads(memloom(home, claude, "capture", "run-once", "--no-sweep", "--json").stdout)
    assert out["processed"] == 2
    doc = status(home, claude)
    assert doc["imports"]["sessions"] == 1  # only the in-scope one
    found = json.loads(memloom(home, claude, "recall", "staging port", "--json").stdout)
    assert "5433" in found["memories"][0]["text"]
    assert all("tabs" not in m["text"] for m in found["memories"])


def test_sweep_imports_in_scope_sessions_the_hooks_missed(dirs):
    home, claude = dirs
    memloom(home, claude, "connect", "claude-code", "--project", "acme")
    transcript(claude, "/home/dev/acme", ["Remember that the CI cache key includes the lockfile."])
    transcript(claude, "/home/dev/other", ["Remember that nothing here matters."])
    out = json.loads(memloom(home, claude, "capture", "run-once", "--json").stdout)
    assert out["swept"] == 2 and out["processed"] == 2
    assert status(home, claude)["imports"]["sessions"] == 1
    again = json.loads(memloom(home, claude, "capture", "run-once", "--json").stdout)
    assert (
        again["processed"] <= 1
    )  # the out-of-scope one may be queued again; nothing is re-imported
    assert status(home, claude)["imports"]["sessions"] == 1


def test_the_sweep_follows_the_agents_own_memories_of_projects_in_scope(dirs):
    home, claude = dirs
    memloom(home, claude, "connect", "claude-code", "--project", "acme")
    for name in ("acme", "other"):
        project = claude.parent / "code" / name
        (project / ".git").mkdir(parents=True)
        memory = claude / "projects" / sanitized_key(str(project)) / "memory"
        memory.mkdir(parents=True)
        (memory / "ci.md").write_text(
            f"---\nname: ci\nmetadata:\n  type: project\n---\nThe {name} CI runs on Buildkite.\n"
        )
    out = json.loads(memloom(home, claude, "capture", "run-once", "--json").stdout)
    assert out["swept"] == 0
    exported = memloom(home, claude, "export").stdout.splitlines()
    rows = [json.loads(line) for line in exported]
    listed = [m for m in rows if m.get("kind") == "memory" and m["status"] == "active"]
    assert [m["text"] for m in listed] == ["The acme CI runs on Buildkite."]
    assert listed[0]["tags"] == ["native:claude-code"]
    folders = status(home, claude)["agents"]["claude-code"]["native"]
    assert [f["memories"] for f in folders] == [1] and "acme" in folders[0]["folder"]
    human = memloom(home, claude, "status").stdout
    assert "own memory" in human and "1 memories" in human


def test_budget_reached_pauses_unattended_runs_but_not_attended_imports(dirs):
    home, claude = dirs
    memloom(home, claude, "connect", "claude-code", "--all")
    first = transcript(claude, "/a", ["I prefer short commit messages."])
    second = transcript(claude, "/b", ["I prefer squash merges."])
    for path in (first, second):
        memloom(home, claude, "hook", "notify", stdin=session_end(path, str(path.parent)))
        # queued in the background: let the first be first, as the test relies on it
        assert wait_settled(home)
    out = memloom(home, claude, "capture", "run-once", "--no-sweep", MEMLOOM_DAILY_CAP="1")
    assert "PAUSED" in out.stdout
    doc = status(home, claude, MEMLOOM_DAILY_CAP="1")
    assert doc["budget"] == {"used": 1, "cap": 1, "paused": True}
    assert doc["capture"]["queued"] == 1 and doc["imports"]["sessions"] == 1
    human = memloom(home, claude, "status", MEMLOOM_DAILY_CAP="1").stdout
    assert "PAUSED" in human and "1/1" in human

    attended = memloom(
        home, claude, "import", "sessions", "--path", str(second), "--json", MEMLOOM_DAILY_CAP="1"
    )
    assert attended.returncode == 0 and json.loads(attended.stdout)["sessions"] == 1
    assert status(home, claude, MEMLOOM_DAILY_CAP="1")["imports"]["sessions"] == 2


def test_prompt_recall_prints_a_compact_block_and_stays_silent_on_failure(dirs):
    home, claude = dirs
    memloom(home, claude, "connect", "claude-code", "--all")
    memloom(
        home,
        claude,
        "save",
        "The staging database listens on port 5433",
        "--project",
        "/home/dev/acme",
    )
    memloom(
        home,
        claude,
        "save",
        "Deploy keys: AKIA" + "Z7QWERTY2XCVB6NM is the staging key",
        "--project",
        "/home/dev/acme",
    )
    memloom(home, claude, "save", "x" * 900 + " staging filler", "--project", "/home/dev/acme")

    def hook(payload: object) -> subprocess.CompletedProcess[str]:
        stdin = payload if isinstance(payload, str) else json.dumps(payload)
        return memloom(home, claude, "hook", "prompt-recall", stdin=stdin)

    res = hook(
        {
            "prompt": "which port does the staging database use?",
            "cwd": "/home/dev/acme",
            "hook_event_name": "UserPromptSubmit",
            "session_id": "s",
        }
    )
    assert res.returncode == 0 and res.stderr == ""
    out = res.stdout
    assert out.startswith("<memloom-context>\n") and out.endswith("</memloom-context>\n")
    assert "verify" in out and "5433" in out
    assert "AKIA" not in out  # credentials never flow into prompts
    assert len(out) <= 2000
    assert all(len(line) <= 420 for line in out.splitlines())

    for payload in (
        {"prompt": "/compact", "cwd": "/home/dev/acme"},
        {"prompt": "!ls -la", "cwd": "/home/dev/acme"},
        {"prompt": "   ", "cwd": "/home/dev/acme"},
        {"cwd": "/home/dev/acme"},
        "{broken json",
        {"prompt": "zebra quantum xylophone", "cwd": "/home/dev/acme"},
    ):
        res = hook(payload)
        assert (res.returncode, res.stdout) == (0, ""), payload

    # A broken store (a corrupt file; a database server that is not there) means silence.
    if os.environ.get("MEMLOOM_DATABASE_URL"):
        res = memloom(
            home,
            claude,
            "hook",
            "prompt-recall",
            stdin=json.dumps({"prompt": "staging database port", "cwd": "/home/dev/acme"}),
            MEMLOOM_DATABASE_URL="postgresql://postgres@127.0.0.1:9/none?connect_timeout=2",
        )
    else:
        (home / "memloom.db").write_bytes(b"this is not a database")
        res = hook({"prompt": "staging database port", "cwd": "/home/dev/acme"})
    assert (res.returncode, res.stdout) == (0, "")


def test_prompt_recall_goes_through_the_daemon_when_it_runs(dirs):
    home, claude = dirs
    memloom(home, claude, "connect", "claude-code", "--all")
    saved = save_json(home, claude, "Use pnpm, never npm, in this monorepo", "--project", "/w/mono")
    daemon = start_daemon(home, claude)
    try:
        payload = json.dumps({"prompt": "should I use npm or pnpm here?", "cwd": "/w/mono"})
        res = memloom(home, claude, "hook", "prompt-recall", stdin=payload)
        assert res.returncode == 0 and "pnpm" in res.stdout
        # The daemon's recall counts the use; the keyword fallback only reads.
        shown = memloom(home, claude, "show", saved["id"], "--json")
        assert json.loads(shown.stdout)["access_count"] == 1
        # A prompt the memory is no answer to brings nothing (relevance below "auto").
        unrelated = json.dumps({"prompt": "which package manager do you like?", "cwd": "/w/mono"})
        assert memloom(home, claude, "hook", "prompt-recall", stdin=unrelated).stdout == ""
    finally:
        stop(daemon)


@pytest.mark.security
def test_prompt_recall_sends_nothing_to_a_process_that_took_the_daemons_port(dirs):
    """After a crash, daemon.json still names a live pid (reused) and the port, where
    another program now listens: the hook asks it to prove it holds the token, sends
    neither the token nor the prompt, and answers from its keyword fallback."""
    import socket
    import threading

    home, claude = dirs
    memloom(home, claude, "connect", "claude-code", "--all")
    save_json(home, claude, "Use pnpm, never npm, in this monorepo", "--project", "/w/mono")
    stop(start_daemon(home, claude))  # the daemon made its token, then went away
    token = (home / "api-token").read_text().strip()
    impostor = socket.create_server(("127.0.0.1", 0))
    received: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = impostor.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                try:
                    received.append(conn.recv(65536))
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
                    received.append(conn.recv(65536))  # whatever it sends next
                except OSError:
                    pass

    threading.Thread(target=serve, daemon=True).start()
    port = impostor.getsockname()[1]
    (home / "daemon.json").write_text(
        json.dumps({"pid": os.getpid(), "url": f"http://127.0.0.1:{port}", "port": port})
    )
    try:
        payload = json.dumps({"prompt": "should I use npm or pnpm here?", "cwd": "/w/mono"})
        res = memloom(home, claude, "hook", "prompt-recall", stdin=payload)
    finally:
        impostor.close()
    assert res.returncode == 0 and "pnpm" in res.stdout  # the keyword fallback answered
    sent = b"".join(received)
    assert sent.startswith(b"GET /health HTTP/1.1\r\n") and b"x-memloom-challenge:" in sent
    assert token.encode() not in sent and b"pnpm" not in sent and b"POST" not in sent


def save_json(home: Path, claude: Path, *args: str) -> dict:
    res = memloom(home, claude, "save", *args, "--json")
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_each_memory_reaches_a_session_once_digest_first(dirs):
    """SessionStart shows the project's digest (pinned first, within its budget); prompt
    recall never shows a memory the session was already shown, not even after the
    session ended and was resumed; another session starts afresh."""
    home, claude = dirs
    memloom(home, claude, "connect", "claude-code", "--all")
    acme = "/home/dev/acme"
    pinned = save_json(home, claude, "The release branch is cut every Thursday", "--project", acme)
    assert memloom(home, claude, "pin", pinned["id"]).returncode == 0
    save_json(
        home, claude, "Run the tests with make check", "--type", "procedure", "--project", acme
    )
    save_json(
        home, claude, "I prefer pnpm over npm here", "--type", "preference", "--project", acme
    )
    save_json(home, claude, "The staging database listens on port 5433", "--project", acme)

    def run(hook: str, session: str, **extra: str) -> str:
        payload = {"session_id": session, "cwd": acme, **extra}
        res = memloom(home, claude, "hook", hook, stdin=json.dumps(payload))
        assert (res.returncode, res.stderr) == (0, ""), res.stderr
        return res.stdout

    digest = run("session-start", "s1", hook_event_name="SessionStart", source="startup")
    lines = digest.splitlines()
    assert lines[0] == "<memloom-context>" and lines[-1] == "</memloom-context>"
    assert "pinned" in lines[2] and "release branch" in lines[2]  # pinned first
    assert any("make check" in ln for ln in lines) and any("pnpm" in ln for ln in lines)
    assert "5433" not in digest  # a plain fact is for prompt-time recall, not the digest
    # A resume or /clear of the same session shows nothing again.
    assert run("session-start", "s1", hook_event_name="SessionStart", source="resume") == ""

    ask = {"hook_event_name": "UserPromptSubmit", "prompt": "which port does staging use?"}
    first = run("prompt-recall", "s1", **ask)
    assert "5433" in first and "make check" not in first and "release branch" not in first
    assert run("prompt-recall", "s1", **ask) == ""  # the same prompt again: nothing new
    assert "5433" in run("prompt-recall", "s2", **ask)  # another session: shown

    # The session's end does not forget what it was shown: resumed later (claude
    # --continue), its history still holds it.
    path = transcript(claude, acme, ["done for today"])
    end = {**json.loads(session_end(path, acme)), "session_id": "s1"}
    res = memloom(home, claude, "hook", "notify", stdin=json.dumps(end))
    assert res.returncode == 0
    assert run("prompt-recall", "s1", **ask) == ""


def test_the_digest_and_prompt_blocks_keep_to_their_token_budgets(dirs):
    home, claude = dirs
    memloom(home, claude, "connect", "claude-code", "--all")
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("[recall]\ndigest_tokens = 60\nprompt_tokens = 30\n")
    acme = "/home/dev/acme"
    procedures = [
        "Regenerate the protobuf stubs with make proto after editing any .proto file",
        "Rotate the staging TLS certificate with ./ops/rotate-cert.sh every quarter",
        "Before a release, bump the version in pyproject.toml and tag it vX.Y.Z",
        "Seed the local database from fixtures/dev.sql using psql -f fixtures/dev.sql",
        "Run the browser tests headless with npx playwright test --project chromium",
        "Clear the CDN cache through the dashboard after deploying new static assets",
    ]
    for text in procedures:
        save_json(home, claude, text, "--type", "procedure", "--project", acme)
    start = json.dumps({"session_id": "b1", "cwd": acme})
    digest = memloom(home, claude, "hook", "session-start", stdin=start).stdout
    items = [ln for ln in digest.splitlines() if ln.startswith("- ")]
    texts = [t for t in procedures if any(t in ln for ln in items)]
    assert len(texts) == len(items) >= 2
    # What counts is each line as shown, its type and project label included (a label is
    # data a writer chose: docs/security.md); about four characters a token.
    used = sum(math.ceil(len(ln) / 4) for ln in items)
    assert used <= 60
    # Nothing left out would still have fitted: the budget, not the list, stopped it.
    left_out = [f"- (procedure) {t} [acme]" for t in procedures if t not in texts]
    assert left_out and all(used + math.ceil(len(ln) / 4) > 60 for ln in left_out)
    prompt = {
        "session_id": "b2",
        "cwd": acme,
        "prompt": "how do I rotate the staging TLS certificate",
    }
    block = memloom(home, claude, "hook", "prompt-recall", stdin=json.dumps(prompt)).stdout
    shown = [ln for ln in block.splitlines() if ln.startswith("- ")]
    assert len(shown) == 1 and "rotate-cert" in shown[0]  # 30 tokens hold one of them


def test_the_hooks_read_the_store_config_toml_names(tmp_path):
    """``database_url`` in config.toml moves the store for the hooks' SQLite fallback
    too (they read only where the store is, through memloom.location)."""
    home, claude = tmp_path / "home", tmp_path / "claude"
    (claude / "projects").mkdir(parents=True)
    home.mkdir()
    elsewhere = tmp_path / "elsewhere" / "team.db"
    (home / "config.toml").write_text(f'database_url = "sqlite:///{elsewhere}"\n')
    saved = memloom(home, claude, "save", "Run the tests with make check", "-t", "procedure")
    assert saved.returncode == 0, saved.stderr
    saved = memloom(home, claude, "save", "The staging database listens on port 5433")
    assert saved.returncode == 0, saved.stderr
    assert elsewhere.exists() and not (home / "memloom.db").exists()
    memloom(home, claude, "connect", "claude-code", "--all")
    ask = {"prompt": "which port does the staging database use?", "cwd": "/home/dev/acme"}
    start = memloom(home, claude, "hook", "session-start", stdin=json.dumps({"session_id": "a"}))
    assert "make check" in start.stdout  # a procedure, in the digest
    res = memloom(
        home, claude, "hook", "prompt-recall", stdin=json.dumps({**ask, "session_id": "b"})
    )
    assert res.returncode == 0 and "5433" in res.stdout
