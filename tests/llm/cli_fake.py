"""A fake agent CLI on PATH that replays what the real one printed (tests/fixtures/llm_cli).

The fake records each call (argv, stdin, cwd, the environment memloom set) and
prints a fixture's stdout and stderr and exits with its code: the output the real
pinned CLI gave against the scripted model (captured by running memloom's provider
on it), so the provider is tested against the real format, not a guess of it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "llm_cli"

SCRIPT = f"""#!{sys.executable}
import json, os, sys, time
stdin = sys.stdin.read()
keep = ("MEMLOOM_LLM_CHILD", "GEMINI_SYSTEM_MD", "TMPDIR")
files = {{}}
for arg in sys.argv:
    if os.path.isfile(arg):
        files[arg] = open(arg, encoding="utf-8").read()
path = os.environ.get("GEMINI_SYSTEM_MD")
if path and os.path.isfile(path):
    files[path] = open(path, encoding="utf-8").read()
with open(os.environ["FAKE_CLI_RECORD"], "a", encoding="utf-8") as fh:
    fh.write(json.dumps({{"argv": sys.argv, "stdin": stdin, "cwd": os.getcwd(), "files": files,
                         "env": {{k: os.environ.get(k) for k in keep}}}}) + "\\n")
hook = os.environ.get("FAKE_CLI_HOOK")
if hook:
    exec(hook)
time.sleep(float(os.environ.get("FAKE_CLI_SLEEP", "0")))
sys.stdout.write(open(os.environ["FAKE_CLI_STDOUT"], encoding="utf-8").read())
sys.stderr.write(open(os.environ["FAKE_CLI_STDERR"], encoding="utf-8").read())
sys.exit(int(os.environ.get("FAKE_CLI_EXIT", "0")))
"""


class FakeCLI:
    """``binary`` on PATH, replaying fixtures of ``agent`` (``replay("401")``)."""

    def __init__(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, binary: str, agent: str
    ) -> None:
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        self.exe = bin_dir / binary
        self.exe.write_text(SCRIPT, encoding="utf-8")
        self.exe.chmod(0o755)
        self.agent = agent
        self.record = tmp_path / "record.jsonl"
        self.stdout = tmp_path / "stdout.txt"
        self.stderr = tmp_path / "stderr.txt"
        self.monkeypatch = monkeypatch
        monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
        monkeypatch.setenv("FAKE_CLI_RECORD", str(self.record))
        monkeypatch.setenv("FAKE_CLI_STDOUT", str(self.stdout))
        monkeypatch.setenv("FAKE_CLI_STDERR", str(self.stderr))
        monkeypatch.delenv("FAKE_CLI_HOOK", raising=False)
        monkeypatch.chdir(tmp_path)
        self.replay("answer")

    def replay(self, case: str) -> None:
        """Print what the real CLI printed in ``case`` and exit with its code."""
        folder = FIXTURES / self.agent
        self.print(
            (folder / f"{case}.stdout").read_text(encoding="utf-8"),
            (folder / f"{case}.stderr").read_text(encoding="utf-8"),
            int((folder / f"{case}.exit").read_text(encoding="utf-8")),
        )

    def print(self, stdout: str = "", stderr: str = "", code: int = 0, **env: str) -> None:
        """Print ``stdout``/``stderr`` and exit ``code``; ``env``: FAKE_CLI_<KEY> (SLEEP, HOOK)."""
        self.stdout.write_text(stdout, encoding="utf-8")
        self.stderr.write_text(stderr, encoding="utf-8")
        self.monkeypatch.setenv("FAKE_CLI_EXIT", str(code))
        for key, value in env.items():
            self.monkeypatch.setenv(f"FAKE_CLI_{key.upper()}", value)

    def calls(self) -> list[dict[str, Any]]:
        if not self.record.exists():
            return []
        return [json.loads(x) for x in self.record.read_text(encoding="utf-8").splitlines()]
