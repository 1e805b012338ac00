"""memloom as each agent's plugin: the manifests, the fail-open hook wrapper, and the
plugin's hooks standing down where ``memloom connect``'s hooks are installed.

The wrapper (``hooks/memloom-hook``) is run as the agents run it, ``sh <path> <Event>``,
with a PATH that has no memloom, a memloom too old to know ``--plugin``, or a stand-in
that records how it was called; the Python side runs as a real ``memloom hook``
process. The real agents installing the plugin are tests/e2e/test_plugins.py.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import memloom
from memloom.capture.plugin import defers, older_than, plugin_installed
from memloom.capture.scope import Scope, load_scope, save_scope
from tests.capture.test_agent_hooks import hook
from tests.support.seed import remember

ROOT = Path(__file__).resolve().parents[2]
WRAPPER = ROOT / "hooks" / "memloom-hook"
CLAUDE_PLUGIN = "plugins/claude-code"
MANIFESTS = [
    ".claude-plugin/plugin.json",
    f"{CLAUDE_PLUGIN}/.claude-plugin/plugin.json",
    ".codex-plugin/plugin.json",
    "gemini-extension.json",
    "qwen-extension.json",
    ".cursor-plugin/plugin.json",
]
MEMLOOM = [sys.executable, "-m", "memloom._entry"]
SESSION = "3f1c2a9e-0000-4000-8000-00000000beef"


def load(rel: str) -> dict:
    return json.loads((ROOT / rel).read_text())


def wrapper_version() -> str:
    found = re.search(r"^PLUGIN_VERSION=(\S+)$", WRAPPER.read_text(), re.M)
    assert found, "hooks/memloom-hook sets no PLUGIN_VERSION"
    return found.group(1)


# --------------------------------------------------------------------------- manifests


# Every manifest, marketplace entry and hook wrapper carries memloom's version:
# tests/test_release.py (it finds them all).


def test_every_manifest_names_the_plugin_memloom():
    for rel in MANIFESTS:
        assert load(rel)["name"] == "memloom", rel
    claude = load(".claude-plugin/marketplace.json")
    assert [p["name"] for p in claude["plugins"]] == ["memloom"]
    assert claude["plugins"][0]["source"] == f"./{CLAUDE_PLUGIN}"
    codex = load(".agents/plugins/marketplace.json")
    assert [p["source"] for p in codex["plugins"]] == [{"source": "local", "path": "./"}]


@pytest.mark.parametrize(
    "rel", ["hooks/hooks.json", "hooks/codex.json", f"{CLAUDE_PLUGIN}/hooks/hooks.json"]
)
def test_hook_files_run_the_wrapper_and_set_no_timeout(rel):
    """Claude Code and Codex read ``timeout`` as seconds, Gemini as milliseconds: one
    shared file can set none (nor its copies)."""
    doc = load(rel)
    handlers = [h for groups in doc["hooks"].values() for g in groups for h in g["hooks"]]
    assert handlers
    for h in handlers:
        assert "timeout" not in h
        assert h["type"] == "command" and "/hooks/memloom-hook" in h["command"]
    for event, groups in doc["hooks"].items():
        assert all(h["command"].split()[2] == event for g in groups for h in g["hooks"])


def test_codex_names_its_own_hook_file_and_the_agent():
    """Codex reads the file its manifest names (not hooks/hooks.json), so its commands
    say ``codex``; the shared file leaves the agent to the wrapper."""
    assert load(".codex-plugin/plugin.json")["hooks"] == "./hooks/codex.json"
    codex = load("hooks/codex.json")["hooks"]
    assert all(g["hooks"][0]["command"].endswith(" codex") for gs in codex.values() for g in gs)
    from memloom.agents.codex.hooks import EVENTS, MATCHERS

    assert set(codex) == set(EVENTS)  # what `memloom connect codex` installs
    for event, groups in codex.items():  # the read hook after a shell command only
        assert [g.get("matcher") for g in groups] == [MATCHERS.get(event)]
    shared = load("hooks/hooks.json")["hooks"]
    assert set(shared) == {
        "SessionStart",
        "UserPromptSubmit",
        "SessionEnd",
        "Stop",
        "BeforeAgent",
        "AfterAgent",
        "PreCompress",
        "PostToolUse",
        "AfterTool",
    }


def test_claude_code_s_plugin_is_made_from_the_shared_files():
    """Claude Code loads hooks/hooks.json from its plugin's root, and the root's holds
    Gemini's events, which its strict validation refuses: its plugin is
    plugins/claude-code (the marketplace's source), made from the root's files by
    scripts/claude_plugin.py, with the shared file's Claude Code events."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "claude_plugin.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    own = load(f"{CLAUDE_PLUGIN}/hooks/hooks.json")["hooks"]
    shared = load("hooks/hooks.json")["hooks"]
    assert set(own) == {"SessionStart", "UserPromptSubmit", "SessionEnd", "PostToolUse"}
    # Claude Code's read tool is Read; the shared file's PostToolUse matches Qwen's
    # read_file, and Copilot CLI's view, which its PascalCase hooks name Read.
    assert [g["matcher"] for g in own["PostToolUse"]] == ["Read"]
    assert [g["matcher"] for g in shared["PostToolUse"]] == ["read_file", "Read"]
    assert [g["matcher"] for g in shared["AfterTool"]] == ["read_file"]
    for event, groups in own.items():  # the shared file's handlers, each once
        shared_commands = [
            h["command"].replace("${extensionPath}", "") for g in shared[event] for h in g["hooks"]
        ]
        assert [h["command"] for g in groups for h in g["hooks"]] == list(
            dict.fromkeys(shared_commands)
        )


def claude_binary() -> Path | None:
    """The pinned Claude Code of the end-to-end suite (``.ci/run`` installs it before the
    tests), else one on PATH."""
    from tests.e2e.install import ROOT as E2E_ROOT

    pinned = E2E_ROOT / "npm" / "node_modules" / ".bin" / "claude"
    if pinned.exists():
        return pinned
    found = shutil.which("claude")
    return Path(found) if found else None


def test_claude_code_validates_its_plugin_strictly(tmp_path):
    """``claude plugin validate --strict plugins/claude-code`` passes: no warning at all."""
    claude = claude_binary()
    if claude is None:
        pytest.skip("no claude binary: python -m tests.e2e.install installs the pinned one")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "CI": "true"}
    proc = subprocess.run(
        [str(claude), "plugin", "validate", "--strict", str(ROOT / CLAUDE_PLUGIN)],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-1000:]
    assert "Validation passed" in proc.stdout


