"""The file a shell read command opens, read out of the command (memloom.agents.shellread).

Codex's model reads with ``cat``/``sed -n``/``nl``/``head``: the commands below are
the ones Codex 0.169.0 ran (tests/fixtures/hooks/reads/codex-*) and their common
variants. Anything that is not clearly one read of one file names no file: a wrong
file would bring an unrelated file's memories.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memloom.agents.shellread import read_target, split_pipeline

READS = Path(__file__).resolve().parents[1] / "fixtures" / "hooks" / "reads"


@pytest.mark.parametrize(
    ("command", "path"),
    [
        ("cat src/retry.py", "src/retry.py"),
        ("cat -n src/retry.py", "src/retry.py"),
        ("cat -- src/retry.py", "src/retry.py"),
        ("sed -n '1,2p' src/retry.py", "src/retry.py"),
        ("sed -n 1,200p src/retry.py", "src/retry.py"),
        ('sed -n "40,80p" src/retry.py', "src/retry.py"),
        ("sed -n '1,$p' src/retry.py", "src/retry.py"),
        ("sed -n '10,+20p' src/retry.py", "src/retry.py"),
        ("sed -n '/def retry/,/^$/p' src/retry.py", "src/retry.py"),
        ("sed -n '1,5p;40,60p' src/retry.py", "src/retry.py"),
        ("sed -n -e '1,5p' src/retry.py", "src/retry.py"),
        ("sed -ne '1,5p' src/retry.py", "src/retry.py"),
        ("head src/retry.py", "src/retry.py"),
        ("head -n 40 src/retry.py", "src/retry.py"),
        ("head -n40 src/retry.py", "src/retry.py"),
        ("head -40 src/retry.py", "src/retry.py"),
        ("head --lines=40 src/retry.py", "src/retry.py"),
        ("tail -n +20 src/retry.py", "src/retry.py"),
        ("tail -n 5 src/retry.py", "src/retry.py"),
        ("nl src/retry.py", "src/retry.py"),
        ("nl -ba src/retry.py", "src/retry.py"),
        ("nl -b a src/retry.py", "src/retry.py"),
        ("bat --paging=never -r 1:40 src/retry.py", "src/retry.py"),
        ("nl -ba src/retry.py | sed -n '1,120p'", "src/retry.py"),
        ("cat src/retry.py | head -n 40", "src/retry.py"),
        ("  cat   src/retry.py  ", "src/retry.py"),
        ('cat "docs/my notes.md"', "docs/my notes.md"),
        ("cat docs/my\\ notes.md", "docs/my notes.md"),
        ("cat 'it''s.md'", "its.md"),
        ("cat /home/dev/shop/src/retry.py", "/home/dev/shop/src/retry.py"),
        # Where the file lies is not this module's business: the fence refuses these.
        ("cat ../../.ssh/id_rsa", "../../.ssh/id_rsa"),
        ("cat /etc/passwd", "/etc/passwd"),
    ],
)
def test_one_read_of_one_file_names_the_file(command: str, path: str):
    assert read_target(command) == path


@pytest.mark.parametrize(
    "command",
    [
        "",
        "   ",
        "ls src",
        "grep -n retry src/retry.py",
        "python src/retry.py",
        "cat",  # stdin
        "cat -",
        "cat a.py b.py",  # two files
        "head -n 40 a.py b.py",
        "cat a.py; rm -rf ~",
        "cat a.py && cat b.py",
        "cat a.py || true",
        "cat a.py &",
        "cat a.py > b.py",
        "cat < a.py",
        "cat a.py 2>/dev/null",
        "cat a.py |& head",
        "cat $(echo a.py)",
        "cat `echo a.py`",
        "cat $FILE",
        'cat "$HOME/.ssh/id_rsa"',
        'cat "`id`"',
        "cat ~/.ssh/id_rsa",
        "cat *.py",
        "cat src/?.py",
        "cat src/[ab].py",
        "cat {a,b}.py",
        "(cat a.py)",
        "FOO=1 cat a.py",
        "cat a.py # comment",
        "cat a.py\nrm -rf /",
        "cat 'unterminated",
        'cat "unterminated',
        "cat a.py\\",
        "cat a.py | sh",
        "cat a.py | tee b.py",
        "cat a.py | head -n 3 other.py",  # the filter reads a file of its own
        "cat a.py |",
        "| cat a.py",
        "sed -i 's/a/b/' a.py",  # an edit
        "sed 's/a/b/' a.py",  # no -n: not a print-only read
        "sed -n 's/a/b/p' a.py",
        "sed -n '1w /tmp/out' a.py",  # writes a file
        "sed -n '1e id' a.py",  # runs a command
        "sed -n '1,5p'",  # no file
        "tail -f app.log",
        "tail -F app.log",
        "tail --follow app.log",
        "head -n lots a.py",
        "cat --unknown-option a.py",
        "cat -Z a.py",
        "bash -lc 'cat a.py'",
        "sudo cat /etc/shadow",
        "x" * 5000,
    ],
)
def test_anything_else_names_no_file(command: str):
    assert read_target(command) is None


def test_the_words_are_split_as_a_shell_splits_them():
    assert split_pipeline("nl -ba 'a b.py' | sed -n \"1,5p\"") == [
        ["nl", "-ba", "a b.py"],
        ["sed", "-n", "1,5p"],
    ]
    assert split_pipeline("cat a\\;b") == [["cat", "a;b"]]  # quoted: a name, not a list
    assert split_pipeline("cat a;b") is None


@pytest.mark.parametrize(
    ("name", "path"),
    [
        ("codex-0.169.0.PostToolUse-Bash-cat.json", "src/retry.py"),
        ("codex-0.169.0.PostToolUse-Bash-sed.json", "src/retry.py"),
        ("codex-0.169.0.PostToolUse-Bash-nl-pipe-sed.json", "src/retry.py"),
        ("codex-0.169.0.PostToolUse-Bash-cat-workdir.json", "retry.py"),
        ("codex-0.169.0.PostToolUse-Bash-cat-missing.json", "/nonexistent/zz"),
    ],
)
def test_the_commands_codex_ran(name: str, path: str):
    payload = json.loads((READS / name).read_text())
    assert read_target(payload["tool_input"]["command"]) == path
