"""The GitHub Copilot CLI adapter: the real fixture files (events.jsonl and a legacy
one-JSON session), damaged files, discovery under a fake home, the hooks.json merge
round trip, the sessionEnd payload, and an import through the importer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import memloom
from memloom import agents
from memloom.agents.base import Agent, DiscoverOptions, HookEvent
from memloom.agents.copilot import CopilotCLI
from memloom.agents.copilot import hooks as hooks_mod
from memloom.agents.copilot import parse as parse_mod
from memloom.agents.copilot.discover import is_finished, recognizes
from memloom.errors import NotificationRefused, SettingsError
from memloom.sessions.importer import Importer, ImportOptions
from tests.sessions.test_importer import model  # noqa: F401  (fixture)
from tests.support.installs import check_reinstall_and_removal

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "agents" / "copilot"
EVENTS = FIX / "Mai0313__VibeCodingTracker__tests__fixtures__sessions__copilot@c4badfb.jsonl"
LEGACY = FIX / "Mai0313__VibeCodingTracker__examples__test_conversation_copilot.json"
SID = "96ef38f0-9d09-45c3-8124-6448c36090ed"
LEGACY_SID = "0b2a81da-02cf-4cbb-ae14-07c597b84f4e"


@pytest.fixture
def agent() -> CopilotCLI:
    return CopilotCLI()


def event(kind: str, data: dict, eid: str, ts: str = "2026-05-01T10:00:00.000Z") -> dict:
    return {"type": kind, "data": data, "id": eid, "timestamp": ts, "parentId": None}


def start(sid: str = "s-1", cwd: str = "/home/dev/acme/sub", git: str | None = "/home/dev/acme"):
    ctx = {"cwd": cwd, **({"gitRoot": git} if git else {})}
    data = {"sessionId": sid, "copilotVersion": "1.0.40", "context": ctx}
    return event("session.start", data, f"{sid}-start")


def user(text: str, eid: str, transformed: str | None = None) -> dict:
    data = {
        "content": text,
        "transformedContent": transformed or f"<current_datetime>x</current_datetime>\n\n{text}",
    }
    return event("user.message", data, eid)


def reply(text: str, eid: str, mid: str | None = None, **extra) -> dict:
    return event(
        "assistant.message", {"messageId": mid or f"m-{eid}", "content": text, **extra}, eid
    )


def shutdown(eid: str = "end") -> dict:
    return event("session.shutdown", {"shutdownType": "routine"}, eid)


def write_events(path: Path, records: list[dict | str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in records]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


# ---------------------------------------------------------------- registry


def test_registered_as_copilot_with_source_copilot_cli():
    a = agents.get_agent("copilot")
    assert isinstance(a, CopilotCLI) and isinstance(a, Agent)
    assert a.name == "copilot-cli" and "copilot" in agents.agent_names()


# ---------------------------------------------------------------- the real files


def test_events_fixture_one_typed_prompt_and_one_reply(agent):
    """user.message ×2 and assistant.message ×6 in the file: the second user message
    has content "" (an autopilot continuation: its text is only in transformedContent),
    and five assistant messages only request tools -- 1 prompt and 1 reply carry text."""
    res = agent.read(EVENTS, final=True)
    assert [(u.role, u.start_line) for u in res.units] == [("user", 7), ("assistant", 41)]
    u, a = res.units
    assert u.uuid == "2f5a46e3-6615-4d11-8e8f-dd88cf1326b1"  # the event id
    assert u.text.startswith("請不要修改任何代碼") and "<current_datetime>" not in u.text
    assert a.uuid == "a9b73aff-dd1f-4f7f-8756-8bf0c5d68f45"
    assert a.text.startswith("以下是我的調查結果")
    assert "Good. The project already has" not in a.text  # reasoningText is not reply text
    assert res.dropped["empty"] == 1 and res.dropped["tool_requests_only"] == 5
    assert res.dropped["tool_event"] == 22 and res.dropped["system_message"] == 2
    assert res.dropped["session_event"] == 7 and res.dropped["turn_marker"] == 12
    assert res.records == 51 == res.lines_read and res.malformed == 0
    assert res.end_offset == EVENTS.stat().st_size
    assert (res.session_id, res.cwd, res.version) == (
        SID,
        "/home/wei/repo/VibeCodingTracker",
        "1.0.34",
    )
    assert not any("You are the GitHub Copilot CLI" in x.text for x in res.units)
    assert is_finished(EVENTS)  # ends with session.shutdown


def test_legacy_fixture_timeline_user_and_copilot_entries(agent):
    res = agent.read(LEGACY, final=True)
    assert [u.role for u in res.units] == ["user"] + ["assistant"] * 5
    assert res.dropped["timeline_other"] == 17  # info ×2, tool_call_completed ×15
    assert res.session_id == LEGACY_SID and res.cwd is None and agent.project_of(LEGACY) is None
    lines = LEGACY.read_text(encoding="utf-8").splitlines()
    assert res.lines_read == len(lines)
    for u in res.units:  # each unit spans its timeline object, which names its id
        span = "\n".join(lines[u.start_line - 1 : u.end_line])
        assert span.lstrip().startswith("{") and span.rstrip().rstrip(",").endswith("}")
        assert f'"id": "{u.uuid}"' in span
    assert res.units[0].text.startswith("## 任務")


def test_read_bytes_tells_the_formats_apart(agent):
    assert [u.start_line for u in agent.read_bytes(EVENTS.read_bytes()).units] == [7, 41]
    assert len(agent.read_bytes(LEGACY.read_bytes()).units) == 6
    tail = b"".join(EVENTS.read_bytes().splitlines(keepends=True)[40:])
    assert [u.start_line for u in agent.read_bytes(tail, first_line=41).units] == [41]


def test_recognizes_content():
    assert recognizes(EVENTS.read_bytes()[:4096]) and recognizes(LEGACY.read_bytes()[:4096])
    gemini = b'{\n  "sessionId": "x",\n  "projectHash": "y",\n  "messages": []\n}'
    assert not recognizes(gemini) and not recognizes(b'{"type":"user","message":{}}\n')
    assert not recognizes(b"# aider chat started at 2025-01-01 00:00:00\n")


# ---------------------------------------------------------------- reading rules


def test_injected_and_machine_text_never_reaches_units(tmp_path, agent):
    recall = "<memloom-context>\nremembered: use port 5433\n</memloom-context>\n"
    path = write_events(
        tmp_path / "events.jsonl",
        [
            start(),
            event("system.message", {"role": "system", "content": "SYSTEM PROMPT"}, "sys"),
            user(recall + "why does the build fail?", "u1", transformed="INJECTED-ONLY text"),
            reply("", "a1", toolRequests=[{"name": "bash"}], reasoningText="SECRET REASONING"),
            event("tool.execution_complete", {"result": {"content": "TOOL OUTPUT"}}, "t1"),
            reply("The build fails because of a missing env var.", "a2"),
            reply("sub-agent chatter", "a3", parentToolCallId="call_7"),
            event("assistant.reasoning", {"content": "REASONING EVENT"}, "r1"),
            user("", "u2", transformed="You have not yet marked the task as complete"),
            shutdown(),
        ],
    )
    res = agent.read(path, final=True)
    assert [(u.role, u.text) for u in res.units] == [
        ("user", "why does the build fail?"),
        ("assistant", "The build fails because of a missing env var."),
    ]
    text = " ".join(u.text for u in res.units)
    for marker in ("INJECTED", "SECRET", "TOOL OUTPUT", "SYSTEM PROMPT", "sub-agent", "REASONING"):
        assert marker not in text
    assert res.dropped["subagent"] == 1 and res.dropped["other_event"] == 1
    assert res.cwd == "/home/dev/acme"  # the git root, not the cwd


def test_each_message_once(tmp_path, agent):
    records = [start(), user("hello", "u1"), reply("hi", "a1", mid="m1")]
    path = write_events(
        tmp_path / "events.jsonl", [*records, *records, reply("hi", "a9", mid="m1")]
    )
    res = agent.read(path, final=True)
    assert [u.text for u in res.units] == ["hello", "hi"]
    assert res.dropped["duplicate_id"] == 3  # u1 and a1 again, then messageId m1 again
    seen: set[str] = set()
    assert len(agent.read(path, final=True, seen=seen).units) == 2
    assert agent.read(path, final=True, seen=seen).units == []  # seen across reads


def test_resume_at_the_watermark_and_unterminated_last_line(tmp_path, agent):
    path = write_events(tmp_path / "events.jsonl", [start(), user("one", "u1")])
    partial = json.dumps(reply("two", "a1"))
    with path.open("a") as f:
        f.write(partial[:25])  # being written
    first = agent.read(path)
    assert [u.text for u in first.units] == ["one"] and first.lines_read == 2
    with path.open("a") as f:
        f.write(partial[25:] + "\n" + json.dumps(user("three", "u2")) + "\n")
    rest = agent.read(path, start_offset=first.end_offset, start_line=first.lines_read)
    assert [(u.text, u.start_line) for u in rest.units] == [("two", 3), ("three", 4)]
    assert rest.end_offset == path.stat().st_size and rest.lines_read == 4
    assert rest.cwd == "/home/dev/acme"  # read from the head: session.start is behind us
    with pytest.raises(ValueError):
        agent.read(path, start_offset=path.stat().st_size + 1)


def test_damaged_files_count_and_never_raise(tmp_path, agent):
    good = json.dumps(user("still here", "u9"))
    path = tmp_path / "events.jsonl"
    path.write_bytes(
        b"\n".join(
            [
                json.dumps(start()).encode(),
                b"\x00\x00\x00\x00",  # unclean shutdown
                b'{"type": "user.message", "data": {"content": "cut',  # truncated
                b"not json at all",
                b"[1, 2, 3]",
                json.dumps(user("spliced", "u8")).encode()[:-5] + good.encode(),  # }{ splice
                b'{"data": {"content": "no type"}, "id": "x"}',
                json.dumps(reply("last", "a9")).encode()[:-3],  # truncated last line
            ]
        )
    )
    res = agent.read(path)  # not final: the cut last line waits
    assert [u.text for u in res.units] == ["still here"]
    assert res.malformed == 5 and res.dropped["not_an_event"] == 1
    final = agent.read(path, final=True)
    assert final.malformed == 6 and final.end_offset == path.stat().st_size
    for content in (b"", b"\n\n", json.dumps(start()).encode() + b"\n"):  # empty, abandoned
        path.write_bytes(content)
        res = agent.read(path, final=True)
        assert res.units == [] and res.malformed == 0


def test_oversized_lines_are_skipped(tmp_path, agent, monkeypatch):
    monkeypatch.setattr(parse_mod, "MAX_LINE_BYTES", 200)
    path = write_events(tmp_path / "events.jsonl", [user("x" * 500, "u1"), user("short", "u2")])
    res = agent.read(path, final=True)
    assert [u.text for u in res.units] == ["short"] and res.oversized == 1


def test_legacy_damaged_rewritten_and_resumed(tmp_path, agent):
    path = tmp_path / "session.json"
    for bad in (b'{"sessionId": "s", "timeline": [{"type": "user", "te', b"[]", b'{"a": 1}'):
        path.write_bytes(bad)
        res = agent.read(path, final=True)
        assert res.units == [] and res.malformed == 1
    doc = {"sessionId": "s", "startTime": "t", "chatMessages": [{"role": "system"}], "timeline": []}
    doc["timeline"] = [
        {"id": "e1", "timestamp": "t1", "type": "user", "text": "fix the flaky test"},
        {"id": "e2", "timestamp": "t2", "type": "copilot", "text": "It races on the clock."},
    ]
    path.write_text(json.dumps(doc, indent=2))
    seen: set[str] = set()
    first = agent.read(path, seen=seen)
    assert [u.uuid for u in first.units] == ["e1", "e2"] and first.dropped["chat_messages"] == 1
    doc["timeline"].append({"timestamp": "t3", "type": "user", "text": "thanks"})
    path.write_text(json.dumps(doc, indent=2))  # rewritten whole: read again from 0
    again = agent.read(path, seen=seen)
    assert [u.text for u in again.units] == ["thanks"] and again.dropped["duplicate_id"] == 2
    assert again.units[0].uuid.startswith("copilot-legacy:")  # no id: a stable hash
    # a resume (same prefix) skips the entries on the lines already read
    lines = path.read_text().splitlines(keepends=True)
    cut = next(i for i, ln in enumerate(lines) if '"t2"' in ln) + 3
    resumed = agent.read(path, start_offset=len("".join(lines[:cut])), start_line=cut)
    assert [u.text for u in resumed.units] == ["thanks"]


def test_workspace_yaml_gives_the_project(tmp_path, agent):
    folder = tmp_path / "session-state" / "abc"
    path = write_events(folder / "events.jsonl", [user("hello", "u1")])
    (folder / "workspace.yaml").write_text(
        "id: abc\ncwd: '/home/dev/it''s here'\nsummary: |\n  multi\n  line\n"
        'git_root: "/home/dev/its"\nsummary_count: 0\n'
    )
    assert agent.project_of(path) == "/home/dev/its"
    assert agent.read(path, final=True).cwd == "/home/dev/its"
    (folder / "workspace.yaml").write_text("id: abc\ncwd: /home/dev/plain # comment\n")
    assert agent.project_of(path) == "/home/dev/plain"


# ---------------------------------------------------------------- discovery


def make_home(tmp_path: Path) -> tuple[Path, float]:
    home = tmp_path / ".copilot"
    now = time.time()
    state = home / "session-state"

    def session(sid: str, age: float, *, finished: bool, cwd: str = "/home/dev/acme") -> Path:
        recs = [start(sid, cwd=cwd, git=cwd), user(f"prompt {sid}", f"{sid}-u")]
        path = write_events(state / sid / "events.jsonl", recs + ([shutdown()] if finished else []))
        (state / sid / "workspace.yaml").write_text(f"id: {sid}\ncwd: {cwd}\n")
        os.utime(path, (now - age, now - age))
        return path

    session("finished-now", 5, finished=True)  # finished: importable at once
    session("live-now", 5, finished=False)  # still written: active
    session("quiet", 3600, finished=False)
    session("other-project", 7200, finished=True, cwd="/home/dev/zeta")
    session("ancient", 40 * 86400, finished=True)
    resumed = session("resumed", 5, finished=True)
    with resumed.open("a") as f:  # resumed after its shutdown: no longer finished
        f.write(json.dumps(user("more", "resumed-u2")) + "\n")
    os.utime(resumed, (now - 5, now - 5))
    (state / "no-events").mkdir()
    (state / "stray.txt").write_text("x")
    legacy = home / "history-session-state"
    legacy.mkdir()
    (legacy / "session_1.json").write_bytes(LEGACY.read_bytes())
    os.utime(legacy / "session_1.json", (now - 86400, now - 86400))
    (legacy / "notes.txt").write_text("x")
    return home, now


def test_discovery_under_a_fake_home(tmp_path, agent):
    home, now = make_home(tmp_path)
    found = agent.discover(DiscoverOptions(root=home, days=14, max_sessions=None, now=now))
    names = [f.session_id for f in found.files]
    assert names == ["finished-now", "quiet", "other-project", LEGACY_SID]
    assert found.skipped["active"] == 2  # live-now, resumed
    assert found.skipped["outside_window"] == 1 and found.skipped["not_transcripts"] == 3
    by_id = {f.session_id: f for f in found.files}
    assert agent.ledger_identity(by_id["quiet"]) == "copilot:quiet"
    assert agent.ledger_identity(by_id[LEGACY_SID]) == f"copilot-legacy:{LEGACY_SID}"
    capped = agent.discover(DiscoverOptions(root=home, max_sessions=2, now=now))
    assert [f.session_id for f in capped.files] == ["finished-now", "quiet"]
    assert capped.skipped["over_cap"] == 2
    zeta = agent.discover(DiscoverOptions(root=home, project="ZETA", now=now, max_sessions=None))
    assert [f.session_id for f in zeta.files] == ["other-project"]
    assert zeta.skipped["project_filter"] == 6  # 5 acme sessions, the legacy file (no project)
    assert zeta.files[0].project_dir == "/home/dev/zeta"
    none = agent.discover(DiscoverOptions(root=home, quiet_seconds=0, days=None, now=now))
    assert len(none.files) == 7


def test_copilot_home_from_the_environment(tmp_path, agent):
    env = {"COPILOT_HOME": str(tmp_path / "cp")}
    assert agent.home(env) == tmp_path / "cp" and not agent.found(env)
    (tmp_path / "cp").mkdir()
    assert agent.found(env)
    assert agent.settings_path(env) == tmp_path / "cp" / "hooks" / "hooks.json"
    assert agent.home({"COPILOT_HOME": ""}) == Path.home() / ".copilot"


def test_discover_named_paths(tmp_path, agent):
    home, _ = make_home(tmp_path)
    odd = tmp_path / "copied-session.log"
    odd.write_bytes(EVENTS.read_bytes())
    (tmp_path / "package.json").write_text('{"name": "x"}')
    os.mkfifo(tmp_path / "fifo.jsonl")
    events = home / "session-state" / "quiet" / "events.jsonl"
    found = agent.discover(
        DiscoverOptions(
            paths=[
                events,
                events,
                odd,
                tmp_path / "package.json",
                tmp_path / "fifo.jsonl",
                tmp_path / "gone.jsonl",
                home / "session-state",
            ]
        )
    )
    ids = sorted(f.session_id for f in found.files)
    assert ids == sorted(
        [SID, "finished-now", "live-now", "quiet", "other-project", "ancient", "resumed"]
    )
    assert found.skipped["missing"] == 1
    assert found.skipped["not_transcripts"] == 3  # package.json, the FIFO, stray.txt


# ---------------------------------------------------------------- hooks.json


USER_HOOKS = """{
  // my hooks (JSONC: Copilot's docs show comments)
  "version": 1,
  "hooks": {
    "sessionEnd": [
      {"type": "command", "bash": "./log-end.sh", "timeoutSec": 3}
    ],
    /* a tool check */
    "preToolUse": [
      {
        "type": "command",
        "bash": "./guard.sh"
      },
    ],
    "sessionStart": []
  }
}
"""


@pytest.mark.parametrize(
    "original",
    [
        USER_HOOKS,
        USER_HOOKS.replace("\n", "\r\n"),
        USER_HOOKS.replace("  ", "\t"),
        "{}",
        '{"version": 1}\n',
        '{"version": 1, "hooks": {}}',
        '\ufeff{"hooks": {"agentStop": [{"bash": "x"}]}, "disableAllHooks": false}\n',
    ],
)
def test_hooks_round_trip_keeps_everything_else(tmp_path, agent, original):
    env = {"COPILOT_HOME": str(tmp_path / "cp")}
    path = agent.settings_path(env)
    path.parent.mkdir(parents=True)
    path.write_bytes(original.encode("utf-8"))
    change = agent.install_hooks("/opt/bin/memloom", env=env)
    assert change.changed
    assert change.events == ["sessionEnd", "sessionStart", "userPromptSubmitted", "postToolUse"]
    assert change.backup_path is not None and change.backup_path.read_bytes() == original.encode()
    tree = hooks_mod.parse_jsonc(path.read_text(encoding="utf-8")).to_py()
    before = hooks_mod.parse_jsonc(original).to_py()
    for event, entries in (before.get("hooks") or {}).items():
        assert tree["hooks"][event][: len(entries)] == entries  # theirs first, untouched
    assert tree["hooks"]["sessionEnd"][-1] == {
        "type": "command",
        "bash": "/opt/bin/memloom hook notify --agent copilot",
        "timeoutSec": 10,
    }
    assert tree["hooks"]["sessionStart"][-1]["bash"].endswith("hook session-start --agent copilot")
    # Copilot injects a userPromptSubmitted hook's top-level additionalContext (1.0.102).
    assert tree["hooks"]["userPromptSubmitted"][-1] == {
        "type": "command",
        "bash": "/opt/bin/memloom hook prompt-recall --agent copilot",
        "timeoutSec": 5,
    }
    # After a view only (Copilot honours the entry's matcher): the file's memories.
    assert tree["hooks"]["postToolUse"][-1] == {
        "type": "command",
        "bash": "/opt/bin/memloom hook read --agent copilot",
        "timeoutSec": 5,
        "matcher": "^view$",
    }
    restored = original.encode()  # byte for byte
    check_reinstall_and_removal(agent, env, path, change.backup_path, original.encode(), restored)
    assert agent.installed_hooks(env)["notify"] is False


def test_hooks_file_memloom_created_is_removed(tmp_path, agent):
    env = {"COPILOT_HOME": str(tmp_path / "cp")}
    change = agent.install_hooks("memloom", env=env)
    assert change.backup_path is None
    doc = json.loads(change.settings_path.read_text())
    assert doc["version"] == 1
    assert set(doc["hooks"]) == {"sessionEnd", "sessionStart", "userPromptSubmitted", "postToolUse"}
    assert change.notes == []  # memloom's own file is strict JSON: Copilot reads it
    assert agent.remove_hooks(env).changed and not change.settings_path.exists()
    assert agent.installed_hooks(env) == {
        "notify": False,
        "session_start": False,
        "prompt_recall": False,
        "read": False,
        "readable": True,
    }


@pytest.mark.parametrize(
    "bad",
    ['{"hooks": [1]}', '{"hooks": {"sessionEnd": {}}}', "[1]", '{"version": 1,, }', "{/* x"],
)
def test_unusable_hook_file_is_refused_untouched(tmp_path, agent, bad):
    env = {"COPILOT_HOME": str(tmp_path / "cp")}
    path = agent.settings_path(env)
    path.parent.mkdir(parents=True)
    path.write_text(bad)
    with pytest.raises(SettingsError, match="memloom has not changed it"):
        agent.install_hooks("memloom", env=env)
    with pytest.raises(SettingsError):
        agent.remove_hooks(env)
    assert path.read_text() == bad and not path.with_name("hooks.json.memloom-backup").exists()
    assert agent.installed_hooks(env)["readable"] is False


# ---------------------------------------------------------------- payloads


def test_session_end_payloads(tmp_path, agent):
    home, _ = make_home(tmp_path)
    env = {"COPILOT_HOME": str(home)}
    events = (home / "session-state" / "quiet" / "events.jsonl").resolve()
    camel = {"sessionId": "quiet", "timestamp": 1704618000000, "cwd": "/w", "reason": "complete"}
    assert agent.parse_hook_payload(camel, env) == HookEvent(
        "copilot", events, "quiet", "/w", "complete"
    )
    snake = {"hook_event_name": "SessionEnd", "session_id": "quiet", "reason": "user_exit"}
    assert agent.parse_hook_payload(snake, env).transcript_path == events
    assert agent.parse_hook_payload({"transcriptPath": str(events)}, env).transcript_path == events
    legacy = home / "history-session-state" / "legacy-id.json"
    legacy.write_bytes(LEGACY.read_bytes())
    got = agent.parse_hook_payload({"sessionId": "legacy-id"}, env)
    assert got.transcript_path == legacy.resolve()
    outside = tmp_path / "events.jsonl"
    outside.write_text("{}\n")
    refused = [
        ({}, "neither"),
        ({"sessionId": "../quiet"}, "plain session id"),
        ({"sessionId": "a/b"}, "plain session id"),
        ({"sessionId": "no-such-session"}, "does not exist"),
        ({"transcriptPath": str(outside)}, "outside"),
        ({"transcriptPath": "relative/events.jsonl"}, "not absolute"),
        ({"transcript_path": str(home / "hooks" / "hooks.txt")}, "not a .jsonl"),
    ]
    for payload, why in refused:
        with pytest.raises(NotificationRefused, match=why):
            agent.parse_hook_payload(payload, env)
    os.mkfifo(home / "session-state" / "quiet" / "fifo.jsonl")
    with pytest.raises(NotificationRefused, match="not a regular file"):
        agent.parse_hook_payload(
            {"transcriptPath": str(home / "session-state" / "quiet" / "fifo.jsonl")}, env
        )


@pytest.mark.parametrize("event", ["session-start", "prompt"])
def test_hook_output_is_a_top_level_additional_context(agent, event):
    """Copilot CLI 1.0.102 injects only ``{"additionalContext": …}`` at the top level
    (plain text and ``hookSpecificOutput`` are ignored), for sessionStart and
    userPromptSubmitted alike (tests/e2e: the memory reached the model's request)."""
    block = "<memloom-context>x</memloom-context>"
    assert json.loads(agent.format_context(event, block)) == {"additionalContext": block}
    assert agent.format_context(event, "  ") == ""


def test_an_older_install_without_the_prompt_hook_is_completed(tmp_path, agent):
    """A hooks.json from a memloom that installed only sessionStart: status says the
    prompt hook is missing, and connecting again adds it (and nothing twice)."""
    env = {"COPILOT_HOME": str(tmp_path / "cp")}
    path = agent.settings_path(env)
    path.parent.mkdir(parents=True)
    old = {
        "version": 1,
        "hooks": {
            "sessionEnd": [
                {"type": "command", "bash": "memloom hook notify --agent copilot", "timeoutSec": 10}
            ],
            "sessionStart": [
                {
                    "type": "command",
                    "bash": "memloom hook session-start --agent copilot",
                    "timeoutSec": 5,
                }
            ],
        },
    }
    path.write_text(json.dumps(old, indent=2) + "\n")
    assert agent.installed_hooks(env) == {
        "notify": True,
        "session_start": True,
        "prompt_recall": False,
        "read": False,
        "readable": True,
    }
    assert agent.install_hooks("memloom", env=env).changed
    doc = json.loads(path.read_text())
    assert {e: len(v) for e, v in doc["hooks"].items()} == {
        "sessionEnd": 1,
        "sessionStart": 1,
        "userPromptSubmitted": 1,
        "postToolUse": 1,
    }
    assert agent.installed_hooks(env)["prompt_recall"] is True
    assert agent.installed_hooks(env)["read"] is True


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (USER_HOOKS, "Expecting property name"),  # comments
        ('{"version": 1, "hooks": {"sessionEnd": [],}}', "Expecting property name"),
        ('\ufeff{"version": 1}', "byte-order mark"),
    ],
)
def test_connect_says_when_copilot_would_ignore_the_hook_file(tmp_path, agent, text, why):
    """Copilot CLI 1.0.102 silently ignores a hook file that is not strict JSON (seen in
    tests/e2e: a comment line kept every hook in it from running): connect says so."""
    env = {"COPILOT_HOME": str(tmp_path / "cp")}
    path = agent.settings_path(env)
    path.parent.mkdir(parents=True)
    path.write_bytes(text.encode())
    change = agent.install_hooks("memloom", env=env)
    assert len(change.notes) == 1 and why in change.notes[0] and str(path) in change.notes[0]
    assert "ignores" in change.notes[0]
    again = agent.install_hooks("memloom", env=env)
    assert not again.changed and again.notes == change.notes
    path.write_text('{"version": 1}\n')
    assert agent.install_hooks("memloom", env=env).notes == []


