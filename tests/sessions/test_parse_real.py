"""Parser behaviour on real Claude Code transcripts (claude-code-log fixtures, MIT)."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from memloom.agents.claude_code import parse as parse_mod
from memloom.agents.claude_code.parse import ParseResult, parse_bytes, parse_transcript

PROJECTS = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts" / "claude" / "projects"
WORKTREES = PROJECTS / "-experiments-worktrees" / "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"
SUBAGENT = (
    PROJECTS
    / "-experiments-worktrees"
    / "ef958aa1-0e93-49f0-bb71-150f63befcd1"
    / "subagents"
    / "agent-aef063ba534d73153.jsonl"
)
ME_NEXT = PROJECTS / "-Users-dain-workspace-danieldemmel-me-next"
IDE = ME_NEXT / "5ed31c36-bca8-40fd-8d24-f1a1f0af7901.jsonl"
PRUN = PROJECTS / "-src-experiments-claude_p" / "94604a7b-062f-4369-bdf0-da948381c3e5.jsonl"
QUEUED = (
    PROJECTS
    / "-Users-dain-workspace-JSSoundRecorder"
    / "7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl"
)
SAMPLE = PROJECTS / "-Users-dain-workspace-claude-code-log-sample"
OLDEST = SAMPLE / "fe869ecb-c176-478f-9734-7e4b8ef12cff.jsonl"
SUMMARY_ONLY = SAMPLE / "4e27c414-a885-46a0-b5c8-d58e1417377d.jsonl"
EMPTY = SAMPLE / "4fe49c7c-ff82-4ac7-b3f2-79c22036bd58.jsonl"

SHARED = Path(os.environ.get("MEMLOOM_SHARED_TRANSCRIPTS", "/work/shared/fixtures/transcripts"))


def spans(r: ParseResult) -> list[tuple[str, int, int]]:
    return [(u.role, u.start_line, u.end_line) for u in r.units]


def drops(r: ParseResult) -> dict[str, int]:
    return {k: v for k, v in r.dropped.items() if v}


def test_newest_format_2_1_114() -> None:
    r = parse_transcript(WORKTREES, final=True)
    assert spans(r) == [
        ("user", 5, 5),
        ("assistant", 10, 10),
        ("assistant", 19, 19),
        ("assistant", 66, 66),
        ("assistant", 92, 92),
        ("assistant", 111, 111),
        ("user", 117, 117),
        ("assistant", 134, 134),
        ("assistant", 148, 148),
        ("assistant", 170, 170),
    ]
    assert r.units[0].text.startswith("OK, we're going to make a little experiment here.")
    assert (
        r.units[6].text == "Well, the subagents seem to be either stuck or done... can you check?"
    )
    assert r.units[1].text == (
        "I'll orchestrate this experiment. Let me start by loading the tools I need and "
        "setting up the plan."
    )
    assert r.units[6].uuid and r.units[6].timestamp and r.units[6].timestamp.endswith("Z")
    # attachment 49 + permission-mode 8 + last-prompt 7 + system 6 + snapshots 3 = 73;
    # /exit: caveat (meta) + command + stdout; 54 assistant lines without text
    assert drops(r) == {
        "meta": 1,
        "command_markup": 2,
        "tool_result": 40,
        "non_conversation_type": 73,
        "empty": 54,
    }
    assert (r.lines_read, r.records, r.malformed, r.end_offset) == (180, 180, 0, 285514)
    assert (r.session_id, r.cwd, r.version) == (
        "ef958aa1-0e93-49f0-bb71-150f63befcd1",
        "-experiments/worktrees",
        "2.1.114",
    )


def test_subagent_sidecar_is_all_sidechain() -> None:
    r = parse_transcript(SUBAGENT, final=True)
    assert r.units == []
    assert drops(r) == {"sidechain": 16}
    assert r.session_id == "ef958aa1-0e93-49f0-bb71-150f63befcd1"  # the parent's id


@pytest.mark.parametrize("name", ["agent-c3d572ee.jsonl", "agent-c63fe96c.jsonl"])
def test_flat_2_0_sidecars_are_all_sidechain(name: str) -> None:
    r = parse_transcript(ME_NEXT / name, final=True)
    assert r.units == [] and drops(r) == {"sidechain": 2}


def test_ide_block_is_stripped() -> None:
    r = parse_transcript(IDE, final=True)
    assert spans(r) == [
        ("user", 1, 1),
        ("assistant", 2, 2),
        ("assistant", 9, 9),
        ("assistant", 12, 12),
    ]
    assert r.units[0].text == (
        "I keep getting mysterious build errors when MDX files have URLs wrapped in angle "
        "brackets that markdownlint puts in automatically (MD034/no-bare-urls: Bare URL "
        "usedmarkdownlintMD034) – how can I disable that?"
    )
    assert drops(r) == {"tool_result": 4, "empty": 4}


def test_print_mode_run_starting_with_dequeue() -> None:
    r = parse_transcript(PRUN, final=True)
    assert spans(r) == [("user", 3, 3), ("assistant", 4, 4)]
    assert r.units[0].text == "What are the tools that are available to you (allowed or not)?"
    assert r.units[1].text.startswith("Here are all the tools available to me:")
    assert drops(r) == {"non_conversation_type": 2}  # the dequeue and a progress line


def test_queued_prompts_that_were_delivered_are_not_duplicated() -> None:
    r = parse_transcript(QUEUED, final=True)
    users = [(u.start_line, u.text) for u in r.units if u.role == "user"]
    assert [line for line, _ in users] == [47, 59, 64, 99, 169]
    assert users[2][1] == "ok, fine, let's do vite"
    assert users[4][1] == "Let's also Migrate to AudioWorklet"  # IDE selection stripped
    assert all(u.uuid for u in r.units)  # nothing recovered from the queue: all dequeued
    assert len(r.units) == 18
    assert drops(r) == {
        "meta": 1,  # the /init expansion
        "command_markup": 1,  # the /init command
        "interrupt": 1,
        "tool_result": 71,
        "non_conversation_type": 12,  # 6 enqueue + 6 dequeue
        "empty": 107,
    }


def test_oldest_format_1_0_24() -> None:
    r = parse_transcript(OLDEST, final=True)
    assert spans(r) == [
        ("user", 16, 16),
        ("assistant", 17, 17),
        ("assistant", 32, 32),
        ("assistant", 37, 37),
        ("assistant", 40, 40),
        ("assistant", 47, 47),
        ("user", 48, 48),
        ("assistant", 50, 50),
        ("assistant", 108, 108),
    ]
    assert r.units[0].text == (
        "Hey Claude, can you please add a Github Action to run tests and linting? "
        "You can test it with `act`."
    )
    assert drops(r) == {
        "meta": 1,
        "command_markup": 2,
        "tool_result": 32,
        "non_conversation_type": 15,  # the 15 leading summaries
        "empty": 52,
    }
    assert (r.version, r.lines_read) == ("1.0.24", 111)


def test_summary_only_and_empty_files() -> None:
    r = parse_transcript(SUMMARY_ONLY, final=True)
    assert r.units == [] and drops(r) == {"non_conversation_type": 1}
    assert (r.records, r.lines_read, r.end_offset, r.session_id) == (1, 1, 117, None)
    r = parse_transcript(EMPTY, final=True)
    assert (r.units, r.records, r.lines_read, r.end_offset, r.malformed) == ([], 0, 0, 0, 0)


@pytest.mark.parametrize("path", [WORKTREES, QUEUED])
def test_small_blocks_and_in_memory_parse_agree(monkeypatch, path: Path) -> None:
    expected = parse_transcript(path, final=True)
    monkeypatch.setattr(parse_mod, "BLOCK_SIZE", 4096)  # lines here are up to ~60 KB
    assert parse_transcript(path, final=True) == expected
    assert parse_bytes(path.read_bytes()) == expected


@pytest.mark.parametrize("keep_newline", [True, False])
def test_resume_on_a_byte_prefix(tmp_path, keep_newline: bool) -> None:
    """A file read while growing, then again from its watermark, gives the same units."""
    data = WORKTREES.read_bytes()
    cut = 0
    for _ in range(90):
        cut = data.index(b"\n", cut) + 1
    prefix = data[:cut] if keep_newline else data[: cut - 1]
    path = tmp_path / WORKTREES.name
    path.write_bytes(prefix)
    seen: set[str] = set()
    first = parse_transcript(path, seen_uuids=seen)
    assert (first.lines_read, first.end_offset) == (90, len(prefix))
    path.write_bytes(data)
    second = parse_transcript(
        path, start_offset=first.end_offset, start_line=first.lines_read, seen_uuids=seen
    )
    assert (second.lines_read, second.end_offset) == (180, len(data))
    whole = parse_transcript(WORKTREES, final=True)
    assert spans(first) + spans(second) == spans(whole)
    assert [u.text for u in first.units + second.units] == [u.text for u in whole.units]
    assert first.records + second.records == whole.records
    assert Counter(first.dropped) + Counter(second.dropped) == +Counter(whole.dropped)


@pytest.mark.skipif(not SHARED.is_dir(), reason="shared fixture set not available")
def test_whole_shared_fixture_set() -> None:
    files = sorted(SHARED.glob("*.jsonl"))
    assert len(files) == 99
    totals: Counter[str] = Counter()
    dropped: Counter[str] = Counter()
    seen: set[str] = set()
    for f in files:
        r = parse_transcript(f, final=True, seen_uuids=seen)
        assert r.end_offset == f.stat().st_size
        totals.update(
            units=len(r.units),
            user=sum(u.role == "user" for u in r.units),
            malformed=r.malformed,
            records=r.records,
            lines=r.lines_read,
        )
        dropped.update(r.dropped)
    assert totals == Counter(units=509, user=70, records=3031, lines=3031)
    # the reference's classification of the 1092 user lines: tool_result 744,
    # sidechain 203, markup 47, isMeta 18 (one of them replayed: duplicate), interrupts 10
    assert +dropped == Counter(
        sidechain=481,
        meta=16,
        tool_result=744,
        command_markup=47,
        interrupt=10,
        non_conversation_type=305,
        empty=917,
        duplicate_uuid=2,
    )
