"""Parser behaviour on the hand-made (SYNTHETIC) trap transcripts.

The files live in ``tests/fixtures/transcripts/synthetic/`` and are produced by
``generate.py`` there. Every test asserts exact units and exact counts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memloom.agents.claude_code import parse as parse_mod
from memloom.agents.claude_code.parse import (
    DROP_REASONS,
    MEMLOOM_CONTEXT_CLOSE,
    MEMLOOM_CONTEXT_OPEN,
    ParseResult,
    parse_bytes,
    parse_transcript,
)

SYN = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts" / "synthetic"
SESSION = "5a1e0000-0000-4000-8000-000000000001"


def units(r: ParseResult) -> list[tuple[str, str, int, int]]:
    return [(u.role, u.text, u.start_line, u.end_line) for u in r.units]


def drops(r: ParseResult) -> dict[str, int]:
    assert set(r.dropped) == set(DROP_REASONS)
    return {k: v for k, v in r.dropped.items() if v}


def parse(name: str, **kw) -> ParseResult:
    kw.setdefault("final", True)
    return parse_transcript(SYN / name, **kw)


def test_constants() -> None:
    assert MEMLOOM_CONTEXT_OPEN == "<memloom-context>"
    assert MEMLOOM_CONTEXT_CLOSE == "</memloom-context>"


def test_u2028_inside_strings_does_not_split_lines() -> None:
    data = (SYN / "u2028.jsonl").read_bytes()
    assert len(data.decode("utf-8").splitlines()) == 5  # the trap: splitlines breaks here
    r = parse("u2028.jsonl")
    assert units(r) == [
        ("user", "first line\u2028second line\u2029third line", 1, 1),
        ("assistant", "reply with\u2028a line separator", 2, 2),
    ]
    assert (r.lines_read, r.records, r.malformed, r.end_offset) == (2, 2, 0, len(data))
    assert (r.session_id, r.cwd, r.version) == (SESSION, "/home/dev/synthetic-project", "2.1.12")


def test_two_records_on_one_line_and_rewritten_leaf() -> None:
    r = parse("joined_records.jsonl")
    assert units(r) == [
        ("user", "hello", 1, 1),
        ("assistant", "first answer", 2, 2),
        ("user", "next question", 5, 5),
        ("assistant", "second answer", 6, 6),
    ]
    # line 2 holds two records; line 4 re-writes the leaf of line 2
    assert (r.lines_read, r.records, r.malformed) == (6, 7, 0)
    assert drops(r) == {"non_conversation_type": 2, "duplicate_uuid": 1}


def test_nul_runs_truncated_splices_and_junk_lines() -> None:
    r = parse("nul_runs.jsonl")
    assert units(r) == [
        ("user", "before the crash", 1, 1),
        ("assistant", "reply after NULs", 3, 3),  # NULs before the record are stripped
        ("user", "after the crash", 4, 4),  # truncated record + NULs + next record
        ("assistant", "recovered reply", 5, 5),
        ("user", "end", 10, 10),
        # a truncated progress line whose embedded user message closes at the splice:
        # the nested message must not leak out as a record
        ("user", "real next", 11, 11),
    ]
    # malformed: NUL-only line 2, truncated part of line 4, [1,2,3], "just a string",
    # truncated part of line 11. Blank lines 7-8 are ignored.
    assert r.malformed == 5
    assert (r.lines_read, r.records) == (11, 6)
    assert drops(r) == {}
    assert all("subagent prompt" not in u.text for u in r.units)


def test_truncated_last_line_growing_vs_final() -> None:
    data = (SYN / "truncated_tail.jsonl").read_bytes()
    complete = data.rindex(b"\n") + 1
    expected = [
        ("user", "question", 1, 1),
        ("assistant", "answer", 2, 2),
        ("user", "follow-up", 3, 3),
    ]

    growing = parse("truncated_tail.jsonl", final=False)
    assert units(growing) == expected
    assert (growing.lines_read, growing.end_offset, growing.malformed) == (3, complete, 0)

    final = parse("truncated_tail.jsonl", final=True)
    assert units(final) == expected
    assert (final.lines_read, final.end_offset, final.malformed) == (4, len(data), 1)

    assert parse_transcript(SYN / "truncated_tail.jsonl").end_offset == complete  # default: growing


def test_complete_last_record_without_newline_is_consumed() -> None:
    data = (SYN / "no_final_newline.jsonl").read_bytes()
    assert not data.endswith(b"\n")
    for final in (False, True):
        r = parse("no_final_newline.jsonl", final=final)
        assert units(r) == [("user", "question", 1, 1), ("assistant", "answer", 2, 2)]
        assert (r.lines_read, r.end_offset, r.malformed) == (2, len(data), 0)


def test_compaction_boundary_summary_and_manual_compact() -> None:
    r = parse("compaction.jsonl")
    assert units(r) == [
        ("user", "Let's refactor the parser", 1, 1),
        ("assistant", "Sure, starting.", 2, 2),
        ("user", "Continue with the tests please", 8, 8),
        ("assistant", "Running them now.", 9, 9),
        ("user", "/compact focus on the parser", 11, 11),  # typed /compact arguments
    ]
    # summaries: flagged (4), child of a compact_boundary (6), compaction prefix (7)
    assert drops(r) == {
        "compact_summary": 3,
        "non_conversation_type": 2,
        "meta": 1,
        "command_markup": 1,
    }
    assert r.records == 12


def test_microcompact_boundary_has_no_summary() -> None:
    r = parse("microcompact.jsonl")
    assert units(r) == [
        ("user", "Please fix the flaky test", 1, 1),
        ("assistant", "Looking.", 2, 2),
        ("user", "Also check the timeout", 4, 4),  # parent is the microcompact boundary
        ("assistant", "Done.", 5, 5),
    ]
    assert drops(r) == {"non_conversation_type": 1}


def test_synthetic_and_api_error_assistant_lines() -> None:
    r = parse("synthetic_and_errors.jsonl")
    assert units(r) == [("user", "hi", 1, 1), ("assistant", "Real answer", 5, 5)]
    assert drops(r) == {"synthetic": 2, "api_error": 1}


def test_inline_sidechains() -> None:
    r = parse("inline_sidechains.jsonl")
    assert units(r) == [("user", "Find all TODOs", 1, 1), ("assistant", "There are 3 TODOs.", 6, 6)]
    assert drops(r) == {"sidechain": 2, "tool_result": 1, "empty": 1}
    assert r.version == "1.0.98"


def test_slash_commands_stdout_and_args() -> None:
    r = parse("slash_commands.jsonl")
    assert units(r) == [
        ("user", "/model opus", 2, 2),
        ("user", "/review focus on error handling", 4, 4),
        ("assistant", "Reviewing error handling.", 6, 6),
        ("user", "/review the diff", 15, 15),  # 1.0.24 writes the name without "/"
        ("user", "What does /model do?", 17, 17),
    ]
    assert drops(r) == {"meta": 2, "command_markup": 10}


def test_interrupt_markers() -> None:
    r = parse("interrupts.jsonl")
    assert units(r) == [
        ("user", "Refactor the module", 1, 1),
        ("user", "Actually, keep the old API", 6, 6),
        ("assistant", "OK, keeping it.", 7, 7),
    ]
    assert drops(r) == {"tool_result": 1, "interrupt": 2, "empty": 1}


def test_split_assistant_reply_joins_by_message_id() -> None:
    r = parse("split_reply.jsonl")
    assert units(r) == [
        ("user", "Explain and fix the bug", 1, 1),
        # text, tool_use, tool_result, text of message M1: one unit over lines 3..6
        ("assistant", "The bug is in the loop bound.\n\nFixed; the loop now stops at n-1.", 3, 6),
        ("assistant", "Running tests.", 7, 7),
        ("assistant", "All tests pass.", 10, 10),
        ("user", "Thanks! Now add a regression test", 11, 11),
        ("assistant", "Adding it.", 12, 12),  # same id as line 10, but a user unit intervened
        ("assistant", "Part one.\n\nPart two.", 13, 13),  # two text blocks on one line
        ("assistant", "No id here", 15, 15),  # no message.id: never joined
        ("assistant", "Still no id", 16, 16),
        ("assistant", "Alpha one\n\nAlpha two", 17, 19),  # interleaved with another reply
        ("assistant", "Beta", 18, 18),
        ("assistant", "Other request", 20, 20),  # same message.id, other requestId
    ]
    assert r.units[1].uuid == "a2"
    assert drops(r) == {"tool_result": 2, "empty": 4}
    # every record either feeds a unit (14 here) or is counted in one drop reason
    assert r.records == sum(r.dropped.values()) + 14


def test_duplicate_uuids_within_and_across_calls() -> None:
    r = parse("duplicates.jsonl")
    assert units(r) == [
        ("user", "first", 1, 1),
        ("assistant", "reply", 2, 2),
        ("user", "second", 5, 5),
    ]
    assert drops(r) == {"duplicate_uuid": 2}

    seen = {"d-u2"}
    r = parse("duplicates.jsonl", seen_uuids=seen)
    assert units(r) == [("user", "first", 1, 1), ("assistant", "reply", 2, 2)]
    assert drops(r) == {"duplicate_uuid": 3}
    assert seen == {"d-u1", "d-a1", "d-u2"}  # the caller's set is updated

    again = parse("duplicates.jsonl", seen_uuids=seen)
    assert again.units == [] and drops(again) == {"duplicate_uuid": 5}


def test_queued_prompts_recovered() -> None:
    r = parse("queue.jsonl")
    assert units(r) == [
        ("user", "Start the migration", 1, 1),
        ("assistant", "Starting.", 2, 2),
        ("user", "also update the docs", 3, 3),  # enqueue + remove, never a user line
        ("assistant", "Migration done.", 7, 7),
        ("user", "run the linter too", 10, 10),  # enqueue + dequeue: the user line itself
        ("assistant", "Lint clean.", 11, 11),
        ("user", "stop", 13, 13),  # popAll; its sibling came back as line 15
        ("user", "and bump the version", 15, 15),
        ("user", "check CI status", 20, 20),  # the task notification before it was delivered
        ("user", "left in the box", 22, 22),  # popAll with nothing pending: its own content
    ]
    recovered = [u for u in r.units if u.uuid is None]
    assert [u.start_line for u in recovered] == [3, 13, 20, 22]
    assert all(u.timestamp for u in recovered)
    # 14 queue-operation records, 4 of them recovered; "/exit" (bare command) and
    # "never resolved" (no remove/popAll) are not.
    assert drops(r) == {
        "non_conversation_type": 10,
        "tool_result": 1,
        "command_markup": 1,
        "empty": 1,
    }


def test_injected_context_is_stripped() -> None:
    r = parse("injected_context.jsonl")
    assert units(r) == [
        ("user", "How do I run the tests?", 1, 1),
        ("user", "Explain why <memloom-context> blocks are stripped", 3, 3),  # inline mention
        ("user", "Question first", 4, 4),  # unclosed block: stripped to the end
        ("user", "What changed in parse.py?", 5, 5),
        ("assistant", "Nothing changed.", 6, 6),
        ("user", "Rename foo", 7, 7),  # IDE blocks, as separate and as leading blocks
        ("user", "Fix the errors", 8, 8),  # any <ide_…> block
    ]
    assert drops(r) == {"empty": 1}  # only memloom's own block


# ----------------------------------------------------------------- streaming / watermarks


@pytest.mark.parametrize(
    "name",
    ["nul_runs.jsonl", "joined_records.jsonl", "truncated_tail.jsonl", "split_reply.jsonl"],
)
@pytest.mark.parametrize("final", [False, True])
def test_tiny_read_blocks_give_identical_results(monkeypatch, name: str, final: bool) -> None:
    expected = parse(name, final=final)
    monkeypatch.setattr(parse_mod, "BLOCK_SIZE", 7)
    assert parse(name, final=final) == expected
    assert parse_bytes((SYN / name).read_bytes(), final=final) == expected


def test_resume_after_consumed_unterminated_line(tmp_path) -> None:
    """A resumed writer appends to a line left without "\\n": same physical line."""
    data = (SYN / "no_final_newline.jsonl").read_bytes()
    path = tmp_path / "growing.jsonl"
    path.write_bytes(data)
    first = parse_transcript(path, seen_uuids=(seen := set()))
    assert (first.lines_read, first.end_offset) == (2, len(data))

    lines = (SYN / "joined_records.jsonl").read_bytes().split(b"\n")
    summary = b'{"type":"summary","summary":"s","leafUuid":"a1"}'
    with path.open("ab") as f:  # "}{" junction, then a new line
        f.write(summary + b"\n" + lines[4] + b"\n")
    second = parse_transcript(
        path, start_offset=first.end_offset, start_line=first.lines_read, seen_uuids=seen
    )
    assert units(second) == [("user", "next question", 3, 3)]
    assert (second.lines_read, second.end_offset) == (3, path.stat().st_size)
    assert drops(second) == {"non_conversation_type": 1}
    assert (second.records, second.malformed) == (2, 0)


def test_resume_when_only_the_newline_arrives(tmp_path) -> None:
    data = (SYN / "no_final_newline.jsonl").read_bytes()
    path = tmp_path / "growing.jsonl"
    path.write_bytes(data)
    first = parse_transcript(path)
    with path.open("ab") as f:
        f.write(b"\n")
    second = parse_transcript(path, start_offset=first.end_offset, start_line=first.lines_read)
    assert (second.lines_read, second.end_offset, second.records) == (2, len(data) + 1, 0)


def test_resume_from_a_complete_line_watermark() -> None:
    data = (SYN / "split_reply.jsonl").read_bytes()
    cut = 0
    for _ in range(9):  # lines 1-9
        cut = data.index(b"\n", cut) + 1
    head = parse_bytes(data[:cut], final=False)
    assert (head.lines_read, head.end_offset) == (9, cut)
    rest = parse_transcript(SYN / "split_reply.jsonl", start_offset=cut, start_line=9, final=True)
    assert rest.units[0].start_line == 10
    whole = parse("split_reply.jsonl")
    assert units(head) + units(rest) == units(whole)
    assert rest.lines_read == 20 and rest.end_offset == len(data)


def test_start_offset_beyond_end_of_file() -> None:
    with pytest.raises(ValueError, match="beyond the end"):
        parse_transcript(SYN / "u2028.jsonl", start_offset=10_000)


def test_parse_bytes_first_line_and_final_default() -> None:
    data = (SYN / "truncated_tail.jsonl").read_bytes()
    r = parse_bytes(data, first_line=101)
    assert [u.start_line for u in r.units] == [101, 102, 103]
    assert (r.lines_read, r.end_offset, r.malformed) == (104, len(data), 1)  # final=True default
    empty = parse_bytes(b"")
    assert (empty.units, empty.lines_read, empty.end_offset, empty.records) == ([], 0, 0, 0)


def test_nul_only_tail_is_not_consumed_while_growing() -> None:
    data = b'{"type":"summary","summary":"x"}\n' + b"\x00" * 32
    growing = parse_bytes(data, final=False)
    assert (growing.lines_read, growing.end_offset, growing.malformed) == (1, 33, 0)
    final = parse_bytes(data, final=True)
    assert (final.lines_read, final.end_offset, final.malformed) == (2, len(data), 1)


def test_odd_values_never_crash() -> None:
    lines = [
        b'{"type":"assistant","uuid":"x1","message":{"0":1,"1":2}}',  # #24663 shape
        b'{"type":"user","uuid":"x2","message":"not a dict"}',
        b'{"type":"user","uuid":"x3","message":{"content":[1,null,{"type":"text","text":5}]}}',
        b'{"type":["user"]}',
        b'{"type":"user","message":{"content":"\xff\xfe broken utf-8"}}',
        b"\xef\xbb\xbf" + b'{"type":"user","message":{"content":"after a BOM"}}',
        b"{" * 100_000,  # deep nesting
        b'{"type":"user","uuid":"x4","parentUuid":["a"],"message":{"content":"list parent"}}',
        b'{"type":"assistant","uuid":"x5","requestId":{"a":1},'
        b'"message":{"id":"m","content":[{"type":"text","text":"dict request"}]}}',
    ]
    r = parse_bytes(b"\n".join(lines) + b"\n")
    assert units(r) == [
        ("user", "\ufffd\ufffd broken utf-8", 5, 5),
        ("user", "after a BOM", 6, 6),
        ("user", "list parent", 8, 8),
        ("assistant", "dict request", 9, 9),
    ]
    assert drops(r) == {"empty": 3, "non_conversation_type": 1}
    assert (r.records, r.malformed) == (8, 1)
