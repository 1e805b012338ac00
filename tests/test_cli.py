"""The ``memloom`` command, run as a real process and in-process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memloom.cli import main


def run(home, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMLOOM_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "memloom.cli", *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def cli(capsys, home, *args: str) -> tuple[int, str, str]:
    code = 0
    try:
        main(["--home", str(home), *args])
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_help_explains_itself(tmp_path):
    res = run(tmp_path, "--help")
    assert res.returncode == 0
    for word in ("save", "recall", "forget", "MEMLOOM_HOME", "Examples"):
        assert word in res.stdout
    assert 'memloom recall "how do I run the tests?"' in res.stdout


@pytest.mark.slow
def test_save_then_recall_end_to_end_as_processes(tmp_path):
    saved = run(
        tmp_path,
        "save",
        "Run the tests with make check",
        "--type",
        "procedure",
        "--tag",
        "testing",
        "--project",
        "api",
        "--json",
    )
    assert saved.returncode == 0, saved.stderr
    doc = json.loads(saved.stdout)
    assert doc["outcome"] == "added" and doc["conflicts"] == []

    found = run(tmp_path, "recall", "how do I run the tests?", "--project", "api", "--json")
    assert found.returncode == 0, found.stderr
    result = json.loads(found.stdout)
    assert result["memories"][0]["id"] == doc["id"]
    assert result["memories"][0]["type"] == "procedure"
    assert set(result) >= {"memories", "stats", "max_sensitivity", "sensitive_chunks"}

    human = run(tmp_path, "recall", "tests")
    assert doc["id"] in human.stdout and "procedure" in human.stdout


def test_lifecycle_commands_print_the_documents(capsys, tmp_path):
    code, out, _ = cli(capsys, tmp_path, "save", "deploys happen on Tuesday", "--json")
    assert code == 0
    first = json.loads(out)["id"]

    code, out, _ = cli(
        capsys, tmp_path, "update", first[:6], "deploys happen on Wednesday", "--json"
    )
    assert code == 0
    updated = json.loads(out)
    assert updated["root_id"] == first and updated["version"] == 2

    code, out, _ = cli(capsys, tmp_path, "history", first, "--json")
    versions = json.loads(out)["versions"]
    assert [v["version"] for v in versions] == [2, 1]

    code, out, _ = cli(capsys, tmp_path, "show", updated["id"], "--json")
    shown = json.loads(out)
    assert shown["text"] == "deploys happen on Wednesday" and len(shown["versions"]) == 2
    assert {"provenance", "versions", "sensitivity", "status"} <= set(shown)

    code, out, _ = cli(capsys, tmp_path, "show", updated["id"])
    assert "versions:" in out and "deploys happen on Wednesday" in out

    code, out, _ = cli(capsys, tmp_path, "save", "the linter is ruff", "--json")
    other = json.loads(out)["id"]
    code, out, _ = cli(capsys, tmp_path, "supersede", other, updated["id"], "--json")
    assert json.loads(out) == {"superseded": True}
    code, out, err = cli(capsys, tmp_path, "supersede", other, updated["id"])
    assert code == 1 and "already expired" in err and err.count("\n") == 1

    code, out, _ = cli(capsys, tmp_path, "expire", updated["id"], "--json")
    assert json.loads(out) == {"expired": 1}

    code, out, _ = cli(capsys, tmp_path, "stats", "--json")
    stats = json.loads(out)
    assert (stats["total_memories"], stats["expired_count"], stats["stale_count"]) == (3, 2, 1)

    code, out, _ = cli(capsys, tmp_path, "forget", "--id", first, "--json")
    assert json.loads(out) == {"removed": 2, "total_memories": 1}

    code, out, _ = cli(capsys, tmp_path, "decay", "--json")
    assert json.loads(out)["evicted"] == 0


def test_errors_are_one_line_and_non_zero(capsys, tmp_path):
    code, _, err = cli(capsys, tmp_path, "show", "ffffffffffffffff")
    assert code == 1 and err == "memloom: error: memory ffffffffffffffff not found\n"
    code, _, err = cli(capsys, tmp_path, "save", "   ")
    assert code == 1 and "text must not be empty" in err and "Traceback" not in err
    code, _, err = cli(capsys, tmp_path, "forget")
    assert code == 1 and "say what to forget" in err
    code, _, err = cli(capsys, tmp_path, "save", "x", "--type", "opinion")
    assert code == 1 and "type" in err
    code, _, err = cli(capsys, tmp_path, "recall", "x", "--limit", "0")
    assert code == 2  # usage error from the argument parser


def test_bad_config_is_reported_clearly(capsys, tmp_path):
    (tmp_path / "config.toml").write_text("[decay\nbroken")
    code, _, err = cli(capsys, tmp_path, "stats")
    assert code == 1 and "config.toml is not valid TOML" in err


def test_redact_reads_stdin_and_writes_documents(tmp_path):
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    text = f"token: {secret}\nplain line\nmail jane.doe@acme-corp.io please\n"
    res = run(tmp_path, "redact", stdin=text)
    assert res.returncode == 0, res.stderr
    assert secret not in res.stdout and "[redacted:" in res.stdout
    assert res.stdout.count("\n") == text.count("\n")  # line structure kept
    assert "plain line" in res.stdout

    res = run(tmp_path, "redact", "--lines", "--json", stdin=text)
    docs = [json.loads(line) for line in res.stdout.splitlines()]
    assert len(docs) == 3
    assert docs[0]["sensitivity"] == 3 and docs[0]["redactions"][0]["start"] == 7
    assert docs[1] == {"text": "plain line", "redactions": [], "sensitivity": 0}
    assert docs[2]["sensitivity"] == 1 and "jane.doe" not in docs[2]["text"]


def test_redact_honours_config_allow_list_and_extra_patterns(tmp_path):
    secret = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    (tmp_path / "config.toml").write_text(
        f'[redact]\nallow = ["{secret}"]\n'
        '[[redact.patterns]]\nname = "ticket-token"\nregex = "TKT-[0-9]{6}"\nlevel = 3\n'
    )
    res = run(tmp_path, "redact", "--json", stdin=f"{secret} and TKT-123456")
    doc = json.loads(res.stdout)
    assert secret in doc["text"]
    assert "TKT-123456" not in doc["text"] and "[redacted:ticket-token]" in doc["text"]

    (tmp_path / "config.toml").write_text('[[redact.patterns]]\nname = "bad"\nregex = "(["\n')
    res = run(tmp_path, "redact", stdin="x")
    assert res.returncode == 1 and "bad" in res.stderr and "Traceback" not in res.stderr


def test_import_sessions_example_offline_then_recall(tmp_path):
    example = Path(__file__).resolve().parents[1] / "examples" / "claude-code-session"
    dry = run(tmp_path, "import", "sessions", "--path", str(example), "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    doc = json.loads(dry.stdout)
    assert doc["dry_run"] and doc["chunks"] >= 1 and doc["calls"]["extraction"] == 0

    res = run(tmp_path, "import", "sessions", "--path", str(example))
    assert res.returncode == 0, res.stderr
    assert "offline" in res.stderr + res.stdout and "saved" in res.stdout

    found = run(tmp_path, "recall", "how do I run the app locally?", "--json")
    top = json.loads(found.stdout)["memories"][0]
    assert "npm" in top["text"]
    (prov,) = top["provenance"]
    assert prov["path"].endswith("7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl")
    assert prov["start_line"] == 61

    again = run(tmp_path, "import", "sessions", "--path", str(example), "--json")
    assert json.loads(again.stdout)["skipped"]["up_to_date"] == 1


def test_save_anchors_the_files_of_the_working_folder_and_show_prints_them(
    tmp_path, capsys, monkeypatch
):
    from tests.test_anchors import make_repo

    repo = make_repo(tmp_path)
    home = tmp_path / "home"
    monkeypatch.chdir(repo / "svc")
    code, out, _ = cli(
        capsys, home, "save", "MAX_RETRIES caps retries", "--file", "net/retry.py", "--json"
    )
    assert code == 0
    mid = json.loads(out)["id"]
    code, out, _ = cli(capsys, home, "show", mid, "--json")
    [anchor] = json.loads(out)["anchors"]
    assert (anchor["path"], anchor["symbols"], anchor["via"]) == (
        "svc/net/retry.py",
        ["MAX_RETRIES"],
        "given",
    )
    code, out, _ = cli(capsys, home, "show", mid)
    assert "svc/net/retry.py (MAX_RETRIES)" in out
    for outside in ("../../outside.py", "/etc/passwd"):
        code, _, err = cli(capsys, home, "save", "a secret", "--file", outside)
        assert code == 1 and ("not inside the working folder" in err or "not a file" in err)


def test_a_deleted_working_folder_checks_nothing_and_crashes_nothing(tmp_path):
    """The shell's folder was removed under it (a deleted worktree, ``rm -rf`` of a
    temp checkout): commands that only use it to anchor or check code run without it;
    those about it (``stale``, ``--file``, ``--project .``) say so in one line."""
    home, gone = tmp_path / "home", tmp_path / "gone"
    env = {**os.environ, "MEMLOOM_HOME": str(home), "MEMLOOM_LLM": "offline"}
    assert run(home, "save", "The staging DB listens on port 5433").returncode == 0

    def in_gone(*args: str) -> subprocess.CompletedProcess[str]:
        gone.mkdir()
        # The child starts in the folder, which is removed before memloom runs.
        script = f"import os, runpy, sys; os.rmdir({str(gone)!r}); sys.argv = ['memloom', *{list(args)!r}]; runpy.run_module('memloom.cli', run_name='__main__')"  # noqa: E501
        return subprocess.run(
            [sys.executable, "-c", script],
            cwd=gone,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    res = in_gone("recall", "staging database port", "--json")
    assert res.returncode == 0, res.stderr
    [hit] = json.loads(res.stdout)["memories"]
    assert hit["stale"] is None
    res = in_gone("show", hit["id"], "--json")
    assert res.returncode == 0 and json.loads(res.stdout)["stale"] is None, res.stderr
    assert in_gone("save", "Deploys go out on Tuesdays").returncode == 0
    # An absolute folder needs no working folder.
    res = in_gone("recall", "staging database port", "--project", str(tmp_path))
    assert res.returncode == 0, res.stderr
    for args in (("stale",), ("save", "x", "--file", "a.py"), ("recall", "x", "--project", ".")):
        res = in_gone(*args)
        assert res.returncode == 1, (args, res.stderr)
        assert res.stderr.strip() == (
            "memloom: error: the working folder no longer exists (deleted or moved): cd somewhere"
        ), args
