"""What every end-to-end agent test shares: a sandbox HOME, memloom run as its CLI,
and the driver of each real agent.

A :class:`Sandbox` is one temporary HOME (the agent's config and session files,
and memloom's data folder ``~/.memloom``) with a project folder in it, a scripted
model for the agent (:class:`tests.e2e.model.AgentModel`) and one for memloom's
own extraction calls (:class:`tests.support.scripted_llm.ScriptedModel`, which
also serves the embeddings). Nothing in it reaches beyond 127.0.0.1.

A :class:`Driver` knows one agent: how to point it at the scripted model and keep
it offline (``configure``), what the user already had in its config before
memloom came (``seed_user_config``: another tool's hook, comments), how to run one
headless prompt (``run``), where its session files are, and how to see the
other tool's hook fire.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from tests.e2e.install import ROOT as E2E_ROOT
from tests.e2e.model import AgentModel
from tests.support.scripted_llm import ScriptedModel

#: The project every sandbox works in (its folder is created under the HOME).
PROJECT = "shop"
#: What an agent run may take at most; the slowest seen here takes ~8 s.
RUN_TIMEOUT_S = 120


@dataclass
class Run:
    """One headless prompt: what the agent printed, how it exited, how long it took."""

    returncode: int
    stdout: str
    stderr: str
    elapsed: float
    requests: list[Any] = field(default_factory=list)  # what the model was sent

    @property
    def sent(self) -> str:
        """Every request body of this run, as one text (to search for injected memories)."""
        return "\n".join(r.text for r in self.requests)


@dataclass
class Sandbox:
    root: Path
    model: AgentModel
    memloom_llm: ScriptedModel
    bins: dict[str, Path] = field(default_factory=dict)

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def project(self) -> Path:
        return self.home / PROJECT

    @property
    def data(self) -> Path:
        """memloom's data folder (MEMLOOM_HOME's default under this HOME)."""
        return self.home / ".memloom"

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """The environment of every process in the sandbox: this HOME, memloom's
        scripted model and embeddings, no vendor keys, no proxies, offline."""
        path = [str(Path(sys.executable).parent)]
        path += [str(p) for p in self.bins.values()]
        path += [p for p in os.environ.get("PATH", "").split(os.pathsep) if p]
        keep = ("LANG", "LC_ALL", "TERM", "TMPDIR", "SYSTEMROOT", "PYTHONPATH")
        env = {k: os.environ[k] for k in keep if k in os.environ}
        env.update(
            HOME=str(self.home),
            PATH=os.pathsep.join(dict.fromkeys(path)),
            XDG_CONFIG_HOME=str(self.home / ".config"),
            XDG_DATA_HOME=str(self.home / ".local" / "share"),
            XDG_STATE_HOME=str(self.home / ".local" / "state"),
            # Shared by every sandbox (a test's tmp_path is not): Copilot unpacks 235 MB there.
            XDG_CACHE_HOME=str(E2E_ROOT / "xdg-cache"),
            NO_COLOR="1",
            CI="true",
            MEMLOOM_LLM="openai",
            MEMLOOM_LLM_BASE_URL=self.memloom_llm.base_url,
            MEMLOOM_LLM_MODEL="scripted",
            MEMLOOM_LLM_API_KEY="sk-e2e-memloom",
            MEMLOOM_EMBEDDER="openai",
            MEMLOOM_EMBED_BASE_URL=self.memloom_llm.base_url,
            MEMLOOM_EMBED_MODEL="bag-of-words",
            MEMLOOM_EMBED_API_KEY="sk-e2e-memloom",
        )
        env.update(extra or {})
        return env

    def memloom(self, *args: str, check: bool = True, timeout: float = 120) -> Any:
        """``memloom ARGS`` in the sandbox; ``--json`` output parsed."""
        proc = subprocess.run(
            [sys.executable, "-m", "memloom._entry", *args],
            cwd=str(self.project),
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"memloom {' '.join(args)} exited {proc.returncode}: {proc.stderr}"
            )
        if "--json" in args and proc.returncode == 0:
            return json.loads(proc.stdout)
        return proc

    def save(self, text: str, *, pin: bool = False, project: bool = True) -> str:
        """A memory saved for the project (or global); pinned if asked; its id."""
        args = ["save", text, "--json"]
        if project:
            args += ["--project", str(self.project)]
        doc = self.memloom(*args)
        if pin:
            self.memloom("pin", doc["id"])
        return str(doc["id"])


class Driver:
    """One real agent under test (subclasses declare the data and the few methods)."""

    #: memloom's name for the agent (``memloom connect <name>``).
    name: ClassVar[str]
    #: The executable's name in its install's bin folder.
    binary: ClassVar[str]
    #: Which install it comes from: "npm" or "aider".
    install: ClassVar[str] = "npm"
    #: Whether memloom installs hooks into it (Aider has none: capture by sweep only).
    hooks: ClassVar[bool] = True

    def configure(self, sb: Sandbox) -> None:
        """Point the agent at ``sb.model`` and keep it off the network."""
        raise NotImplementedError

    def seed_user_config(self, sb: Sandbox) -> list[Path]:
        """What the user had before memloom: another tool's hook (which writes
        :meth:`other_hook_fired`'s file) and comments; the files memloom may edit."""
        raise NotImplementedError

    def other_hook_marker(self, sb: Sandbox) -> Path:
        return sb.root / f"other-hook-{self.name}.log"

    def other_hook_command(self, sb: Sandbox) -> str:
        """A command another tool installed as a hook: it appends a line to a file."""
        return f"sh -c 'cat >/dev/null; echo fired >> {self.other_hook_marker(sb)}'"

    def command(self, sb: Sandbox, prompt: str, *, resume: bool = False) -> list[str]:
        raise NotImplementedError

    def run_env(self, sb: Sandbox) -> dict[str, str]:
        """Environment variables of the agent run on top of the sandbox's."""
        return {}

    def run(
        self, sb: Sandbox, prompt: str, *, resume: bool = False, env: dict[str, str] | None = None
    ) -> Run:
        """One headless prompt in the project folder (``resume``: continuing the last
        session); ``env`` on top of the agent's; the model's requests it caused."""
        mark = sb.model.mark()
        started = time.perf_counter()
        proc = subprocess.run(
            self.command(sb, prompt, resume=resume),
            cwd=str(sb.project),
            env=sb.env({**self.run_env(sb), **(env or {})}),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )
        elapsed = time.perf_counter() - started
        return Run(proc.returncode, proc.stdout, proc.stderr, elapsed, sb.model.since(mark))

    def session_files(self, sb: Sandbox) -> list[Path]:
        """The session files the agent wrote, oldest first."""
        raise NotImplementedError