E2E_FIX = FIX / "e2e-1.0.102" / ".copilot" / "session-state"


def test_the_pinned_copilot_s_own_session_keeps_typed_text_not_memloom_s_context(agent):
    """events.jsonl written by the real Copilot CLI 1.0.102 with memloom connected
    (scripts/regen_agent_fixtures.py): ``user.message`` ``transformedContent`` holds
    memloom's context inside ``<system_reminder>``, ``content`` what was typed; the
    digest is only in ``hook.end``. The reader keeps the typed text and the answers."""
    [path] = sorted(E2E_FIX.glob("*/events.jsonl"))
    raw = path.read_text()
    assert '"copilotVersion":"1.0.102"' in raw and "<system_reminder>" in raw
    res = agent.read(path)
    users = [u.text for u in res.units if u.role == "user"]
    assert users == [
        "which port does the staging database of the shop listen on?",
        "please list the files in the project folder",
        "REMEMBER: deploys of the shop go through ArgoCD on Fridays",
    ]
    assert [u.text for u in res.units if u.role == "assistant"] == [
        "The tests run with make check."
    ] * 3
    text = "\n".join(u.text for u in res.units)
    for injected in ("5433", "memloom-context", "system_reminder", "make lint", "current_datetime"):
        assert injected not in text
    assert res.version == "1.0.102" and res.session_id == path.parent.name


