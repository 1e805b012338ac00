"""Write plugins/claude-code/, Claude Code's plugin, from the repository root's files.

    python scripts/claude_plugin.py           # rewrite the folder
    python scripts/claude_plugin.py --check   # exit 1, saying what differs, if it is stale

Claude Code loads ``hooks/hooks.json`` from a plugin's root, and the repository root's
is shared with Gemini CLI and Qwen Code, which read that path only; Claude Code's
``plugin validate --strict`` refuses Gemini's events in it (``BeforeAgent``,
``AfterAgent``). So Claude Code's plugin is a folder of its own, which the root's
``.claude-plugin/marketplace.json`` lists. Everything in it is made from the root's
files, which stay the one source: the manifest, ``.mcp.json``, the skills and the hook
wrapper as they are, and the shared hook file's Claude Code events, their commands
naming ``${CLAUDE_PLUGIN_ROOT}`` alone. No symlinks: Claude Code's validator does not
read through them, and an installed plugin is a copy of its folder only.
``tests/capture/test_plugin.py`` fails while the folder is stale (docs/plugins.md).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "plugins" / "claude-code"
#: The shared hook file's events the wrapper runs a memloom hook for in Claude Code
#: (its Stop ends a turn, not the session: nothing runs; BeforeAgent and AfterAgent
#: are Gemini CLI's).
EVENTS = ("SessionStart", "UserPromptSubmit", "SessionEnd", "PostToolUse")
#: A group matcher that differs in Claude Code: its read tool is ``Read`` (the shared
#: file's PostToolUse matches Qwen Code's ``read_file``).
MATCHERS = {"PostToolUse": "Read"}
SHARED_ROOT = "${CLAUDE_PLUGIN_ROOT}${extensionPath}"
#: Copied as they are.
COPIED = (
    ".claude-plugin/plugin.json",
    ".mcp.json",
    "hooks/memloom-hook",
    "skills/recall/SKILL.md",
    "skills/remember/SKILL.md",
    "skills/status/SKILL.md",
)
DESCRIPTION = (
    "memloom's hooks for Claude Code, made from the shared hooks/hooks.json by "
    "scripts/claude_plugin.py (do not edit: run it). No timeouts: the wrapper exits 0."
)


def hook_file() -> bytes:
    """The shared hook file's Claude Code events, their commands for this folder."""
    shared = json.loads((ROOT / "hooks" / "hooks.json").read_text())["hooks"]
    hooks = {}
    for event in EVENTS:
        groups = json.loads(json.dumps(shared[event]))
        for group in groups:
            if event in MATCHERS:
                group["matcher"] = MATCHERS[event]
            for handler in group["hooks"]:
                handler["command"] = handler["command"].replace(
                    SHARED_ROOT, "${CLAUDE_PLUGIN_ROOT}"
                )
        # One group per matcher: the shared file's groups for another agent's tool name
        # (Copilot CLI's Read, Qwen Code's read_file) are one group here.
        hooks[event] = [g for i, g in enumerate(groups) if g not in groups[:i]]
    doc = {"description": DESCRIPTION, "hooks": hooks}
    return (json.dumps(doc, indent=2) + "\n").encode()


def expected() -> dict[str, bytes]:
    """Every file of the folder (relative path -> bytes)."""
    files = {rel: (ROOT / rel).read_bytes() for rel in COPIED}
    files["hooks/hooks.json"] = hook_file()
    return files


def stale() -> list[str]:
    """The folder's files that differ from what the root makes, or are not made by it."""
    want = expected()
    have = (
        {p.relative_to(FOLDER).as_posix() for p in FOLDER.rglob("*") if p.is_file()}
        if FOLDER.is_dir()
        else set()
    )
    wrong = [rel for rel, data in want.items() if not _same(FOLDER / rel, data)]
    return sorted([*wrong, *(have - set(want))])


def _same(path: Path, data: bytes) -> bool:
    return path.is_file() and not path.is_symlink() and path.read_bytes() == data


def write() -> None:
    for rel, data in expected().items():
        path = FOLDER / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink():
            path.unlink()
        path.write_bytes(data)
        if rel == "hooks/memloom-hook":
            path.chmod(0o755)


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        found = stale()
        if found:
            print(
                f"{FOLDER.relative_to(ROOT)} is stale ({', '.join(found)}): "
                "run python scripts/claude_plugin.py"
            )
            return 1
        return 0
    if argv:
        print(__doc__)
        return 2
    write()
    print(f"wrote {FOLDER.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
