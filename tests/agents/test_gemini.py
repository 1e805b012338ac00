"""The Gemini CLI adapter: legacy ``.json`` and ``.jsonl`` recordings, discovery under a fake
``~/.gemini``, the project a recording belongs to, the settings.json hooks and the hook payload.

The fixture files are real recordings (tests/fixtures/agents/gemini, README there). Every other
recording here is hand-made in tmp_path, following the record shapes of reference §2.2.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from memloom import agents
from memloom.agents.base import MEMLOOM_CONTEXT_CLOSE, MEMLOOM_CONTEXT_OPEN, Agent, DiscoverOptions
from memloom.agents.gemini import GeminiCli
from memloom.agents.gemini.parse import parse_bytes, parse_file
from memloom.errors import NotificationRefused, SettingsError
from tests.sessions.test_importer import model  # noqa: F401  (fixture)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "agents" / "gemini"
JSON_2025 = FIXTURES / "Mai0313__VibeCodingTracker__examples__test_conversation_gemini@7bc2c73.json"
JSON_2026 = FIXTURES / "Mai0313__VibeCodingTracker__examples__test_conversation_gemini@894772f.json"
JSONL = FIXTURES / "Mai0313__VibeCodingTracker__tests__fixtures__sessions__gemini.jsonl"
#: Written by the pinned Gemini CLI 0.61.0 in tests/e2e (README there): headless, another
#: tool's SessionStart context, memloom's BeforeAgent context, then ``--resume latest``.
RESUMED = FIXTURES / "gemini-cli-0.61.0__headless-resume-with-hook-context.jsonl"

SID = "11111111-2222-4333-8444-555555555555"


@pytest.fixture
def agent() -> GeminiCli:
    return GeminiCli()


def roles(res: Any) -> tuple[int, int]:
    return (
        sum(u.role == "user" for u in res.units),
        sum(u.role == "assistant" for u in res.units),
    )


# --------------------------------------------------------------------------- hand-made files


def meta(sid: str = SID, root: str = "/home/dev/acme", **extra: Any) -> dict[str, Any]:
    return {
        "sessionId": sid,
        "projectHash": hashlib.sha256(root.encode()).hexdigest(),
        "startTime": "2026-04-01T10:00:00.000Z",
        "lastUpdated": "2026-04-01T10:00:00.000Z",
        "kind": "main",
        **extra,
    }


def user(mid: str, text: Any, **extra: Any) -> dict[str, Any]:
    return {
        "id": mid,
        "timestamp": "2026-04-01T10:00:01.000Z",
        "type": "user",
        "content": text,
        **extra,
    }


def gemini(mid: str, text: Any = "", **extra: Any) -> dict[str, Any]:
    return {
        "id": mid,
        "timestamp": "2026-04-01T10:00:02.000Z",
        "type": "gemini",
        "content": text,
        "thoughts": [{"subject": "S", "description": "secret reasoning"}],
        "model": "gemini-3-flash-preview",
        **extra,
    }


def jsonl(records: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in records)


def legacy(
    messages: list[dict[str, Any]], sid: str = SID, root: str = "/home/dev/acme", **extra: Any
) -> bytes:
    """A legacy recording as Gemini wrote it: JSON.stringify(conv, null, 2), no final newline."""
    head = meta(sid, root)
    head.pop("kind")
    conv = {**head, "messages": messages, **extra}
    return json.dumps(conv, indent=2, ensure_ascii=False).encode()


def session_file(home: Path, folder: str, name: str, data: bytes, *, age: float = 3600) -> Path:
    path = home / ".gemini" / "tmp" / folder / "chats" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    stamp = time.time() - age
    os.utime(path, (stamp, stamp))
    return path


# --------------------------------------------------------------------------- registry and home


def test_registered_as_gemini_with_source_gemini_cli():
    agent = agents.get_agent("gemini")
    assert isinstance(agent, GeminiCli) and isinstance(agent, Agent)
    assert agent.name == "gemini-cli"
    assert "gemini" in agents.agent_names()


def test_home_follows_gemini_cli_home(tmp_path, agent):
    env = {"GEMINI_CLI_HOME": str(tmp_path)}
    assert agent.home(env) == tmp_path / ".gemini"
    assert agent.transcripts_root(env) == tmp_path / ".gemini" / "tmp"
    assert agent.settings_path(env) == tmp_path / ".gemini" / "settings.json"
    assert agent.home({}) == Path.home() / ".gemini"
    assert not agent.found(env)
    (tmp_path / ".gemini").mkdir()
    assert agent.found(env)


# --------------------------------------------------------------------------- fixture files


@pytest.mark.parametrize(
    ("path", "users", "assistants"),
    [(JSON_2026, 1, 1), (JSON_2025, 1, 10), (JSONL, 2, 2), (RESUMED, 2, 2)],
    ids=["gemini-json-2026", "gemini-json-2025", "gemini-jsonl", "gemini-0.61-resumed"],
)
def test_fixture_counts(agent, path, users, assistants):
    res = agent.read(path, final=True)
    assert roles(res) == (users, assistants)
    assert res.malformed == 0 and res.oversized == 0
    uuids = [u.uuid for u in res.units]
    assert all(uuids) and len(set(uuids)) == len(uuids)  # each message once, by its id
    assert res.end_offset == path.stat().st_size
    assert res.session_id
    for u in res.units:
        assert u.text == u.text.strip() and u.text
        assert "[Function Response:" not in u.text
        assert u.text != "System: Please continue."
        assert "You are an AI agent that brings the power of Gemini" not in u.text


def test_jsonl_fixture_typed_text_and_reemitted_ids(agent):
    res = agent.read(JSONL, final=True)
    assert [(u.role, u.start_line, u.end_line) for u in res.units] == [
        ("user", 4, 4),
        ("assistant", 15, 17),  # first written on line 15, re-emitted on line 17
        ("assistant", 20, 20),
        ("user", 22, 22),
    ]
    assert res.units[0].text == "/init"  # displayContent: what was typed, not the template
    assert res.dropped["reemitted"] == 5
    assert res.dropped["info"] == 2 and res.dropped["not_typed"] == 1
    assert res.dropped["tool_only"] == 4
    assert res.lines_read == 28


@pytest.mark.parametrize("path", [JSON_2025, JSON_2026])
def test_legacy_units_span_their_message_objects(agent, path):
    lines = path.read_text(encoding="utf-8").split("\n")
    res = agent.read(path, final=True)
    for u in res.units:
        span = "\n".join(lines[u.start_line - 1 : u.end_line])
        assert lines[u.start_line - 1].strip() == "{"
        assert lines[u.end_line - 1].strip() in ("}", "},")
        assert json.loads(span.rstrip().rstrip(","))["id"] == u.uuid


def test_legacy_fixture_drops_function_response_and_tool_only(agent):
    old = agent.read(JSON_2025, final=True)
    assert old.dropped["function_response"] == 1
    new = agent.read(JSON_2026, final=True)
    assert new.dropped["tool_only"] == 2
    assert all("secret" not in u.text for u in new.units)


def test_read_bytes_matches_read(agent):
    for path in (JSON_2025, JSONL):
        assert agent.read_bytes(path.read_bytes()).units == agent.read(path, final=True).units


# --------------------------------------------------------------------------- JSONL semantics


def test_rewind_drops_that_message_and_everything_after(tmp_path, agent):
    path = tmp_path / "session-2026-04-01T10-00-11111111.jsonl"
    path.write_bytes(
        jsonl(
            [
                meta(),
                user("u1", "first question"),
                gemini("g1", "first answer"),
                user("u2", "a prompt I took back"),
                gemini("g2", "an answer to it"),
                {"$rewindTo": "u2"},
                user("u3", "the prompt I meant"),
                gemini("g3", "the right answer"),
            ]
        )
    )
    res = agent.read(path, final=True)
    assert [u.uuid for u in res.units] == ["u1", "g1", "u3", "g3"]
    assert all("took back" not in u.text and "an answer to it" not in u.text for u in res.units)
    assert res.dropped["rewound"] == 2 and res.dropped["rewind"] == 1


def test_rewind_to_an_unknown_id_clears_the_conversation(tmp_path, agent):
    data = jsonl([meta(), user("u1", "gone"), gemini("g1", "gone too"), {"$rewindTo": "nope"}])
    data += jsonl([user("u2", "kept")])
    res = parse_bytes(data)[0]
    assert [u.uuid for u in res.units] == ["u2"]
    assert res.dropped["rewind_target_missing"] == 1 and res.dropped["rewound"] == 2


def test_set_messages_checkpoint_rebuilds_the_list(agent):
    records = [
        meta(),
        user("u1", "old question"),
        gemini("g1", "old answer"),
        user("u2", "recent question"),
        gemini("g2", "recent answer, first version"),
        {"$set": {"lastUpdated": "2026-04-01T10:05:00.000Z"}},
        {
            "$set": {
                "messages": [
                    user("sum", [{"text": "<state_snapshot>made-up summary</state_snapshot>"}]),
                    gemini("ack", [{"text": "Got it. Thanks for the additional context!"}]),
                    user("u2", [{"text": "recent question"}]),
                    gemini("g2", [{"text": "recent answer, masked version"}]),
                ],
                "lastUpdated": "2026-04-01T10:06:00.000Z",
            }
        },
        user("u3", "after the checkpoint"),
    ]
    res = parse_bytes(jsonl(records))[0]
    assert [(u.uuid, u.text) for u in res.units] == [
        ("u2", "recent question"),
        ("g2", "recent answer, masked version"),  # last write wins
        ("u3", "after the checkpoint"),
    ]
    assert [(u.start_line, u.end_line) for u in res.units] == [(4, 4), (5, 5), (8, 8)]
    assert res.dropped["checkpoint_omitted"] == 2  # u1, g1
    assert res.dropped["checkpoint_synthetic"] == 2  # the summary turns
    assert res.dropped["checkpoint"] == 1 and res.dropped["patch"] == 1


def test_a_resume_keeps_the_prompts_gemini_leaves_out_of_its_history(agent):
    """Gemini CLI 0.61.0, resuming, checkpoints the history it rebuilt, which leaves out
    every user message that starts with ``<hook_context>`` (another hook's SessionStart
    context before the typed prompt, headless): the typed prompt is still read, without
    any hook's context, in its place."""
    res = agent.read(RESUMED, final=True)
    assert [(u.role, u.text) for u in res.units] == [
        (
            "user",
            "REMEMBER: deploys of the shop go through ArgoCD on Fridays. "
            "Also which port does the staging database of the shop listen on?",
        ),
        ("assistant", "The tests run with make check."),
        ("user", "and which port again?"),
        ("assistant", "The tests run with make check."),
    ]
    assert [u.start_line for u in res.units] == [3, 5, 11, 13]
    assert res.dropped["checkpoint_omitted"] == 0
    text = RESUMED.read_text()
    assert "OTHER-TOOL" in text and "5433" in text  # both hooks' context are in the file
    assert not any("OTHER-TOOL" in u.text or "5433" in u.text for u in res.units)


