"""The files a transcript's tool calls read or edited (``ParseResult.touched``), per agent,
from real transcripts (tests/fixtures/agents, tests/fixtures/transcripts; their licences
are beside them), and the shared readers of tool arguments (memloom.agents.touched)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from memloom.agents import get_agent
from memloom.agents.base import DiscoverOptions
from memloom.agents.opencode.store import render_session, session_path
from memloom.agents.touched import from_args, gemini_call, joined, patch_files, shell_reads

FIX = Path(__file__).resolve().parents[1] / "fixtures"
AGENTS = FIX / "agents"
CLAUDE = (
    FIX
    / "transcripts/claude/projects/-Users-dain-workspace-JSSoundRecorder"
    / "7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl"
)
JSS = "/Users/dain/workspace/JSSoundRecorder"
CODEX = AGENTS / "codex"
HOPER = CODEX / (
    "Hoper-J__cpolar-connect__.codex__sessions__2025__09__16__"
    "rollout-2025-09-16T12-47-48-9cd28a74-da7e-4458-a91a-fffec2be9d7a.jsonl"
)
BUMPY = CODEX / (
    "bumpy-croc__ai-trading-bot__.codex__sessions__2025__10__17__"
    "rollout-2025-10-17T22-40-02-0199f41d-9079-7662-ba8d-eff8c75f8a7a.jsonl"
)
BUTLER = CODEX / (
    "EdofEngland__code_butler__.codex__sessions__2025__11__24__"
    "rollout-2025-11-24T12-46-26-019ab730-4906-7b12-8569-c53c5dde1150.jsonl"
)
GEMINI_JSONL = AGENTS / "gemini/Mai0313__VibeCodingTracker__tests__fixtures__sessions__gemini.jsonl"
GEMINI_JSON = (
    AGENTS / "gemini/Mai0313__VibeCodingTracker__examples__test_conversation_gemini@894772f.json"
)
COPILOT = (
    AGENTS / "copilot/Mai0313__VibeCodingTracker__tests__fixtures__sessions__copilot@c4badfb.jsonl"
)
COPILOT_LEGACY = (
    AGENTS / "copilot/Mai0313__VibeCodingTracker__examples__test_conversation_copilot.json"
)
AIDER = AGENTS / "aider/BeehiveInnovations__zen-mcp-server__.aider.chat.history.md"
AIDER_EDITS = AGENTS / "synthetic/aider/chat.history.md"
CURSOR = AGENTS / (
    "cursor/home/.cursor/projects/home-dev-acme-api/agent-transcripts/"
    "5b1c2d3e-0000-4a11-9b22-3c4d5e6f7a81/5b1c2d3e-0000-4a11-9b22-3c4d5e6f7a81.jsonl"
)
QWEN = AGENTS / "qwen/e2e-0.24.4/.qwen/projects/-home-e2e-shop/chats"
OPENCODE = AGENTS / "opencode/e2e-1.18.33/.local/share/opencode/opencode.db"
READS = AGENTS / "tool-reads"  # real sessions whose agent read a file (README there)
RETRY = "/home/e2e/shop/svc/retry.py"


def read(agent: str, path: Path, **kw):
    return get_agent(agent).read(path, final=True, **kw)


# ---------------------------------------------------------------- the shared readers


@pytest.mark.parametrize(
    ("command", "files"),
    [
        ("cat openspec/AGENTS.md", ["openspec/AGENTS.md"]),
        (["bash", "-lc", "sed -n '1,200p' pyproject.toml"], ["pyproject.toml"]),
        ("nl -ba src/app.py | sed -n '40,80p'", ["src/app.py"]),
        ("head -n 20 a.py && tail -5 b.py", ["a.py", "b.py"]),
        ("sed -n 12p x.py", ["x.py"]),
        # not plainly one file read: nothing
        ("cat a.py b.py", []),
        ("sed -i 's/a/b/' x.py", []),
        ("sed -n '/def/p' x.py", []),
        ("cat $HOME/.netrc", []),
        ("cat `echo x`", []),
        ("cat src/*.py", []),
        ("cat x.py > y.py", []),
        ("cat < x.py", []),
        ("cat <<EOF\nx\nEOF", []),
        ("rg --files -g '*.yaml'", []),
        ("ls -la src && echo '---'", []),
        ("grep -n foo x.py | cat", []),  # cat reads the pipe, not a file
        ("cat 'unclosed", []),
        (["python", "x.py"], []),
        (42, []),
    ],
)
def test_shell_reads_takes_only_plain_reads_of_one_file(command, files):
    assert [p for p, _ in shell_reads(command)] == files
    assert all(kind == "read" for _, kind in shell_reads(command))


def test_a_patch_names_the_files_it_adds_updates_and_moves_to_never_a_deleted_one():
    patch = (
        "*** Begin Patch\n*** Update File: svc/a.py\n@@\n-x\n+y\n*** Add File: svc/b.py\n+z\n"
        "*** Delete File: svc/c.py\n*** Update File: svc/d.py\n*** Move to: svc/e.py\n"
        "*** End Patch"
    )
    assert patch_files(patch) == [
        (p, "edit") for p in ("svc/a.py", "svc/b.py", "svc/d.py", "svc/e.py")
    ]
    assert patch_files(None) == [] and patch_files("no patch") == []


def test_arguments_that_are_no_path_are_left_out():
    assert from_args({"file_path": "a.py"}, ("file_path",), "read") == [("a.py", "read")]
    for bad in (
        {"file_path": 3},
        {"file_path": ""},
        {"file_path": "a\x00b"},
        {"file_path": "x" * 5000},
        "a.py",
        None,
    ):
        assert from_args(bad, ("file_path",), "read") == []
    assert gemini_call("read_many_files", {"paths": ["a.py", 3, "b.py"]}) == [
        ("a.py", "read"),
        ("b.py", "read"),
    ]
    assert gemini_call("run_shell_command", {"command": "cat a.py"}) == []
    assert joined("/w/repo", [("a.py", "read"), ("/abs.py", "edit")]) == [
        ("/w/repo/a.py", "read"),
        ("/abs.py", "edit"),
    ]
    assert joined(None, [("a.py", "read")]) == [("a.py", "read")]


# ---------------------------------------------------------------- per agent, real transcripts


def test_claude_code_read_edit_write_and_multiedit_calls():
    res = read("claude-code", CLAUDE)
    assert len(res.touched) == 34
    assert res.touched[:3] == [
        (14, f"{JSS}/README.md", "read"),
        (15, f"{JSS}/index.html", "read"),
        (16, f"{JSS}/config.ru", "read"),
    ]
    assert (41, f"{JSS}/CLAUDE.md", "edit") in res.touched
    lines = CLAUDE.read_text().splitlines()
    for line, path, _ in res.touched:  # each is a tool_use line naming that file
        rec = json.loads(lines[line - 1])
        inputs = [b["input"] for b in rec["message"]["content"] if b.get("type") == "tool_use"]
        assert any(i.get("file_path") == path for i in inputs)
    # Tool text stays out of the units.
    assert not any(u.start_line in {t[0] for t in res.touched} for u in res.units)


def test_claude_code_a_resumed_read_reports_only_the_lines_it_read():
    data = CLAUDE.read_bytes()
    cut = sum(len(x) for x in data.splitlines(keepends=True)[:100])
    res = read("claude-code", CLAUDE, start_offset=cut, start_line=100)
    whole = read("claude-code", CLAUDE)
    assert res.touched == [t for t in whole.touched if t[0] > 100] and res.touched


def test_codex_shell_reads_joined_to_the_turns_folder():
    res = read("codex", HOPER)
    assert len(res.touched) == 26
    root = "/Users/home/Downloads/CpolarAutoUpdater"
    assert res.touched[:2] == [
        (28, f"{root}/pyproject.toml", "read"),
        (34, f"{root}/README.md", "read"),
    ]
    assert {k for _, _, k in res.touched} == {"read"}


def test_codex_apply_patch_and_shell_command_with_a_workdir():
    res = read("codex", BUMPY)
    assert (208, "/Users/alex/Sites/ai-trading-bot/sitecustomize.py", "edit") in res.touched
    assert (126, "/opt/homebrew/bin/pytest", "read") in res.touched  # outside: the fence's job
    butler = read("codex", BUTLER)
    top = "/Users/edmundengland/Documents/coding_tools/code_butler"
    assert butler.touched == [  # workdir "." (the turn's folder), then an absolute one
        (19, f"{top}/openspec/AGENTS.md", "read"),
        (26, f"{top}/AGENTS.md", "read"),
    ]


def test_gemini_jsonl_and_legacy_json_tool_calls():
    res = read("gemini", GEMINI_JSONL)
    assert [t for t in res.touched if t[0] == 8] == [
        (8, p, "read") for p in ("README.md", "pyproject.toml", "CLAUDE.md", "Makefile")
    ]
    assert (26, "GEMINI.md", "edit") in res.touched
    later = read("gemini", GEMINI_JSONL, start_offset=0, start_line=14)
    assert later.touched and all(line > 14 for line, _, _ in later.touched)
    legacy = read("gemini", GEMINI_JSON)
    assert legacy.touched[:3] == [
        (17, p, "read") for p in ("README.md", "README.zh-CN.md", "README.zh-TW.md")
    ]
    assert (113, "README.md", "edit") in legacy.touched


def test_copilot_view_calls_and_legacy_str_replace_editor():
    res = read("copilot", COPILOT)
    root = "/home/wei/repo/VibeCodingTracker"
    assert res.touched == [
        (11, root, "read"),  # a folder: the fence anchors regular files only
        (12, f"{root}/Cargo.toml", "read"),
        (22, f"{root}/src", "read"),
        (23, f"{root}/.github", "read"),
    ]
    legacy = read("copilot", COPILOT_LEGACY)
    assert legacy.touched[0] == (30, f"{root}/Cargo.toml", "read")
    assert (111, f"{root}/src/cli.rs", "edit") in legacy.touched and len(legacy.touched) == 10


def test_aider_added_to_the_chat_and_applied_edits():
    res = read("aider", AIDER)
    assert res.touched[:2] == [
        (62, "config.py", "read"),
        (63, "providers/shared/model_capabilities.py", "read"),
    ]
    assert len(res.touched) == 11
    edits = read("aider", AIDER_EDITS)
    assert [t for t in edits.touched if t[2] == "edit"] == [
        (32, "billing/invoice.py", "edit"),
        (51, "tests/test_invoice.py", "edit"),
    ]


def test_cursor_tool_use_blocks():
    # Constructed from public descriptions (tests/fixtures/agents/cursor/README.md).
    assert read("cursor", CURSOR).touched == [
        (2, "config/staging.toml", "read"),
        (4, "config/staging.toml", "edit"),
    ]


def test_cursor_text_form_tool_call_arguments(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text(
        "user:\n<user_query>\nwhere is the port?\n</user_query>\n\nassistant:\n"
        "[Tool call] Read\n  path: config/staging.toml\n\n[Tool result] Read\nport = 5433\n\n"
        "assistant:\nPort 5433.\n[Tool call] Shell\n  command: cat x.py\n"
    )
    res = read("cursor", path)
    assert res.touched == [(8, "config/staging.toml", "read")]
    assert [u.text for u in res.units] == ["where is the port?", "Port 5433."]


def test_recorded_reads_of_qwen_gemini_and_opencode():
    qwen = read("qwen", next((READS / "qwen-0.24.4").glob("*.jsonl")))
    assert qwen.touched == [(4, RETRY, "read")]
    assert [(u.role, u.start_line) for u in qwen.units] == [("user", 1), ("assistant", 8)]
    gemini = read("gemini", next((READS / "gemini-0.61.0").glob("*.jsonl")))
    assert gemini.touched == [(7, RETRY, "read")]
    agent = get_agent("opencode")
    db = READS / "opencode-1.18.33/opencode.db"
    (found,) = agent.discover(DiscoverOptions(paths=[db], days=None, quiet_seconds=0)).files
    opencode = agent.read(found.path, final=True)
    assert opencode.touched == [(3, RETRY, "read")]
    assert [u.role for u in opencode.units] == ["user", "assistant"]


def test_qwen_function_calls(tmp_path):
    """The real Qwen 0.24.4 session has no file tool call: one is added in the shape of
    its other assistant records (reference agents-new.md §8.1)."""
    src = next(QWEN.glob("*.jsonl"))
    lines = src.read_text().splitlines()
    first = json.loads(next(x for x in lines if json.loads(x).get("type") == "assistant"))
    call = dict(first, uuid="tool-call-1")
    call["message"] = {
        "role": "model",
        "parts": [
            {
                "functionCall": {
                    "id": "c1",
                    "name": "read_file",
                    "args": {"absolute_path": "/home/e2e/shop/svc/x.py"},
                }
            },
            {"functionCall": {"id": "c2", "name": "edit", "args": {"file_path": "svc/y.py"}}},
            {"functionCall": {"id": "c3", "name": "run_shell_command", "args": {"command": "ls"}}},
        ],
    }
    path = tmp_path / src.name
    path.write_text("\n".join([*lines, json.dumps(call)]) + "\n")
    n = len(lines) + 1
    before = read("qwen", src)
    res = read("qwen", path)
    assert res.touched == [(n, "/home/e2e/shop/svc/x.py", "read"), (n, "svc/y.py", "edit")]
    assert [u.text for u in res.units] == [u.text for u in before.units]


def test_opencode_read_edit_write_parts(tmp_path):
    """The real OpenCode 1.18.33 store has one tool part (bash); a read and an edit part
    are added to its assistant message in OpenCode's part shape (its plugin's
    ``args.filePath``; only the tool and its ``state.input.filePath`` are read)."""
    root = tmp_path / "share"
    shutil.copytree(OPENCODE.parent, root)
    db = root / "opencode.db"
    with sqlite3.connect(db) as con:
        pid, mid, sid, data = con.execute(
            "SELECT id, message_id, session_id, data FROM part"
            " WHERE json_extract(data, '$.tool') = 'bash'"
        ).fetchone()
        cols = [r[1] for r in con.execute("PRAGMA table_info(part)")]
        row = dict(
            zip(
                cols, con.execute("SELECT * FROM part WHERE id = ?", (pid,)).fetchone(), strict=True
            )
        )
        for n, (tool, path) in enumerate(
            [("read", "/home/e2e/shop/svc/x.py"), ("edit", "svc/y.py")]
        ):
            part = json.loads(data)
            part.update(tool=tool, id=f"{pid}{n}")
            part["state"]["input"] = {"filePath": path}
            part["state"]["output"] = "x" * 100_000
            con.execute(
                f"INSERT INTO part ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                [{**row, "id": f"{pid}{n}", "data": json.dumps(part)}[c] for c in cols],
            )
    session = session_path(db, sid)
    res = get_agent("opencode").read(session, final=True)
    assert [(p, k) for _, p, k in res.touched] == [
        ("/home/e2e/shop/svc/x.py", "read"),
        ("svc/y.py", "edit"),
    ]
    rendered = render_session(session).decode().splitlines()
    (line,) = {t[0] for t in res.touched}  # the line of the message the parts belong to
    assert json.loads(rendered[line - 1])["id"] == mid
    assert "x" * 100 not in "".join(rendered)  # a tool's output is never rendered
    plain = get_agent("opencode").read(session_path(OPENCODE, sid), final=True)
    assert plain.touched == [] and [u.text for u in plain.units] == [u.text for u in res.units]


@pytest.mark.parametrize(
    ("agent", "path"),
    [
        ("claude-code", CLAUDE),
        ("codex", HOPER),
        ("copilot", COPILOT),
        ("aider", AIDER_EDITS),
        ("cursor", CURSOR),
        ("qwen", next((READS / "qwen-0.24.4").glob("*.jsonl"))),
    ],
)
def test_a_resumed_read_reports_the_calls_of_the_lines_it_read_only(agent, path):
    whole = read(agent, path)
    assert whole.touched
    for cut in sorted({line for line, _, _ in whole.touched}):
        lines = path.read_bytes().splitlines(keepends=True)
        offset = sum(len(x) for x in lines[: cut - 1])  # resume at the line of a call
        part = read(agent, path, start_offset=offset, start_line=cut - 1)
        assert part.touched == [t for t in whole.touched if t[0] >= cut], cut
        assert part.lines_read == whole.lines_read
