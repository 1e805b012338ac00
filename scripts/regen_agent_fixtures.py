"""Regenerate the real agents' session files used as parser fixtures.

    python scripts/regen_agent_fixtures.py                   # every agent in tests/e2e/drivers
    python scripts/regen_agent_fixtures.py claude-code aider # some

Each pinned agent (tests/e2e/package.json, tests/e2e/aider-requirements.txt) runs
headless through its end-to-end driver against the scripted model
(tests/e2e/model.py), in a fresh sandbox HOME, with memloom connected (hooks, or
for Aider the folder) and a project memory and a pinned memory saved, so that the
files hold what memloom injects in the markup the agent wraps it in. The same
session then gets :data:`PROMPTS`: a question the saved memory answers, a turn in
which the model calls a tool (the prompt holds ``model.TOOL_TRIGGER``), and a fact
to remember (later prompts resume the session where the agent can).

The files the agent wrote (``Driver.session_files``) are copied to
``tests/fixtures/agents/<agent>/e2e-<version>/`` under their path relative to the
sandbox HOME, with ``fixture.json`` (agent, version, prompts, what memloom injected,
the tool's output marker: what tests/agents/test_e2e_fixtures.py checks) and a
README. Sanitized, so that a re-run differs only where the agent's own ids and
clocks differ: the sandbox's temporary HOME becomes ``/home/e2e`` (in contents and
in file names: Claude Code names its project folder after the cwd), the sandbox
beside it ``/tmp/e2e``, the repository path ``/repo``, the scripted model's port
``PORT``. Nothing else is edited. An OpenCode store (SQLite) is copied row by row,
its ``session``, ``message`` and ``part`` tables only (a store also holds accounts and
credentials), each text value sanitized, without a WAL; ``fixture.json`` names its
sessions (``<store>#<session id>``).

An agent that fails is reported and left out (its earlier fixtures stay); the exit
status is 1 when any did.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.e2e.drivers import DRIVERS  # noqa: E402
from tests.e2e.harness import Driver, Sandbox, fresh_sandbox  # noqa: E402
from tests.e2e.model import ANSWER, TOOL_TRIGGER, AgentModel  # noqa: E402
from tests.support.scripted_llm import ScriptedModel  # noqa: E402

OUT = REPO / "tests" / "fixtures" / "agents"
E2E = REPO / "tests" / "e2e"
#: memloom's agent name -> its npm package (tests/e2e/package.json).
NPM = {
    "claude-code": "@anthropic-ai/claude-code",
    "codex": "@openai/codex",
    "gemini": "@google/gemini-cli",
    "copilot": "@github/copilot",
    "qwen": "@qwen-code/qwen-code",
    "opencode": "opencode-ai",
}
FACT = "The staging database for the shop listens on port 5433"
PINNED = "Always run make lint before committing to the shop"
PROMPTS = [
    "which port does the staging database of the shop listen on?",
    f"please {TOOL_TRIGGER} in the project folder",
    "REMEMBER: deploys of the shop go through ArgoCD on Fridays",
]
#: Words only memloom's injection brings into a session (never typed, never answered).
INJECTED = ["5433", PINNED]
#: What the tool call's output (``ls`` of the project) holds and nothing typed does.
TOOL_OUTPUT = "Makefile"
HOME_AS = "/home/e2e"
SANDBOX_AS = "/tmp/e2e"


def version(agent: str) -> str:
    if agent == "aider":
        pins = (E2E / "aider-requirements.txt").read_text()
        found = re.search(r"^aider-chat==(\S+)", pins, re.M)
        if found is None:
            raise SystemExit("aider-chat is not pinned in tests/e2e/aider-requirements.txt")
        return found.group(1)
    deps = json.loads((E2E / "package.json").read_text())["dependencies"]
    return str(deps[NPM[agent]])


def revision() -> str:
    """memloom's commit the fixtures were made with (``+changes``: and uncommitted work)."""
    import subprocess

    def git(*args: str) -> str:
        proc = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)
        return proc.stdout.strip()

    head = git("rev-parse", "--short=12", "HEAD") or "unknown"
    return head + ("+changes" if git("status", "--porcelain", "--", "src", "tests/e2e") else "")