def test_a_checkpoint_with_a_summary_still_drops_what_it_leaves_out():
    records = [
        meta(),
        user("u1", [{"text": "<hook_context>other</hook_context>\n\nold question"}]),
        gemini("g1", "old answer"),
        {"$set": {"messages": [user("sum", "<state_snapshot>s</state_snapshot>")]}},
        {"$set": {"messages": [user("sum", "<state_snapshot>s</state_snapshot>")]}},
        user("u2", "new question"),
    ]
    res = parse_bytes(jsonl(records))[0]
    assert [u.uuid for u in res.units] == ["u2"]  # a compression: u1 is summarised away
    assert res.dropped["checkpoint_omitted"] == 2


def test_a_message_a_later_checkpoint_brings_back_is_read_once_in_its_place():
    records = [
        meta(),
        user("u1", [{"text": "<hook_context>other</hook_context>\n\nfirst question"}]),
        gemini("g1", "first answer"),
        {"$set": {"messages": []}},  # resuming: the list starts empty
        {"$set": {"messages": [gemini("g1", [{"text": "first answer"}])]}},
        user("u2", "second question"),
    ]
    res = parse_bytes(jsonl(records))[0]
    assert [(u.uuid, u.text, u.start_line) for u in res.units] == [
        ("u1", "first question", 2),
        ("g1", "first answer", 3),
        ("u2", "second question", 6),
    ]
    assert res.dropped["checkpoint_omitted"] == 0


