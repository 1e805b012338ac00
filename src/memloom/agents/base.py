"""The agent seam: what memloom needs from a coding agent, whichever agent it is.

An :class:`Agent` adapter knows one agent's files and hooks: where its sessions
live (:meth:`Agent.discover`), how to read one as line-numbered user/assistant
:class:`Unit` s (:meth:`Agent.read`), what a session's import-ledger row is keyed
by (:meth:`Agent.ledger_identity`), how to install and remove memloom's hooks in
its settings, and how to read the payload its capture hook receives
(:meth:`Agent.parse_hook_payload`). The importer, ledger, chunker and capture
worker talk to this protocol only; the registry (:mod:`memloom.agents`) hands out
adapters by name.

Standard library only: the hook fast path (``memloom hook …``) imports this module.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

__all__ = [
    "MEMLOOM_CONTEXT_CLOSE",
    "MEMLOOM_CONTEXT_OPEN",
    "SKIP_REASONS",
    "SNIFF_BYTES",
    "Agent",
    "DiscoverOptions",
    "Discovery",
    "Env",
    "HookEvent",
    "HooksChange",
    "ParseResult",
    "SessionFile",
    "Unit",
]

from memloom.agents.markup import MEMLOOM_CONTEXT_CLOSE, MEMLOOM_CONTEXT_OPEN  # re-exported

#: Why discovery left a file out (every adapter counts under these names).
SKIP_REASONS = (
    "sidecars",
    "active",
    "outside_window",
    "over_cap",
    "not_transcripts",
    "project_filter",
    "missing",
    # refused by a safety rule (a symlink out of the agent's folder, another user's
    # file, a file or folder others can write): see memloom.agents.discovery
    "unsafe",
)

from memloom.agents.events import HookEvent  # noqa: E402  (re-exported)

Env = Mapping[str, str]


@dataclass
class HooksChange:
    """What installing or removing memloom's hooks did to the agent's settings file."""

    settings_path: Path
    backup_path: Path | None
    changed: bool
    events: list[str]


#: How much of a file :meth:`Agent.recognises` is shown.
SNIFF_BYTES = 64 * 1024


@dataclass
class Unit:
    """One human prompt or one assistant reply, with the physical lines it came from.

    ``session_id``, ``cwd`` and ``project`` are for agents whose files hold several
    sessions (Aider) or change directory per turn (Codex ``turn_context``): the
    importer files a memory under the session and project of the turns it came
    from. None means the file's own (:class:`ParseResult`) values apply, as for
    Claude Code. ``project`` is the adapter's reading of ``cwd`` (Codex: its git root).
    """

    role: Literal["user", "assistant"]
    text: str
    start_line: int
    end_line: int
    uuid: str | None
    timestamp: str | None
    session_id: str | None = None
    cwd: str | None = None
    project: str | None = None


@dataclass
class ParseResult:
    """What one read of a session produced, and the watermark to resume from."""

    units: list[Unit] = field(default_factory=list)
    lines_read: int = 0  # physical line count at end_offset (includes start_line)
    end_offset: int = 0  # byte offset just past the last consumed line
    malformed: int = 0
    #: lines longer than the reader's cap, skipped unread
    oversized: int = 0
    records: int = 0
    #: records that produced no unit, by reason (the adapter's own reasons)
    dropped: dict[str, int] = field(default_factory=dict)
    session_id: str | None = None
    cwd: str | None = None
    version: str | None = None
    #: files the session's tool calls read or edited: (physical line of the call, the
    #: path as the tool was given it, ``"read"`` or ``"edit"``), for the lines this
    #: read parsed only (a resumed read reports none before its watermark). The
    #: importer anchors a memory to those of the lines it was distilled from
    #: (:func:`memloom.anchors.from_tools`); nothing here becomes unit text.
    touched: list[tuple[int, str, str]] = field(default_factory=list)


@dataclass
class SessionFile:
    """One session file discovery found."""

    path: Path
    session_id: str
    project_dir: str  # the folder the file sits in (the project's name when nothing better)
    size: int
    mtime: float


@dataclass
class Discovery:
    """The sessions to import (newest first), and everything left out, counted by reason."""

    files: list[SessionFile] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SKIP_REASONS, 0))
    skipped_paths: dict[str, list[str]] = field(
        default_factory=lambda: {k: [] for k in SKIP_REASONS}
    )

    def skip(self, reason: str, path: str | os.PathLike[str]) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1
        self.skipped_paths.setdefault(reason, []).append(os.fspath(path))


@dataclass
class DiscoverOptions:
    """What to look for. ``paths`` given: exactly those files and folders (no time rules)."""

    paths: Sequence[Path] | None = None
    root: Path | None = None  # the agent's home (default: :meth:`Agent.home`)
    days: float | None = 14
    max_sessions: int | None = 20
    project: str | None = None
    quiet_seconds: float = 300
    now: float | None = None


@runtime_checkable
class Agent(Protocol):
    """One coding agent, as memloom's importer and capture shells see it."""

    #: The registry name, the ``source`` of its memories (``"claude-code"``).
    name: str
    #: The agent rewrites its session files whole by design (Gemini's legacy
    #: ``.json``): when one is read again from its start, records an earlier run
    #: already distilled from it are not sent again. Otherwise a file whose bytes
    #: changed is distilled again in full (the ledger's "rewritten").
    rereads_whole: bool
    #: The session-start digest goes out with the session's first prompt instead
    #: (the prompt hook gives it; the session-start hook prints nothing): the agent
    #: does not keep session-start context in a resumed session's history (Gemini).
    digest_with_prompt: bool
    #: The agent rebuilds session-start context on every start and keeps none of it in
    #: a resumed session (Qwen Code puts it in the system prompt): a SessionStart whose
    #: ``source`` is not ``startup`` gets the whole digest again.
    digest_each_start: bool

    def home(self, env: Env | None = None) -> Path:
        """The agent's configuration folder (from its environment variable, else the default)."""
        ...

    def found(self, env: Env | None = None) -> bool:
        """Whether the agent's home exists (the default import covers found agents)."""
        ...

    def discover(self, options: DiscoverOptions) -> Discovery:
        """The sessions to import, and everything left out counted by reason."""
        ...

    def read(
        self,
        path: Path,
        *,
        start_offset: int = 0,
        start_line: int = 0,
        final: bool = False,
        seen: set[str] | None = None,
    ) -> ParseResult:
        """Read ``path`` from a watermark (byte offset + line count) as line-numbered units.

        ``final=False``: the file may still grow, leave an incomplete last record.
        ``seen``: record ids already read (updated; duplicates are dropped).
        Raises ``ValueError`` for an offset past the end, ``OSError`` if unreadable.
        """
        ...

    def read_bytes(self, data: bytes, *, first_line: int = 1, final: bool = True) -> ParseResult:
        """The same reading of bytes already in memory (re-read context, cited lines)."""
        ...

    def recognises(self, path: Path) -> bool:
        """Whether ``path`` is one of this agent's session files, judged by its content
        (``--path`` files of unknown origin); reads at most a small head of it
        (:data:`SNIFF_BYTES`), decompressing where the agent compresses sessions."""
        ...

    def open(self, path: Path) -> Any:
        """The session file's content as a binary file object (``read``/``seek``/``tell``).

        Watermarks (``end_offset``, ``lines_read``) and the ledger's prefix hash are
        defined on these bytes: the raw file for most agents, the decompressed
        stream for a compressed session (Codex ``.jsonl.zst``). Never blocks on a
        FIFO (see :func:`memloom.agents.files.open_regular`).
        """
        ...

    def use_project_roots(self, roots: Sequence[Path]) -> None:
        """The project folders memloom knows (from every agent's sessions): where an
        agent that keeps its sessions in the repository (Aider) looks. Others ignore it."""
        ...

    def ledger_identity(self, file: SessionFile) -> str:
        """What the session's ledger row (and its seen-record ids) are keyed by."""
        ...

    def project_of(self, path: Path) -> str | None:
        """The session's project (working directory) from the file, without reading it all."""
        ...

    def transcripts_root(self, env: Env | None = None) -> Path:
        """The folder a path from a hook payload or an HTTP client must lie in."""
        ...

    def settings_path(self, env: Env | None = None) -> Path:
        """The settings file memloom's hooks are installed into."""
        ...

    def session_folders(self, env: Env | None = None) -> list[Path]:
        """The folders the agent's session files lie in: a stored path elsewhere (a
        provenance row's) is never read back (``/v1/memories/{id}/context``)."""
        ...

    def install_hooks(
        self, command: str, *, recall: bool = True, env: Env | None = None
    ) -> HooksChange:
        """Add memloom's hooks (``command`` starts memloom); one-time backup, idempotent."""
        ...

    def remove_hooks(self, env: Env | None = None) -> HooksChange:
        """Remove exactly memloom's hooks, nothing else."""
        ...

    def compacted(self, payload: Mapping[str, Any]) -> bool:
        """Whether a session-start hook's ``payload`` follows a compaction of the
        session's context (then the digest is given again)."""
        ...

    def installed_hooks(self, env: Env | None = None) -> dict[str, bool]:
        """Which of memloom's hooks are installed (``readable`` False: settings unreadable)."""
        ...

    def prompt_text(self, payload: Mapping[str, Any]) -> Any:
        """What the user typed, from the prompt hook's stdin ``payload``: the recall
        query (an agent may have put other text, e.g. earlier hooks' context, around it)."""
        ...

    def hook_cwd(self, payload: Mapping[str, Any]) -> Any:
        """The project a hook's stdin ``payload`` is for: the working directory it names."""
        ...

    def format_context(self, event: Literal["prompt", "session-start"], text: str) -> str:
        """What the hook prints on stdout so the agent adds ``text`` to the model's
        context at ``event`` (its own output contract: plain text, or JSON)."""
        ...

    def parse_hook_payload(self, payload: Mapping[str, Any], env: Env | None = None) -> HookEvent:
        """The capture hook's stdin payload, checked; ``NotificationRefused`` says why not."""
        ...

    #: The agent keeps memories of its own (:mod:`memloom.agents.native`).
    native_memory: bool

    def native_folders(self, env: Env | None = None) -> list[Any]:
        """The folders of the agent's own memory (``NativeFolder``), with their projects."""
        ...

    def native_files(self, folder: Any) -> tuple[list[tuple[Path, Any]], Discovery]:
        """The files of one such folder that may be read (with their stat), and what
        was left out, counted by reason."""
        ...

    def read_native(self, folder: Any, path: Path, text: str) -> list[Any]:
        """One memory file's notes (``NativeNote``), in file order."""
        ...
