"""The Codex CLI adapter on the real fixture rollouts (tests/fixtures/agents/codex/) and on
small hand-made rollouts written in tmp_path: counts, injected blocks, each message once,
corrupt/truncated/empty/abandoned files, .zst and archived rollouts keeping their ledger
identity, discovery rules, the hooks.json + config.toml round trip, and hook payloads."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import zstandard

from memloom import agents
from memloom.agents.base import Agent, DiscoverOptions, HookEvent
from memloom.agents.codex import Codex
from memloom.agents.codex import hooks as codex_hooks
from memloom.agents.codex.discover import discover, discover_paths, read_head
from memloom.agents.codex.parse import (
    INJECTED_BLOCKS,
    clean_user_text,
    parse_bytes,
    parse_rollout,
    project_root,
)
from memloom.agents.codex.payload import context_output, parse_hook_payload
from memloom.errors import NotificationRefused, SettingsError
from tests.sessions.test_importer import model  # noqa: F401  (fixture: the scripted model)

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "agents" / "codex"
#: tag (tests/fixtures/agents/README.md) -> a part of the file name unique to it
FILES = {
    "codex-0.36": "9cd28a74-da7e-4458-a91a-fffec2be9d7a",
    "codex-0.46": "0199f41d-9079-7662-ba8d-eff8c75f8a7a",
    "codex-0.58": "019a802a-aab1-7c31-9831-d2510c7a74a2",
    "codex-0.63a": "019ab730-4906-7b12-8569-c53c5dde1150",
    "codex-0.63b": "019ab774-a2e4-7891-a22a-3c11d9deb235",
    "codex-0.80": "019bb37f-8db5-70b3-bb02-5df54ac070aa",
    "codex-compacted": "session_with_compaction",
}
#: (user prompts, assistant texts) as tests/fixtures/agents/README.md counts them
COUNTS = {
    "codex-0.36": (6, 9),
    "codex-0.46": (2, 0),
    "codex-0.58": (1, 1),
    "codex-0.63a": (1, 1),
    "codex-0.63b": (1, 1),
    "codex-0.80": (0, 0),
    "codex-compacted": (4, 6),
}
#: Text that only the injected blocks and developer messages hold.
INJECTED_MARKS = (
    "<environment_context>",
    "</environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions for",
    "<INSTRUCTIONS>",
    "<turn_aborted>",
    "<permissions instructions>",
    "# Context from my IDE setup",
    "## Active file:",
    "<memloom-context>",
)


def fixture(tag: str) -> Path:
    (path,) = FIX.glob(f"*{FILES[tag]}*.jsonl")
    return path


def roles(units) -> tuple[int, int]:
    return sum(u.role == "user" for u in units), sum(u.role == "assistant" for u in units)


# --------------------------------------------------------------------------- hand-made rollouts

TS = "2025-11-24T18:46:26.310Z"


def rec(kind: str, payload: dict, ts: str = TS) -> str:
    return json.dumps({"timestamp": ts, "type": kind, "payload": payload}, ensure_ascii=False)


def meta(sid: str = "019ab730-0000-7000-8000-000000000001", cwd: str = "/work/acme", **kw) -> str:
    return rec("session_meta", {"id": sid, "cwd": cwd, "cli_version": "0.99.0", **kw})


def user(text: str, **kw) -> str:
    content = [{"type": "input_text", "text": text}]
    return rec("response_item", {"type": "message", "role": "user", "content": content, **kw})


def assistant(text: str, **kw) -> str:
    content = [{"type": "output_text", "text": text}]
    return rec("response_item", {"type": "message", "role": "assistant", "content": content, **kw})


def developer(text: str) -> str:
    content = [{"type": "input_text", "text": text}]
    return rec("response_item", {"type": "message", "role": "developer", "content": content})


def ev_user(text: str) -> str:
    return rec("event_msg", {"type": "user_message", "message": text, "images": []})


def ev_agent(text: str) -> str:
    return rec("event_msg", {"type": "agent_message", "message": text})


def turn(cwd: str) -> str:
    return rec("turn_context", {"cwd": cwd, "model": "gpt-5-codex"})


def write(path: Path, lines: list[str], *, newline: bool = True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "\n".join(lines) + ("\n" if newline else "")
    path.write_bytes(text.encode("utf-8"))
    return path


def rollout_name(sid: str, stamp: str = "2025-11-24T12-46-26") -> str:
    return f"rollout-{stamp}-{sid}.jsonl"


def zst(src: Path, dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(zstandard.ZstdCompressor().compress(src.read_bytes()))
    return dest


# --------------------------------------------------------------------------- registry


def test_registered_as_codex_and_follows_the_protocol():
    agent = agents.get_agent("codex")
    assert isinstance(agent, Codex) and isinstance(agent, Agent)
    assert agent.name == "codex"
    assert "codex" in agents.agent_names()
    env = {"CODEX_HOME": "/tmp/cx"}
    assert agent.home(env) == Path("/tmp/cx")
    assert agent.home({"CODEX_HOME": ""}) == Path.home() / ".codex"
    assert agent.transcripts_root(env) == Path("/tmp/cx/sessions")
    assert agent.settings_path(env) == Path("/tmp/cx/hooks.json")


# --------------------------------------------------------------------------- reading the fixtures


@pytest.mark.parametrize("tag", list(FILES))
def test_fixture_counts(tag):
    res = parse_rollout(fixture(tag), final=True)
    assert roles(res.units) == COUNTS[tag]
    assert res.malformed == 0 and res.oversized == 0
    assert res.end_offset == fixture(tag).stat().st_size
    # every record is a unit or one drop count
    assert len(res.units) + sum(res.dropped.values()) == res.records


@pytest.mark.parametrize("tag", list(FILES))
def test_injected_blocks_never_in_units(tag):
    res = parse_rollout(fixture(tag), final=True)
    for u in res.units:
        for mark in INJECTED_MARKS:
            assert mark not in u.text, (tag, u.start_line, mark)


def test_the_rollout_of_the_pinned_codex_0_169_keeps_typed_text_only():
    """Written by the real Codex 0.169.0 with memloom connected
    (scripts/regen_agent_fixtures.py codex): memloom's context arrives as developer
    messages, the tool call's output (an ``ls``) is a function_call_output; neither
    is read, and the resumed turns (no second session_meta) are."""
    (path,) = (FIX / "e2e-0.169.0").rglob("rollout-*.jsonl")
    doc = json.loads((FIX / "e2e-0.169.0" / "fixture.json").read_text())
    res = parse_rollout(path, final=True)
    assert [u.text for u in res.units if u.role == "user"] == doc["prompts"]
    assert [u.text for u in res.units if u.role == "assistant"] == [doc["answer"]] * 3
    for u in res.units:
        for mark in (*doc["injected"], doc["tool_output"], *INJECTED_MARKS):
            assert mark not in u.text, (u.start_line, mark)
    assert res.malformed == 0 and res.end_offset == path.stat().st_size
    assert len(res.units) + sum(res.dropped.values()) == res.records


def test_typed_prompts_are_the_event_texts_and_each_once():
    """In a real rollout the kept prompts are exactly the event_msg user_message texts,
    and each message is read once although Codex writes it twice."""
    path = fixture("codex-0.36")
    events, agent_events = [], []
    for raw in path.read_bytes().splitlines():
        o = json.loads(raw)
        if o["type"] == "event_msg" and o["payload"]["type"] == "user_message":
            events.append(o["payload"]["message"].strip())
        if o["type"] == "event_msg" and o["payload"]["type"] == "agent_message":
            agent_events.append(o["payload"]["message"].strip())
    res = parse_rollout(path, final=True)
    assert [u.text for u in res.units if u.role == "user"] == events
    assert [u.text for u in res.units if u.role == "assistant"] == agent_events
    assert res.dropped["event_copy"] == len(events) + len(agent_events)
    assert res.dropped["injected"] == 2  # two <environment_context>, one mid-session
    assert [u.start_line for u in res.units if u.role == "user"] == [3, 182, 257, 298, 311, 323]


def test_a_typed_prompt_starting_with_hash_is_kept():
    res = parse_rollout(fixture("codex-0.63b"), final=True)
    (prompt,) = [u for u in res.units if u.role == "user"]
    assert prompt.text.startswith("# /butler-exec")
    assert prompt.start_line == prompt.end_line == 4
    res = parse_rollout(fixture("codex-0.63a"), final=True)
    assert [u.text for u in res.units if u.role == "user"] == ["/"]


def test_session_facts_and_project():
    res = parse_rollout(fixture("codex-0.58"), final=True)
    assert res.session_id == "019a802a-aab1-7c31-9831-d2510c7a74a2"
    assert res.version == "0.58.0"
    assert res.cwd == "/mnt/d/ai/MoonMind"  # not on this machine: kept as it is
    assert {u.cwd for u in res.units} == {"/mnt/d/ai/MoonMind"}
    assert res.dropped["ghost_snapshot"] == 1
    assert res.dropped["tool_call"] == 42  # function_call 41 + custom_tool_call 1


def test_compaction_sample_reads_response_items_and_drops_the_summary():
    res = parse_rollout(fixture("codex-compacted"), final=True)
    assert res.session_id == "compact-codex-001"
    assert res.dropped["compacted"] == 1
    assert all("Progress + Plan Status" not in u.text for u in res.units)


def test_abandoned_rollout_has_no_units():
    res = parse_rollout(fixture("codex-0.80"), final=True)
    assert res.units == [] and res.dropped["injected"] == 2 and res.malformed == 0


# --------------------------------------------------------------------------- text rules


def test_injected_blocks_are_matched_exactly():
    for marker in INJECTED_BLOCKS:
        assert clean_user_text(f"  {marker}\nbody\n") == ("", True)
    assert clean_user_text("<ENVIRONMENT_CONTEXT>x</ENVIRONMENT_CONTEXT>") == ("", True)
    # a typed prompt that starts with '#' or mentions a marker later is kept
    assert clean_user_text("# Plan\nfix it") == ("# Plan\nfix it", False)
    assert clean_user_text("# AGENTS.md is wrong, fix it")[0] == "# AGENTS.md is wrong, fix it"
    assert clean_user_text("why is <environment_context> in my log?")[1] is False
    ide = (
        "# Context from my IDE setup:\n\n## Active file: a.py\n\n"
        "## My request for Codex:\nfix a.py\n"
    )
    assert clean_user_text(ide) == ("fix a.py", True)
    assert clean_user_text("# Context from my IDE setup:\n\n## Open tabs:\n- a.py") == ("", True)
    recalled = "<memloom-context>\nold memory\n</memloom-context>\nnew question"
    assert clean_user_text(recalled) == ("new question", False)


def test_developer_messages_and_injected_user_messages_are_dropped():
    data = "\n".join(
        [
            meta(),
            developer("<permissions instructions>sandbox</permissions instructions>"),
            user("<environment_context>\n  <cwd>/work/acme</cwd>\n</environment_context>"),
            user("<turn_aborted>\nThe user interrupted.\n</turn_aborted>"),
            user(
                "# Context from my IDE setup:\n\n## Active file: app.py\n\n"
                "## My request for Codex:\nuse port 5433"
            ),
            ev_user("use port 5433"),
            rec("response_item", {"type": "reasoning", "summary": [], "encrypted_content": "gAAA"}),
            rec("response_item", {"type": "function_call", "name": "shell", "call_id": "c1"}),
            rec("response_item", {"type": "function_call_output", "call_id": "c1", "output": "ok"}),
            ev_agent("done"),
            assistant("done"),
            rec("world_state", {"anything": 1}),
            json.dumps({"timestamp": TS, "type": "response_item", "ordinal": 9, "payload": {}}),
            rec("brand_new_kind", {"x": 1}),
        ]
    ).encode()
    res = parse_bytes(data)
    assert [(u.role, u.text) for u in res.units] == [
        ("user", "use port 5433"),
        ("assistant", "done"),
    ]
    assert res.dropped["developer"] == 1
    assert res.dropped["injected"] == 2
    assert res.dropped["event_copy"] == 2
    assert res.dropped["reasoning"] == res.dropped["tool_call"] == res.dropped["tool_result"] == 1
    assert res.dropped["other"] == 3
    assert len(res.units) + sum(res.dropped.values()) == res.records


def test_event_copies_are_the_fallback_when_no_response_item_exists():
    data = "\n".join([meta(), ev_user("only in events"), ev_agent("reply in events")]).encode()
    res = parse_bytes(data)
    assert [(u.role, u.text, u.start_line) for u in res.units] == [
        ("user", "only in events", 2),
        ("assistant", "reply in events", 3),
    ]
    # a file with response items: every event_msg message is a twin (a per-file rule)
    data = "\n".join([meta(), user("hi"), ev_user("hi"), ev_agent("hello")]).encode()
    res = parse_bytes(data)
    assert [(u.role, u.text) for u in res.units] == [("user", "hi")]
    assert res.dropped["event_copy"] == 2


def test_message_ids_dedupe_through_seen():
    data = "\n".join([meta(), user("once", id="msg_1"), user("once", id="msg_1")]).encode()
    res = Codex().read_bytes(data)
    assert [u.text for u in res.units] == ["once"] and res.dropped["duplicate_id"] == 1
    seen: set[str] = set()
    assert [u.uuid for u in parse_bytes(data, seen=seen).units] == ["msg_1"]
    assert seen == {"msg_1"}
    assert parse_bytes(data, seen=seen).units == []  # read before: not again


def test_cwd_per_turn(tmp_path):
    data = "\n".join(
        [
            meta(cwd="/work/acme"),
            user("first"),
            turn("/work/acme/api"),
            user("second"),
            assistant("ok"),
            turn("/work/other"),
            user("third"),
        ]
    ).encode()
    res = parse_bytes(data)
    assert [(u.text, u.cwd) for u in res.units] == [
        ("first", "/work/acme"),
        ("second", "/work/acme/api"),
        ("ok", "/work/acme/api"),
        ("third", "/work/other"),
    ]
    assert res.cwd == "/work/acme"


def test_project_is_the_git_root(tmp_path):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "pkg").mkdir(parents=True)
    assert project_root(str(repo / "src" / "pkg")) == str(repo)
    assert project_root(str(repo)) == str(repo)
    plain = tmp_path / "plain"
    plain.mkdir()
    assert project_root(str(plain)) == str(plain)
    assert project_root("/no/such/place/on/this/machine") == "/no/such/place/on/this/machine"
    path = write(tmp_path / "r.jsonl", [meta(cwd=str(repo / "src")), user("x")])
    assert parse_rollout(path, final=True).cwd == str(repo)
    assert Codex().project_of(path) == str(repo)


def test_legacy_rollout_without_envelope():
    said = [{"type": "input_text", "text": "hello"}]
    answered = [{"type": "output_text", "text": "hi"}]
    data = "\n".join(
        [
            json.dumps({"id": "legacy-1", "timestamp": TS, "instructions": "be nice"}),
            json.dumps({"type": "message", "role": "user", "content": said}),
            json.dumps({"record_type": "state"}),
            json.dumps({"type": "message", "role": "assistant", "content": answered}),
        ]
    ).encode()
    res = parse_bytes(data)
    assert res.session_id == "legacy-1"
    assert [(u.role, u.text) for u in res.units] == [("user", "hello"), ("assistant", "hi")]


# --------------------------------------------------------------------------- damaged files


def test_corrupt_lines_are_skipped_and_counted(tmp_path):
    lines = fixture("codex-0.63b").read_text(encoding="utf-8").splitlines()
    damaged = [lines[0], "{not json at all", "\x00\x00\x00", *lines[1:5], "[1, 2]"]
    damaged += [lines[5][: len(lines[5]) // 2] + lines[6], *lines[7:]]  # a truncated splice
    path = write(tmp_path / "damaged.jsonl", damaged)
    res = parse_rollout(path, final=True)
    clean = parse_rollout(fixture("codex-0.63b"), final=True)
    assert [(u.role, u.text) for u in res.units] == [(u.role, u.text) for u in clean.units]
    assert res.malformed == 4  # garbage, NULs only, a non-object, the cut record


def test_two_records_on_one_line():
    data = (meta() + user("a") + "\n" + assistant("b") + "\n").encode()
    res = parse_bytes(data)
    assert [(u.text, u.start_line) for u in res.units] == [("a", 1), ("b", 2)]
    assert res.malformed == 0


def test_truncated_last_line_waits_until_final(tmp_path):
    full = fixture("codex-0.63a").read_bytes()
    last_start = full.rstrip(b"\n").rfind(b"\n") + 1
    path = tmp_path / "live.jsonl"
    path.write_bytes(full[: last_start + 40])  # the assistant message, half written
    partial = parse_rollout(path)
    assert roles(partial.units) == (1, 0)
    assert partial.end_offset == last_start and partial.malformed == 0
    assert partial.lines_read == full[:last_start].count(b"\n")
    # the writer finishes the line: resume at the watermark
    path.write_bytes(full)
    rest = parse_rollout(path, start_offset=partial.end_offset, start_line=partial.lines_read)
    assert [(u.role, u.start_line) for u in rest.units] == [("assistant", 34)]
    assert rest.end_offset == len(full) and rest.lines_read == 34
    # final=True consumes (and counts) a truncated last line
    path.write_bytes(full[: last_start + 40])
    final = parse_rollout(path, final=True)
    assert final.end_offset == last_start + 40 and final.malformed == 1


def test_resume_knows_the_response_items_before_the_watermark(tmp_path):
    """The event_msg copy of a message read before the watermark is not a fallback."""
    lines = [meta(), user("first"), assistant("reply")]
    path = write(tmp_path / "r.jsonl", lines)
    head = parse_rollout(path)
    write(tmp_path / "r.jsonl", [*lines, ev_user("second"), user("second"), ev_agent("again")])
    rest = parse_rollout(path, start_offset=head.end_offset, start_line=head.lines_read)
    assert [(u.role, u.text) for u in rest.units] == [("user", "second")]
    assert rest.dropped["event_copy"] == 2
    with pytest.raises(ValueError):
        parse_rollout(path, start_offset=10**9, start_line=3)


def test_empty_and_blank_files(tmp_path):
    for data in (b"", b"\n\n   \n"):
        path = tmp_path / "empty.jsonl"
        path.write_bytes(data)
        res = parse_rollout(path, final=True)
        assert res.units == [] and res.malformed == 0 and res.end_offset == len(data)
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(OSError):
        parse_rollout(fifo)


# --------------------------------------------------------------------------- .zst


def test_zst_round_trip_same_units_offsets_and_identity(tmp_path):
    agent = Codex()
    sid = "9cd28a74-da7e-4458-a91a-fffec2be9d7a"
    home = tmp_path / "codex"
    plain = home / "sessions" / "2025" / "09" / "16" / rollout_name(sid)
    plain.parent.mkdir(parents=True)
    plain.write_bytes(fixture("codex-0.36").read_bytes())
    packed = zst(plain, home / "archived_sessions" / (plain.name + ".zst"))

    a, b = agent.read(plain, final=True), agent.read(packed, final=True)
    assert [(u.role, u.text, u.start_line) for u in a.units] == [
        (u.role, u.text, u.start_line) for u in b.units
    ]
    assert (a.end_offset, a.lines_read) == (b.end_offset, b.lines_read)
    # resuming the compressed copy at the plain file's watermark
    mid = parse_rollout(plain, final=True)
    cut = plain.read_bytes().index(b"\n", len(plain.read_bytes()) // 2) + 1
    lines = plain.read_bytes()[:cut].count(b"\n")
    tail_plain = agent.read(plain, start_offset=cut, start_line=lines)
    tail_zst = agent.read(packed, start_offset=cut, start_line=lines)
    assert [u.text for u in tail_plain.units] == [u.text for u in tail_zst.units]
    assert tail_zst.end_offset == mid.end_offset
    # the bytes the ledger hashes are the same through Codex.open
    with agent.open(plain) as f1, agent.open(packed) as f2:
        assert hashlib.sha256(f1.read(cut)).digest() == hashlib.sha256(f2.read(cut)).digest()
        f2.seek(10)
        f2.seek(5)  # backwards: starts over
        assert f2.read(5) == plain.read_bytes()[5:10]
        assert f2.seek(0, 2) == plain.stat().st_size

    # the archived .zst alone is the same ledger row as the live plain file was
    os.utime(packed, (time.time() - 600, time.time() - 600))
    found = agent.discover(DiscoverOptions(root=home, quiet_seconds=0, days=None))
    assert [f.path for f in found.files] == [plain] and found.skipped["superseded"] == 1
    live = agent.ledger_identity(found.files[0])
    plain.unlink()
    moved = agent.discover(DiscoverOptions(root=home, quiet_seconds=0, days=None))
    (only,) = moved.files
    assert only.path == packed and agent.ledger_identity(only) == live == f"codex:{sid}"
    assert only.size == len(fixture("codex-0.36").read_bytes())  # decompressed size


def test_corrupt_zst_is_an_os_error(tmp_path):
    bad = tmp_path / "rollout-x.jsonl.zst"
    bad.write_bytes(b"not zstd at all")
    with pytest.raises(OSError):
        parse_rollout(bad)
    cut = zst(fixture("codex-0.80"), tmp_path / "cut.jsonl.zst")
    cut.write_bytes(cut.read_bytes()[:-20])
    with pytest.raises(OSError, match="cut short"):
        parse_rollout(cut, final=True)
    # several frames are one stream
    two = tmp_path / "two.jsonl.zst"
    body = fixture("codex-0.63a").read_bytes()
    c = zstandard.ZstdCompressor()
    two.write_bytes(c.compress(body[:1000]) + c.compress(body[1000:]))
    assert roles(parse_rollout(two, final=True).units) == (1, 1)


# --------------------------------------------------------------------------- discovery


def _home_with_sessions(tmp_path: Path, now: float) -> dict[str, Path]:
    home = tmp_path / "codex"
    repo = tmp_path / "acme"
    (repo / ".git").mkdir(parents=True)
    (repo / "api").mkdir()
    ids = {n: f"019ab730-0000-7000-8000-00000000000{n}" for n in range(1, 8)}
    day = home / "sessions" / "2025" / "11" / "24"
    p = {
        "old": write(day / rollout_name(ids[1]), [meta(ids[1], str(repo)), user("old")]),
        "recent": write(day / rollout_name(ids[2]), [meta(ids[2], str(repo / "api")), user("x")]),
        "other": write(day / rollout_name(ids[3]), [meta(ids[3], "/elsewhere/beta"), user("y")]),
        "active": write(day / rollout_name(ids[4]), [meta(ids[4], str(repo)), user("z")]),
        "child": write(
            day / rollout_name(ids[5]),
            [
                meta(
                    ids[5],
                    str(repo),
                    source={"subagent": {"thread_spawn": {"parent_thread_id": ids[2], "depth": 1}}},
                ),
                user("do the sub task"),
            ],
        ),
        "archived": write(
            home / "archived_sessions" / rollout_name(ids[6]), [meta(ids[6], str(repo)), user("a")]
        ),
    }
    p["archived_zst"] = zst(p["archived"], p["archived"].with_name(p["archived"].name + ".zst"))
    p["packed"] = zst(
        write(tmp_path / "tmp.jsonl", [meta(ids[7], str(repo)), user("p")]),
        day / (rollout_name(ids[7]) + ".zst"),
    )
    (day / "notes.txt").write_text("not a rollout")
    (home / "sessions" / "stray.jsonl").write_text("{}\n")
    (home / "config.toml").write_text("")  # not under sessions/: not counted at all
    ages = {"old": 40, "recent": 1, "other": 2, "active": 0, "child": 1, "archived": 3}
    for key, days_ago in ages.items():
        t = now - days_ago * 86400 - (60 if key != "active" else 0)
        os.utime(p[key], (t, t))
    os.utime(p["archived_zst"], (now - 3 * 86400, now - 3 * 86400))
    os.utime(p["packed"], (now - 5 * 86400, now - 5 * 86400))
    p["home"], p["repo"] = home, repo
    return p


def test_discovery_layout_rules_and_counts(tmp_path):
    now = time.time()
    p = _home_with_sessions(tmp_path, now)
    found = discover(p["home"], days=14, max_sessions=20, quiet_seconds=30, now=now)
    assert [f.path for f in found.files] == [p["recent"], p["other"], p["archived"], p["packed"]]
    s = found.skipped
    assert s["outside_window"] == 1 and s["active"] == 1 and s["sidecars"] == 1
    assert s["superseded"] == 1  # the .zst next to its plain twin in archived_sessions
    assert s["not_transcripts"] == 2 and s["project_filter"] == 0 and s["over_cap"] == 0
    by_path = {f.path: f for f in found.files}
    assert by_path[p["recent"]].project_dir == str(p["repo"])  # api/ normalised to the git root
    assert by_path[p["packed"]].session_id.endswith("07")
    assert by_path[p["packed"]].size == len((tmp_path / "tmp.jsonl").read_bytes())

    capped = discover(p["home"], days=None, max_sessions=2, quiet_seconds=30, now=now)
    assert [f.path for f in capped.files] == [p["recent"], p["other"]]
    assert capped.skipped["over_cap"] == 3 and capped.skipped["outside_window"] == 0

    acme = discover(p["home"], days=None, project="ACME", quiet_seconds=30, now=now)
    assert p["other"] not in [f.path for f in acme.files]
    assert acme.skipped["project_filter"] == 1

    assert discover(tmp_path / "nothing-here").files == []
    assert Codex().found({"CODEX_HOME": str(p["home"])})
    assert not Codex().found({"CODEX_HOME": str(tmp_path / "nothing-here")})


def test_a_thread_in_sessions_and_archived_is_listed_once(tmp_path):
    now = time.time()
    sid = "019ab730-0000-7000-8000-0000000000aa"
    home = tmp_path / "codex"
    live = write(
        home / "sessions" / "2025" / "11" / "24" / rollout_name(sid), [meta(sid), user("x")]
    )
    arch = write(home / "archived_sessions" / rollout_name(sid), [meta(sid), user("x")])
    os.utime(arch, (now - 120, now - 120))
    os.utime(live, (now - 60, now - 60))
    found = discover(home, quiet_seconds=0, now=now)
    assert [f.path for f in found.files] == [live] and found.skipped["superseded"] == 1


def test_discover_paths(tmp_path):
    now = time.time()
    p = _home_with_sessions(tmp_path, now)
    agent = Codex()
    named = agent.discover(
        DiscoverOptions(
            paths=[fixture("codex-0.63b"), p["child"], tmp_path / "gone.jsonl", p["active"]]
        )
    )
    assert [f.path for f in named.files] == [p["active"], fixture("codex-0.63b")]
    assert named.skipped["sidecars"] == 1 and named.skipped["missing"] == 1
    assert named.files[1].session_id == "019ab774-a2e4-7891-a22a-3c11d9deb235"
    walked = discover_paths([p["home"]])
    assert p["archived_zst"] not in [f.path for f in walked.files]
    assert walked.skipped["superseded"] == 1 and walked.skipped["sidecars"] == 1
    assert walked.skipped["not_transcripts"] >= 3  # notes.txt, config.toml, stray-named file
    assert read_head(p["child"]).parent_id == p["recent"].name[-42:-6]
    assert agent.recognises(fixture("codex-0.36")) and not agent.recognises(
        p["home"] / "config.toml"
    )


# --------------------------------------------------------------------------- hooks


HOOKS_JSON = """{
    "hooks": {
        "Stop": [
            {
                "hooks": [
                    {"type": "command", "command": "say done", "timeout": 3}
                ]
            }
        ],
        "UserPromptSubmit": [
            {"matcher": "", "hooks": [{"type": "command", "command": "~/bin/lint-prompt"}]}
        ]
    },
    "x-note": "ünïcode kept"
}
"""

CONFIG_TOML = """# Codex config -- hand edited
model = "gpt-5-codex"  # the default model