def test_reemitted_id_last_write_wins_and_is_emitted_once():
    records = [
        meta(),
        user("u1", "hello"),
        gemini("g1", ""),  # tool calls first, no text yet
        gemini("g1", "", toolCalls=[{"id": "c1", "name": "read_file"}]),
        gemini("g1", "final words", toolCalls=[{"id": "c1", "name": "read_file"}]),
        {"$set": {"lastUpdated": "x"}},
    ]
    res = parse_bytes(jsonl(records))[0]
    assert [(u.uuid, u.text, u.start_line, u.end_line) for u in res.units] == [
        ("u1", "hello", 2, 2),
        ("g1", "final words", 5, 5),
    ]
    assert res.dropped["reemitted"] == 2


def test_jsonl_resume_at_the_watermark(tmp_path, agent):
    path = tmp_path / "session-2026-04-01T10-00-11111111.jsonl"
    path.write_bytes(jsonl([meta(), user("u1", "one"), gemini("g1", "two")]))
    first = agent.read(path)
    assert [u.uuid for u in first.units] == ["u1", "g1"]
    with path.open("ab") as fh:  # a re-emit of g1 (tokens) and a new turn
        fh.write(jsonl([gemini("g1", "two", tokens={"total": 9}), user("u2", "three")]))
    again = agent.read(path, start_offset=first.end_offset, start_line=first.lines_read)
    assert [u.uuid for u in again.units] == ["u2"]  # g1 was emitted before the watermark
    assert again.dropped["before_start"] == 2
    assert again.lines_read == 5 and again.end_offset == path.stat().st_size
    with pytest.raises(ValueError, match="beyond the end"):
        agent.read(path, start_offset=10**6)


def test_jsonl_incomplete_last_line_waits_unless_final(tmp_path, agent):
    path = tmp_path / "session-x.jsonl"
    whole = jsonl([meta(), user("u1", "one")])
    path.write_bytes(whole + b'{"id": "g1", "type": "gemini", "content": "unfini')
    live = agent.read(path)
    assert [u.uuid for u in live.units] == ["u1"] and live.malformed == 0
    assert live.end_offset == len(whole) and live.lines_read == 2
    done = agent.read(path, final=True)
    assert done.malformed == 1 and done.lines_read == 3
    # an unterminated line that is complete JSON is consumed
    path.write_bytes(whole + json.dumps(gemini("g1", "done")).encode())
    assert [u.uuid for u in agent.read(path).units] == ["u1", "g1"]


def test_jsonl_corrupt_lines_are_skipped_and_counted(tmp_path, agent):
    good = jsonl([meta(), user("u1", "kept")])
    spliced = b'{"id": "x", "type": "user", "content": "trunc' + jsonl([gemini("g1", "recovered")])
    data = good + b"garbage line\n" + b"\x00\x00\x00\n" + b"[1, 2]\n" + spliced + b"\n\n"
    res = parse_bytes(data)[0]
    assert [u.uuid for u in res.units] == ["u1", "g1"]
    assert res.malformed == 4
    assert res.lines_read == 8


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\n\n",
        jsonl([meta()]),  # abandoned: metadata only
        jsonl([meta(), {"id": "i1", "type": "info", "content": "Request cancelled."}]),
        b"\x00" * 64,
        b"not json at all\n",
    ],
    ids=["empty", "blank", "abandoned", "info-only", "nuls", "garbage"],
)
def test_empty_abandoned_and_corrupt_files_give_no_units(tmp_path, agent, data):
    for name in ("session-a.jsonl", "session-a.json"):
        path = tmp_path / name
        path.write_bytes(data)
        for final in (False, True):
            res = agent.read(path, final=final)
            assert res.units == []


def test_typed_text_only(agent):
    ctx = f"{MEMLOOM_CONTEXT_OPEN}\nrecalled: staging is on 5433\n{MEMLOOM_CONTEXT_CLOSE}"
    records = [
        meta(),
        user("u1", [{"text": f"fix the build\n\n{ctx}"}]),
        user(
            "u2", "look at @a.py\n--- Content from referenced files ---\nContent from @a.py:\nx=1\n"
        ),
        user("u3", "real prompt\n<hook_context>injected by a hook</hook_context>"),
        user("u4", [{"text": "System: Please continue."}]),
        user("u5", "[Function Response: read_file]--- a.py ---"),
        user("u6", "expanded template", displayContent=[{"text": "/review"}]),
        user("u7", "tool result", displayContent=[{"functionResponse": {"name": "x"}}]),
        user("u8", ctx),
        gemini("g1", [{"text": "thinking aloud", "thought": True}, {"text": "the answer"}]),
        gemini("g2", [{"functionCall": {"name": "ls"}}]),
        {"id": "e1", "type": "error", "content": "quota"},
        {"id": "w1", "type": "warning", "content": "careful"},
        {"id": "z1", "type": "future-type", "content": "?"},
        {"something": "unknown"},
    ]
    res = parse_bytes(jsonl(records))[0]
    assert [(u.uuid, u.text) for u in res.units] == [
        ("u1", "fix the build"),
        ("u2", "look at @a.py"),
        ("u3", "real prompt"),
        ("u6", "/review"),
        ("g1", "the answer"),
    ]
    d = res.dropped
    assert (d["continue_prompt"], d["function_response"], d["not_typed"]) == (1, 1, 1)
    assert d["empty"] == 2  # u8 (only memloom's block) and g2 (a functionCall part only)
    assert (d["error"], d["warning"], d["other_type"], d["unknown_record"]) == (1, 1, 1, 1)