def test_hook_modules_are_stdlib_only():
    code = (
        "import sys, json\n"
        "import memloom.agents.copilot.payload, memloom.agents.copilot.hooks\n"
        "from memloom.agents import get_agent\n"
        "get_agent('copilot').parse_hook_payload\n"
        "heavy = ('numpy', 'pydantic', 'httpx', 'typer')\n"
        "print(json.dumps(sorted(m for m in heavy if m in sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


# ---------------------------------------------------------------- through the importer


def test_import_through_the_importer(tmp_path, model):  # noqa: F811
    sid = "7d3c5a10-0000-4000-8000-000000000001"
    path = write_events(
        tmp_path / ".copilot" / "session-state" / sid / "events.jsonl",
        [
            start(sid),
            user("REMEMBER: staging listens on port 5433", "u1", transformed="INJECTED-ONLY"),
            reply("Noted.", "a1"),
            shutdown(),
        ],
    )
    m = memloom.open(home=str(tmp_path / "home"))
    try:
        options = ImportOptions(paths=[path], agent="copilot")
        report = Importer(m, m.llm, options).run()
        assert (report.sessions, report.saved) == (1, 1)
        (mem,) = m.list({"limit": 10}).memories
        assert mem.source == "copilot-cli" and mem.project == "/home/dev/acme"
        assert "5433" in mem.text
        bodies = " ".join(model.bodies())
        assert "INJECTED-ONLY" not in bodies and "current_datetime" not in bodies
        assert list(m.backend.ledger_get_many([f"copilot:{sid}"])) == [f"copilot:{sid}"]
        again = Importer(m, m.llm, options).run()
        assert again.sessions == 0 and again.skipped["up_to_date"] == 1
    finally:
        m.close()