[features]
# keep this on
web_search_request = true

[mcp_servers.docs]
command = "npx"   # spaced on purpose
args = ["-y", "docs-mcp"]
"""


def _env(tmp_path: Path) -> dict[str, str]:
    return {"CODEX_HOME": str(tmp_path / "codex")}


def test_hooks_round_trip_keeps_everything_else_byte_identical(tmp_path):
    import tomllib

    env = _env(tmp_path)
    home = Path(env["CODEX_HOME"])
    home.mkdir()
    (home / "hooks.json").write_text(HOOKS_JSON, encoding="utf-8")
    (home / "config.toml").write_bytes(CONFIG_TOML.replace("\n", "\r\n").encode())
    before_hooks = (home / "hooks.json").read_bytes()
    before_conf = (home / "config.toml").read_bytes()
    agent = Codex()

    change = agent.install_hooks("/opt/bin/memloom", env=env)
    events = ["Stop", "UserPromptSubmit", "SessionStart", "PostToolUse"]
    assert change.changed and change.events == events
    assert change.backup_path == home / "hooks.json.memloom-backup"
    assert change.config_backup is None and not change.config_changed
    assert change.notes == [codex_hooks.TRUST_NOTE] and "/hooks" in change.notes[0]
    data = json.loads((home / "hooks.json").read_text(encoding="utf-8"))
    assert data["x-note"] == "ünïcode kept"
    stop = data["hooks"]["Stop"]
    assert stop[0]["hooks"][0]["command"] == "say done"  # the user's hook is first and kept
    assert stop[1] == {
        "hooks": [
            {
                "type": "command",
                "command": "/opt/bin/memloom hook notify --agent codex",
                "timeout": 10,
            }
        ]
    }
    assert data["hooks"]["UserPromptSubmit"][1]["hooks"][0]["command"].endswith(
        " hook prompt-recall --agent codex"
    )
    assert data["hooks"]["SessionStart"][0]["hooks"][0]["command"].endswith(
        " hook session-start --agent codex"
    )
    # after a shell command only: the read hook finds the file it read, if any
    assert data["hooks"]["PostToolUse"] == [
        {
            "matcher": "^Bash$",
            "hooks": [
                {
                    "type": "command",
                    "command": "/opt/bin/memloom hook read --agent codex",
                    "timeout": 5,
                }
            ],
        }
    ]
    # no feature flag: Codex enables hooks by default and calls codex_hooks deprecated
    assert (home / "config.toml").read_bytes() == before_conf
    assert tomllib.loads(before_conf.decode())["features"] == {"web_search_request": True}
    assert agent.installed_hooks(env) == {
        "notify": True,
        "prompt_recall": True,
        "session_start": True,
        "read": True,
        "readable": True,
        "feature_disabled": False,
    }

    # idempotent: nothing changes, the one-time backups stay the originals
    after = ((home / "hooks.json").read_bytes(), (home / "config.toml").read_bytes())
    again = agent.install_hooks("/opt/bin/memloom", env=env)
    assert not again.changed and again.notes == [codex_hooks.TRUST_NOTE]  # still untrusted
    assert ((home / "hooks.json").read_bytes(), (home / "config.toml").read_bytes()) == after
    assert (home / "hooks.json.memloom-backup").read_bytes() == before_hooks
    assert not (home / "config.toml.memloom-backup").exists()

    removed = agent.remove_hooks(env)
    assert removed.changed and not removed.config_changed
    assert (home / "hooks.json").read_bytes() == before_hooks
    assert (home / "config.toml").read_bytes() == before_conf
    assert not (home / "hooks.json.memloom-state").exists()
    assert agent.installed_hooks(env)["notify"] is False
    assert not agent.remove_hooks(env).changed  # nothing left to remove


def test_remove_after_the_user_edited_keeps_their_edits(tmp_path):
    env = _env(tmp_path)
    home = Path(env["CODEX_HOME"])
    home.mkdir()
    (home / "config.toml").write_text(CONFIG_TOML, encoding="utf-8")
    agent = Codex()
    agent.install_hooks("memloom", recall=False, env=env)
    assert list(json.loads((home / "hooks.json").read_text())["hooks"]) == ["Stop"]
    edited = (home / "config.toml").read_text() + "\n# added later\n[tui]\nnotifications = true\n"
    (home / "config.toml").write_text(edited)
    agent.remove_hooks(env)
    assert (home / "config.toml").read_text() == edited
    assert not (home / "hooks.json").exists()  # memloom created it, and nothing else is in it


def test_install_into_an_empty_home_and_out_again(tmp_path):
    env = _env(tmp_path)
    agent = Codex()
    change = agent.install_hooks("memloom", env=env)
    home = Path(env["CODEX_HOME"])
    assert change.changed and change.backup_path is None and change.config_backup is None
    assert not (home / "config.toml").exists()  # memloom writes no feature flag
    agent.remove_hooks(env)
    assert sorted(p.name for p in home.iterdir()) == []


def test_a_flag_the_user_set_is_left_alone(tmp_path):
    env = _env(tmp_path)
    home = Path(env["CODEX_HOME"])
    home.mkdir()
    agent = Codex()
    for text, disabled, deprecated in (
        ("[features]\nhooks = true\n", False, False),
        ("[features]\ncodex_hooks = false\n", True, False),
        ("[features]\ncodex_hooks = true\n", False, True),
    ):
        (home / "config.toml").write_text(text)
        change = agent.install_hooks("memloom", env=env)
        assert not change.config_changed
        assert (home / "config.toml").read_text() == text
        assert any("will not run" in n for n in change.notes) is disabled
        assert any("deprecated" in n for n in change.notes) is deprecated
        assert agent.installed_hooks(env)["feature_disabled"] is disabled
        agent.remove_hooks(env)
        assert (home / "config.toml").read_text() == text


def test_unusable_settings_are_refused_untouched(tmp_path):
    env = _env(tmp_path)
    home = Path(env["CODEX_HOME"])
    home.mkdir()
    agent = Codex()
    (home / "hooks.json").write_text("{ not json")
    (home / "config.toml").write_text(CONFIG_TOML)
    with pytest.raises(SettingsError, match="not valid JSON"):
        agent.install_hooks("memloom", env=env)
    assert agent.installed_hooks(env)["readable"] is False
    (home / "hooks.json").write_text('{"hooks": []}')
    with pytest.raises(SettingsError, match="not an object"):
        agent.install_hooks("memloom", env=env)
    (home / "hooks.json").unlink()
    (home / "config.toml").write_text("[features\nbroken")
    with pytest.raises(SettingsError, match="not valid TOML"):
        agent.install_hooks("memloom", env=env)
    assert not (home / "hooks.json").exists()  # neither file was changed
    assert (home / "config.toml").read_text() == "[features\nbroken"


def test_is_memloom_hook_by_command():
    assert codex_hooks.is_memloom_hook({"command": "/x/memloom hook notify --agent codex"})
    assert codex_hooks.is_memloom_hook(
        {"command": "memloom --home /h hook session-start --agent codex"}
    )
    assert not codex_hooks.is_memloom_hook({"command": "memloom hook notify"})  # Claude Code's
    assert not codex_hooks.is_memloom_hook({"command": "say hook notify --agent codex"})
    assert not codex_hooks.is_memloom_hook("memloom hook notify --agent codex")


# --------------------------------------------------------------------------- hook payloads


def test_stop_payload(tmp_path):
    env = _env(tmp_path)
    home = Path(env["CODEX_HOME"])
    sid = "019ab730-4906-7b12-8569-c53c5dde1150"
    path = write(home / "sessions" / "2025" / "11" / "24" / rollout_name(sid), [meta(sid)])
    payload = {
        "session_id": sid,
        "transcript_path": str(path),
        "cwd": "/work/acme",
        "hook_event_name": "Stop",
        "model": "gpt-5-codex",
        "turn_id": "t1",
        "stop_hook_active": False,
        "last_assistant_message": "done",
    }
    event = Codex().parse_hook_payload(payload, env)
    assert event == HookEvent("codex", path.resolve(), sid, "/work/acme", "Stop")
    # null transcript_path: found by the session id
    assert (
        parse_hook_payload({**payload, "transcript_path": None}, env).transcript_path
        == path.resolve()
    )
    # archived and compressed rollouts are inside the Codex folders too
    arch = zst(path, home / "archived_sessions" / (path.name + ".zst"))
    event = parse_hook_payload({**payload, "transcript_path": str(arch)}, env)
    assert event.transcript_path == arch.resolve()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"transcript_path": None, "session_id": "019ab730-0000-0000-0000-00000000dead"},
            "no rollout",
        ),
        ({"transcript_path": None, "session_id": "*"}, "no rollout"),
        ({"transcript_path": None, "session_id": None}, "no rollout"),
        ({"transcript_path": "relative/rollout.jsonl"}, "not absolute"),
        ({"transcript_path": ""}, "missing"),
        ({"transcript_path": 7}, "missing"),
        ({"transcript_path": "OUTSIDE"}, "outside the Codex"),
        ({"transcript_path": "CONFIG"}, "not a .jsonl"),
        ({"transcript_path": "GONE"}, "does not exist"),
        ({"transcript_path": "FIFO"}, "not a regular file"),
    ],
)
def test_stop_payload_refusals(tmp_path, change, message):
    env = _env(tmp_path)
    home = Path(env["CODEX_HOME"])
    write(
        home
        / "sessions"
        / "2025"
        / "11"
        / "24"
        / rollout_name("019ab730-4906-7b12-8569-c53c5dde1150"),
        [meta()],
    )
    outside = write(home / "memories" / "rollout-x.jsonl", [meta()])
    (home / "config.toml").write_text("")
    fifo = home / "sessions" / "2025" / "11" / "24" / "rollout-fifo.jsonl"
    os.mkfifo(fifo)
    where = {
        "OUTSIDE": str(outside),
        "CONFIG": str(home / "config.toml"),
        "GONE": str(home / "sessions" / "rollout-gone.jsonl"),
        "FIFO": str(fifo),
    }
    payload = {"session_id": "s", "hook_event_name": "Stop", **change}
    if payload["transcript_path"] in where:
        payload["transcript_path"] = where[payload["transcript_path"]]
    with pytest.raises(NotificationRefused, match=message):
        parse_hook_payload(payload, env)


def test_additional_context_output():
    out = json.loads(context_output("UserPromptSubmit", "<memloom-context>x</memloom-context>"))
    assert out == {
        "hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit",
            "additionalContext": "<memloom-context>x</memloom-context>",
        }
    }
    assert (
        json.loads(Codex().format_context("session-start", "y"))["hookSpecificOutput"][
            "hookEventName"
        ]
        == "SessionStart"
    )
    assert context_output("UserPromptSubmit", "") == ""
    with pytest.raises(ValueError):
        context_output("Stop", "x")


def test_hook_modules_stay_light():
    """The hook fast path imports the payload and hooks modules: no zstandard, tomlkit,
    numpy or pydantic at import time."""
    code = (
        "import sys, memloom.agents.codex.payload, memloom.agents.codex.hooks;"
        "from memloom.agents import get_agent; get_agent('codex');"
        "heavy = {'zstandard', 'tomlkit', 'numpy', 'pydantic'} & set(sys.modules);"
        "assert not heavy, heavy"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


# --------------------------------------------------------------------------- through the importer


@pytest.fixture
def engine(tmp_path):
    import memloom

    m = memloom.open(home=str(tmp_path / "home"))
    yield m
    m.close()


def _import(engine, home: Path, **kw):
    from memloom.sessions.importer import Importer, ImportOptions

    options = ImportOptions(root=home, days=None, quiet_seconds=0, agent="codex", **kw)
    return Importer(engine, engine.llm, options).run()


def _place(home: Path, tag: str) -> Path:
    src = fixture(tag)
    name = "rollout-" + src.name.split("__rollout-", 1)[1]
    dest = home / "sessions" / "2025" / "11" / "24" / name
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(src.read_bytes())
    return dest


def test_importer_sends_typed_text_only_and_never_an_abandoned_session(tmp_path, engine, model):  # noqa: F811
    home = tmp_path / "codex"
    _place(home, "codex-0.80")
    report = _import(engine, home)
    assert report.sessions == 1 and model.bodies() == []  # abandoned: no LLM call
    _place(home, "codex-0.46")
    _place(home, "codex-0.63b")
    report = _import(engine, home)
    assert report.sessions == 2 and report.skipped["up_to_date"] == 1
    sent = "\n".join(model.bodies())
    assert "python3 should point to python 3.11" in sent
    assert "# /butler-exec" in sent  # the typed '#' prompt reaches the model
    for mark in ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions"):
        assert json.dumps(mark)[1:-1] not in sent
    lines = [line for p in model.payloads["memloom_distill"] for line in p["lines"]]
    assert len([ln for ln in lines if ln["role"] == "user"]) == 3  # 2 + 1, each once
    rows = engine.backend.ledger_get_many(["codex:019ab774-a2e4-7891-a22a-3c11d9deb235"])
    assert rows  # keyed by the thread id


def test_importer_resumes_a_grown_rollout_and_skips_it_once_archived(tmp_path, engine, model):  # noqa: F811
    home = tmp_path / "codex"
    sid = "019ab730-0000-7000-8000-0000000000bb"
    live = home / "sessions" / "2025" / "11" / "24" / rollout_name(sid)
    write(
        live,
        [meta(sid, "/work/acme"), user("REMEMBER: staging listens on port 5433"), assistant("ok")],
    )
    first = _import(engine, home)
    assert (first.sessions, first.saved) == (1, 1)
    with live.open("a", encoding="utf-8") as fh:
        fh.write(user("REMEMBER: deploys happen on fridays") + "\n")
    grown = _import(engine, home)
    assert grown.sessions == 1 and grown.saved == 1 and grown.per_session[0].reason == "grown"
    assert sorted(m.text for m in engine.list({"limit": 10}).memories) == [
        "deploys happen on fridays",
        "staging listens on port 5433",
    ]
    assert {m.source for m in engine.list({"limit": 10}).memories} == {"codex"}
    calls = model.distill_calls
    archived = home / "archived_sessions" / live.name
    archived.parent.mkdir(parents=True)
    live.rename(archived)
    again = _import(engine, home)
    assert again.sessions == 0 and again.skipped["up_to_date"] == 1
    assert model.distill_calls == calls  # moved: not imported again


def test_importer_skips_a_rollout_once_compressed(tmp_path, engine, model):  # noqa: F811
    home = tmp_path / "codex"
    sid = "019ab730-0000-7000-8000-0000000000cc"
    live = home / "sessions" / "2025" / "11" / "24" / rollout_name(sid)
    write(live, [meta(sid, "/work/acme"), user("REMEMBER: staging listens on port 5433")])
    assert _import(engine, home).saved == 1
    calls = model.distill_calls
    zst(live, live.with_name(live.name + ".zst"))
    live.unlink()
    again = _import(engine, home)
    assert again.sessions == 0 and model.distill_calls == calls


def test_each_memory_belongs_to_the_project_of_its_own_turn(tmp_path, engine, model):  # noqa: F811
    """A session that moves to another repository (a turn_context with a new cwd) files
    what it learnt there under that repository, normalised to its git root."""
    first, second = tmp_path / "acme", tmp_path / "billing"
    (first / ".git").mkdir(parents=True)
    (second / ".git").mkdir(parents=True)
    (second / "src" / "api").mkdir(parents=True)
    home = tmp_path / "codex"
    sid = "019ab730-0000-7000-8000-0000000000dd"
    write(
        home / "sessions" / "2025" / "11" / "24" / rollout_name(sid),
        [
            meta(sid, str(first)),
            user("REMEMBER: acme builds with make all"),
            turn(str(second / "src" / "api")),
            user("REMEMBER: billing retries webhooks five times"),
        ],
    )
    assert _import(engine, home).saved == 2
    by_text = {m.text: m for m in engine.list({"limit": 10}).memories}
    assert by_text["acme builds with make all"].project == str(first)
    assert by_text["billing retries webhooks five times"].project == str(second)
    (prov,) = engine.get(by_text["billing retries webhooks five times"].id).provenance
    assert (prov.project, prov.session_id, prov.agent) == (str(second), sid, "codex")
    row = engine.backend.ledger_get_many([f"codex:{sid}"])[f"codex:{sid}"]
    assert (row.project, row.agent) == (str(first), "codex")  # the session's own project
