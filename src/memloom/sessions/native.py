"""``memloom import`` of the agents' own memories: their memory files in, typed
memories out, with no LLM call.

For each agent that keeps memories of its own (:attr:`memloom.agents.base.Agent.native_memory`:
Claude Code, Qwen Code, Gemini CLI, Codex), its adapter names the folders and the
project each belongs to, lists the files that may be read and reads each into notes
(:mod:`memloom.agents.native`). Here, per folder: files whose size and mtime are as
last read are skipped; the others are read, their notes redacted and classified like
any other source's, the new or changed ones embedded (one batch per folder), and each
file handed to the facade (``Memloom.native_apply``, :mod:`memloom.core.native`), which
writes its changes in one transaction. A file gone since the last run is handed over
as gone (its memories expire). Nothing is ever written into an agent's folder.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, Field

from memloom.agents.native import NativeFolder, read_text
from memloom.core.native import FileNotes, FileOutcome, NoteIn
from memloom.hashing import content_hash

if TYPE_CHECKING:
    from memloom.agents.base import Agent
    from memloom.store.base import NativeRow

__all__ = [
    "FolderReport",
    "NativeOptions",
    "NativeReport",
    "import_native",
    "native_agents",
]

#: Texts embedded per call.
EMBED_BATCH = 256


class FolderReport(BaseModel):
    """One native memory folder: whose, for which project, and what this run did."""

    agent: str
    path: str
    project: str | None = None
    scope: str = "project"
    #: How the project was found (``session``, ``folders``, ``projects.json``…).
    why: str = ""
    #: Not read: why (``project_unknown``, ``out_of_scope``).
    skipped: str | None = None
    files: int = 0
    changed: int = 0
    removed: int = 0
    notes: int = 0


class NativeReport(BaseModel):
    """The summary of one run (``memloom import native --json``)."""

    folders: int = 0
    files: int = 0
    #: Files read because they are new or changed since the last run.
    changed: int = 0
    unchanged: int = 0
    removed: int = 0
    notes: int = 0
    added: int = 0
    merged: int = 0
    versioned: int = 0
    conflicts: int = 0
    expired: int = 0
    #: Notes gone whose memory stays (another agent's note holds it, or it changed in memloom).
    kept: int = 0
    redactions: int = 0
    #: Files or folders not read, by reason (``unsafe``, ``over_cap``, ``unreadable``,
    #: ``project_unknown``, ``out_of_scope``).
    skipped: dict[str, int] = Field(default_factory=dict)
    calls: dict[str, int] = Field(default_factory=lambda: {"llm": 0, "embedding": 0})
    dry_run: bool = False
    elapsed_s: float = 0.0
    agents: list[str] = Field(default_factory=list)
    per_folder: list[FolderReport] = Field(default_factory=list)

    def skip(self, reason: str, count: int = 1) -> None:
        if count:
            self.skipped[reason] = self.skipped.get(reason, 0) + count

    def absorb(self, outcome: FileOutcome) -> None:
        for action in ("added", "merged", "versioned", "expired", "kept"):
            setattr(self, action, getattr(self, action) + outcome.counts.get(action, 0))
        self.added += outcome.counts.get("conflict", 0)
        self.conflicts += outcome.conflicts


@dataclass
class NativeOptions:
    #: Registry names of the agents to read (None: every agent found on this machine).
    agents: Sequence[str] | None = None
    #: Read every file again, even those unchanged since the last run.
    force: bool = False
    dry_run: bool = False
    #: Which projects may be read (capture's scope); None: all. A folder of no project
    #: (a user's, Codex's) is asked with None.
    covers: Callable[[str | None], bool] | None = None
    env: dict[str, str] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class NativeEngine(Protocol):
    """What the native import needs of the facade (:class:`memloom.engine.Memloom`)."""

    @property
    def detector(self) -> Any: ...
    def embed_texts(self, texts: Sequence[str]) -> Any: ...
    def native_rows(self, folders: Sequence[str]) -> list[NativeRow]: ...
    def native_summary(self) -> list[dict[str, Any]]: ...
    def native_apply(self, file: FileNotes) -> FileOutcome: ...


@dataclass
class _Plan:
    """One folder's work: the files changed (read), the notes read before, the files gone."""

    agent: str
    folder: NativeFolder
    changed: list[_Read]
    known: set[tuple[str, str | None]]
    gone: list[str]


