"""Import cost: everything but the LLM, the unchanged re-check, and LLM volume per MB.

    python bench/import.py [--transcripts DIR] [--sessions 1000] [--agents DIR]

Reads the shared real transcripts (../shared/fixtures/transcripts, else the
repository's test fixtures), lays them out as a ~/.claude/projects tree, and
measures with a null model that answers instantly with no memories, so the
figures are memloom's own work: discover, ledger, parse, redact, chunk,
ledger writes. The dry run (discover + ledger check + parse + redact + chunk,
no writes) is measured too.

Per agent (``--agents``: the shared agent fixtures, else the repository's
copies): MB/s through parse + redact + chunk -- the adapter's reader, the
redactor on every unit, the chunker -- over each agent's real session files,
next to the same measure over the Claude Code transcripts. The corpora are
small (16 KB to 1.2 MB), so each is read again and again for at least a second
and the median pass counts.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "fixtures" / "transcripts"
SHARED_AGENTS = REPO.parent / "shared" / "fixtures" / "agents"
#: registry name -> the fixture folder of its sessions
AGENT_FOLDERS = {
    "codex": "codex",
    "gemini": "gemini",
    "copilot": "copilot",
    "aider": "aider",
    # constructed from Cursor's documented format, not recorded (its README says so)
    "cursor": "cursor",
    "qwen": "qwen",
    "opencode": "opencode",
}
#: The repository's agent fixtures: an agent the shared folder has none of is read from here.
REPO_AGENTS = REPO / "tests" / "fixtures" / "agents"
RESULTS = REPO / "bench" / "results"
UUID_NAME = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$")


class NullLLM:
    """Answers every distill call at once with no memories."""

    name = "null"
    model = None
    description = "null model (benchmark)"
    offline = False

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.input_chars = 0

    def complete(self, task: str, system: str, payload: dict, schema: dict) -> dict:
        self.calls[task] += 1
        self.input_chars += len(system) + len(json.dumps(payload))
        return {"memories": []}


def layout(source: Path, dest: Path) -> tuple[int, int]:
    """Copy transcripts into dest/projects/<dir>/; returns (files, bytes) of main transcripts."""
    files = size = 0
    for path in sorted(source.rglob("*.jsonl")):
        name = path.name
        match = UUID_NAME.search(name)
        if "__" in name:  # shared flat names: <prefix>__<project dir>__<file>
            parts = name.split("__")
            project_dir = parts[-2] if len(parts) >= 2 else "bench"
            if "subagents" in parts:
                project_dir = parts[parts.index("subagents") - 2]
            fname = parts[-1]
        else:
            project_dir, fname = path.parent.name, name
        target = dest / "projects" / project_dir / fname
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        if match and "agent-" not in fname:
            files += 1
            size += path.stat().st_size
    return files, size


def tool_observations(root: Path) -> dict[str, int]:
    """tool_use blocks in every transcript (sidecars too: their tools fire hooks as well).

    A capture tool that calls an LLM once per tool observation (as PostToolUse
    capture plugins do) makes one call for each of these.
    """
    main = sidecar = 0
    for path in root.rglob("*.jsonl"):
        is_main = bool(UUID_NAME.search(path.name)) and "subagents" not in path.parts
        for line in path.read_bytes().split(b"\n"):
            if b'"tool_use"' not in line:
                continue
            try:
                record = json.loads(line)
            except ValueError:
                continue
            content = (record.get("message") or {}).get("content")
            if record.get("type") != "assistant" or not isinstance(content, list):
                continue
            count = sum(1 for b in content if isinstance(b, dict) and b.get("type") == "tool_use")
            if is_main and not record.get("isSidechain"):
                main += count
            else:
                sidecar += count
    return {"main": main, "sidechain": sidecar, "total": main + sidecar}


def agent_files(name: str, folder: Path) -> list[Path]:
    """The session files of ``folder`` that the agent's adapter recognises by content."""
    from memloom.agents import get_agent

    agent = get_agent(name)
    files = [p for p in sorted(folder.rglob("*")) if p.is_file() and agent.recognises(p)]
    if name == "opencode":  # a store holds many sessions: each is read by its own path
        from memloom.agents.base import DiscoverOptions

        return [f.path for f in agent.discover(DiscoverOptions(paths=files)).files]
    return files


def _size(paths: list[Path]) -> int:
    """Bytes the reader reads: each file once (a store and its WAL for OpenCode sessions)."""
    from memloom.agents import session_container

    stores = {Path(session_container(p)) for p in paths}
    wal = [Path(f"{p}-wal") for p in stores]
    return sum(p.stat().st_size for p in [*stores, *wal] if p.exists())


def parse_redact_chunk(name: str, files: list[Path], min_seconds: float = 1.0) -> dict[str, Any]:
    """MB/s of one agent's reader + the redactor + the chunker over ``files``."""
    from memloom.agents import get_agent
    from memloom.detect import default_detector
    from memloom.sessions.chunk import chunk_units

    agent, detector = get_agent(name), default_detector()
    size = _size(files)

    def one_pass() -> tuple[int, int]:
        units = chunks = 0
        if name == "opencode":  # measure reading the store, not the rendering cache
            from memloom.agents.opencode import store

            store._cache.clear()
        for path in files:
            parsed = agent.read(path, final=True)
            for unit in parsed.units:
                unit.text = detector.redact(unit.text)[0]
            units += len(parsed.units)
            chunks += len(chunk_units(parsed.units)[0])
        return units, chunks

    units, chunks = one_pass()  # warm: regexes compiled, files in the page cache
    times: list[float] = []
    started = time.perf_counter()
    while time.perf_counter() - started < min_seconds or len(times) < 5:
        t = time.perf_counter()
        one_pass()
        times.append(time.perf_counter() - t)
    return {
        "files": len(files),
        "mb": round(size / 1e6, 3),
        "units": units,
        "chunks": chunks,
        "passes": len(times),
        "mb_s": round(size / 1e6 / statistics.median(times), 1),
    }