def test_surrogates_and_nuls_never_reach_the_text():
    line = json.dumps(user("u1", "a\ud800b\u0000c")).encode()  # escaped, as JSON allows
    res = parse_bytes(jsonl([meta()]) + line + b"\n")[0]
    assert res.units[0].text == "a\ufffdbc"


# --------------------------------------------------------------------------- legacy rewrite


def test_legacy_rewritten_with_one_more_message_is_new_by_uuid_only(tmp_path, agent):
    path = tmp_path / "session-2025-10-01T10-00-11111111.json"
    two = [user("u1", "question"), gemini("g1", "answer")]
    path.write_bytes(legacy(two))
    seen: set[str] = set()
    first = agent.read(path, seen=seen)
    assert [u.uuid for u in first.units] == ["u1", "g1"] and seen == {"u1", "g1"}
    # Gemini rewrites the whole file: lastUpdated moves, tokens land on g1, one more message
    three = [
        user("u1", "question"),
        gemini("g1", "answer", tokens={"total": 5}),
        user("u2", "next"),
    ]
    path.write_bytes(legacy(three, lastUpdated="2025-10-01T10:09:00.000Z"))
    again = agent.read(path)
    assert [u.uuid for u in again.units] == ["u1", "g1", "u2"]  # same ids: the importer dedupes
    assert {u.uuid for u in again.units} - {u.uuid for u in first.units} == {"u2"}
    deduped = agent.read(path, seen=seen)
    assert [u.uuid for u in deduped.units] == ["u2"] and deduped.dropped["duplicate_id"] == 2


