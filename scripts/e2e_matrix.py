"""The end-to-end suite's matrix: agent x check, from the last run's results.

    pytest tests/e2e                       # writes .e2e/results.json
    python scripts/e2e_matrix.py           # prints the matrix
    python scripts/e2e_matrix.py --docs    # and renders it into docs/agents.md

Each cell is the outcome of that check for that agent (``pass``, ``FAIL``,
``skip``; ``n/a`` where the check does not apply, e.g. hooks for Aider); the
"plugin" column holds the six checks of memloom installed as the agent's plugin
(tests/e2e/test_plugins.py); the last column is the seconds the agent's tests took.
Results accumulate: a run of some tests replaces only their rows. Versions come from the pins
(tests/e2e/package.json, tests/e2e/aider-requirements.txt).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / ".e2e" / "results.json"
DOCS = REPO / "docs" / "agents.md"
START, END = "<!-- e2e-matrix:start -->", "<!-- e2e-matrix:end -->"

#: test function -> column, in order.
CHECKS = {
    "test_connect_merges_and_the_user_s_own_hook_still_fires": "connect keeps the user's hook",
    "test_a_saved_memory_reaches_the_model_once_and_only_when_relevant": "memory in model request",
    "test_capture_distills_the_session_file_the_agent_wrote": "capture of its own session",
    "cross": "cross-agent recall",
    "test_the_agent_answers_when_memloom_s_data_folder_is_unusable": "fails open",
    "test_disconnect_restores_the_config_files_exactly": "disconnect restores",
}
#: tests/e2e/test_plugins.py's checks of memloom installed as the agent's plugin, shown
#: as one "plugin" column: install / hooks fire / injection seen / MCP tools listed /
#: not installed (no memloom on PATH) / no double-up (with memloom connect's hooks).
PLUGIN_CHECKS = {
    "test_plugin_installs_with_the_agent_s_own_command": "install",
    "test_plugin_hooks_fire": "hooks fire",
    "test_plugin_injection_reaches_the_model": "injection seen",
    "test_plugin_mcp_tools_are_offered_to_the_model": "MCP tools listed",
    "test_plugin_without_memloom_the_agent_runs_and_is_told_once": "not installed",
    "test_plugin_and_connect_do_not_double_up": "no double-up",
}
PLUGIN_COLUMN = "plugin: " + " / ".join(PLUGIN_CHECKS.values())
#: memloom's agent name -> (label, npm package or PyPI requirement).
AGENTS = {
    "claude-code": ("Claude Code", "@anthropic-ai/claude-code"),
    "codex": ("Codex CLI", "@openai/codex"),
    "gemini": ("Gemini CLI", "@google/gemini-cli"),
    "copilot": ("Copilot CLI", "@github/copilot"),
    "aider": ("Aider", "aider-chat"),
    "qwen": ("Qwen Code", "@qwen-code/qwen-code"),
    "opencode": ("OpenCode", "opencode-ai"),
}


def versions() -> dict[str, str]:
    pins = json.loads((REPO / "tests" / "e2e" / "package.json").read_text())["dependencies"]
    req = (REPO / "tests" / "e2e" / "aider-requirements.txt").read_text()
    out = {}
    for name, (_, package) in AGENTS.items():
        if package in pins:
            out[name] = pins[package]
        found = re.search(rf"^{re.escape(package)}==(\S+)", req, re.M)
        if found:
            out[name] = found.group(1)
    return out


def verdict(outcomes: list[str] | None) -> str:
    """One cell: FAIL if any run failed, else pass if any passed, else skip; n/a: none ran."""
    if not outcomes:
        return "n/a"
    if "FAIL" in outcomes:
        return "FAIL"
    return "pass" if "pass" in outcomes else "skip"


def matrix(doc: dict) -> tuple[list[str], list[list[str]]]:
    cells: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    seconds: dict[str, float] = defaultdict(float)
    extra: dict[str, list[str]] = defaultdict(list)
    for test in doc["tests"].values():
        outcome = {"passed": "pass", "failed": "FAIL", "skipped": "skip"}[test["outcome"]]
        agents = str(test["agent"]).split("→")
        column = "cross" if len(agents) == 2 else test["check"]
        for agent in agents:
            seconds[agent] += test["seconds"] / len(agents)
            if column in CHECKS or column in PLUGIN_CHECKS:
                cells[agent][column].append(outcome)
            else:
                extra[agent].append(f"{test['check']}: {outcome}")
    pins = versions()
    header = ["agent", "version", *CHECKS.values(), PLUGIN_COLUMN, "other checks", "seconds"]
    rows = []
    for agent in [a for a in AGENTS if a in seconds]:
        row = [AGENTS[agent][0], pins.get(agent, "?")]
        row += [verdict(cells[agent].get(column)) for column in CHECKS]
        plugin = [verdict(cells[agent].get(column)) for column in PLUGIN_CHECKS]
        row.append("n/a" if set(plugin) == {"n/a"} else " / ".join(plugin))
        row.append("; ".join(extra[agent]) or "-")
        row.append(f"{seconds[agent]:.0f}")
        rows.append(row)
    return header, rows


def render(header: list[str], rows: list[list[str]], finished: str) -> str:
    lines = [
        f"Generated by `python scripts/e2e_matrix.py --docs` from the runs of tests/e2e up to "
        f"{finished} UTC.",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", action="store_true", help="render into docs/agents.md")
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    if not args.results.exists():
        print(f"no results at {args.results}: run `pytest tests/e2e` first", file=sys.stderr)
        return 2
    doc = json.loads(args.results.read_text())
    table = render(*matrix(doc), doc["finished"])
    print(table)
    if args.docs:
        text = DOCS.read_text()
        if START not in text or END not in text:
            print(f"{DOCS} has no {START} … {END} block", file=sys.stderr)
            return 2
        head, rest = text.split(START, 1)
        _, tail = rest.split(END, 1)
        DOCS.write_text(f"{head}{START}\n{table}\n{END}{tail}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
