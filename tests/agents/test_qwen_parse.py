"""memloom.agents.qwen.parse: Qwen Code sessions as units, its hook markup and memloom's
injection left out, bad input counted, the watermark."""

from __future__ import annotations

import json

import pytest

from memloom.agents import get_agent
from memloom.agents.qwen import parse as parse_mod
from memloom.agents.qwen.parse import parse_bytes, parse_session, typed_text
from tests.agents.qwen_records import (
    CONTEXT,
    CWD,
    SID,
    base,
    conversation,
    lines,
    reply,
    session,
    user,
)


def test_conversation_units_and_what_is_dropped(tmp_path):
    res = parse_session(session(tmp_path, conversation()), final=True)
    assert [(u.role, u.text, u.start_line) for u in res.units] == [
        ("user", "which port does staging use?", 1),
        ("assistant", "Port 5433.", 3),
        ("user", "please list the files", 4),
        ("assistant", "There is a Makefile.", 7),
    ]
    assert res.dropped["tool_calls_only"] == 1 and res.dropped["tool_result"] == 1
    assert res.dropped["system"] == 1 and res.malformed == 0
    assert (res.session_id, res.cwd, res.version) == (SID, CWD, "0.24.4")
    assert res.units[0].uuid == "u1" and res.units[0].timestamp
    assert res.lines_read == 7


def test_typed_text_prefers_display_text_only_with_hook_context():
    assert typed_text(user("as typed", "u")) == "as typed"
    # Without hookContext displayText is only a label (Qwen's hooks doc): the parts count.
    rec = base("user", "u", message={"role": "user", "parts": [{"text": "model-bound text"}]})
    rec["systemPayload"] = {"displayText": "/label"}
    assert typed_text(rec) == "model-bound text"
    # A released file with only the tagged part: the part is left out all the same.
    rec = base("user", "u", message={"role": "user", "parts": [{"text": "hi"}, {"text": CONTEXT}]})
    assert typed_text(rec) == "hi"


def test_memloom_s_injection_never_reaches_a_unit():
    data = lines(
        [user("hello", "u1"), reply("<memloom-context>x 5433</memloom-context>\nhi", "a1")]
    )
    res = parse_bytes(data)
    assert [u.text for u in res.units] == ["hello", "hi"]
    assert not any("5433" in u.text or "qwen:" in u.text for u in res.units)


def test_only_typed_user_records_and_plain_assistant_output():
    recs = [
        user("typed", "u1", injected=False),
        user("mid turn", "u2", injected=False, subtype="mid_turn_user_message"),
        user("@file expansion", "u3", injected=False, subtype="at_command"),
        {**user("a cron prompt", "u4", injected=False), "provenance": "goal_runtime"},
        {**reply("legacy without provenance", "a0"), "provenance": None},
        base(
            "assistant", "a1", message={"role": "model", "parts": [{"text": "hm", "thought": True}]}
        ),
    ]
    res = parse_bytes(lines(recs))
    assert [u.text for u in res.units] == ["typed", "mid turn", "legacy without provenance"]
    assert res.dropped["not_typed"] == 2 and res.dropped["empty"] == 1


def test_unknown_records_and_bad_lines_are_counted_never_raise():
    data = (
        lines([base("brand_new_kind", "x1"), {"no": "type"}, [1, 2]])  # type: ignore[list-item]
        + b"{not json\n\x00\x00\n"
        + b'{"uuid": "u9" '
        + b"[" * 2000
        + b"\n"
        + lines([user("still read", "u1", injected=False)])
    )
    res = parse_bytes(data)
    assert [u.text for u in res.units] == ["still read"]
    assert res.dropped["other_type"] == 1 and res.dropped["not_a_record"] == 1
    assert res.malformed == 4


def test_half_written_last_line_waits_then_resumes(tmp_path):
    path = session(tmp_path, [user("first", "u1", injected=False)])
    whole = json.dumps(reply("second", "a1")).encode()
    with path.open("ab") as f:
        f.write(whole[:40])
    res = parse_session(path)  # still being written: left for the next read
    assert [u.text for u in res.units] == ["first"] and res.lines_read == 1
    with path.open("ab") as f:
        f.write(whole[40:] + b"\n")
    more = parse_session(path, start_offset=res.end_offset, start_line=res.lines_read)
    assert [(u.text, u.start_line) for u in more.units] == [("second", 2)]
    # final: a half line that never completes is counted, not a crash
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(lines([user("a", "u1", injected=False)]) + whole[:40])
    res = parse_session(cut, final=True)
    assert [u.text for u in res.units] == ["a"] and res.malformed == 1


def test_duplicate_uuids_once_and_the_seen_set(tmp_path):
    seen: set[str] = set()
    path = session(tmp_path, [user("one", "u1", injected=False), user("one", "u1", injected=False)])
    res = parse_session(path, final=True, seen=seen)
    assert len(res.units) == 1 and res.dropped["duplicate_uuid"] == 1 and seen == {"u1"}
    assert parse_session(path, final=True, seen=seen).units == []


def test_offset_past_the_end_and_unreadable_files(tmp_path):
    path = session(tmp_path, conversation())
    with pytest.raises(ValueError):
        parse_session(path, start_offset=path.stat().st_size + 1)
    with pytest.raises(OSError):
        parse_session(tmp_path / "missing.jsonl")
    path.chmod(0)
    try:
        import os

        if os.geteuid() != 0:  # root reads anything
            with pytest.raises(OSError):
                parse_session(path)
    finally:
        path.chmod(0o600)


def test_oversized_lines_are_skipped_unread(tmp_path, monkeypatch):
    monkeypatch.setattr(parse_mod, "MAX_LINE_BYTES", 600)
    big = user("x" * 2000, "u1", injected=False)
    res = parse_session(session(tmp_path, [big, user("small", "u2", injected=False)]), final=True)
    assert [u.text for u in res.units] == ["small"] and res.oversized == 1


def test_a_huge_session_is_read_in_full(tmp_path):
    recs = []
    for i in range(4000):
        recs += [user(f"prompt {i} " + "words " * 40, f"u{i}"), reply(f"answer {i}", f"a{i}")]
    path = session(tmp_path, recs)
    assert path.stat().st_size > 4 << 20
    res = get_agent("qwen").read(path, final=True)
    assert len(res.units) == 8000 and res.units[-1].text == "answer 3999"
    assert res.end_offset == path.stat().st_size and res.lines_read == 8000


def test_unknown_part_types_and_odd_shapes_are_passed_over():
    parts = [{"inlineData": {"mimeType": "image/png", "data": "AAAA"}}, {"text": "see image"}]
    recs = [
        base("user", "u1", provenance="real_user", message={"role": "user", "parts": parts}),
        base("user", "u2", provenance="real_user", message={"role": "user", "parts": "text?"}),
        base("assistant", "a1", message="not a dict"),
        base("user", "u3", provenance="real_user", systemPayload={"hookContext": 5}),
    ]
    res = parse_bytes(lines(recs))
    assert [u.text for u in res.units] == ["see image"]
    assert res.dropped["empty"] == 3 and res.malformed == 0
