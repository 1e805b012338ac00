"""The agents' own ("native") memories in a sandbox: where each pinned agent keeps
them, how to switch them on, and the scripted calls that make the agent write them.

Verified against the pinned CLIs (../shared/reference/agents-native-memory.md):

* Claude Code: ``~/.claude/projects/<key>/memory/``, ``<key>`` the git root with every
  character outside ``[A-Za-z0-9]`` made ``-`` (cut at 200 characters plus a hash:
  :func:`project_key`). On by default; the model writes with ``Write``.
* Qwen Code: user ``~/.qwen/memories/``, project ``~/.qwen/projects/<key>/memory/``
  (same key, never cut). The e2e driver switches it off (its extraction pass costs a
  request per turn): :func:`enable` switches it on again. ``write_file`` needs
  ``--approval-mode yolo`` (the driver passes it) and refuses to overwrite a topic
  file the session has not read (:func:`edit` reads it first).
* Gemini CLI: ``~/.gemini/tmp/<short>/memory/``, ``<short>`` the cwd's basename
  slugified (:func:`gemini_short_name`; ``-1``, ``-2``… on a collision, recorded in
  ``~/.gemini/projects.json`` and ``<short>/.project_root``). ``write_file`` only
  with ``--approval-mode yolo``: :data:`GEMINI`.
* Codex: ``~/.codex/memories_v2/`` with ``[features] memories = true``;
  ``[memories] dedicated_tools = true`` gives the model ``add_ad_hoc_note``. Its
  consolidation sub-agent (at start-up, beside the turn, with the folder as cwd) can
  be answered with :func:`codex_consolidation`, which writes ``memory_summary.md``
  through the CLI's own ``apply_patch``: the only file Codex injects next session.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from tests.e2e.drivers import DRIVERS
from tests.e2e.drivers.gemini import GeminiCli
from tests.e2e.harness import Driver, Run, Sandbox
from tests.e2e.model import ANSWER, ToolCall

#: Gemini CLI with ``--approval-mode yolo``: headless, it offers ``write_file`` only then.
GEMINI = GeminiCli(yolo=True)
CLAUDE = DRIVERS["claude-code"]
QWEN = DRIVERS["qwen"]
CODEX = DRIVERS["codex"]
#: The agents whose native memory a sandbox can hold, by memloom's name.
NATIVE: dict[str, Driver] = {"claude-code": CLAUDE, "qwen": QWEN, "gemini": GEMINI, "codex": CODEX}
#: What Codex's memory consolidation request says (the ``when`` of its script).
CODEX_CONSOLIDATION = "Consolidate the supplied rollout summaries"
#: Seconds a Codex turn is held so that the consolidation beside it can finish (exec
#: ends the process, and the consolidation with it, once the turn is answered).
CODEX_HOLD_S = 5.0


def project_key(path: str | Path) -> str:
    """Claude Code's (and Qwen Code's) folder name for a project: every character
    outside ``[A-Za-z0-9]`` made ``-``. Claude Code cuts a key longer than 200
    characters and adds ``-<base-36 hash>`` (a JS string hash: not reproduced here,
    such paths are refused); Qwen never cuts."""
    key = re.sub(r"[^A-Za-z0-9]", "-", str(path))
    if len(key) > 200:
        raise ValueError(f"{path}: Claude Code would cut this key and add a hash")
    return key


def gemini_short_name(path: str | Path) -> str:
    """Gemini CLI's short name for a new project (no collision): the basename,
    lower-cased, every run of characters outside ``[a-z0-9]`` one ``-``, trimmed."""
    slug = re.sub(r"-+", "-", re.sub(r"[^a-z0-9]", "-", Path(path).name.lower())).strip("-")
    return slug or "project"


def git_root(sb: Sandbox) -> Path:
    """The project as a git repository (Claude Code and Qwen key it by its git root)."""
    if not (sb.project / ".git").exists():
        subprocess.run(["git", "init", "-q", str(sb.project)], check=True)
    return sb.project


def claude_memory_dir(sb: Sandbox) -> Path:
    return sb.home / ".claude" / "projects" / project_key(git_root(sb)) / "memory"


def qwen_project_memory_dir(sb: Sandbox) -> Path:
    return sb.home / ".qwen" / "projects" / project_key(git_root(sb)) / "memory"


def qwen_user_memory_dir(sb: Sandbox) -> Path:
    return sb.home / ".qwen" / "memories"


def gemini_memory_dir(sb: Sandbox) -> Path:
    return sb.home / ".gemini" / "tmp" / gemini_short_name(sb.project) / "memory"


def codex_memory_dir(sb: Sandbox) -> Path:
    return sb.home / ".codex" / "memories_v2"


def memory_dirs(name: str, sb: Sandbox) -> list[Path]:
    """The native memory folder(s) of an agent in this sandbox."""
    return {
        "claude-code": lambda: [claude_memory_dir(sb)],
        "qwen": lambda: [qwen_project_memory_dir(sb), qwen_user_memory_dir(sb)],
        "gemini": lambda: [gemini_memory_dir(sb)],
        "codex": lambda: [codex_memory_dir(sb)],
    }[name]()


def enable(name: str, sb: Sandbox) -> Driver:
    """Configure the agent as its e2e driver does, with its native memory on (and the
    project a git repository); the driver to run it with."""
    driver = NATIVE[name]
    git_root(sb)
    driver.configure(sb)
    driver.seed_user_config(sb)
    if name == "qwen":  # the driver's settings switch the managed auto-memory off
        path = QWEN.settings(sb)
        text = path.read_text()
        on = text.replace('"enableManagedAutoMemory": false', '"enableManagedAutoMemory": true')
        assert on != text, "the Qwen driver's settings no longer name enableManagedAutoMemory"
        path.write_text(on)
    elif name == "codex":
        CODEX.config(sb).write_text(
            CODEX.provider(sb)
            + "\n[features]\nplugins = false\nmemories = true\n"
            + "\n[memories]\ndedicated_tools = true\n"
        )
    return driver


def edit(path: str | Path, content: str, *, read_first: bool = True) -> list[ToolCall]:
    """The calls that rewrite a memory file: read it, then write it whole (Qwen's
    ``write_file`` refuses to overwrite a file the session has not read; Claude Code
    and Gemini CLI overwrite a memory file unread, so ``read_first=False`` is fine
    for them)."""
    return (
        [ToolCall.read(path), ToolCall.write(path, content)]
        if read_first
        else [ToolCall.write(path, content)]
    )


def delete(path: str | Path) -> ToolCall:
    """The call that removes a memory file: the agent's shell, ``rm``. Claude Code
    asks for approval first (``-p``: refused) unless its settings allow it:
    :func:`allow_claude_rm`. Qwen and Gemini run it under ``--approval-mode yolo``.
    Codex has no way: ad hoc notes are append-only ("Never delete a note file")."""
    return ToolCall.shell(f"rm {path}")


def allow_claude_rm(sb: Sandbox) -> None:
    """Let Claude Code's ``Bash`` remove files in its memory folder without asking."""
    path = CLAUDE.settings(sb)  # type: ignore[attr-defined]
    doc = json.loads(path.read_text())
    allow = doc.setdefault("permissions", {}).setdefault("allow", [])
    rule = f"Bash(rm {claude_memory_dir(sb)}/*)"
    if rule not in allow:
        allow.append(rule)
    path.write_text(json.dumps(doc, indent=4) + "\n")


