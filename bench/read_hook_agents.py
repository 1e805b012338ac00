"""The read hook's wall time for Codex, Copilot CLI, OpenCode and Cursor payloads.

    python bench/read_hook_agents.py [--runs 40] [--memories 10000] [--files 2000]

The store and repository of bench/read_hook.py (``--memories`` memories anchored to
``--files`` files, plus 2,000 of other projects), and each agent's own payload after a
read (tests/fixtures/hooks/reads), the ``memloom`` console script started as the agent
starts it. Codex's is a shell command (``nl -ba F | sed -n '1,80p'``) that the hook
splits into words before it looks the file up (memloom.agents.shellread); a command
that is not a read (``ls -la``) shows what the hook costs when it names no file.
Claude Code's read hook (bench/read_hook.py) is timed again here, on the same store
and load, to compare. Say the machine's load when you quote the figures (printed with
them); results go to bench/results/read_hook_agents.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from read_hook import CAPTURED_AT, FIXTURE, RESULTS, fill, git, rel_of, timed  # noqa: E402


def payloads(repo: Path, rel: str) -> dict[str, tuple[str, Any]]:
    """Label -> (agent, a function making a fresh payload: a new session each run), each
    a read of ``rel``."""

    def load(name: str, captured_at: str) -> dict[str, Any]:
        text = (FIXTURE / name).read_text().replace(captured_at, str(repo))
        return json.loads(text)

    claude = load("claude-code-2.1.328.PostToolUse-Read.json", CAPTURED_AT)
    claude["tool_input"]["file_path"] = str(repo / rel)
    codex = load(
        "codex-0.169.0.PostToolUse-Bash-nl-pipe-sed.json", "/tmp/reads2/cap-codex-wd/sb/home/shop"
    )
    codex["tool_input"]["command"] = f"nl -ba {rel} | sed -n '1,80p'"
    not_read = {**codex, "tool_input": {"command": "ls -la"}}
    copilot = load(
        "copilot-1.0.102.postToolUse-view-relative.json", "/tmp/reads2/cap-copilot/sb/home/shop"
    )
    copilot["toolArgs"] = {"path": rel}
    opencode = {"cwd": str(repo), "db": "", "tool": "read", "args": {"filePath": str(repo / rel)}}
    cursor = {
        "conversation_id": "",
        "hook_event_name": "postToolUse",
        "tool_name": "Read",
        "tool_input": {"file_path": str(repo / rel)},
        "tool_output": '{"content_length":12}',
        "cursor_version": "3.7.27",
        "workspace_roots": [str(repo)],
    }

    def fresh(doc: dict[str, Any], key: str) -> Any:
        def make() -> str:
            return json.dumps({**doc, key: f"ses_{uuid.uuid4().hex}"})

        return make

    return {
        "claude-code (Read)": ("claude-code", fresh(claude, "session_id")),
        "codex (nl -ba F piped to sed -n)": ("codex", fresh(codex, "session_id")),
        "codex (ls -la: no file)": ("codex", fresh(not_read, "session_id")),
        "copilot (view)": ("copilot", fresh(copilot, "sessionId")),
        "opencode (read, the plugin's payload)": ("opencode", fresh(opencode, "session_id")),
        "cursor (Read)": ("cursor", fresh(cursor, "session_id")),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--files", type=int, default=2_000)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="memloom-read-agents-bench-"))
    home, repo = work / "home", work / "shop"
    env = {**os.environ, "MEMLOOM_HOME": str(home), "MEMLOOM_LLM": "offline"}
    env.pop("MEMLOOM_DATABASE_URL", None)
    try:
        git("init", "-q", repo)
        git("-C", repo, "remote", "add", "origin", "git@github.com:bench/shop.git")
        for i in range(args.files):
            path = repo / rel_of(i)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"# module {i}\n")
        project = fill(home, repo, args.memories, args.files)
        load_before = os.getloadavg()
        results = {
            label: timed(env, ["hook", "read", "--agent", agent], make, args.runs)
            for label, (agent, make) in payloads(repo, rel_of(123 % args.files)).items()
        }
        load_after = os.getloadavg()
        for label, r in results.items():
            shown = r["last_stdout_chars"] > 0
            assert shown == ("no file" not in label), f"{label}: shown={shown}"
        doc = {
            "memories": args.memories,
            "files": args.files,
            "project": project,
            "runs": args.runs,
            "loadavg_before": [round(x, 2) for x in load_before],
            "loadavg_after": [round(x, 2) for x in load_after],
            "at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "results": results,
        }
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "read_hook_agents.json").write_text(json.dumps(doc, indent=2) + "\n")
        size = f"{args.memories:,} memories, {args.files:,} files"
        print(f"| hook read process ({size}) | p50 | p95 | max |")
        print("|---|---|---|---|")
        for label, r in results.items():
            print(f"| {label} | {r['p50_ms']} ms | {r['p95_ms']} ms | {r['max_ms']} ms |")
        print(f"load average before {doc['loadavg_before']}, after {doc['loadavg_after']}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