class UserSettingsDriver(Driver):
    """An agent kept offline by the user's own ``~/<folder>/settings.json`` (Gemini CLI,
    Qwen Code): ``user_settings`` is that file before memloom, with a ``%s`` for another
    tool's hook command (JSON)."""

    folder: ClassVar[str]
    user_settings: ClassVar[str]

    def settings(self, sb: Sandbox) -> Path:
        return sb.home / self.folder / "settings.json"

    def configure(self, sb: Sandbox) -> None:
        pass  # the keys that keep it offline are the user's settings.json (seed_user_config)

    def seed_user_config(self, sb: Sandbox) -> list[Path]:
        path = self.settings(sb)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.user_settings % json.dumps(self.other_hook_command(sb)))
        return [path]


def snapshot(paths: list[Path]) -> dict[Path, bytes | None]:
    """The bytes of each file (None: absent), to check a restore is exact."""
    return {p: (p.read_bytes() if p.exists() else None) for p in paths}


def newest_first(paths: list[Path]) -> list[Path]:
    return sorted(paths, key=lambda p: p.stat().st_mtime, reverse=True)


def fresh_sandbox(root: Path, model: AgentModel, memloom_llm: ScriptedModel) -> Sandbox:
    if root.exists():
        shutil.rmtree(root)
    sb = Sandbox(root, model, memloom_llm)
    sb.project.mkdir(parents=True)
    (sb.project / "Makefile").write_text("check:\n\tpytest\n")
    return sb