def test_legacy_being_written_is_incomplete_not_corrupt(tmp_path, agent):
    data = legacy([user("u1", "question"), gemini("g1", "a long answer " * 20)])
    path = tmp_path / "session-x.json"
    path.write_bytes(data[: len(data) - 40])  # cut inside the last message
    live = agent.read(path)
    assert live.units == [] and live.malformed == 0
    assert live.dropped["incomplete"] == 1 and live.end_offset == 0 and live.lines_read == 0
    salvaged = agent.read(path, final=True)  # what was whole before the cut is kept
    assert [u.uuid for u in salvaged.units] == ["u1"]
    assert salvaged.malformed == 1 and salvaged.dropped["truncated"] == 1
    for cut in (1, 2, 30, len(data) // 2, len(data) - 1):  # every cut point is "incomplete"
        path.write_bytes(data[:cut])
        res = agent.read(path)
        assert res.units == [] and res.dropped["incomplete"] == 1, cut


def test_legacy_corrupt_in_the_middle_is_malformed(tmp_path, agent):
    data = legacy([user("u1", "question"), gemini("g1", "answer")])
    broken = data.replace(b'"type": "gemini"', b'"type" "gemini"')
    path = tmp_path / "session-x.json"
    path.write_bytes(broken)
    live = agent.read(path)
    assert live.units == [] and live.malformed == 1 and live.dropped["incomplete"] == 0
    assert live.end_offset == len(broken)
    assert [u.uuid for u in agent.read(path, final=True).units] == ["u1"]


def test_legacy_resume_emits_only_lines_after_the_watermark(tmp_path, agent):
    path = tmp_path / "session-x.json"
    path.write_bytes(legacy([user("u1", "question"), gemini("g1", "answer")]))
    first = agent.read(path)
    res = agent.read(path, start_offset=first.end_offset, start_line=first.lines_read)
    assert res.units == [] and res.dropped["before_start"] == 2


# --------------------------------------------------------------------------- project


def test_project_from_projects_json_marker_and_hash(tmp_path, agent):
    home = tmp_path / ".gemini"
    slug = session_file(
        tmp_path, "acme", "session-a-11111111.jsonl", jsonl([meta(), user("u", "x")])
    )
    (home / "projects.json").write_text(json.dumps({"projects": {"/home/dev/acme": "acme"}}))
    assert agent.project_of(slug) == "/home/dev/acme"
    assert agent.read(slug).cwd == "/home/dev/acme"

    marked = session_file(
        tmp_path, "web", "session-b-22222222.jsonl", jsonl([meta("s2", "/srv/web"), user("u", "x")])
    )
    (marked.parent.parent / ".project_root").write_text("/srv/web")
    match = agent.project_match(marked)
    assert (match.root, match.how, match.detail) == (
        "/srv/web",
        "hash",
        "projectHash matches .project_root",
    )
    unhashed = session_file(tmp_path, "web", "session-c-3.jsonl", jsonl([meta("s3", "/elsewhere")]))
    assert (agent.project_match(unhashed).how, agent.project_of(unhashed)) == (
        ".project_root",
        "/srv/web",
    )

    root = "/home/dev/old-project"
    hashed_dir = hashlib.sha256(root.encode()).hexdigest()
    old = session_file(
        tmp_path, hashed_dir, "session-c-33333333.json", legacy([user("u", "x")], root=root)
    )
    match = agent.project_match(old)
    assert match.root is None and "known roots" in match.detail
    res = agent.read(old)
    assert res.cwd is None and res.dropped["project_unresolved"] == 1  # global, and said so
    agent.candidate_roots = ["/somewhere/else", root + "/"]
    assert agent.project_of(old) == root
    assert agent.read(old).cwd == root and "project_unresolved" not in agent.read(old).dropped


def test_project_hash_beats_an_unknown_slug(tmp_path):
    agent = GeminiCli(candidate_roots=["/home/dev/acme"])
    path = session_file(tmp_path, "mystery", "session-a-1.jsonl", jsonl([meta(), user("u", "x")]))
    match = agent.project_match(path)
    assert (match.root, match.how) == ("/home/dev/acme", "hash")


def test_project_outside_gemini_layout_only_by_hash(agent):
    assert agent.project_of(JSONL) is None
    fixture_root = "/home/wei/repo/VibeCodingTracker"
    assert hashlib.sha256(fixture_root.encode()).hexdigest().startswith("ab14fe39")
    agent.candidate_roots = [fixture_root]
    assert agent.project_of(JSON_2025) == fixture_root


# --------------------------------------------------------------------------- discovery


def test_discovery_layout_rules_and_counts(tmp_path, agent):
    g = tmp_path / ".gemini"
    (g / "tmp" / "acme").mkdir(parents=True)
    (g / "projects.json").write_text(
        json.dumps({"projects": {"/home/dev/acme": "acme", "/home/dev/web": "web"}})
    )
    main = session_file(
        tmp_path,
        "acme",
        "session-2026-04-01T10-00-aaaaaaaa.jsonl",
        jsonl([meta("a"), user("u", "x")]),
    )
    # resume converted this legacy session: the .jsonl wins, the .json is left out
    conv_json = session_file(
        tmp_path,
        "acme",
        "session-2026-03-01T10-00-bbbbbbbb.json",
        legacy([user("u", "x")], sid="b"),
    )
    conv = session_file(
        tmp_path,
        "acme",
        "session-2026-03-01T10-00-bbbbbbbb.jsonl",
        jsonl([meta("b"), user("u", "x")]),
        age=7200,
    )
    sub = session_file(
        tmp_path, "acme", "b/cccccccc-sub.jsonl", jsonl([meta("c", kind="subagent")])
    )
    legacy_sub = session_file(
        tmp_path,
        "acme",
        "session-2026-03-02T10-00-dddddddd.json",
        legacy([], sid="d", kind="subagent"),
    )
    other = session_file(tmp_path, "acme", "notes.txt", b"hi")
    (g / "tmp" / "acme" / "logs.json").write_text("[]")  # not in chats/: not looked at
    active = session_file(tmp_path, "web", "session-now-eeeeeeee.jsonl", jsonl([meta("e")]), age=5)
    old = session_file(
        tmp_path, "web", "session-old-ffffffff.jsonl", jsonl([meta("f")]), age=40 * 86400
    )
    web = session_file(
        tmp_path, "web", "session-w-99999999.jsonl", jsonl([meta("w", "/home/dev/web")]), age=600
    )
    # the same session id in a second (migrated) folder: one file per session
    dup = session_file(
        tmp_path, "acme-1", "session-2026-04-01T10-00-aaaaaaaa.jsonl", jsonl([meta("a")]), age=9000
    )

    found = agent.discover(DiscoverOptions(root=g, quiet_seconds=300))
    assert [f.path for f in found.files] == [web, main, conv]
    assert [f.session_id for f in found.files] == ["w", "a", "b"]
    assert [f.project_dir for f in found.files] == [
        "/home/dev/web",
        "/home/dev/acme",
        "/home/dev/acme",
    ]
    assert agent.ledger_identity(found.files[1]) == "gemini:a"
    sk = found.skipped_paths
    assert sk["superseded"] == [str(conv_json), str(dup)]
    assert sorted(sk["sidecars"]) == sorted([str(sub), str(legacy_sub)])
    assert sk["not_transcripts"] == [str(other)]
    assert sk["active"] == [str(active)] and sk["outside_window"] == [str(old)]

    capped = agent.discover(DiscoverOptions(root=g, max_sessions=1, quiet_seconds=300))
    assert [f.path for f in capped.files] == [web] and capped.skipped["over_cap"] == 2
    acme = agent.discover(DiscoverOptions(root=g, project="ACME", quiet_seconds=300))
    assert [f.path for f in acme.files] == [main, conv] and acme.skipped["project_filter"] == 1
    wide = agent.discover(DiscoverOptions(root=g, days=None, max_sessions=None, quiet_seconds=0))
    assert old in [f.path for f in wide.files] and active in [f.path for f in wide.files]
    assert agent.discover(DiscoverOptions(root=tmp_path / "nowhere")).files == []


def test_discovery_of_an_unknown_project_keeps_it_global(tmp_path, agent):
    path = session_file(tmp_path, "f" * 64, "session-a-1.json", legacy([user("u", "x")]))
    (found,) = agent.discover(DiscoverOptions(root=tmp_path / ".gemini", quiet_seconds=0)).files
    assert found.path == path and found.project_dir == "" and found.session_id == SID
    filtered = agent.discover(
        DiscoverOptions(root=tmp_path / ".gemini", project="fff", quiet_seconds=0)
    )
    assert len(filtered.files) == 1  # the folder name is what the filter sees when nothing better


def test_discover_paths_recognises_by_content(tmp_path, agent):
    named = tmp_path / "named.log.jsonl"
    named.write_bytes(jsonl([meta("n"), user("u", "x")]))
    claude = tmp_path / "claude.jsonl"
    claude.write_text(json.dumps({"type": "user", "sessionId": "s", "id": "x"}) + "\n")
    copilot = tmp_path / "copilot.json"
    copilot.write_text(json.dumps({"sessionId": "s", "timeline": []}))
    sub = session_file(tmp_path, "p", "parent/child.jsonl", jsonl([meta("c", kind="subagent")]))
    found = agent.discover(
        DiscoverOptions(
            paths=[JSON_2025, JSONL, named, claude, copilot, sub, tmp_path / "gone.json"]
        )
    )
    assert {f.path for f in found.files} == {JSON_2025, JSONL, named}
    assert found.skipped["not_transcripts"] == 2
    assert found.skipped["sidecars"] == 1 and found.skipped["missing"] == 1
    assert agent.recognises(JSON_2026) and not agent.recognises(copilot)
    folder = agent.discover(DiscoverOptions(paths=[FIXTURES, FIXTURES / JSONL.name]))
    found_ids = [f.session_id for f in folder.files]
    assert len(set(found_ids)) == len(found_ids)  # each session once (also e2e-*/ sessions)
    assert {JSON_2025, JSON_2026, JSONL, RESUMED} <= {f.path for f in folder.files}


# --------------------------------------------------------------------------- hooks

SETTINGS = """{
    // Gemini settings, with comments
    "theme": "GitHub", /* keep me */
    "hooks": {
        "enabled": true,
        "AfterAgent": [
            {
                "matcher": "*",
                "hooks": [{"type": "command", "command": "./n.sh", "name": "mine", "timeout": 3}]
            }
        ],
        "BeforeTool": [{"matcher": "write_file", "hooks": [{"type": "command", "command": "lint"}]}]
    },
    "general": {"vimMode": true} // last
}
"""


def test_hooks_round_trip_keeps_every_other_byte(tmp_path, agent):
    env = {"GEMINI_CLI_HOME": str(tmp_path)}
    path = agent.settings_path(env)
    path.parent.mkdir()
    path.write_text(SETTINGS)
    change = agent.install_hooks("/opt/bin/memloom", env=env)
    assert change.changed and change.events == [
        "AfterAgent",
        "SessionEnd",
        "BeforeAgent",
        "PreCompress",
        "AfterTool",
    ]
    assert change.backup_path is not None and change.backup_path.read_text() == SETTINGS
    text = path.read_text()
    assert "// Gemini settings, with comments" in text and "/* keep me */" in text
    data = json.loads(
        "\n".join(line.split(" //")[0] for line in text.splitlines()).replace("/* keep me */", "")
    )
    after = data["hooks"]["AfterAgent"]
    assert after[0]["hooks"][0]["name"] == "mine"  # the user's hook first, untouched
    assert after[1] == {
        "matcher": "*",
        "hooks": [
            {
                "type": "command",
                "command": "/opt/bin/memloom hook notify --agent gemini",
                "name": "memloom-notify",
                "timeout": 10000,  # milliseconds
            }
        ],
    }
    assert data["hooks"]["BeforeAgent"][0]["hooks"][0]["command"].endswith(
        "hook prompt-recall --agent gemini"
    )
    assert data["hooks"]["BeforeAgent"][0]["hooks"][0]["timeout"] == 5000
    assert data["hooks"]["PreCompress"] == [  # the next prompt gives the digest again
        {
            "matcher": "manual",  # "auto" fires before every turn (Gemini CLI 0.61.0)
            "hooks": [
                {
                    "type": "command",
                    "command": "/opt/bin/memloom hook compacted --agent gemini",
                    "name": "memloom-compacted",
                    "timeout": 5000,
                }
            ],
        }
    ]
    assert data["hooks"]["AfterTool"] == [  # the memories of the file its read tool opened
        {
            "matcher": "read_file",
            "hooks": [
                {
                    "type": "command",
                    "command": "/opt/bin/memloom hook read --agent gemini",
                    "name": "memloom-read",
                    "timeout": 5000,
                }
            ],
        }
    ]
    assert "SessionStart" not in data["hooks"]  # the digest goes with the first prompt
    assert data["hooks"]["SessionEnd"][0]["hooks"][0]["name"] == "memloom-session-end"
    assert list(data) == ["theme", "hooks", "general"] and data["hooks"]["enabled"] is True
    assert agent.installed_hooks(env) == {
        "notify": True,
        "session_end": True,
        "prompt_recall": True,
        "compacted": True,
        "read": True,
        "readable": True,
    }
    assert not agent.install_hooks("/opt/bin/memloom", env=env).changed  # idempotent
    assert path.read_text() == text
    assert agent.remove_hooks(env).changed
    assert path.read_text() == SETTINGS  # byte-identical
    assert not agent.remove_hooks(env).changed
    agent.install_hooks("/opt/bin/memloom", env=env)
    assert change.backup_path.read_text() == SETTINGS  # the backup is written once


def test_hooks_without_recall_and_a_new_command(tmp_path, agent):
    env = {"GEMINI_CLI_HOME": str(tmp_path)}
    agent.install_hooks("memloom", recall=False, env=env)  # no settings.json yet
    state = agent.installed_hooks(env)
    assert state["notify"] and state["session_end"] and not state["prompt_recall"]
    assert not state["read"]  # the memories of a file read are recall too
    change = agent.install_hooks("/new/memloom", env=env)  # replaced, not doubled
    assert change.changed and change.backup_path is not None
    text = agent.settings_path(env).read_text()
    assert text.count("memloom-notify") == 1 and "/new/memloom hook notify" in text
    assert agent.remove_hooks(env).changed
    assert json.loads(agent.settings_path(env).read_text()) == {}


@pytest.mark.parametrize(
    "original",
    [
        '{"theme": "X", "hooks": {"AfterAgent": []}}',  # compact, one line
        '{\n\t"theme": "X"\n}\n',  # tabs
        "{}",
    ],
    ids=["compact", "tabs", "empty-object"],
)
def test_hooks_keep_the_file_style(tmp_path, agent, original):
    env = {"GEMINI_CLI_HOME": str(tmp_path)}
    path = agent.settings_path(env)
    path.parent.mkdir()
    path.write_text(original)
    agent.install_hooks("memloom", env=env)
    text = path.read_text()
    json.loads(text)
    if "\t" in original:
        assert '\n\t"hooks": {\n\t\t"AfterAgent"' in text
    if original.startswith('{"theme"'):
        assert "\n" not in text
    agent.remove_hooks(env)
    if original.startswith('{"theme"'):
        assert json.loads(path.read_text()) == {"theme": "X"}  # the emptied list goes too
    else:
        assert path.read_text() == original


def test_hooks_keep_crlf_line_breaks(tmp_path, agent):
    env = {"GEMINI_CLI_HOME": str(tmp_path)}
    path = agent.settings_path(env)
    path.parent.mkdir()
    original = SETTINGS.replace("\n", "\r\n").encode()
    path.write_bytes(original)
    agent.install_hooks("memloom", env=env)
    text = path.read_bytes()
    assert text.count(b"\n") == text.count(b"\r\n") > SETTINGS.count("\n")
    agent.remove_hooks(env)
    assert path.read_bytes() == original


def test_hooks_refuse_an_unusable_settings_file(tmp_path, agent):
    env = {"GEMINI_CLI_HOME": str(tmp_path)}
    path = agent.settings_path(env)
    path.parent.mkdir()
    for bad in ('{"theme": "x",}', "[1, 2]", '{"hooks": []}', '{"hooks": {"AfterAgent": {}}}'):
        path.write_text(bad)
        with pytest.raises(SettingsError, match="memloom has not changed it"):
            agent.install_hooks("memloom", env=env)
        assert path.read_text() == bad
    path.write_text("{ nope")
    assert agent.installed_hooks(env)["readable"] is False
    assert not (path.parent / "settings.json.memloom-backup").exists()


# --------------------------------------------------------------------------- hook payload


def test_hook_payloads(tmp_path, agent):
    env = {"GEMINI_CLI_HOME": str(tmp_path)}
    path = session_file(
        tmp_path, "acme", "session-2026-04-01T10-00-aaaaaaaa.jsonl", jsonl([meta()])
    )
    base = {
        "session_id": "aaaaaaaa-1",
        "transcript_path": str(path),
        "cwd": "/home/dev/acme",
        "timestamp": "2026-04-01T10:00:00.000Z",
    }
    after = agent.parse_hook_payload({**base, "hook_event_name": "AfterAgent", "prompt": "hi"}, env)
    assert (after.agent, after.transcript_path, after.session_id, after.cwd, after.reason) == (
        "gemini",
        path.resolve(),
        "aaaaaaaa-1",
        "/home/dev/acme",
        "AfterAgent",
    )
    assert agents.get_agent(after.agent) is agents.get_agent("gemini")
    end = agent.parse_hook_payload({**base, "hook_event_name": "SessionEnd", "reason": "exit"}, env)
    assert end.reason == "exit"
    legacy_path = session_file(tmp_path, "acme", "session-2025-x.json", legacy([]))
    assert agent.parse_hook_payload({**base, "transcript_path": str(legacy_path)}, env)

    sub = session_file(tmp_path, "acme", "parent/child.jsonl", jsonl([meta()]))
    logs = tmp_path / ".gemini" / "tmp" / "acme" / "logs.json"
    logs.write_text("[]")
    outside = tmp_path / "session-x.jsonl"
    outside.write_text("{}\n")
    refusals = {
        str(outside): "outside the Gemini CLI tmp folder",
        str(sub): "sub-agent",
        str(logs): "not a Gemini CLI session file",
        "relative/session-x.jsonl": "not absolute",
        str(path.with_suffix(".txt")): "not a",
        str(path.parent / "session-gone.jsonl"): "does not exist",
        "": "missing",
    }
    for given, why in refusals.items():
        with pytest.raises(NotificationRefused, match=why):
            agent.parse_hook_payload({**base, "transcript_path": given}, env)
    with pytest.raises(NotificationRefused, match="missing"):
        agent.parse_hook_payload({"session_id": "x"}, env)


def test_prompt_text_is_the_typed_prompt_without_hook_context(agent):
    """Gemini CLI 0.61.0 headless: BeforeAgent's ``prompt`` starts with the SessionStart
    hooks' context; memloom's recall query is what the user typed."""
    wrapped = "<hook_context>digest: pinned notes\n- x</hook_context>\n\nhow do I deploy?"
    assert agent.prompt_text({"prompt": wrapped}) == "how do I deploy?"
    assert agent.prompt_text({"prompt": "plain <hook_context> unclosed"}) == (
        "plain <hook_context> unclosed"
    )
    assert agent.prompt_text({"prompt": "<hook_context>only</hook_context>"}) == ""
    assert agent.prompt_text({}) is None
    assert agents.get_agent("claude-code").prompt_text({"prompt": wrapped}) == wrapped


@pytest.mark.parametrize(
    ("event", "name"), [("prompt", "BeforeAgent"), ("session-start", "SessionStart")]
)
def test_context_is_hook_specific_output_json(agent, event, name):
    out = json.loads(agent.format_context(event, "<memloom-context>\n- x\n</memloom-context>"))
    assert out == {
        "hookSpecificOutput": {
            "hookEventName": name,
            "additionalContext": "<memloom-context>\n- x\n</memloom-context>",
        }
    }
    assert agent.format_context(event, "") == ""
    assert agent.digest_with_prompt and not agents.get_agent("claude-code").digest_with_prompt


def test_an_earlier_install_s_session_start_hook_is_taken_out(tmp_path, agent):
    env = {"GEMINI_CLI_HOME": str(tmp_path)}
    path = agent.settings_path(env)
    path.parent.mkdir()
    old = {
        "type": "command",
        "command": "/opt/bin/memloom hook session-start --agent gemini",
        "name": "memloom-session-start",
        "timeout": 5000,
    }
    mine = {"type": "command", "command": "my-start"}
    doc = {"hooks": {"SessionStart": [{"matcher": "*", "hooks": [mine]}, {"hooks": [old]}]}}
    path.write_text(json.dumps(doc, indent=2))
    assert agent.install_hooks("/opt/bin/memloom", env=env).changed
    data = json.loads(path.read_text())
    assert data["hooks"]["SessionStart"] == [{"matcher": "*", "hooks": [mine]}]
    assert "BeforeAgent" in data["hooks"]
    path.write_text(json.dumps(doc, indent=2))
    assert agent.remove_hooks(env).changed
    assert json.loads(path.read_text())["hooks"]["SessionStart"] == [
        {"matcher": "*", "hooks": [mine]}
    ]


def test_hook_path_is_standard_library_only():
    code = (
        "import sys, memloom.agents.gemini.payload, memloom.agents.gemini.hooks, "
        "memloom.agents.gemini.markup; "
        "print([m for m in ('numpy', 'pydantic') if m in sys.modules])"
    )
    src = str(Path(__file__).resolve().parents[2] / "src")
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": src},
        check=True,
    )
    assert out.stdout.strip() == "[]"


