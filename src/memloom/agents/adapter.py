"""What every agent adapter shares: one base class; an adapter declares its data.

An adapter (:class:`memloom.agents.base.Agent`) subclasses :class:`AgentAdapter`,
says where its own functions are, and overrides only what its agent does
differently -- the way an LLM provider declares its defaults and parsing over a
shared HTTP base. The base finds an adapter's functions in the adapter's own
package, by convention, and imports a module only when it is first used (so the
hook fast path loads ``payload`` and nothing else):

* ``discover.py``: ``discover(root, *, days, max_sessions, project, quiet_seconds,
  now)``, ``discover_paths(paths, *, project)``, ``session_project(path)``;
* ``parse.py``: ``parse_bytes(data, *, first_line, final)``, and the function
  :attr:`AgentAdapter.reader` names;
* ``hooks.py``: ``install(command, *, recall, env)``, ``remove(env)``, ``installed(env)``;
* ``payload.py``: ``parse_hook_payload(payload, env)``.

Standard library only, and :mod:`memloom.agents.base` only for type checking: the
hook fast path loads this module with every adapter.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path

TYPE_CHECKING = False  # typing's, without loading typing (~3 ms): the hooks load this module
if TYPE_CHECKING:
    from typing import Any, ClassVar

    from memloom.agents.base import (
        DiscoverOptions,
        Discovery,
        Env,
        HookEvent,
        HooksChange,
        ParseResult,
        SessionFile,
    )
    from memloom.agents.native import NativeFolder, NativeNote

__all__ = ["AgentAdapter"]


class AgentAdapter:
    """The behaviour the adapters share; a subclass declares the class data below."""

    #: The ``source`` of its memories (``"claude-code"``).
    name: ClassVar[str]
    #: See :attr:`memloom.agents.base.Agent.rereads_whole`.
    rereads_whole: ClassVar[bool] = False
    #: The adapter's package (set for each direct subclass: the module it is defined in).
    package: ClassVar[str]
    #: ``"module:function"`` in the package: the agent's home, ``f(env) -> Path``.
    home_at: ClassVar[str] = ""
    #: Where hook payload paths must lie, ``f(env) -> Path``; empty: the home itself.
    transcripts_at: ClassVar[str] = ""
    #: The settings file memloom's hooks go into, ``f(env) -> Path``.
    settings_at: ClassVar[str] = ""
    #: The session reader :meth:`read` calls with the watermark keywords.
    reader: ClassVar[str] = ""
    #: Ledger rows keyed ``"<prefix>:<session id>"``; empty: by the file's path.
    ledger_prefix: ClassVar[str] = ""
    #: See :attr:`memloom.agents.base.Agent.digest_with_prompt`.
    digest_with_prompt: ClassVar[bool] = False
    #: See :attr:`memloom.agents.base.Agent.digest_each_start`.
    digest_each_start: ClassVar[bool] = False
    #: The agent keeps memories of its own, read by the package's ``native.py``:
    #: ``folders(env)``, ``read(folder, path, text)`` and optionally ``files(folder)``.
    native_memory: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if AgentAdapter in cls.__bases__:  # a subclass of an adapter keeps its package
            cls.package = cls.__module__

    def part(self, where: str) -> Callable[..., Any]:
        """The function ``"module:function"`` of this adapter's package (imported now)."""
        module, _, attr = where.partition(":")
        return getattr(importlib.import_module(f"{self.package}.{module}"), attr)

    # -- where things are

    def home(self, env: Env | None = None) -> Path:
        return self.part(self.home_at)(env)

    def found(self, env: Env | None = None) -> bool:
        return self.home(env).is_dir()

    def transcripts_root(self, env: Env | None = None) -> Path:
        return self.part(self.transcripts_at)(env) if self.transcripts_at else self.home(env)

    def settings_path(self, env: Env | None = None) -> Path:
        return self.part(self.settings_at)(env)

    def session_folders(self, env: Env | None = None) -> list[Path]:
        """The folders the agent's session files lie in (what serving a stored path's
        lines checks it against): its home, and the transcripts folder if elsewhere."""
        return list(dict.fromkeys([self.home(env), self.transcripts_root(env)]))

    # -- sessions

    def discover(self, options: DiscoverOptions) -> Discovery:
        found = importlib.import_module(f"{self.package}.discover")
        extra = self.discover_keywords()
        if options.paths:
            paths = [Path(p) for p in options.paths]
            return found.discover_paths(paths, project=options.project, **extra)
        return found.discover(
            self.discover_root(options),
            days=options.days,
            max_sessions=options.max_sessions,
            project=options.project,
            quiet_seconds=options.quiet_seconds,
            now=options.now,
            **extra,
        )

    def discover_root(self, options: DiscoverOptions) -> Any:
        """What :meth:`discover` looks under (``options.root``: None is the agent's home)."""
        return options.root

    def discover_keywords(self) -> dict[str, Any]:
        """More keywords for the package's ``discover`` and ``discover_paths``."""
        return {}

    def read(self, path: Path, **watermark: Any) -> ParseResult:
        """:meth:`memloom.agents.base.Agent.read`: the :attr:`reader` with the same keywords."""
        return self.part(self.reader)(path, **watermark)

    def read_bytes(self, data: bytes, *, first_line: int = 1, final: bool = True) -> ParseResult:
        return self.part("parse:parse_bytes")(data, first_line=first_line, final=final)

    def open(self, path: Path) -> Any:
        """The raw file (watermarks are over its bytes); never blocks on a FIFO."""
        from memloom.agents.files import open_regular

        return open_regular(path)

    def use_project_roots(self, roots: Sequence[Path]) -> None:
        """Sessions live in the agent's home, not in projects: nothing to do."""

    def ledger_identity(self, file: SessionFile) -> str:
        return f"{self.ledger_prefix}:{file.session_id}" if self.ledger_prefix else str(file.path)

    def project_of(self, path: Path) -> str | None:
        return self.part("discover:session_project")(path)

    # -- the agent's own memory

    def native_folders(self, env: Env | None = None) -> list[NativeFolder]:
        return self.part("native:folders")(env) if self.native_memory else []

    def native_files(self, folder: NativeFolder) -> tuple[list[tuple[Path, Any]], Discovery]:
        module = importlib.import_module(f"{self.package}.native")
        listed = getattr(module, "files", None)
        if listed is not None:
            return listed(folder)
        from memloom.agents.native import list_files

        return list_files(folder.path)

    def read_native(self, folder: NativeFolder, path: Path, text: str) -> list[NativeNote]:
        return self.part("native:read")(folder, path, text)

    # -- hooks

    def install_hooks(
        self, command: str, *, recall: bool = True, env: Env | None = None
    ) -> HooksChange:
        return self.part("hooks:install")(command, recall=recall, env=env)

    def remove_hooks(self, env: Env | None = None) -> HooksChange:
        return self.part("hooks:remove")(env)

    def installed_hooks(self, env: Env | None = None) -> dict[str, bool]:
        return self.part("hooks:installed")(env)

    def prompt_text(self, payload: Mapping[str, Any]) -> Any:
        """What the user typed, from the prompt hook's ``payload`` (the recall query):
        its ``prompt`` as it is (override for an agent that puts other text in it)."""
        return payload.get("prompt")

    def hook_cwd(self, payload: Mapping[str, Any]) -> Any:
        """The project a hook's ``payload`` is for (recall's scope): its ``cwd`` (override
        for an agent whose payload names it otherwise)."""
        return payload.get("cwd")

    def compacted(self, payload: Mapping[str, Any]) -> bool:
        """Whether a session-start hook's ``payload`` follows a compaction of the
        session's context: its ``source`` is ``"compact"`` (Claude Code, Qwen Code)."""
        return payload.get("source") == "compact"

    def read_path(self, payload: Mapping[str, Any]) -> str | None:
        """The file the agent's own read tool opened, from its after-tool hook's
        ``payload`` (absolute, or relative to :meth:`hook_cwd`); None when the payload is
        not a successful read of a file. None here: an agent without such a hook."""
        return None

    def tool_file(self, payload: Mapping[str, Any], tools: Collection[str]) -> str | None:
        """``tool_input.file_path`` of an after-tool ``payload`` whose ``tool_name`` is one
        of ``tools`` (what :meth:`read_path` of an agent with that shape answers), None
        when another tool ran, the tool reported an error, or the path is not text."""
        if payload.get("tool_name") not in tools:
            return None
        response = payload.get("tool_response")
        if isinstance(response, Mapping) and response.get("error"):
            return None  # Gemini CLI runs AfterTool on a failed call too
        given = payload.get("tool_input")
        path = given.get("file_path") if isinstance(given, Mapping) else None
        return path if isinstance(path, str) and path.strip() and "\x00" not in path else None

    def format_context(self, event: str, text: str) -> str:
        """The hook's stdout for ``text``: as it is (override for an agent that wants JSON)."""
        return text

    def after_tool_context(self, hook_event: str, text: str) -> str:
        """``text`` as the JSON an after-tool hook answers with to add it to the model's
        context: ``hookSpecificOutput.additionalContext`` of ``hook_event``."""
        import json

        if not text:
            return ""
        return json.dumps(
            {"hookSpecificOutput": {"hookEventName": hook_event, "additionalContext": text}}
        )

    def parse_hook_payload(self, payload: Mapping[str, Any], env: Env | None = None) -> HookEvent:
        return self.part("payload:parse_hook_payload")(payload, env)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