def test_qwen_reads_its_manifest_and_the_shared_hook_file():
    """Qwen Code reads qwen-extension.json (``qwen extensions link`` needs it; without
    it ``install`` converts the Gemini manifest). It names no ``hooks``: Qwen then
    reads hooks/hooks.json and puts the extension's folder for ``${CLAUDE_PLUGIN_ROOT}``
    in its commands (Gemini's ``${extensionPath}`` is an unset shell variable, empty).
    It says what the Gemini manifest says, as Gemini reads it."""
    qwen = load("qwen-extension.json")
    assert "hooks" not in qwen and "hooks" not in load("gemini-extension.json")
    assert qwen == load("gemini-extension.json")
    for groups in load("hooks/hooks.json")["hooks"].values():
        for g in groups:
            command = g["hooks"][0]["command"]
            assert command.startswith('sh "${CLAUDE_PLUGIN_ROOT}${extensionPath}/hooks/')


def test_the_cursor_hook_file_installs_what_connect_cursor_does():
    """``.cursor-plugin/plugin.json`` names hooks/cursor.json (an explicit path: Cursor
    then does not also read hooks/hooks.json). Its events are the ones
    ``memloom connect cursor`` installs, each naming the agent for the wrapper, in
    Cursor's ``{"version": 1, "hooks": {event: [{"command"}]}}`` with no timeout."""
    from memloom.agents.cursor.hooks import NOTIFY_EVENTS, READ_EVENT, READ_MATCHER, START_EVENT

    assert load(".cursor-plugin/plugin.json")["hooks"] == "./hooks/cursor.json"
    doc = load("hooks/cursor.json")
    assert set(doc) == {"version", "hooks"} and doc["version"] == 1
    assert set(doc["hooks"]) == {START_EVENT, READ_EVENT, *NOTIFY_EVENTS}
    assert doc["hooks"][READ_EVENT][0]["matcher"] == READ_MATCHER  # after a Read only
    for event, entries in doc["hooks"].items():
        assert len(entries) == 1 and set(entries[0]) - {"matcher"} == {"command"}
        assert entries[0]["command"] == (
            f'sh "${{CURSOR_PLUGIN_ROOT}}/hooks/memloom-hook" {event} cursor'
        )


