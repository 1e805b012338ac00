"""Regenerate the agents' own ("native") memory folders used as fixtures.

    python scripts/regen_native_fixtures.py                 # claude-code qwen gemini codex
    python scripts/regen_native_fixtures.py claude-code     # some

Each pinned agent (tests/e2e/package.json) runs headless through its end-to-end
driver against the scripted model (tests/e2e/model.py), in a fresh sandbox HOME
whose project is a git repository, with its native memory on (tests/e2e/native.py).
The scripted model makes the agent write memories with the agent's own tools, as
the agent's system prompt tells the model to (:data:`PLANS`: Claude Code's ``Write``,
Qwen Code's and Gemini CLI's ``write_file``, Codex's ``add_ad_hoc_note`` and, in its
memory consolidation sub-agent, ``apply_patch``); a next session then loads them.

The memory folders are copied to ``tests/fixtures/native/<agent>/home/`` under their
path relative to the sandbox HOME (Codex's ``.git`` folders left out), with the files
that tie a folder to its project (Gemini's ``projects.json`` and ``.project_root``
markers, Qwen's ``meta.json``) and, for Claude Code and Qwen Code, the transcript of
the session that wrote the memories (its ``cwd`` maps the folder key back to the
project). Sanitized as scripts/regen_agent_fixtures.py does, the project folder
becoming ``/repo`` (``-repo`` in the folder keys), the HOME ``/home/e2e``.
``fixture.json`` says, per memory, what the model wrote, its type and what the CLI
changed; ``tests/fixtures/native/README.md`` is rewritten too.

An agent that fails is reported and left out (its earlier fixtures stay); the exit
status is 1 when any did.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from regen_agent_fixtures import HOME_AS, revision, sanitize, version  # noqa: E402
from tests.e2e import install, native  # noqa: E402
from tests.e2e.harness import Sandbox  # noqa: E402
from tests.e2e.model import ANSWER, AgentModel, ToolCall  # noqa: E402
from tests.support.scripted_llm import ScriptedModel  # noqa: E402

OUT = REPO / "tests" / "fixtures" / "native"
PROJECT_AS = "/repo"
#: The sandbox's project folder: named as the sanitized one, so that Gemini CLI's short
#: name (the basename) agrees with it.
PROJECT_NAME = "repo"
AGENTS = ("claude-code", "qwen", "gemini", "codex")


class RepoSandbox(Sandbox):
    """A sandbox whose project folder is ``~/repo`` (a git repository)."""

    @property
    def project(self) -> Path:
        return self.home / PROJECT_NAME


@dataclass
class Memory:
    """One memory file the model writes: where (a path under the sandbox HOME), what."""

    path: Path
    text: str
    type: str | None = None  # the frontmatter type, or None (Gemini, Codex: none)
    index: bool = False  # an index (MEMORY.md), not a memory


@dataclass
class Session:
    """One headless prompt and the writes the model makes in it (one per turn)."""

    prompt: str
    writes: list[Memory] = field(default_factory=list)
    extra: list[ToolCall] = field(default_factory=list)  # side scripts (not writes)


def claude_plan(sb: Sandbox) -> list[Session]:
    mem = native.claude_memory_dir(sb)

    def doc(name: str, description: str, kind: str, body: str) -> str:
        meta = f"---\nname: {name}\ndescription: {description}\nmetadata:\n  type: {kind}\n---\n"
        return f"{meta}\n{body}"

    pnpm = Memory(
        mem / "prefer-pnpm.md",
        doc(
            "prefer-pnpm",
            "The user wants pnpm, never npm, for installs and scripts in this repo",
            "feedback",
            "Use pnpm for every install and script in this repo; never npm.\n"
            "**Why:** the user said npm rewrites the pnpm lockfile and breaks CI.\n"
            "**How to apply:** run `pnpm install` / `pnpm run <script>`; if a doc says "
            "`npm`, translate it. See [[staging-deploys]].\n",
        ),
        "feedback",
    )
    deploys = Memory(
        mem / "staging-deploys.md",
        doc(
            "staging-deploys",
            "Staging deploys of the shop go through ArgoCD, on Fridays only (since 2026-12-07)",
            "project",
            "Staging deploys go through ArgoCD and happen on Fridays only, from 2026-12-07 on.\n"
            "**Why:** the QA team tests staging Monday to Thursday and needs it stable.\n"
            "**How to apply:** never suggest deploying to staging before Friday; use "
            "the ArgoCD app `shop-staging`, not kubectl. Runbook: [[deploy-runbook]].\n",
        ),
        "project",
    )
    runbook = Memory(
        mem / "deploy-runbook.md",
        doc(
            "deploy-runbook",
            "Where the deploy runbook and the ArgoCD dashboard of the shop are",
            "reference",
            "The deploy runbook is https://wiki.example.com/shop/deploys and the ArgoCD "
            "dashboard is https://argocd.example.com/applications/shop-staging.\n",
        ),
        "reference",
    )
    index = [
        "- [Prefer pnpm](prefer-pnpm.md) — pnpm, never npm, in this repo",
        "- [Staging deploys](staging-deploys.md) — ArgoCD, Fridays only",
        "- [Deploy runbook](deploy-runbook.md) — wiki page and ArgoCD dashboard",
    ]
    return [
        Session(
            "We use pnpm in this repo, never npm: npm rewrites the lockfile and breaks CI. "
            "Remember that.",
            [pnpm, Memory(mem / "MEMORY.md", index[0] + "\n", index=True)],
        ),
        Session(
            "Remember: from today staging deploys go through ArgoCD on Fridays only, QA "
            "needs staging stable during the week. The runbook is "
            "https://wiki.example.com/shop/deploys.",
            [deploys, runbook, Memory(mem / "MEMORY.md", "\n".join(index) + "\n", index=True)],
        ),
    ]


def qwen_plan(sb: Sandbox) -> list[Session]:
    proj = native.qwen_project_memory_dir(sb)
    user = native.qwen_user_memory_dir(sb)

    def doc(name: str, description: str, kind: str, body: str) -> str:
        return f"---\nname: {name}\ndescription: {description}\ntype: {kind}\n---\n\n{body}"

    deploys = Memory(
        proj / "staging-deploys.md",
        doc(
            "staging deploys",
            "Staging deploys of the shop go through ArgoCD, on Fridays only (since 2026-12-07)",
            "project",
            "Staging deploys go through ArgoCD and happen on Fridays only, from 2026-12-07 on.\n"
            "**Why:** the QA team tests staging Monday to Thursday.\n"
            "**How to apply:** never suggest a staging deploy before Friday.\n",
        ),
        "project",
    )
    pnpm = Memory(
        proj / "feedback" / "pnpm.md",
        doc(
            "prefer pnpm",
            "Use pnpm, never npm, in this repo",
            "feedback",
            "Use pnpm for every install and script in this repo; never npm.\n"
            "**Why:** npm rewrites the pnpm lockfile and breaks CI.\n"
            "**How to apply:** `pnpm install`, `pnpm run <script>`.\n",
        ),
        "feedback",
    )
    role = Memory(
        user / "user-role.md",
        doc(
            "user role",
            "The user is a backend developer who reviews in the terminal",
            "user",
            "The user is a backend developer (Python, Go) who reads diffs in the terminal; "
            "keep answers short and show commands.\n",
        ),
        "user",
    )
    proj_index = (
        "- [staging deploys](staging-deploys.md) — ArgoCD, Fridays only\n"
        "- [prefer pnpm](feedback/pnpm.md) — use pnpm not npm\n"
    )
    user_index = "- [user role](user-role.md) — backend developer, terminal reviews\n"
    return [
        Session(
            "Remember: we use pnpm in this repo, never npm, and staging deploys go through "
            "ArgoCD on Fridays only. Also, I'm a backend developer who reviews in the terminal.",
            [
                deploys,
                pnpm,
                Memory(proj / "MEMORY.md", proj_index, index=True),
                role,
                Memory(user / "MEMORY.md", user_index, index=True),
            ],
        ),
    ]


def gemini_plan(sb: Sandbox) -> list[Session]:
    mem = native.gemini_memory_dir(sb)
    index = Memory(
        mem / "MEMORY.md",
        "# Project Memory\n\n"
        "- The user prefers pnpm over npm in this repo.\n"
        "- Staging deploys go through ArgoCD on Fridays only; details in "
        "[deploys.md](deploys.md).\n",
        index=True,
    )
    note = Memory(
        mem / "deploys.md",
        "# Staging deploys\n\n"
        "- Tool: ArgoCD, application `shop-staging`.\n"
        "- When: Fridays only (since 2026-12-07), QA needs staging stable during the week.\n"
        "- Runbook: https://wiki.example.com/shop/deploys\n",
    )
    return [
        Session(
            "Remember: we use pnpm in this repo, not npm, and staging deploys go through "
            "ArgoCD on Fridays only (runbook: https://wiki.example.com/shop/deploys).",
            [index, note],
        )
    ]


#: Codex's memory summary, written by its consolidation pass (the format its prompt asks).
CODEX_SUMMARY = """\
v1
## User Profile
A developer working on the shop repository (/repo) from the terminal.