@dataclass
class _Read:
    """A changed file, read and redacted, waiting for its embeddings."""

    path: str
    size: int
    mtime: float
    notes: list[NoteIn]


def native_agents(settings_raw: dict[str, Any] | None) -> list[str]:
    """The agents whose own memory memloom reads, from config.toml's ``[native]``:
    ``enabled = false`` reads none; ``agents = ["claude-code", …]`` only those (default:
    every agent that keeps one). A bad value is a ``ValueError`` naming it."""
    from memloom.agents import ALIASES, agent_names, get_agent

    section = (settings_raw or {}).get("native", {})
    if not isinstance(section, dict):
        raise ValueError("[native] must be a table")
    enabled = section.get("enabled", True)
    if not isinstance(enabled, bool):
        raise ValueError(f"[native] enabled must be true or false, not {enabled!r}")
    if not enabled:
        return []
    chosen = section.get("agents")
    if chosen is None:
        return [n for n in agent_names() if get_agent(n).native_memory]
    if not isinstance(chosen, list) or not all(isinstance(n, str) for n in chosen):
        raise ValueError(f"[native] agents must be a list of agent names, not {chosen!r}")
    names = [ALIASES.get(n, n) for n in chosen]
    unknown = [n for n in names if n not in agent_names()]
    if unknown:
        raise ValueError(
            f"[native] agents: unknown agent {unknown[0]!r} (known: {', '.join(agent_names())})"
        )
    return names


def import_native(engine: NativeEngine, options: NativeOptions) -> NativeReport:
    """Follow the agents' own memory files (see the module's docstring)."""
    from memloom.agents import ALIASES, agent_names, get_agent

    started = time.perf_counter()
    report = NativeReport(dry_run=options.dry_run)
    names = [ALIASES.get(n, n) for n in options.agents] if options.agents is not None else []
    for name in names:
        if name not in agent_names():
            raise ValueError(f"unknown agent {name!r} (known: {', '.join(agent_names())})")
    plans: list[_Plan] = []
    summary = engine.native_summary() if names else []
    for name in names:
        agent = get_agent(name)
        if not agent.native_memory:
            continue
        folders = agent.native_folders(options.env)
        if folders:
            report.agents.append(name)
        for folder in folders:
            rep, plan = _folder(engine, agent, folder, options, report)
            report.per_folder.append(rep)
            if plan is not None:
                plans.append(plan)
        plans += _vanished(engine, agent, folders, summary, options, report)
    if not options.dry_run:
        # One embedding pass for every note to write (batches of EMBED_BATCH), then
        # each file in its own transaction.
        _embed(engine, [(p.known, r) for p in plans for r in p.changed], report)
        for plan in plans:
            _apply(engine, plan, report)
    report.elapsed_s = round(time.perf_counter() - started, 3)
    return report


def _folder(
    engine: NativeEngine,
    agent: Agent,
    folder: NativeFolder,
    options: NativeOptions,
    report: NativeReport,
) -> tuple[FolderReport, _Plan | None]:
    """What one folder holds against what was read of it before: its report, and the
    files to write (None: the folder is not read)."""
    rep = FolderReport(
        agent=agent.name,
        path=str(folder.path),
        project=folder.project,
        scope=folder.scope,
        why=folder.why,
        skipped=folder.skip,
    )
    report.folders += 1
    if folder.skip is None and options.covers is not None and not options.covers(folder.project):
        rep.skipped = "out_of_scope"
    if rep.skipped is not None:
        report.skip(rep.skipped)
        return rep, None
    rows = engine.native_rows([str(folder.path)])
    markers = {r.path: r for r in rows if not r.key}
    known = {(r.path, r.text_hash) for r in rows if r.key}
    listed, left_out = agent.native_files(folder)
    for reason, count in left_out.skipped.items():
        report.skip(reason, count)
    rep.files = len(listed)
    report.files += len(listed)
    changed: list[_Read] = []
    for path, st in listed:
        marker = markers.get(str(path))
        if (
            not options.force
            and marker is not None
            and marker.size == st.st_size
            and marker.mtime == st.st_mtime
        ):
            report.unchanged += 1
            continue
        read = _read(engine, agent, folder, path, st, report)
        if read is None:
            continue
        changed.append(read)
    seen = {str(path) for path, _ in listed}
    gone = [p for p in markers if p not in seen and not os.path.lexists(p)]
    rep.changed, rep.removed = len(changed), len(gone)
    report.changed += len(changed)
    report.removed += len(gone)
    rep.notes = sum(len(r.notes) for r in changed)
    report.notes += rep.notes
    return rep, _Plan(agent.name, folder, changed, known, gone)