def sanitize(data: bytes, sb: Sandbox, *, project_as: str | None = None) -> bytes:
    """The sandbox's temporary HOME, the repository path and the model's port, fixed;
    ``project_as``: the sandbox's project folder too (before HOME, which holds it), in
    paths and in the folder keys Claude Code and Qwen Code make of it."""
    text = data.decode("utf-8", "surrogateescape")
    if project_as is not None:
        project = str(sb.project)
        text = text.replace(project, project_as)
        text = text.replace(re.sub(r"[^A-Za-z0-9]", "-", project), project_as.replace("/", "-"))
    home = str(sb.home)
    text = text.replace(home, HOME_AS).replace(home.replace("/", "-"), HOME_AS.replace("/", "-"))
    # Qwen Code's project folder: every non-alphanumeric character of the cwd made "-"
    text = text.replace(re.sub(r"[^A-Za-z0-9]", "-", home), HOME_AS.replace("/", "-"))
    text = text.replace(str(sb.root), SANDBOX_AS)  # beside HOME: the other hook's log
    text = text.replace(str(REPO), "/repo")
    text = text.replace(f"127.0.0.1:{sb.model.port}", "127.0.0.1:PORT")
    return text.encode("utf-8", "surrogateescape")


def record(driver: Driver, sb: Sandbox) -> list[Path]:
    """Connect memloom, save the memories, run the prompts; the session files written."""
    driver.configure(sb)
    driver.seed_user_config(sb)  # as the suite does: the user's settings and another hook
    sb.memloom("connect", driver.name, "--all")
    sb.save(FACT)
    sb.save(PINNED, pin=True)
    for i, prompt in enumerate(PROMPTS):
        run = driver.run(sb, prompt, resume=i > 0)
        if run.returncode != 0 or ANSWER not in run.stdout:
            raise RuntimeError(
                f"{driver.name} run {i + 1} exited {run.returncode}: "
                f"{(run.stderr or run.stdout)[-800:]}"
            )
    files = driver.session_files(sb)
    if not files:
        raise RuntimeError(f"{driver.name} wrote no session file")
    return files


#: The tables of an OpenCode store a fixture keeps (the sessions, nothing of the account).
STORE_TABLES = ("session", "message", "part")


def copy_store(path: Path, target: Path, sb: Sandbox) -> list[str]:
    """An OpenCode store's sessions, sanitized value by value (byte edits would break the
    SQLite pages); the session ids."""
    src = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    dst = sqlite3.connect(target)
    try:
        for table in STORE_TABLES:
            query = "SELECT sql FROM sqlite_master WHERE name = ?"
            (sql,) = src.execute(query, (table,)).fetchone()
            dst.execute(sql)
            rows = src.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall()
            clean = [
                tuple(sanitize(v.encode(), sb).decode() if isinstance(v, str) else v for v in row)
                for row in rows
            ]
            if clean:
                marks = ", ".join("?" * len(clean[0]))
                dst.executemany(f"INSERT INTO {table} VALUES ({marks})", clean)
        indexes = "SELECT sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
        for (sql,) in src.execute(f"{indexes} AND tbl_name IN {STORE_TABLES}"):
            dst.execute(sql)  # OpenCode's own indexes: reads go the way they go on its store
        dst.commit()
        dst.execute("VACUUM")
        return [r[0] for r in dst.execute("SELECT id FROM session ORDER BY time_created")]
    finally:
        src.close()
        dst.close()