## User preferences
- Uses pnpm, never npm, in the shop repository [ad-hoc note]

## General Tips
- Staging deploys of the shop go through ArgoCD on Fridays only [ad-hoc note]

## What's in Memory
### /repo
#### 2026-12-07
- extensions/ad_hoc/notes/2026-12-07T10-00-00-prefer-pnpm.md — the shop's package manager
- extensions/ad_hoc/notes/2026-12-07T10-00-01-staging-deploys.md — when and how staging is deployed
"""


def codex_plan(sb: Sandbox) -> list[Session]:
    notes = native.codex_memory_dir(sb) / "extensions" / "ad_hoc" / "notes"
    pnpm = native.codex_note_name("prefer-pnpm", "2026-12-07T10-00-00")
    deploys = native.codex_note_name("staging-deploys", "2026-12-07T10-00-01")
    return [
        Session(
            "Remember: we use pnpm in the shop repo, never npm, and staging deploys go "
            "through ArgoCD on Fridays only.",
            [
                Memory(notes / pnpm, "The user uses pnpm, never npm, in the shop repo (/repo).\n"),
                Memory(
                    notes / deploys,
                    "Staging deploys of the shop go through ArgoCD, on Fridays only.\n",
                ),
            ],
            [native.codex_consolidation(CODEX_SUMMARY)],
        )
    ]


PLANS = {"claude-code": claude_plan, "qwen": qwen_plan, "gemini": gemini_plan, "codex": codex_plan}
#: The prompt of the next session, which loads what the first ones wrote.
NEXT = "Which package manager do we use here, and when can I deploy to staging?"


def calls(name: str, writes: list[Memory]) -> list[ToolCall]:
    if name == "codex":
        return [ToolCall.ad_hoc_note(w.path.name, w.text) for w in writes]
    return [ToolCall.write(w.path, w.text) for w in writes]


def record(name: str, sb: Sandbox, model: AgentModel) -> tuple[list[Memory], dict[str, Any]]:
    """Run the agent's sessions; the memories written and what the next session was sent."""
    driver = native.enable(name, sb)
    written: list[Memory] = []
    for session in PLANS[name](sb):
        model.clear_scripts()
        hold = native.CODEX_HOLD_S if name == "codex" else 0.0
        for extra in session.extra:
            model.script(extra, when=native.CODEX_CONSOLIDATION)
        model.script(*calls(name, session.writes), when=session.prompt, hold=hold)
        run = driver.run(sb, session.prompt)
        if run.returncode != 0 or ANSWER not in run.stdout:
            tail = (run.stderr or run.stdout)[-800:]
            raise RuntimeError(f"{name} exited {run.returncode}: {tail}")
        for memory in session.writes:
            if not memory.path.is_file():
                raise RuntimeError(f"{name} did not write {memory.path}")
        written += session.writes
    model.clear_scripts()
    if name == "qwen":  # its recall side request picks the feedback memory
        pick = native.qwen_project_memory_dir(sb) / "feedback" / "pnpm.md"
        model.script(ToolCall.named("respond_in_schema", selected_memories=[str(pick)]), when=NEXT)
    run = driver.run(sb, NEXT)
    model.clear_scripts()
    if run.returncode != 0:
        raise RuntimeError(f"{name} next session exited {run.returncode}: {run.stderr[-800:]}")
    return written, {"prompt": NEXT, "requests": len(run.requests), "sent": run.sent}


