"""The Cursor transcript reader (memloom.agents.cursor.parse) on the constructed fixtures
(tests/fixtures/agents/cursor, README there) and on bad input."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memloom.agents import agent_for_file, get_agent
from memloom.agents.cursor import parse

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "agents" / "cursor"
TRANSCRIPTS = FIX / "home" / ".cursor" / "projects" / "home-dev-acme-api" / "agent-transcripts"
SID = "5b1c2d3e-0000-4a11-9b22-3c4d5e6f7a81"
JSONL = TRANSCRIPTS / SID / f"{SID}.jsonl"
TXT = TRANSCRIPTS / "0f9e8d7c-1111-4b22-8c33-4d5e6f708192.txt"
CLAUDE_EXAMPLE = (
    Path(__file__).resolve().parents[2]
    / "examples"
    / "claude-code-session"
    / "7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl"
)


def user(text: str) -> dict:
    return {"role": "user", "message": {"content": [{"type": "text", "text": text}]}}


def assistant(text: str) -> dict:
    return {"role": "assistant", "message": {"content": [{"type": "text", "text": text}]}}


def jsonl(*records: dict) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def test_jsonl_fixture_keeps_typed_text_and_replies_only():
    res = get_agent("cursor").read(JSONL)
    assert [(u.role, u.text, u.start_line) for u in res.units] == [
        ("user", "REMEMBER: the staging database listens on port 5433", 1),
        ("assistant", "Noted: staging Postgres is on 5433. I'll check the config.", 2),
        ("user", "REMEMBER: I prefer squash merges for this repo", 6),
        ("assistant", "Understood, squash merges from now on.", 7),
    ]
    everything = json.dumps([u.text for u in res.units])
    for left_out in ("user_info", "attached_files", "psycopg", "port = 5432", "memloom-context"):
        assert left_out not in everything  # context, tool results and memloom's own block
    assert "use uv" not in everything
    assert res.dropped["tool_only"] == 2  # the tool_result message, the tool_use-only one
    assert res.dropped["event"] == 3  # turn_ended x2 and the unknown record type
    assert res.dropped["system"] == 1
    assert (res.records, res.malformed, res.lines_read) == (10, 0, 10)
    assert res.end_offset == JSONL.stat().st_size


def test_text_fixture_leaves_out_thinking_and_tools():
    res = get_agent("cursor").read(TXT, final=True)
    assert [(u.role, u.text, u.start_line, u.end_line) for u in res.units] == [
        ("user", "REMEMBER: run the test suite with make check, not pytest directly", 1, 5),
        ("assistant", "I will use make check from now on.", 6, 15),
        ("assistant", "All 212 tests pass with make check.", 16, 18),
        ("user", "thanks", 19, 23),
        ("assistant", "You're welcome.", 24, 25),
    ]
    texts = " ".join(u.text for u in res.units)
    assert "Thinking" not in texts and "212 passed" not in texts and "cwd:" not in texts


def test_recognised_by_content_and_never_taken_for_claude_code():
    assert agent_for_file(JSONL) == "cursor"
    assert agent_for_file(TXT) == "cursor"
    assert agent_for_file(CLAUDE_EXAMPLE) == "claude-code"
    assert not get_agent("cursor").recognises(CLAUDE_EXAMPLE)
    assert not get_agent("claude-code").recognises(JSONL)


def test_a_half_written_last_line_waits_and_is_read_once_complete(tmp_path):
    path = tmp_path / "s.jsonl"
    whole = json.dumps(assistant("second reply")).encode()
    path.write_bytes(jsonl(user("first")) + whole[:20])
    agent = get_agent("cursor")
    res = agent.read(path)
    assert [u.text for u in res.units] == ["first"]
    assert (res.lines_read, res.malformed) == (1, 0)
    assert res.end_offset == len(jsonl(user("first")))
    with path.open("ab") as fh:
        fh.write(whole[20:] + b"\n")
    more = agent.read(path, start_offset=res.end_offset, start_line=res.lines_read)
    assert [(u.text, u.start_line) for u in more.units] == [("second reply", 2)]
    final = agent.read(tmp_path / "s.jsonl", final=True)
    assert final.malformed == 0 and len(final.units) == 2


def test_a_torn_line_at_the_end_of_a_finished_file_is_a_counted_skip(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(jsonl(user("first")) + b'{"role":"assistant","mess')
    res = get_agent("cursor").read(path, final=True)
    assert [u.text for u in res.units] == ["first"] and res.malformed == 1


def test_unknown_records_and_blocks_are_counted_never_fatal(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(
        jsonl(
            {"type": "turn_started", "id": 1},
            {"role": "narrator", "message": {"content": "?"}},
            {"role": "user", "message": {"content": [{"type": "image", "url": "x"}]}},
            {"role": "assistant", "message": {"content": [{"type": "video"}, "plain string"]}},
            {"role": "user", "message": "not an object"},
            [1, 2, 3],  # not an object at all
        )
        + b"not json at all\n"
        + jsonl(user("still read"))
    )
    res = get_agent("cursor").read(path, final=True)
    assert [u.text for u in res.units] == ["plain string", "still read"]
    assert res.dropped["event"] == 1 and res.dropped["not_a_message"] == 1
    assert res.dropped["tool_only"] == 1 and res.dropped["empty"] == 1
    assert res.malformed == 2  # the array and the text line


def test_a_huge_session_and_an_oversized_line(tmp_path, monkeypatch):
    monkeypatch.setattr(parse, "MAX_LINE_BYTES", 4096)
    records = [user(f"prompt {i}") if i % 2 else assistant(f"reply {i}") for i in range(20_000)]
    path = tmp_path / "big.jsonl"
    path.write_bytes(jsonl(*records[:10]) + jsonl(user("x" * 10_000)) + jsonl(*records[10:]))
    res = get_agent("cursor").read(path, final=True)
    assert len(res.units) == 20_000 and res.oversized == 1
    assert res.units[-1].start_line == 20_001
    assert res.end_offset == os.path.getsize(path)


def test_an_unreadable_file_raises_oserror(tmp_path):
    agent = get_agent("cursor")
    with pytest.raises(OSError):
        agent.read(tmp_path / "missing.jsonl")
    os.mkfifo(tmp_path / "fifo.jsonl")
    with pytest.raises(OSError):  # never blocks on a FIFO
        agent.read(tmp_path / "fifo.jsonl")
    with pytest.raises(ValueError):  # a watermark past the end: the file was replaced
        agent.read(JSONL, start_offset=10**9)


def test_same_line_same_text_is_a_duplicate_a_changed_line_is_not():
    seen: set[str] = set()
    data = jsonl(user("one"), assistant("two"))
    first = parse.parse_jsonl_bytes(data, seen=seen)
    again = parse.parse_jsonl_bytes(data, seen=seen)
    assert len(first.units) == 2 and again.units == [] and again.dropped["duplicate_id"] == 2
    changed = parse.parse_jsonl_bytes(jsonl(user("one"), assistant("three")), seen=seen)
    assert [u.text for u in changed.units] == ["three"]


def test_parse_bytes_reads_either_form():
    assert [
        u.text for u in parse.parse_bytes(jsonl(user("<user_query>hi</user_query>"))).units
    ] == ["hi"]
    text = b"user:\n<user_query>\nhello\n</user_query>\n\nassistant:\nhi there\n"
    assert [u.text for u in parse.parse_bytes(text, first_line=7).units] == ["hello", "hi there"]
    assert parse.parse_bytes(text, first_line=7).units[1].start_line == 12


def test_a_resumed_text_transcript_reads_only_what_was_added(tmp_path):
    path = tmp_path / "t.txt"
    path.write_bytes(TXT.read_bytes())
    agent = get_agent("cursor")
    first = agent.read(path)
    with path.open("ab") as fh:
        fh.write(b"\nuser:\n<user_query>\nREMEMBER: use uv\n</user_query>\n")
    more = agent.read(path, start_offset=first.end_offset, start_line=first.lines_read)
    assert [(u.role, u.text) for u in more.units] == [("user", "REMEMBER: use uv")]
    assert more.units[0].start_line == first.lines_read + 2


def test_memloom_block_is_removed_from_replies_too():
    block = "<memloom-context>\n- (fact) recalled\n</memloom-context>\nreal reply"
    res = parse.parse_jsonl_bytes(jsonl(assistant(block)))
    assert [u.text for u in res.units] == ["real reply"]