def write(driver: Driver, sb: Sandbox, files: list[Path], ver: str) -> Path:
    dest = OUT / driver.name / f"e2e-{ver}"
    if dest.exists():
        shutil.rmtree(dest)
    names = []
    sessions = []
    for path in files:
        rel = sanitize(str(path.relative_to(sb.home)).encode(), sb).decode()
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".db":
            sessions += [f"{rel}#{sid}" for sid in copy_store(path, target, sb)]
        else:
            target.write_bytes(sanitize(path.read_bytes(), sb))
        names.append(rel)
    doc = {
        "agent": driver.name,
        "version": ver,
        "made": time.strftime("%Y-%m-%d", time.gmtime()),
        "memloom": revision(),
        "files": names,
        **({"sessions": sessions} if sessions else {}),
        # OpenCode's plugin adds memloom's text to the system prompt, which it never stores.
        "injection_stored": driver.hooks and driver.name != "opencode",
        "prompts": PROMPTS,
        "answer": ANSWER,
        "injected": INJECTED,
        "tool_output": TOOL_OUTPUT,
        "tool_call": driver.name != "aider",  # Aider's edit format offers the model no tools
    }
    (dest / "fixture.json").write_text(json.dumps(doc, indent=1) + "\n")
    (dest / "README.md").write_text(readme(doc))
    return dest


def readme(doc: dict) -> str:
    files = "\n".join(f"- `{name}`" for name in doc["files"])
    prompts = "\n".join(f"{i}. {p}" for i, p in enumerate(doc["prompts"], 1))
    tools = (
        "The second prompt makes the scripted model call a tool (`ls` of the project), so the "
        "file holds a tool call and its result."
        if doc["tool_call"]
        else "Aider's edit format offers the model no tools: the file holds no tool call."
    )
    return f"""# {doc["agent"]} {doc["version"]}: real session files

Written by the real {doc["agent"]} {doc["version"]} (the pinned version) on {doc["made"]}
with memloom {doc["memloom"]} ("+changes": with uncommitted work in src/ or tests/e2e/),
by `python scripts/regen_agent_fixtures.py {doc["agent"]}`: the agent ran headless through
its end-to-end driver (tests/e2e/drivers) against the scripted model (tests/e2e/model.py)
in a temporary HOME, with memloom connected, a project memory ("{FACT}") and a pinned one
("{PINNED}") saved. memloom's hooks put them in front of the prompts in the agent's own
markup, which is what these files keep. The prompts, one session (resumed where the agent
can):

{prompts}

The model answers "{doc["answer"]}" each time. {tools}

Files (paths relative to the sandbox HOME):

{files}

Sanitized only so that a re-run differs where the agent's own ids and clocks do: the
sandbox HOME is `{HOME_AS}` (also in file names), the sandbox `{SANDBOX_AS}`, the
repository `/repo`, the model's port `PORT`. `fixture.json` says what
tests/agents/test_e2e_fixtures.py checks.
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("agents", nargs="*", help=f"default: all of {', '.join(DRIVERS)}")
    args = parser.parse_args(argv)
    names = args.agents or list(DRIVERS)
    unknown = [n for n in names if n not in DRIVERS]
    if unknown:
        parser.error(f"no driver for {', '.join(unknown)} (known: {', '.join(DRIVERS)})")
    failed = []
    with AgentModel() as model, tempfile.TemporaryDirectory(prefix="memloom-fx-") as tmp:
        llm = ScriptedModel()
        try:
            for name in names:
                driver = DRIVERS[name]
                started = time.perf_counter()
                sb = fresh_sandbox(Path(tmp) / name / "sb", model, llm)
                try:
                    if driver.install == "npm":
                        from tests.e2e import install

                        sb.bins["npm"] = install.npm_bin()
                    ver = version(name)
                    dest = write(driver, sb, record(driver, sb), ver)
                except Exception as exc:  # one agent failing leaves the others
                    failed.append(name)
                    print(f"{name}: FAILED: {exc}", file=sys.stderr)
                    continue
                took = time.perf_counter() - started
                print(f"{name} {ver}: {dest.relative_to(REPO)} ({took:.1f} s)")
        finally:
            llm.close()
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
