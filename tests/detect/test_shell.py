"""The shell-like tokenizer of `memloom.detect.shell` (issue 42): words as a shell reads
them, each character mapped back to the original text."""

from __future__ import annotations

import json
import random

import pytest

from memloom.detect import Detector
from memloom.detect.shell import command_at


def words(text: str, needle: str) -> tuple[list[str], int]:
    got = command_at(text, text.index(needle))
    assert got is not None, text
    ws, k = got
    return [w.text for w in ws], k


def raw(text: str, needle: str, i: int) -> str:
    """The original text of word `i` of the command at `needle` (quotes excluded)."""
    got = command_at(text, text.index(needle))
    assert got is not None
    return text[slice(*got[0][i].span())]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mysql -u root -p'S3 cr' app", ["mysql", "-u", "root", "-pS3 cr", "app"]),
        ('mysql -p"a\\"b" app', ["mysql", '-pa"b', "app"]),
        ("mysql -p a\\ b", ["mysql", "-p", "a b"]),
        ("x --password='q r' --user=ana", ["x", "--password=q r", "--user=ana"]),
        ("keytool -storepass X 2>&1 | tee log", ["keytool", "-storepass", "X"]),
        ("mysql -pX app < schema.sql > out.txt", ["mysql", "-pX", "app"]),
        ("cat <<EOF > f", ["cat"]),
        ("cat <<'EOF' >> f", ["cat"]),
        ('vault login - <<< "$TOKEN"', ["vault", "login", "-"]),
        ("mysql -pX; ls -la", ["mysql", "-pX"]),
        ("mysql -pX && ls", ["mysql", "-pX"]),
        ("mysql -pX # a comment -w Y", ["mysql", "-pX"]),
        ("sshpass -p <password> ssh u@h", ["sshpass", "-p", "<password>", "ssh", "u@h"]),
        ("mysql -p${PW} db", ["mysql", "-p${PW}", "db"]),
    ],
)
def test_words_as_a_shell_reads_them(text: str, expected: list[str]) -> None:
    assert words(text, text.split()[0]) == (expected, 0)


def test_command_ends_at_operators_and_line_breaks() -> None:
    text = "cd /x && zip -P a1 out.zip f | tee log\nunzip -P b2 out.zip"
    assert words(text, "zip")[0] == ["zip", "-P", "a1", "out.zip", "f"]
    assert words(text, "unzip")[0] == ["unzip", "-P", "b2", "out.zip"]
    assert words("x=$(mysql -u a -pQ | wc -l)", "mysql")[0] == ["mysql", "-u", "a", "-pQ"]
    assert words("echo `mysql -pQ db`", "mysql")[0] == ["mysql", "-pQ", "db"]
    # a heredoc's body is commands of their own
    assert words("ssh h <<EOF\nmysql -pQ app\nEOF", "mysql")[0] == ["mysql", "-pQ", "app"]


def test_spans_map_back_to_the_original_text() -> None:
    text = "mysql -u root -p'S3 cr' app"
    got = command_at(text, 0)
    assert got is not None
    pw = got[0][3]
    assert text[slice(*pw.span(2))] == "S3 cr"  # the value without its quotes
    assert pw.quotes[2:] == "'" * 5
    assert raw('mysql -p"a\\"b" app', "mysql", 1) == '-p"a\\"b'


def test_a_command_inside_a_json_string_is_decoded() -> None:
    line = json.dumps({"command": 'docker login -u ana -p "S3 cr" reg.io', "d": "x"})
    ws, _ = words(line, "docker")
    assert ws == ["docker", "login", "-u", "ana", "-p", "S3 cr", "reg.io"]
    got = command_at(line, line.index("docker"))
    assert got is not None
    assert line[slice(*got[0][5].span())] == "S3 cr"
    # twice escaped: a tool result holding a tool call
    outer = json.dumps({"content": json.dumps({"command": "mysql -u a -p'Q w' db"})})
    assert words(outer, "mysql")[0] == ["mysql", "-u", "a", "-pQ w", "db"]
    # a JSON-escaped line break ends the command
    assert words('{"c": "set -e\\nmysql -pQ db"}', "mysql")[0] == ["mysql", "-pQ", "db"]
    # an unescaped quote written by hand inside the string is part of the command
    assert words('{"command": "mysql -p"Q w" db"}', "mysql")[0] == ["mysql", "-pQ w", "db"]