def _apply(engine: NativeEngine, plan: _Plan, report: NativeReport) -> None:
    """Each changed file's notes, then each file gone, handed to the facade."""
    where = str(plan.folder.path)
    for read in plan.changed:
        notes = FileNotes(
            read.path, plan.agent, where, plan.folder.project, read.notes,
            read.size, read.mtime,
        )  # fmt: skip
        report.absorb(engine.native_apply(notes))
    for path in plan.gone:
        report.absorb(
            engine.native_apply(FileNotes(path, plan.agent, where, plan.folder.project, None))
        )


def _read(
    engine: NativeEngine,
    agent: Agent,
    folder: NativeFolder,
    path: Path,
    st: os.stat_result,
    report: NativeReport,
) -> _Read | None:
    """One file's notes, redacted and classified; ``st`` is its stat as listed (what
    the next run compares with). None (counted ``unreadable``) when it cannot be read
    now (it is read again next run)."""
    try:
        text = read_text(path)
    except OSError:
        report.skip("unreadable")
        return None
    notes = []
    detector = engine.detector
    for note in agent.read_native(folder, path, text):
        clean, hits = detector.redact(note.text)
        report.redactions += len(hits)
        level, _ = detector.classify(clean)
        meta: dict[str, Any] = {}
        if note.native_type:
            meta["type"] = note.native_type
        if note.title:
            meta["title"] = detector.redact(note.title)[0]
        notes.append(
            NoteIn(
                text=clean,
                kind=note.kind,
                start_line=note.start_line,
                end_line=note.end_line,
                sensitivity=int(level),
                key=note.key,
                metadata=meta,
            )
        )
    return _Read(str(path), st.st_size, st.st_mtime, notes)


def _embed(
    engine: NativeEngine,
    changed: list[tuple[set[tuple[str, str | None]], _Read]],
    report: NativeReport,
) -> None:
    """Embed the notes whose text memloom has not read from that file before (an
    unchanged note of a changed file needs no vector: it writes nothing)."""
    wanted = [
        n for known, r in changed for n in r.notes if (r.path, content_hash(n.text)) not in known
    ]
    for start in range(0, len(wanted), EMBED_BATCH):
        batch = wanted[start : start + EMBED_BATCH]
        vectors = engine.embed_texts([n.text for n in batch])
        report.calls["embedding"] += 1
        if vectors is not None:
            for note, vec in zip(batch, vectors, strict=True):
                note.vec = vec


def _vanished(
    engine: NativeEngine,
    agent: Agent,
    folders: list[NativeFolder],
    summary: list[dict[str, Any]],
    options: NativeOptions,
    report: NativeReport,
) -> list[_Plan]:
    """Folders memloom read before that are gone now (the agent's memory cleared):
    their files are gone too. A folder still there but no longer listed (its project
    unknown now) is left as it is. ``summary``: :meth:`NativeEngine.native_summary`."""
    current = {str(f.path) for f in folders}
    plans = []
    for entry in summary:
        where = entry["folder"]
        if entry["agent"] != agent.name or where in current or os.path.lexists(where):
            continue
        rows = engine.native_rows([where])
        project = next((r.project for r in rows), None)
        if options.covers is not None and not options.covers(project):
            continue
        paths = sorted({r.path for r in rows})
        report.removed += len(paths)
        report.per_folder.append(
            FolderReport(agent=agent.name, path=where, project=project, removed=len(paths))
        )
        folder = NativeFolder(agent.name, Path(where), project)
        plans.append(_Plan(agent.name, folder, [], set(), paths))
    return plans