def test_parse_file_reports_meta():
    res, meta_ = parse_file(JSON_2026, final=True)
    assert (meta_.format, meta_.kind, meta_.session_id) == ("json", "main", res.session_id)
    _, meta_ = parse_file(JSONL)
    assert (
        meta_.format == "jsonl" and meta_.project_hash and meta_.project_hash.startswith("9da8b3df")
    )


@pytest.mark.parametrize(
    "path",
    [JSON_2025, JSON_2026, JSONL, RESUMED],
    ids=["json-2025", "json-2026", "jsonl", "resumed"],
)
def test_damaged_fixtures_never_raise(tmp_path, agent, path):
    import random

    rng = random.Random(15)
    data = path.read_bytes()
    target = tmp_path / path.name
    for _ in range(60):
        damaged = bytearray(data[: rng.randrange(len(data) + 1)])
        for _ in range(rng.randrange(4)):
            if damaged:
                damaged[rng.randrange(len(damaged))] = rng.choice(b'{}[]",:\n\x00\xff')
        target.write_bytes(bytes(damaged))
        for final in (False, True):
            res = agent.read(target, final=final)
            assert res.end_offset <= len(damaged)
            assert len({u.uuid for u in res.units}) == len(res.units)


def test_damaged_settings_are_refused_never_crash(tmp_path, agent):
    import random

    rng = random.Random(15)
    env = {"GEMINI_CLI_HOME": str(tmp_path)}
    path = agent.settings_path(env)
    path.parent.mkdir()
    for _ in range(200):
        text = list(SETTINGS)
        for _ in range(rng.randrange(1, 4)):
            text[rng.randrange(len(text))] = rng.choice('{}[]",:/*\n x')
        broken = "".join(text)
        path.write_text(broken)
        try:
            agent.install_hooks("memloom", env=env)
        except SettingsError:
            assert path.read_text() == broken
            continue
        agent.remove_hooks(env)
        assert path.read_text() == broken