def codex_note_name(slug: str, stamp: str = "2026-12-07T10-00-00") -> str:
    """A file name Codex accepts for an ad hoc note: ``YYYY-MM-DDTHH-MM-SS-<slug>.md``
    (slug ``[a-z0-9][a-z0-9-]{0,79}``, the whole at most 128 bytes)."""
    name = f"{stamp}-{slug}.md"
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-[a-z0-9][a-z0-9-]{0,79}\.md", name):
        raise ValueError(f"Codex refuses the note file name {name!r}")
    return name


def codex_consolidation(summary: str) -> ToolCall:
    """The answer to Codex's consolidation request: its code-mode ``exec`` running the
    CLI's ``apply_patch``, which writes ``memory_summary.md`` (cwd: the memories
    folder). Codex checks the result: a summary without ``v1`` and the four sections
    (``## User Profile``, ``## User preferences``, ``## General Tips``, ``## What's in
    Memory``) fails as "invalid v2 memory summary" and is not kept."""
    lines = "".join(f"+{line}\n" for line in summary.splitlines())
    patch = f"*** Begin Patch\n*** Add File: memory_summary.md\n{lines}*** End Patch\n"
    return ToolCall.code(f"const r = await tools.apply_patch({json.dumps(patch)});\ntext(r);\n")


def ok(run: Run) -> Run:
    """The run, once it exited 0 with the scripted answer."""
    assert run.returncode == 0, run.stderr[-1500:]
    assert ANSWER in run.stdout, run.stdout[-800:]
    return run