@pytest.mark.parametrize(
    "text",
    [
        'ssh h "cd /x && mysql -pQ app" && ls',
        "bash -c 'mysql -pQ app'",
        'CMD="mysql -pQ app"',
        'kubectl exec -it db -- sh -c "mysql -pQ app"',
    ],
)
def test_a_quoted_command_is_read_again(text: str) -> None:
    assert words(text, "mysql") == (["mysql", "-pQ", "app"], 0)


def test_position_in_no_word() -> None:
    assert command_at("a ; b", 2) is None
    assert command_at("   ", 1) is None


def test_the_word_holding_the_position_inside_an_option() -> None:
    text = "tool --flag -storepass X"
    ws, k = words(text, "pass")
    assert (ws[k], k) == ("-storepass", 2)


def test_long_commands_are_bounded() -> None:
    text = "tool " + " ".join(f"-a{i}" for i in range(500)) + " -storepass X"
    got = command_at(text, text.index("storepass"))
    assert got is not None
    ws, k = got
    assert len(ws) <= 16 + 48 and ws[k].text == "-storepass"


_ALPHABET = "ab -_=:/@%,'\"\\`$(){}[]<>|&;#!*?~\n\t" + '\\n\\t\\"' + "mysql keytool login pass "


@pytest.mark.parametrize("seed", range(4))
def test_tokenizer_never_raises_on_arbitrary_text(seed: int) -> None:
    """Fuzz, bounded: random shell-ish strings and random bytes, every position."""
    rng = random.Random(f"shell-{seed}")
    det = Detector()
    for _ in range(300):
        if rng.random() < 0.5:
            text = "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 120)))
        else:
            text = bytes(rng.randrange(256) for _ in range(rng.randint(0, 120))).decode(
                "utf-8", "replace"
            )
        for pos in range(len(text)):
            got = command_at(text, pos)
            if got is None:
                continue
            ws, k = got
            assert 0 <= k < len(ws)
            for w in ws:
                assert len(w.offs) == len(w.ends) == len(w.quotes) == len(w.text)
                assert all(0 <= a < b <= len(text) for a, b in zip(w.offs, w.ends, strict=True))
        out, _ = det.redact(text)
        assert det.redact(out) == (out, [])  # idempotent, as every redaction


def test_a_command_in_exec_form_is_read_as_its_list() -> None:
    """`["docker", "login", "-p", "…"]`: each element one word, variables `$name`."""
    text = 'subprocess.run(["docker", "login", "-u", user, "-p", "S3 cr", "reg.io"])'
    ws, k = words(text, "docker")
    assert (ws, k) == (["docker", "login", "-u", "$user", "-p", "S3 cr", "reg.io"], 0)
    got = command_at(text, text.index("docker"))
    assert got is not None
    assert text[slice(*got[0][5].span())] == "S3 cr"
    # a shell command as one element is read as a command line
    text = '["sh", "-c", "mysql -uroot -pQ app"]'
    assert words(text, "mysql") == (["mysql", "-uroot", "-pQ", "app"], 0)


def test_a_backslash_at_a_line_end_joins_the_next_line() -> None:
    text = "docker login \\\n  -u ana \\\r\n  -p S3cr \\\n  reg.io\nls -p"
    assert words(text, "docker")[0] == ["docker", "login", "-u", "ana", "-p", "S3cr", "reg.io"]
    assert words(text, "ls")[0] == ["ls", "-p"]
    # `\\` at a line's end is an escaped backslash: the line ends there
    assert words("echo a \\\\\nmysql -pQ", "mysql")[0] == ["mysql", "-pQ"]