def per_agent(agents_dir: Path, claude_root: Path) -> dict[str, Any]:
    out = {
        "claude-code": parse_redact_chunk("claude-code", agent_files("claude-code", claude_root))
    }
    for name, folder in AGENT_FOLDERS.items():
        where = agents_dir / folder
        files = agent_files(name, where if where.is_dir() else REPO_AGENTS / folder)
        if files:
            out[name] = parse_redact_chunk(name, files)
    out.update(scaled(agents_dir, claude_root))
    return out


#: Agents whose real fixtures are a few kB: also measured over their own records
#: replayed to this many bytes (bench/agent_corpus.py).
SCALED_BYTES = 5_000_000


def scaled(agents_dir: Path, claude_root: Path) -> dict[str, Any]:
    """``<agent> (scaled)`` rows: Qwen Code, Cursor and OpenCode over ~5 MB corpora
    replayed from their fixtures, with the Claude Code transcripts' text."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import agent_corpus

    def fixture(folder: str, pattern: str) -> Path:
        for base in (agents_dir / folder, REPO_AGENTS / folder):
            found = sorted(p for p in base.rglob(pattern) if "subagents" not in p.parts)
            if found:
                return max(found, key=lambda p: p.stat().st_size)
        raise SystemExit(f"no {folder} fixture matching {pattern}")

    text = agent_corpus.prose(agent_files("claude-code", claude_root))
    work = Path(tempfile.mkdtemp(prefix="memloom-scaled-"))
    try:
        made = {
            "qwen": agent_corpus.qwen(
                fixture("qwen", "*.jsonl"), work / "qwen", text, SCALED_BYTES
            ),
            "cursor": agent_corpus.cursor(
                fixture("cursor", "*.jsonl"), work / "cursor", text, SCALED_BYTES
            ),
        }
        store = agent_corpus.opencode(
            fixture("opencode", "opencode.db"), work / "opencode", text, SCALED_BYTES
        )
        made["opencode"] = agent_files("opencode", store.parent)
        return {f"{name} (scaled)": parse_redact_chunk(name, files) for name, files in made.items()}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_import(home: Path, root: Path, llm: Any, **kw: Any) -> tuple[Any, float]:
    import memloom

    with memloom.open(home=str(home)) as m:
        start = time.perf_counter()
        report = m.import_sessions(root=root, days=None, sessions=None, llm=llm, **kw)
        return report, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--transcripts", type=Path, default=None)
    parser.add_argument("--sessions", type=int, default=1000, help="corpus size for the re-check")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--agents", type=Path, default=None, help="agent fixtures folder")
    args = parser.parse_args()
    agents_dir = args.agents or (SHARED_AGENTS if SHARED_AGENTS.exists() else REPO_AGENTS)
    source = args.transcripts or (
        SHARED if SHARED.exists() else REPO / "tests" / "fixtures" / "transcripts"
    )
    work = Path(tempfile.mkdtemp(prefix="memloom-import-bench-"))
    try:
        root = work / "claude"
        files, size = layout(source, root)
        old = time.time() - 3600
        for p in root.rglob("*.jsonl"):
            import os

            os.utime(p, (old, old))
        mb = size / 1e6
        print(f"corpus: {files} session files, {mb:.2f} MB, from {source}")

        dry, full = [], []
        report = None
        null = NullLLM()
        for i in range(args.repeat):
            _, t = run_import(work / f"dry{i}", root, null, dry_run=True)
            dry.append(t)
            null = NullLLM()
            report, t = run_import(work / f"full{i}", root, null)
            full.append(t)
        assert report is not None
        chunks, chars = report.chunks, report.input_chars

        # Re-check of an unchanged corpus of N sessions.
        big = work / "big"
        seeds = [p for p in root.rglob("*.jsonl") if UUID_NAME.search(p.name) and p.stat().st_size]
        import uuid

        for i in range(args.sessions):
            seed = seeds[i % len(seeds)]
            target = big / "projects" / f"-proj-{i % 50}" / f"{uuid.uuid4()}.jsonl"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(seed, target)
            os.utime(target, (old, old))
        home = work / "recheck"
        first, t_first = run_import(home, big, NullLLM())
        rechecks = []
        for _ in range(args.repeat):
            again, t = run_import(home, big, NullLLM())
            assert again.sessions == 0 and again.skipped["up_to_date"] == first.sessions
            rechecks.append(t)

        tools = tool_observations(root)
        agents = per_agent(agents_dir, root)
        result = {
            "agents": agents,
            "agents_source": str(agents_dir),
            "tool_observations": tools,
            "per_observation_calls_per_mb": round(tools["total"] / mb, 1),
            "call_ratio_vs_per_observation": round(tools["total"] / max(chunks, 1), 1),
            "corpus_files": files,
            "corpus_mb": round(mb, 3),
            "dry_run_mb_s": round(mb / statistics.median(dry), 1),
            "pipeline_mb_s": round(mb / statistics.median(full), 1),
            "chunks": chunks,
            "llm_calls_per_mb": round(chunks / mb, 2),
            "input_chars": chars,
            "input_tokens_per_mb": round(null.input_chars / 4 / mb),
            "recheck_sessions": first.sessions,
            "recheck_s": round(statistics.median(rechecks), 3),
            "first_import_of_recheck_corpus_s": round(t_first, 2),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "import.json").write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    sys.exit(main())