# --------------------------------------------------------------------------- through the importer


def gemini_home_with(tmp_path: Path, records: list[dict[str, Any]], *, name: str) -> Path:
    g = tmp_path / "g" / ".gemini"
    (g / "tmp" / "acme" / "chats").mkdir(parents=True, exist_ok=True)
    (g / "projects.json").write_text(json.dumps({"projects": {"/home/dev/acme": "acme"}}))
    path = g / "tmp" / "acme" / "chats" / name
    path.write_bytes(jsonl(records) if name.endswith(".jsonl") else legacy(records))
    return path


def run_import(m: Any, path: Path) -> Any:
    from memloom.sessions.importer import Importer, ImportOptions

    options = ImportOptions(root=path.parents[3], agent="gemini", quiet_seconds=0)
    return Importer(m, m.llm, options).run()


def new_lines(scripted: Any, since: int) -> list[str]:
    """The texts the model was asked to distill (all lines of the distill calls after ``since``)."""
    return [
        line["text"]
        for p in scripted.payloads.get("memloom_distill", [])[since:]
        for line in p["lines"]
    ]


def test_import_jsonl_grows_resumes_and_never_sends_rewound_text(tmp_path, model):  # noqa: F811
    import memloom

    sid = "0ab84937-9fe7-4284-986a-33c832af0b6a"
    path = gemini_home_with(
        tmp_path,
        [
            meta(sid),
            user("u1", "REMEMBER: staging listens on port 5433"),
            gemini("g1", "noted"),
            user("u2", "REMEMBER: deploys happen on fridays"),
            {"$rewindTo": "u2"},
        ],
        name="session-2026-04-01T10-00-0ab84937.jsonl",
    )
    m = memloom.open(home=str(tmp_path / "home"))
    try:
        first = run_import(m, path)
        assert (first.sessions, first.saved) == (1, 1)
        (mem,) = m.list({"limit": 10}).memories
        assert (mem.source, mem.project) == ("gemini-cli", "/home/dev/acme")
        assert "fridays" not in json.dumps(model.payloads)  # rewound: never sent
        assert list(m.backend.ledger_get_many([f"gemini:{sid}"])) == [f"gemini:{sid}"]
        calls = len(model.payloads["memloom_distill"])
        with path.open("ab") as fh:  # a re-emit of g1, then a new turn
            fh.write(
                jsonl([gemini("g1", "noted", tokens={"total": 3}), user("u3", "REMEMBER: use uv")])
            )
        again = run_import(m, path)
        assert (again.sessions, again.saved) == (1, 1)
        (payload,) = model.payloads["memloom_distill"][calls:]
        assert [line["text"] for line in payload["lines"]][-1] == "REMEMBER: use uv"
        assert len(m.list({"limit": 10}).memories) == 2
    finally:
        m.close()


