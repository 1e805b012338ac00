"""How soon a first start of ``memloom mcp`` answers ``initialize``, in an empty cache folder.

    python bench/mcp_start.py [--starts 20] [--label after]
    PYTHONPATH=<checkout of an older commit>/src python bench/mcp_start.py --label before

An agent that starts ``memloom mcp`` itself (Claude Code, Copilot, Gemini, Qwen, Codex,
OpenCode) waits for ``initialize`` and ``tools/list`` before its first model request;
``codex exec`` sends it about a second after it starts, and tools not listed by then are
not offered. Each start here is a fresh process with a fresh, empty ``XDG_CACHE_HOME`` and
data folder (the first session after a plugin install), driven by the MCP SDK's own stdio
client: the time from launching the process to the ``initialize`` answer, then to the
``tools/list`` answer. Results are merged by label into ``bench/results/mcp_start.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

RESULTS = Path(__file__).resolve().parent / "results"
sys.path.insert(0, str(RESULTS.parent))
from hooks import pct  # noqa: E402  (p50/p95/max in ms, as the hooks' figures)

SCRIPT = Path(sys.executable).with_name("memloom")


async def one_start(work: Path) -> tuple[float, float, int]:
    """Seconds to ``initialize`` and to ``tools/list``, and the tools listed."""
    env = {
        **os.environ,
        "XDG_CACHE_HOME": str(work / "cache"),
        "MEMLOOM_HOME": str(work / "home"),
        "MEMLOOM_LLM": "offline",
    }
    params = StdioServerParameters(command=str(SCRIPT), args=["mcp"], env=env)
    started = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        initialized = time.perf_counter() - started
        tools = await session.list_tools()
        listed = time.perf_counter() - started
    return initialized, listed, len(tools.tools)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--starts", type=int, default=20)
    parser.add_argument("--label", default="after")
    args = parser.parse_args()
    inits, lists, counts = [], [], set()
    for _ in range(args.starts):
        work = Path(tempfile.mkdtemp(prefix="memloom-mcp-start-"))
        try:
            initialized, listed, tools = anyio.run(one_start, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        inits.append(initialized)
        lists.append(listed)
        counts.add(tools)
    import memloom

    doc: dict[str, Any] = {
        "label": args.label,
        "memloom": str(Path(memloom.__file__).parent),
        "starts": args.starts,
        "initialize": pct(inits),
        "tools_list": pct(lists),
        "tools": sorted(counts),
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "loadavg": os.getloadavg(),
    }
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / "mcp_start.json"
    runs = json.loads(out.read_text()) if out.exists() else {}
    runs[args.label] = doc
    out.write_text(json.dumps(runs, indent=2) + "\n")
    print(json.dumps(doc, indent=2))


if __name__ == "__main__":
    main()