def frontmatter(text: str) -> dict[str, Any]:
    """A memory file's frontmatter, flat (``metadata.type``), or {} without one."""
    found = re.match(r"---\n(.*?)\n---\n", text, re.S)
    out: dict[str, Any] = {}
    parent = None
    for line in found.group(1).splitlines() if found else []:
        key, _, value = line.strip().partition(":")
        if line.startswith(" ") and parent:
            out[f"{parent}.{key}"] = value.strip()
        elif value.strip():
            out[key] = value.strip()
            parent = None
        else:
            parent = key
    return out


def changes(sent: str, kept: str) -> dict[str, Any] | None:
    """What the CLI changed in the file the model wrote (None: kept as written)."""
    if sent == kept:
        return None
    before, after = frontmatter(sent), frontmatter(kept)
    added = {k: v for k, v in after.items() if k not in before}
    changed = {k: [before[k], after[k]] for k in before if k in after and before[k] != after[k]}
    body = sent.split("\n---\n", 1)[-1] == kept.split("\n---\n", 1)[-1]
    return {
        "frontmatter_added": added,
        "frontmatter_changed": changed,
        "frontmatter_removed": [k for k in before if k not in after],
        "body_unchanged": body,
    }


def extra_files(name: str, sb: Sandbox) -> list[Path]:
    """The files that tie a memory folder to its project, and a session transcript."""
    home = sb.home
    if name == "gemini":
        short = native.gemini_short_name(sb.project)
        files = [home / ".gemini" / "projects.json"]
        files += [home / ".gemini" / d / short / ".project_root" for d in ("tmp", "history")]
        return [f for f in files if f.is_file()]
    if name == "claude-code":
        folder = native.claude_memory_dir(sb).parent
        return sorted(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime)[:1]
    if name == "qwen":
        folder = native.qwen_project_memory_dir(sb).parent
        chats = sorted((folder / "chats").glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
        return [f for f in (folder / "meta.json",) if f.is_file()] + chats[:1]
    return []


def write(name: str, sb: Sandbox, written: list[Memory], nxt: dict[str, Any]) -> Path:
    dest = OUT / name
    if dest.exists():
        shutil.rmtree(dest)
    clean = lambda p: sanitize(str(p).encode(), sb, project_as=PROJECT_AS).decode()  # noqa: E731
    rel = lambda p: clean(p.relative_to(sb.home))  # noqa: E731
    files: list[str] = []
    dirs = native.memory_dirs(name, sb)
    sources = [f for d in dirs if d.is_dir() for f in sorted(d.rglob("*")) if f.is_file()]
    sources = [f for f in sources if ".git" not in f.relative_to(sb.home).parts]
    for path in sources + extra_files(name, sb):
        target = dest / "home" / rel(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(sanitize(path.read_bytes(), sb, project_as=PROJECT_AS))
        files.append(f"home/{rel(path)}")
    memories = []
    for memory in written:
        kept = memory.path.read_text()
        sent = sanitize(memory.text.encode(), sb, project_as=PROJECT_AS).decode()
        kept = sanitize(kept.encode(), sb, project_as=PROJECT_AS).decode()
        memories.append(
            {
                "path": f"home/{rel(memory.path)}",
                "index": memory.index,
                "type": memory.type,
                "written": sent,
                "changed_by_cli": changes(sent, kept),
            }
        )
    summary = native.codex_memory_dir(sb) / "memory_summary.md"
    doc = {
        "agent": name,
        "version": version(name),
        "made": time.strftime("%Y-%m-%d", time.gmtime()),
        "memloom": revision(),
        "home": HOME_AS,
        "project": PROJECT_AS,
        "memory_dirs": [rel(d) for d in dirs],
        "files": files,
        "memories": memories,
        **(
            {
                "memory_summary": {
                    "path": f"home/{rel(summary)}",
                    "written_by": "the CLI's consolidation sub-agent (apply_patch), "
                    "answered by the scripted model",
                    "text": CODEX_SUMMARY,
                }
            }
            if name == "codex" and summary.is_file()
            else {}
        ),
        "next_session": {
            "prompt": nxt["prompt"],
            "requests": nxt["requests"],
            "sent": sent_back(name, nxt["sent"], written),
        },
    }
    (dest / "fixture.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    return dest


def sent_back(name: str, sent: str, written: list[Memory]) -> dict[str, bool]:
    """Which written texts (by their first body line) any request of the next session
    sent the model (side requests included: Qwen's recall and extraction)."""
    out = {}
    for memory in written:
        body = memory.text.split("\n---\n", 1)[-1].strip().splitlines()
        line = next((b for b in body if b.strip() and not b.startswith("#")), "")
        out[memory.path.name if not memory.index else f"{memory.path.parent.name}/MEMORY.md"] = (
            json.dumps(line, ensure_ascii=False)[1:-1] in sent
        )
    if name == "codex":
        out["memory_summary.md"] = "MEMORY_SUMMARY BEGINS" in sent
    return out


README = """\
# The agents' own memory folders, written by the real CLIs

Produced by `python scripts/regen_native_fixtures.py` ({took}): each pinned CLI ran
headless in a fresh sandbox HOME, its project a git repository, against the scripted
model of tests/e2e/model.py, which made it write memories with its own tools, as its
system prompt tells a model to (the calls are `PLANS` in the script); a next session
then loaded them. The folders are copied here under their path relative to that HOME:

{agents}

Sanitized as the session fixtures are (scripts/regen_agent_fixtures.py): the HOME is
`/home/e2e`, the project `/repo` (so Claude Code's and Qwen Code's folder key is
`-repo`, Gemini CLI's short name `repo`), the model's port `PORT`. Nothing else is
edited: ids and clocks are the CLIs'. Codex's `.git` folders in `memories_v2` are left
out. `fixture.json` (per agent) lists the files, the memory folders, and per memory the
text the model wrote, its type and what the CLI changed in it, and what the next
session sent the model.

Licence: these files were produced here by the pinned CLIs against a scripted model;
their text is ours (memloom's), not any vendor's.
"""


def readme(took: float) -> str:
    rows = []
    for name in AGENTS:
        path = OUT / name / "fixture.json"
        if path.is_file():
            doc = json.loads(path.read_text())
            dirs = ", ".join(f"`~/{d}`" for d in doc["memory_dirs"])
            rows.append(f"- `{name}/`: {name} {doc['version']} ({doc['made']}): {dirs}")
    return README.format(agents="\n".join(rows), took=f"last run {took:.0f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("agents", nargs="*", help=f"default: all of {', '.join(AGENTS)}")
    args = parser.parse_args(argv)
    names = args.agents or list(AGENTS)
    unknown = [n for n in names if n not in AGENTS]
    if unknown:
        parser.error(f"no native memory for {', '.join(unknown)} (known: {', '.join(AGENTS)})")
    failed = []
    begun = time.perf_counter()
    with AgentModel() as model, tempfile.TemporaryDirectory(prefix="memloom-nfx-") as tmp:
        llm = ScriptedModel()
        try:
            for name in names:
                started = time.perf_counter()
                sb = RepoSandbox(Path(tmp) / name / "sb", model, llm)
                sb.project.mkdir(parents=True)
                (sb.project / "Makefile").write_text("check:\n\tpytest\n")
                sb.bins["npm"] = install.npm_bin()
                try:
                    written, nxt = record(name, sb, model)
                    dest = write(name, sb, written, nxt)
                except Exception as exc:  # one agent failing leaves the others
                    failed.append(name)
                    print(f"{name}: FAILED: {exc}", file=sys.stderr)
                    continue
                took = time.perf_counter() - started
                print(f"{name} {version(name)}: {dest.relative_to(REPO)} ({took:.1f} s)")
        finally:
            llm.close()
    (OUT / "README.md").write_text(readme(time.perf_counter() - begun))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