def test_every_agent_starts_memloom_mcp():
    assert load(".cursor-plugin/plugin.json")["mcpServers"] == "./.mcp.json"
    servers = [
        load(".mcp.json")["mcpServers"],
        load("gemini-extension.json")["mcpServers"],
        load("qwen-extension.json")["mcpServers"],
    ]
    for found in servers:
        assert found == {"memloom": {"command": "memloom", "args": ["mcp"]}}
    codex = load(".codex-plugin/plugin.json")["mcpServers"]
    assert codex == "./.mcp.codex.json"
    server = load(".mcp.codex.json")["mcpServers"]["memloom"]
    assert (server["command"], server["args"]) == ("memloom", ["mcp"])


def test_codex_passes_memloom_s_settings_to_its_mcp_server():
    """Codex starts MCP servers with a bare environment: without these, ``memloom mcp``
    opened another home, or refused a store stamped by another embedder."""
    wanted = {
        "MEMLOOM_HOME", "MEMLOOM_DATABASE_URL", "MEMLOOM_LLM", "MEMLOOM_LLM_API_KEY",
        "MEMLOOM_EMBEDDER", "MEMLOOM_EMBED_BASE_URL", "MEMLOOM_EMBED_MODEL",
        "MEMLOOM_EMBED_API_KEY", "MEMLOOM_API_TOKEN", "OPENAI_API_KEY", "ANTHROPIC_API_KEY",
    }  # fmt: skip
    assert wanted <= set(load(".mcp.codex.json")["mcpServers"]["memloom"]["env_vars"])


def test_the_cursor_manifest_keeps_to_cursor_s_schema():
    """Cursor's published schema (cursor/plugins, schemas/plugin.schema.json): ``name``
    required and kebab-case, no other keys than it lists."""
    allowed = {
        "name", "displayName", "description", "version", "author", "publisher", "homepage",
        "repository", "license", "logo", "keywords", "category", "tags", "commands",
        "agents", "skills", "rules", "hooks", "variables", "mcpServers",
    }  # fmt: skip
    doc = load(".cursor-plugin/plugin.json")
    assert set(doc) <= allowed
    assert re.fullmatch(r"[a-z0-9]([a-z0-9.-]*[a-z0-9])?", doc["name"])


@pytest.mark.parametrize("skill", ["remember", "recall", "status"])
def test_skills_are_named_for_their_slash_command(skill):
    """``skills/<name>/SKILL.md`` is ``/memloom:<name>`` in Claude Code and Copilot CLI
    and a skill in Codex; Gemini CLI has the same three as commands/memloom/*.toml."""
    text = (ROOT / "skills" / skill / "SKILL.md").read_text()
    front = text.split("---")[1]
    assert re.search(rf"^name: {skill}$", front, re.M)
    assert re.search(r"^description: \S", front, re.M)
    toml = tomllib.loads((ROOT / "commands" / "memloom" / f"{skill}.toml").read_text())
    assert toml["description"] and toml["prompt"]


# --------------------------------------------------------------------------- the wrapper


def bin_dir(tmp_path: Path, memloom_script: str | None) -> Path:
    """A PATH folder with the tools the wrapper uses and, if given, a ``memloom``."""
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    for tool in ("cat", "tr", "sed", "mkdir", "find", "rm", "dirname"):
        if (folder / tool).exists():
            continue
        real = next(
            Path(d) / tool
            for d in os.environ["PATH"].split(os.pathsep)
            if (Path(d) / tool).exists()
        )
        (folder / tool).symlink_to(real)
    (folder / "memloom").unlink(missing_ok=True)
    if memloom_script is not None:
        exe = folder / "memloom"
        exe.write_text("#!/bin/sh\n" + memloom_script)
        exe.chmod(0o755)
    return folder