def test_import_rewritten_legacy_json_sends_only_the_new_message(tmp_path, model):  # noqa: F811
    import memloom

    two = [user("u1", "REMEMBER: staging listens on port 5433"), gemini("g1", "noted")]
    path = gemini_home_with(tmp_path, two, name="session-2025-10-01T10-00-11111111.json")
    m = memloom.open(home=str(tmp_path / "home"))
    try:
        assert run_import(m, path).saved == 1
        calls = len(model.payloads["memloom_distill"])
        three = [*two, user("u2", "REMEMBER: use uv")]
        path.write_bytes(legacy(three, lastUpdated="2025-10-01T10:09:00.000Z"))
        again = run_import(m, path)
        sent = new_lines(model, calls)
        assert "REMEMBER: use uv" in sent
        assert again.saved == 1 and again.duplicates == 2
        # The earlier messages travel only as context: what the model draws from them
        # alone was distilled by the first run, and is dropped, not written again.
        assert again.dropped_reasons == {"context_only": 1} and again.merged == 0
        assert sorted(mem.text for mem in m.list({"limit": 10}).memories) == [
            "staging listens on port 5433",
            "use uv",
        ]
    finally:
        m.close()


def test_import_of_an_unknown_project_is_global(tmp_path, model):  # noqa: F811
    import memloom

    chats = tmp_path / "g" / ".gemini" / "tmp" / ("f" * 64) / "chats"
    chats.mkdir(parents=True)
    path = chats / "session-2026-04-01T10-00-11111111.jsonl"
    path.write_bytes(jsonl([meta(), user("u1", "REMEMBER: staging listens on port 5433")]))
    m = memloom.open(home=str(tmp_path / "home"))
    try:
        assert run_import(m, path).saved == 1
        (mem,) = m.list({"limit": 10}).memories
        assert mem.project is None
    finally:
        m.close()
