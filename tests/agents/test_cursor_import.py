"""``memloom import sessions --agent cursor`` on a HOME holding the constructed Cursor
transcripts (tests/fixtures/agents/cursor), with the scripted model: sessions, prompts
read, memories saved; a re-run makes no extraction call; a grown transcript distils only
what is new; secrets never reach the model; provenance names the transcript and line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import memloom
from tests.sessions.test_importer import model  # noqa: F401  (fixture)

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "agents" / "cursor"
SID = "5b1c2d3e-0000-4a11-9b22-3c4d5e6f7a81"
SECRET = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"


def age(path: Path, seconds: float = 3600) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def run(user_home: Path, home: Path, *args: str) -> dict[str, Any]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEMLOOM_HOME", "CLAUDE_", "CODEX_", "GEMINI_", "COPILOT_"))
    }
    env.update(HOME=str(user_home), MEMLOOM_HOME=str(home))
    res = subprocess.run(
        [sys.executable, "-m", "memloom.cli", "import", "sessions", *args, "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_import_sessions_agent_cursor(tmp_path, model):  # noqa: F811
    user_home = tmp_path / "user"
    shutil.copytree(FIX / "home", user_home)
    for path in (user_home / ".cursor").rglob("*"):
        if path.is_file():
            age(path)
    home = tmp_path / "memloom"

    first = run(user_home, home, "--agent", "cursor")
    assert first["agents"] == ["cursor"]
    assert first["sessions"] == 2 and first["saved"] == 3
    assert first["skipped"]["sidecars"] == 1  # the sub-agent's transcript
    units = {Path(s["path"]).suffix: s["units"] for s in first["per_session"]}
    assert units == {".jsonl": 4, ".txt": 5}  # prompts and replies read
    assert {s["project"] for s in first["per_session"]} == {"home-dev-acme-api"}
    calls = first["calls"]["extraction"]
    assert calls == len(model.payloads["memloom_distill"]) == 2
    sent = json.dumps(model.payloads["memloom_distill"])
    assert "port = 5432" not in sent and "use uv, never pip" not in sent  # tool result, own block

    m = memloom.open(home=str(home))
    try:
        mems = {mem.text: mem for mem in m.list({"limit": 20}).memories}
        assert set(mems) == {
            "the staging database listens on port 5433",
            "I prefer squash merges for this repo",
            "run the test suite with make check, not pytest directly",
        }
        assert {mem.source for mem in mems.values()} == {"cursor"}
        doc = m.get(mems["I prefer squash merges for this repo"].id)
        (prov,) = doc.provenance
        assert prov.path.endswith(f"{SID}.jsonl") and (prov.start_line, prov.end_line) == (6, 6)
        assert prov.session_id == SID
    finally:
        m.close()

    again = run(user_home, home, "--agent", "cursor")
    assert again["calls"]["extraction"] == 0 and again["skipped"]["up_to_date"] == 2
    assert len(model.payloads["memloom_distill"]) == calls

    transcript = next((user_home / ".cursor").rglob(f"{SID}/{SID}.jsonl"))
    with transcript.open("a") as fh:
        for record in (
            {
                "role": "user",
                "message": {
                    "content": [
                        {
                            "type": "text",
                            "text": (
                                f"<user_query>\nREMEMBER: the CI token is {SECRET}\n</user_query>"
                            ),
                        }
                    ]
                },
            },
            {"role": "assistant", "message": {"content": [{"type": "text", "text": "ok"}]}},
        ):
            fh.write(json.dumps(record) + "\n")
    age(transcript)
    grown = run(user_home, home, "--agent", "cursor")
    assert grown["sessions"] == 1 and grown["skipped"]["up_to_date"] == 1
    assert grown["calls"]["extraction"] == 1 and grown["saved"] == 1
    (payload,) = model.payloads["memloom_distill"][calls:]
    new = [line for line in payload["lines"] if line["line"] > 10]
    assert [line["line"] for line in new] == [11, 12]
    assert SECRET not in json.dumps(model.payloads)  # redacted before it left
    assert grown["redactions"] >= 1

    every = run(user_home, home)  # --agent all: Cursor's home is found
    assert "cursor" in every["agents"] and every["calls"]["extraction"] == 0


def memloom_cli(user_home: Path, home: Path, *args: str, stdin: str = "") -> Any:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMLOOM_HOME", "CLAUDE_"))}
    env.update(HOME=str(user_home), MEMLOOM_HOME=str(home))
    res = subprocess.run(
        [sys.executable, "-m", "memloom._entry", *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr
    return res


def test_connect_hook_capture_status_sweep_and_disconnect(tmp_path, model):  # noqa: F811
    user_home = tmp_path / "user"
    shutil.copytree(FIX / "home", user_home)
    home = tmp_path / "memloom"
    hooks = user_home / ".cursor" / "hooks.json"
    shutil.copy(FIX / "hooks" / "hooks.other-tool.json", hooks)
    original = hooks.read_bytes()

    out = json.loads(memloom_cli(user_home, home, "connect", "cursor", "--all", "--json").stdout)
    assert out["hooks"] == ["stop", "sessionEnd", "sessionStart", "postToolUse"]
    status = json.loads(memloom_cli(user_home, home, "status", "--json").stdout)
    cursor = status["agents"]["cursor"]
    assert cursor["found"] and cursor["hooks"] == {
        "notify": True,
        "session_start": True,
        "read": True,
    }
    assert cursor["settings"] == str(hooks)

    transcript = next((user_home / ".cursor").rglob(f"{SID}/{SID}.jsonl"))
    stop = (FIX / "hooks" / "stop.json").read_text().replace("$TRANSCRIPT", str(transcript))
    memloom_cli(user_home, home, "hook", "notify", "--agent", "cursor", stdin=stop)
    ran = json.loads(
        memloom_cli(user_home, home, "capture", "run-once", "--no-sweep", "--json").stdout
    )
    assert ran["processed"] == 1
    m = memloom.open(home=str(home))
    try:
        assert {mem.source for mem in m.list({"limit": 20}).memories} == {"cursor"}
        assert len(m.list({"limit": 20}).memories) == 2
    finally:
        m.close()

    for path in (user_home / ".cursor").rglob("*.txt"):
        age(path)  # the sweep takes the quiet transcript no hook named
    swept = json.loads(memloom_cli(user_home, home, "capture", "run-once", "--json").stdout)
    assert swept["swept"] >= 1
    status = json.loads(memloom_cli(user_home, home, "status", "--json").stdout)
    assert status["agents"]["cursor"]["imports"]["sessions"] == 2

    memloom_cli(user_home, home, "disconnect", "cursor")
    assert hooks.read_bytes() == original


def test_a_rewritten_transcript_is_read_again_and_sends_only_changed_lines(tmp_path, model):  # noqa: F811
    """Cursor may rewrite a transcript (a user edits an earlier message): the ledger's
    hash no longer matches, the file is read from its start, and the lines already
    distilled (same line, role and text) go only as context, never distilled again."""
    from memloom.sessions.importer import Importer, ImportOptions

    cursor = tmp_path / "user" / ".cursor"
    folder = cursor / "projects" / "home-dev-shop" / "agent-transcripts" / "s1"
    folder.mkdir(parents=True)
    path = folder / "s1.jsonl"

    def write(*texts: str) -> None:
        lines = []
        for i, text in enumerate(texts):
            role = "user" if i % 2 == 0 else "assistant"
            lines.append(
                json.dumps(
                    {
                        "role": role,
                        "message": {
                            "content": [
                                {
                                    "type": "text",
                                    "text": f"<user_query>{text}</user_query>"
                                    if role == "user"
                                    else text,
                                }
                            ]
                        },
                    }
                )
            )
        path.write_text("\n".join(lines) + "\n")
        age(path)

    def run_import(m: Any) -> Any:
        return Importer(m, m.llm, ImportOptions(root=cursor, agent="cursor", quiet_seconds=0)).run()

    write("REMEMBER: the shop uses Stripe", "ok", "REMEMBER: prices are in cents", "ok")
    m = memloom.open(home=str(tmp_path / "memloom"))
    try:
        first = run_import(m)
        assert (first.sessions, first.saved) == (1, 2)
        calls = len(model.payloads["memloom_distill"])
        write("REMEMBER: the shop uses Stripe", "ok", "REMEMBER: prices are in euros", "ok")
        again = run_import(m)
        assert again.per_session[0].reason == "rewritten"
        sent = [
            line["text"] for p in model.payloads["memloom_distill"][calls:] for line in p["lines"]
        ]
        assert "REMEMBER: prices are in euros" in sent
        # The unchanged lines travel only as context: what the model draws from them
        # alone was distilled by the first run, and is dropped, not written again.
        assert again.saved == 1 and again.duplicates == 3  # lines 1, 2 and 4: unchanged
        assert again.dropped_reasons == {"context_only": 1} and again.merged == 0
        assert sorted(mem.text for mem in m.list({"limit": 10}).memories) == [
            "prices are in cents",
            "prices are in euros",
            "the shop uses Stripe",
        ]
        unchanged = run_import(m)
        assert unchanged.sessions == 0 and unchanged.skipped["up_to_date"] == 1
    finally:
        m.close()