def run_wrapper(
    tmp_path: Path,
    event: str,
    *extra: str,
    memloom_script: str | None = None,
    env: dict[str, str] | None = None,
    session: str = SESSION,
    wrapper: Path = WRAPPER,
) -> subprocess.CompletedProcess:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    full = {
        "PATH": str(bin_dir(tmp_path, memloom_script)),
        "HOME": str(home),
        **(env or {}),
    }
    payload = json.dumps({"session_id": session, "hook_event_name": event, "prompt": "hi"})
    res = subprocess.run(
        ["/bin/sh", str(wrapper), event, *extra],
        input=payload,
        env=full,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert res.returncode == 0, res.stderr
    return res


def test_without_memloom_the_session_is_told_once_how_to_install_it(tmp_path):
    first = run_wrapper(tmp_path, "SessionStart")
    doc = json.loads(first.stdout)
    text = doc["hookSpecificOutput"]["additionalContext"]
    assert doc["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert doc["systemMessage"] == text
    assert "memloom is not" in text and f"pipx install '{ROOT}'" in text
    assert run_wrapper(tmp_path, "UserPromptSubmit").stdout == ""  # same session: once
    assert run_wrapper(tmp_path, "SessionEnd").stdout == ""
    other = run_wrapper(tmp_path, "UserPromptSubmit", session="another-session")
    assert "memloom is not" in json.loads(other.stdout)["systemMessage"]


def test_the_install_hint_suggests_uv_where_uv_is(tmp_path):
    uv = bin_dir(tmp_path, None) / "uv"
    uv.write_text("#!/bin/sh\nexit 0\n")
    uv.chmod(0o755)
    res = run_wrapper(tmp_path, "SessionStart")
    assert f"uv tool install '{ROOT}'" in json.loads(res.stdout)["systemMessage"]


def test_claude_code_s_copy_of_the_wrapper_names_the_clone_it_can_find(tmp_path):
    """Claude Code's plugin folder holds no memloom source: read in place, the hint names
    the clone around it; an installed copy (the folder alone) names none."""
    in_place = ROOT / CLAUDE_PLUGIN / "hooks" / "memloom-hook"
    res = run_wrapper(tmp_path, "SessionStart", wrapper=in_place)
    assert f"pipx install '{ROOT}'" in json.loads(res.stdout)["systemMessage"]
    copy = tmp_path / "cache" / "memloom" / "0.1.0"
    shutil.copytree(ROOT / CLAUDE_PLUGIN, copy)
    res = run_wrapper(
        tmp_path, "SessionStart", session="s2", wrapper=copy / "hooks" / "memloom-hook"
    )
    assert "pipx install <a clone of memloom>" in json.loads(res.stdout)["systemMessage"]


@pytest.mark.parametrize(
    ("env", "extra", "event", "expected"),
    [
        ({"COPILOT_CLI": "1"}, (), "SessionStart", {"additionalContext"}),
        (
            {"GEMINI_SESSION_ID": SESSION},
            (),
            "BeforeAgent",
            {"systemMessage", "hookSpecificOutput"},
        ),
        ({}, ("codex",), "UserPromptSubmit", {"systemMessage", "hookSpecificOutput"}),
        (
            {"QWEN_CODE_SESSION_ID": SESSION},
            (),
            "SessionStart",
            {"systemMessage", "hookSpecificOutput"},
        ),
        ({}, ("cursor",), "sessionStart", {"additional_context"}),
    ],
)
def test_the_hint_is_in_each_agent_s_own_output_format(tmp_path, env, extra, event, expected):
    """Copilot CLI injects only a top-level ``additionalContext``; Gemini CLI only JSON."""
    res = run_wrapper(tmp_path, event, *extra, env=env)
    assert set(json.loads(res.stdout)) == expected


def test_a_memloom_too_old_for_the_plugin_is_said_once(tmp_path):
    """An older memloom refuses ``--plugin`` (a usage error, exit 2): the wrapper still
    exits 0 and says what to do, once a session."""
    script = 'cat >/dev/null; echo "No such option: --plugin" >&2; exit 2\n'
    res = run_wrapper(tmp_path, "SessionStart", memloom_script=script)
    assert "needs a newer memloom" in json.loads(res.stdout)["systemMessage"]
    assert run_wrapper(tmp_path, "UserPromptSubmit", memloom_script=script).stdout == ""


RECORD = 'echo "$*" >> "$HOME/calls"; cat >> "$HOME/stdin"; echo "{\\"ok\\": 1}"\n'


@pytest.mark.parametrize(
    ("env", "extra", "event", "call"),
    [
        ({}, (), "SessionStart", "session-start --agent claude-code"),
        ({}, (), "UserPromptSubmit", "prompt-recall --agent claude-code"),
        ({}, (), "SessionEnd", "notify --agent claude-code"),
        ({"COPILOT_CLI": "1"}, (), "UserPromptSubmit", "prompt-recall --agent copilot"),
        ({"COPILOT_CLI": "1"}, (), "SessionEnd", "notify --agent copilot"),
        ({"COPILOT_CLI": "1"}, (), "PostToolUse", "read --agent copilot"),
        ({"GEMINI_SESSION_ID": SESSION}, (), "BeforeAgent", "prompt-recall --agent gemini"),
        ({"GEMINI_SESSION_ID": SESSION}, (), "AfterAgent", "notify --agent gemini"),
        ({"GEMINI_SESSION_ID": SESSION}, (), "SessionEnd", "notify --agent gemini"),
        ({"GEMINI_SESSION_ID": SESSION}, (), "SessionStart", None),
        ({"GEMINI_SESSION_ID": SESSION}, (), "PreCompress", "compacted --agent gemini"),
        ({}, (), "PreCompress", None),  # Claude Code: SessionStart says "compact"
        ({"QWEN_CODE_SESSION_ID": SESSION}, (), "PreCompress", None),
        ({}, ("codex",), "SessionStart", "session-start --agent codex"),
        ({}, ("codex",), "Stop", "notify --agent codex"),
        ({}, ("codex",), "PostToolUse", "read --agent codex"),
        ({}, (), "BeforeAgent", None),  # Claude Code has no such event: nothing runs
        ({}, (), "Stop", None),  # Claude Code's Stop ends a turn, not the session
        ({"COPILOT_CLI": "1"}, (), "Stop", None),
        ({"GEMINI_SESSION_ID": SESSION}, (), "Stop", None),
        # Qwen Code (it sets GEMINI_PROJECT_DIR too, and maybe an inherited Gemini id)
        ({"QWEN_CODE_SESSION_ID": SESSION}, (), "SessionStart", "session-start --agent qwen"),
        (
            {"QWEN_CODE_SESSION_ID": SESSION, "GEMINI_SESSION_ID": "x"},
            (),
            "UserPromptSubmit",
            "prompt-recall --agent qwen",
        ),
        ({"QWEN_CODE_SESSION_ID": SESSION}, (), "Stop", "notify --agent qwen"),
        ({"QWEN_CODE_SESSION_ID": SESSION}, (), "SessionEnd", None),  # Stop already did
        ({"QWEN_CODE_SESSION_ID": SESSION}, (), "BeforeAgent", None),
        ({"QWEN_CODE_SESSION_ID": SESSION}, (), "AfterAgent", None),
        # Cursor (its own hook file names the agent)
        ({}, ("cursor",), "sessionStart", "session-start --agent cursor"),
        ({}, ("cursor",), "stop", "notify --agent cursor"),
        ({}, ("cursor",), "sessionEnd", "notify --agent cursor"),
        ({}, ("cursor",), "postToolUse", "read --agent cursor"),
        ({}, ("cursor",), "beforeSubmitPrompt", None),
        # After the agent's own read tool opened a file (the hook files' matchers).
        ({}, (), "PostToolUse", "read --agent claude-code"),
        ({"GEMINI_SESSION_ID": SESSION}, (), "AfterTool", "read --agent gemini"),
        ({"QWEN_CODE_SESSION_ID": SESSION}, (), "PostToolUse", "read --agent qwen"),
        ({"GEMINI_SESSION_ID": SESSION}, (), "PostToolUse", None),  # not Gemini's event
        ({"QWEN_CODE_SESSION_ID": SESSION}, (), "AfterTool", None),
        ({}, (), "AfterTool", None),
        # (Copilot CLI's, Codex's and Cursor's after-tool events run it too: above.)
    ],
)
def test_each_agent_s_event_runs_the_hook_connect_would(tmp_path, env, extra, event, call):
    res = run_wrapper(tmp_path, event, *extra, memloom_script=RECORD, env=env)
    calls = tmp_path / "home" / "calls"
    if call is None:
        assert not calls.exists() and res.stdout == ""
        return
    assert calls.read_text() == f"hook {call} --plugin {wrapper_version()}\n"
    assert json.loads((tmp_path / "home" / "stdin").read_text())["session_id"] == SESSION
    assert json.loads(res.stdout) == {"ok": 1}


def events_run(tmp_path: Path, rel: str, extra: tuple[str, ...], env: dict) -> set[tuple]:
    """(event, memloom hook) for every event of hook file ``rel`` the wrapper runs."""
    done = set()
    for event in load(rel)["hooks"]:
        res = run_wrapper(tmp_path, event, *extra, memloom_script=RECORD, env=env)
        calls = tmp_path / "home" / "calls"
        if calls.exists():
            assert res.stdout.strip() == '{"ok": 1}'
            for line in calls.read_text().splitlines():
                done.add((event, line.split()[1]))
            calls.unlink()
    return done


@pytest.mark.parametrize(
    ("agent", "rel", "extra", "env"),
    [
        ("qwen", "hooks/hooks.json", (), {"QWEN_CODE_SESSION_ID": SESSION}),
        ("cursor", "hooks/cursor.json", ("cursor",), {}),
        ("codex", "hooks/codex.json", ("codex",), {}),
        ("claude-code", f"{CLAUDE_PLUGIN}/hooks/hooks.json", (), {}),
    ],
)
def test_the_plugin_runs_exactly_the_hooks_connect_installs(tmp_path, agent, rel, extra, env):
    """Every event of the hook file the agent reads (the shared one has every agent's
    events): what runs is what ``memloom connect <agent>`` installs, no hook twice."""
    if agent == "qwen":
        from memloom.agents.qwen.hooks import HOOKS

        want = {(h.event, h.sub) for h in HOOKS.hooks}
    elif agent == "claude-code":
        from memloom.agents.claude_code.hooks import (
            NOTIFY_EVENT,
            READ_EVENT,
            RECALL_EVENT,
            START_EVENT,
        )

        want = {
            (NOTIFY_EVENT, "notify"),
            (RECALL_EVENT, "prompt-recall"),
            (START_EVENT, "session-start"),
            (READ_EVENT, "read"),
        }
    elif agent == "codex":
        from memloom.agents.codex.hooks import EVENTS

        want = {(event, sub) for event, (sub, _, _) in EVENTS.items()}
    else:
        from memloom.agents.cursor.hooks import NOTIFY_EVENTS, READ_EVENT, START_EVENT

        want = {(e, "notify") for e in NOTIFY_EVENTS} | {(START_EVENT, "session-start")}
        want.add((READ_EVENT, "read"))
    assert events_run(tmp_path, rel, extra, env) == want


def test_a_cursor_session_start_gets_the_digest_in_cursor_s_output(tmp_path, seeded_home):
    """Cursor's own payload (``conversation_id``, ``cursor_version``) through the wrapper
    and the real ``memloom hook``: the digest comes back as ``additional_context``.
    Cursor itself cannot run here: this is the plugin's Cursor path up to Cursor."""
    (memory_id,) = remember(seeded_home, {"text": "Always run make lint before pushing"})
    m = memloom.open(home=str(seeded_home))
    try:
        m.pin(memory_id)
    finally:
        m.close()
    script = f'exec "{sys.executable}" -m memloom._entry --home "{seeded_home}" "$@"\n'
    payload = {
        "conversation_id": SESSION,
        "session_id": SESSION,
        "generation_id": "g-1",
        "model": "auto",
        "hook_event_name": "sessionStart",
        "cursor_version": "2.3.0",
        "workspace_roots": [str(tmp_path / "proj")],
        "transcript_path": None,
    }
    (tmp_path / "proj").mkdir()
    res = subprocess.run(
        ["/bin/sh", str(WRAPPER), "sessionStart", "cursor"],
        input=json.dumps(payload),
        env={
            "PATH": f"{bin_dir(tmp_path, script)}",
            "HOME": str(tmp_path / "h"),
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert set(doc) == {"additional_context"}, doc
    assert "make lint" in doc["additional_context"]


def test_the_wrapper_is_posix_sh(tmp_path):
    """The agents run it with ``sh``: dash (Debian's sh) must parse it."""
    dash = Path("/bin/dash")
    if not dash.exists():
        pytest.skip("no dash here")
    subprocess.run([str(dash), "-n", str(WRAPPER)], check=True)


# --------------------------------------------------------------------------- memloom hook --plugin


PROMPT = {
    "session_id": SESSION,
    "cwd": "/home/dev/acme",
    "hook_event_name": "UserPromptSubmit",
    "prompt": "where does the deploy script live?",
}


def claude_env(tmp_path: Path) -> dict[str, str]:
    return {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}


def test_the_plugin_hook_recalls_when_connect_s_hook_is_absent(tmp_path, seeded_home):
    res = hook(
        seeded_home,
        claude_env(tmp_path),
        "prompt-recall",
        "--plugin",
        memloom.__version__,
        payload=PROMPT,
    )
    assert "tools/deploy.sh" in res.stdout


def test_the_plugin_hook_stands_down_where_connect_s_hook_of_its_kind_runs(tmp_path, seeded_home):
    """Both installed: connect's hook recalls, the plugin's prints nothing and claims
    nothing, so connect's still gets the memory (one hook fires once)."""
    env = claude_env(tmp_path)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "memloom._entry",
            "--home",
            str(seeded_home),
            "connect",
            "claude-code",
            "--all",
        ],
        env={**os.environ, **env},
        check=True,
        capture_output=True,
    )
    plugin = hook(
        seeded_home, env, "prompt-recall", "--plugin", memloom.__version__, payload=PROMPT
    )
    assert plugin.stdout == ""
    connected = hook(seeded_home, env, "prompt-recall", payload=PROMPT)
    assert "tools/deploy.sh" in connected.stdout


class FakeAgent:
    def __init__(self, **found: bool) -> None:
        self.found = found

    def installed_hooks(self, env: object = None) -> dict[str, bool]:
        return self.found


def test_the_plugin_stands_down_hook_by_hook():
    """``connect --no-recall`` installs the session-end hook only: the plugin's
    session-end hook stands down, its prompt hooks do not; Gemini's SessionEnd hook
    does a notify's job too; an unreadable settings file defers nothing."""
    only_notify = FakeAgent(notify=True, prompt_recall=False, session_start=False)
    assert defers(only_notify, "notify")
    assert not defers(only_notify, "prompt-recall") and not defers(only_notify, "session-start")
    assert defers(FakeAgent(notify=False, session_end=True), "notify")
    assert not defers(FakeAgent(readable=False), "prompt-recall")


def test_a_plugin_newer_than_memloom_is_said_once_a_session(tmp_path, seeded_home):
    env = claude_env(tmp_path)
    res = hook(seeded_home, env, "prompt-recall", "--plugin", "99.0.0", payload=PROMPT)
    assert "older than the memloom plugin (99.0.0)" in res.stdout
    assert "tools/deploy.sh" in res.stdout  # the hook still does its work
    again = hook(
        seeded_home,
        env,
        "prompt-recall",
        "--plugin",
        "99.0.0",
        payload={**PROMPT, "prompt": "and the deploy script?"},
    )
    assert "older than" not in again.stdout


def test_the_plugin_s_first_session_end_chooses_to_capture_everything(tmp_path):
    """Installing the plugin is choosing capture, as ``connect --all`` is; a scope the
    user chose stays as it is."""
    home = tmp_path / "home"
    payload = {"session_id": SESSION, "transcript_path": None, "cwd": "/x", "reason": "other"}
    hook(home, claude_env(tmp_path), "notify", "--plugin", memloom.__version__, payload=payload)
    assert load_scope(home).all
    save_scope(home, Scope(projects=["acme"]))
    hook(home, claude_env(tmp_path), "notify", "--plugin", memloom.__version__, payload=payload)
    assert load_scope(home).projects == ["acme"] and not load_scope(home).all


def test_versions_compare_by_their_numbers():
    assert older_than("0.1.0", "0.2.0") and older_than("0.9.1", "0.10.0")
    assert not older_than("0.1.0", "0.1.0") and not older_than("1.0.0", "0.9.9")


# --------------------------------------------------------------------------- connect's note


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.mark.parametrize(
    ("agent", "env_key", "record"),
    [
        (
            "claude-code",
            "CLAUDE_CONFIG_DIR",
            {"settings.json": '{"enabledPlugins": {"memloom@memloom": true}}'},
        ),
        (
            "copilot",
            "COPILOT_HOME",
            {
                "config.json": '// managed\n{"installedPlugins": '
                '[{"name": "memloom", "enabled": true}]}'
            },
        ),
        ("gemini", "GEMINI_CLI_HOME", {".gemini/extensions/memloom/gemini-extension.json": "{}"}),
        (
            "codex",
            "CODEX_HOME",
            {"plugins/cache/memloom/memloom/0.1.0/.codex-plugin/plugin.json": "{}"},
        ),
        ("qwen", "QWEN_HOME", {"extensions/memloom/qwen-extension.json": "{}"}),
        ("qwen", "QWEN_HOME", {"extensions/memloom/.qwen-extension-install.json": "{}"}),
    ],
)
def test_connect_notes_that_the_plugin_is_installed_too(tmp_path, agent, env_key, record):
    """Where each agent records an installed plugin (as the pinned CLIs wrote it in
    tests/e2e); ``connect`` then says the plugin's hooks stand down."""
    root = tmp_path / "agent"
    env = {"HOME": str(tmp_path), env_key: str(root)}
    assert not plugin_installed(agent, env)
    for rel, text in record.items():
        write(root / rel, text)
    assert plugin_installed(agent, env)
    proc = subprocess.run(
        [*MEMLOOM, "--home", str(tmp_path / "m"), "connect", agent, "--all", "--json"],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    notes = json.loads(proc.stdout).get("notes", [])
    assert any("plugin is installed" in n for n in notes), notes


def test_a_disabled_plugin_is_not_installed(tmp_path):
    root = tmp_path / "claude"
    write(root / "settings.json", '{"enabledPlugins": {"memloom@memloom": false}}')
    assert not plugin_installed("claude-code", {"CLAUDE_CONFIG_DIR": str(root)})
    assert not plugin_installed("aider", {})


def test_status_shows_where_memloom_is_installed_as_the_agents_plugin(tmp_path):
    """``memloom status`` says which agents have memloom as their plugin (issue 36)."""
    claude = tmp_path / "claude"
    claude.mkdir()
    (claude / "settings.json").write_text(json.dumps({"enabledPlugins": {"memloom@memloom": True}}))
    env = {
        **os.environ,
        "MEMLOOM_HOME": str(tmp_path / "home"),
        "CLAUDE_CONFIG_DIR": str(claude),
        "CODEX_HOME": str(tmp_path / "codex"),
        "MEMLOOM_LLM": "offline",
    }

    def status(*args: str) -> str:
        res = subprocess.run(
            [sys.executable, "-m", "memloom._entry", "status", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert res.returncode == 0, res.stderr
        return res.stdout

    agents = json.loads(status("--json"))["agents"]
    assert agents["claude-code"]["plugin"] is True and agents["codex"]["plugin"] is False
    assert "plugin installed" in next(ln for ln in status().splitlines() if "claude-code" in ln)
    (claude / "settings.json").write_text(
        json.dumps({"enabledPlugins": {"memloom@memloom": False}})
    )
    assert json.loads(status("--json"))["agents"]["claude-code"]["plugin"] is False
