"""The read hook's wall time against the prompt hook's, on 10,000 anchored memories.

    python bench/read_hook.py [--runs 40] [--memories 10000] [--files 2000]

A git repository with ``--files`` files, and a SQLite store holding ``--memories``
memories of that project, each anchored to one of the files (five to a file at the
defaults), plus 2,000 of other projects anchored to files of the same names. Each run
starts the ``memloom`` console script exactly as the agent does, interpreter start-up
included, with the agent's real payload (tests/fixtures/hooks/reads) on stdin:

* ``hook read --agent claude-code`` after ``Read`` of a file (a fresh session id each
  run, so every run looks the file up and records it as shown);
* the same for a file no memory is anchored to;
* ``hook prompt-recall`` (UserPromptSubmit) on the same store, for comparison.

The daemon is down for all of them: the read hook never asks it (the lookup needs no
model), and the prompt hook's daemon-down path is its keyword fallback on the same
file. Say the machine's load when you quote the figures (printed with them). The
rows are written straight through the store (no dedup, no embeddings: neither hook
reads vectors here); results go to bench/results/read_hook.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent))

from tests.support.git import git  # noqa: E402

from hooks import SCRIPT, pct  # noqa: E402  (bench/hooks.py: the same timing)

RESULTS = HERE / "results"
FIXTURE = HERE.parent / "tests" / "fixtures" / "hooks" / "reads"
CAPTURED_AT = "/tmp/capreads/sb-claude-code/home/shop"


def rel_of(i: int) -> str:
    return f"pkg{i % 40}/mod{i}.py"


def fill(home: Path, repo: Path, memories: int, files: int) -> str:
    """The store, written straight through the SQLite store: its project key."""
    import memloom
    from memloom.hashing import content_hash, new_id
    from memloom.project import project_key
    from memloom.store.base import MemoryRow

    project = project_key(str(repo))
    assert project
    now = time.time()

    def row(text: str, owner: str, rel: str) -> MemoryRow:
        mid = new_id()
        anchor = {"path": rel, "symbols": [], "commit": None, "root": str(repo), "via": "given"}
        return MemoryRow(
            id=mid,
            root_id=mid,
            version=1,
            status="active",
            type="fact",
            text=text,
            original_text=None,
            content_hash=content_hash(text),
            embedding=None,
            source=None,
            tags=[],
            metadata={},
            project=owner,
            sensitivity=0,
            session_id=None,
            created_at=now,
            asserted_at=now,
            last_referenced=now,
            anchors=[anchor],
        )

    m = memloom.open(home=str(home), database_url=str(home / "memloom.db"))
    try:
        backend = m.backend
        with backend.transaction():
            for i in range(memories):
                text = f"Note {i}: {rel_of(i % files)} keeps queue q{i % 13} at {i % 7} workers"
                backend.insert(row(text, project, rel_of(i % files)))
            for i in range(2000):  # other repositories, files of the same names
                backend.insert(row(f"Elsewhere {i}: a module", f"/other/{i % 10}", rel_of(i)))
    finally:
        m.close()
    return project


def timed(env: dict[str, str], args: list[str], make: Any, runs: int) -> dict[str, float]:
    """``memloom ARGS`` with ``make()`` on stdin, ``runs`` times (after one warm-up)."""
    samples = []
    for n in range(runs + 1):
        stdin = make()
        t = time.perf_counter()
        done = subprocess.run(
            [str(SCRIPT), *args], input=stdin, env=env, capture_output=True, text=True, timeout=60
        )
        took = time.perf_counter() - t
        if done.returncode != 0 or done.stderr:
            raise SystemExit(f"memloom {' '.join(args)} failed: {done.stderr}")
        if n:
            samples.append(took)
    return {**pct(samples), "last_stdout_chars": len(done.stdout)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--files", type=int, default=2_000)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="memloom-read-bench-"))
    home, repo = work / "home", work / "shop"
    env = {**os.environ, "MEMLOOM_HOME": str(home), "MEMLOOM_LLM": "offline"}
    env.pop("MEMLOOM_DATABASE_URL", None)
    try:
        git(repo, "init", "-q")
        git(repo, "remote", "add", "origin", "git@github.com:bench/shop.git")
        for i in range(args.files):
            path = repo / rel_of(i)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"# module {i}\n")
        (repo / "README.md").write_text("no memory is about this file\n")
        t = time.perf_counter()
        project = fill(home, repo, args.memories, args.files)
        print(f"filled {args.memories:,} + 2,000 rows in {time.perf_counter() - t:.1f} s")
        template = json.loads((FIXTURE / "claude-code-2.1.328.PostToolUse-Read.json").read_text())

        def read(rel: str) -> Any:
            def make() -> str:
                doc = json.loads(json.dumps(template).replace(CAPTURED_AT, str(repo)))
                doc["tool_input"]["file_path"] = str(repo / rel)
                doc["session_id"] = str(uuid.uuid4())
                return json.dumps(doc)

            return make

        prompt = {
            "session_id": "",
            "cwd": str(repo),
            "hook_event_name": "UserPromptSubmit",
            "prompt": "how many workers does queue q7 of pkg3/mod123.py keep?",
        }

        def ask() -> str:
            return json.dumps({**prompt, "session_id": str(uuid.uuid4())})

        # The store and the 2,000 files were just written: flush them first, so the
        # first row timed does not pay for the page cache's write-back.
        os.sync()
        time.sleep(2.0)
        load_before = os.getloadavg()
        results = {
            "read, a file with 5 memories": timed(
                env, ["hook", "read", "--agent", "claude-code"], read(rel_of(123)), args.runs
            ),
            "read, a file with none": timed(
                env, ["hook", "read", "--agent", "claude-code"], read("README.md"), args.runs
            ),
            "prompt-recall (keyword fallback)": timed(
                env, ["hook", "prompt-recall"], ask, args.runs
            ),
        }
        load_after = os.getloadavg()
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
        assert results["read, a file with 5 memories"]["last_stdout_chars"] > 0, "nothing shown"
        assert results["read, a file with none"]["last_stdout_chars"] == 0
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "read_hook.json").write_text(json.dumps(doc, indent=2) + "\n")
        size = f"{args.memories:,} memories, {args.files:,} files"
        print(f"| hook process ({size}) | p50 | p95 | max |")
        print("|---|---|---|---|")
        for label, r in results.items():
            print(f"| {label} | {r['p50_ms']} ms | {r['p95_ms']} ms | {r['max_ms']} ms |")
        print(f"load average before {doc['loadavg_before']}, after {doc['loadavg_after']}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
