"""``memloom import sessions``: an agent's sessions in, typed memories out.

The agent adapter (:mod:`memloom.agents`, default Claude Code) finds and reads
the sessions and says what each ledger row is keyed by; the rest is the same for
every agent: discover → ledger check → parse → redact → chunk → distill (one LLM call per
chunk) → embed → belief pipeline → provenance → watermark. The watermark moves
after every chunk, so a run that stops part-way (a 402 from the provider, a
crash, Ctrl-C) keeps what it did and the next run resumes where it stopped.

Crash safety. Each memory the belief pipeline writes (inserted, versioned or
merged into) commits in one transaction together with its provenance row and the
session's ledger row (its memory count, the watermark unchanged): see
:class:`_Journal`. A run killed part-way through a chunk therefore leaves every
item of that chunk either wholly written or not at all, and the resumed run,
which distills the chunk again from the last watermark, recognises the items
already written by their provenance (same file, same lines, same content) and
skips them instead of merging them a second time (:meth:`Importer._already_written`).
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, Field

from memloom import anchors
from memloom.agents import DEFAULT_AGENT, get_agent, session_container
from memloom.agents.base import DiscoverOptions
from memloom.agents.discovery import named_root, named_roots
from memloom.agents.markup import is_llm_call
from memloom.core import beliefs
from memloom.errors import (
    EmbedderUnavailableError,
    EmbeddingError,
    LLMError,
    ProviderUnavailableError,
)
from memloom.hashing import content_hash
from memloom.project import project_key
from memloom.sessions import ledger as ledger_mod
from memloom.sessions.chunk import Chunk, chunk_units
from memloom.sessions.native import NativeReport
from memloom.sessions.tool_lines import ToolLines
from memloom.store.base import LedgerRow, ProvenanceRow, SearchFilter

if TYPE_CHECKING:
    from memloom.agents.base import SessionFile, Unit
    from memloom.core.writes import Observer
    from memloom.llm.base import LLM
    from memloom.store.base import Store

log = logging.getLogger(__name__)

EXCERPT_CHARS = 500
#: The default agent's name (memories carry their agent's name as ``source``).
SOURCE = DEFAULT_AGENT
SKIP_REASONS = (
    "sidecars",
    "active",
    "outside_window",
    "over_cap",
    "up_to_date",
    "project_filter",
    "not_transcripts",
    "missing",
    # Refused by a safety rule (memloom.agents.discovery.Fence): never read.
    "unsafe",
    # Files that failed to read after discovery (vanished, permission denied, not a
    # regular file, truncated while read): counted, reported per session, retried next run.
    "unreadable",
    # memloom's own distillation calls through an agent's CLI (memloom.llm's CLI
    # providers), recognised by their folder or their prompt's marker: never distilled.
    "memloom_calls",
)

Progress = Callable[[dict[str, Any]], None]


class SessionReport(BaseModel):
    path: str
    #: The coding agent the session belongs to (a name in memloom.agents.agent_names()).
    agent: str | None = None
    session_id: str | None = None
    project: str | None = None
    status: str = "imported"  # imported | up_to_date | dry_run | partial | failed | empty
    reason: str | None = None  # new | grown | partial | rewritten | truncated | forced
    units: int = 0
    chunks: int = 0
    chunks_done: int = 0
    chars: int = 0
    saved: int = 0
    versioned: int = 0
    merged: int = 0
    conflicts: int = 0
    dropped: int = 0
    error: str | None = None


class ImportReport(BaseModel):
    """The summary document of one run (``--json`` prints it)."""

    sessions: int = 0
    saved: int = 0
    versioned: int = 0
    merged: int = 0
    conflicts: int = 0
    auto_resolved: int = 0
    dropped: int = 0
    truncated: int = 0
    redactions: int = 0
    malformed: int = 0
    #: lines longer than the parser's cap (parse.MAX_LINE_BYTES), skipped unread
    oversized: int = 0
    #: distilled items dropped, by reason (tasks.DISTILL_DROP_REASONS); they add up to ``dropped``
    dropped_reasons: dict[str, int] = Field(default_factory=dict)
    duplicates: int = 0
    failed: int = 0
    chunks: int = 0
    input_chars: int = 0
    calls: dict[str, int] = Field(
        default_factory=lambda: {"extraction": 0, "classify": 0, "judge": 0, "embedding": 0}
    )
    skipped: dict[str, int] = Field(default_factory=lambda: dict.fromkeys(SKIP_REASONS, 0))
    llm: str = ""
    offline: bool = False
    dry_run: bool = False
    stopped: str | None = None
    elapsed_s: float = 0.0
    #: The agents this run read, in order.
    agents: list[str] = Field(default_factory=list)
    per_session: list[SessionReport] = Field(default_factory=list)
    #: The agents' own memory files, followed in the same run
    #: (``memloom.sessions.native.NativeReport``); None when not read.
    native: NativeReport | None = None

    def absorb(self, other: ImportReport) -> None:
        """Add another agent's run to this one (counts add up; sessions are appended)."""
        for name, value in other:
            mine = getattr(self, name)
            if isinstance(value, bool) or name in (
                "llm",
                "offline",
                "dry_run",
                "stopped",
                "native",
            ):
                continue
            if isinstance(value, float):
                setattr(self, name, round(mine + value, 3))
            elif isinstance(value, int):
                setattr(self, name, mine + value)
            elif isinstance(value, dict):
                for key, count in value.items():
                    mine[key] = mine.get(key, 0) + count
            elif isinstance(value, list):
                mine.extend(value)
        self.stopped = self.stopped or other.stopped


@dataclass
class ImportOptions:
    paths: Sequence[Path] | None = None
    days: float | None = 14
    sessions: int | None = 20
    project: str | None = None
    dry_run: bool = False
    force: bool = False
    root: Path | None = None
    quiet_seconds: float = 300
    #: Unattended runs (the capture worker) may be capped by a daily budget:
    #: called before each extraction call; False stops the run.
    allow_call: Callable[[], bool] | None = None
    progress: Progress | None = None
    judge: bool = True
    extra: dict[str, Any] = field(default_factory=dict)
    #: The agent whose sessions these are (a name in :func:`memloom.agents.agent_names`).
    agent: str = DEFAULT_AGENT
    #: ``paths`` are the owner's own choice (``memloom import sessions --path``), not a
    #: hook's or an HTTP client's: each session's ledger row records the folder named
    #: (``LedgerRow.named_root``), from which ``/context`` may serve its lines.
    named: bool = False


class ProviderStopped(Exception):
    """The run stops here, keeping its progress: the provider refused (401/402/403),
    the daily budget is spent, or an interruption (an outage, the store failing)."""


def _chunk_only(exc: Exception) -> bool:
    """Whether a chunk's failure is the chunk's own (a reply that is not JSON, an input
    the embedder refuses), which an uninterrupted run meets too: the run goes on with
    the next session. Anything else (an outage after the retries, the store failing, a
    full disk) is an interruption: the run stops, so that the next one resumes in the
    order an uninterrupted run writes in."""
    if isinstance(exc, ProviderUnavailableError | EmbedderUnavailableError):
        return False
    return isinstance(exc, LLMError | EmbeddingError)


#: The ledger hash of a session with nothing read yet (sha256 of no bytes).
_EMPTY_HASH = hashlib.sha256().hexdigest()
_ANY_STATUS = frozenset({"active", "stale", "expired"})


@dataclass
class _Progress:
    """The session's ledger row as last written, and whether this run resumes it."""

    row: LedgerRow
    #: Resumed from a watermark: items of the re-read lines (the context, or a chunk a
    #: killed run had started) may be written already and are then skipped.
    replaying: bool


class ImportEngine(Protocol):
    """What the importer needs of the facade (:class:`memloom.engine.Memloom`); a
    protocol, so that ``memloom.sessions`` never imports the facade."""

    @property
    def backend(self) -> Store: ...
    @property
    def detector(self) -> Any: ...
    def embed_texts(self, texts: Sequence[str]) -> Any: ...
    def add_provenance(self, row: ProvenanceRow) -> None: ...
    def belief_pipeline(
        self,
        llm: Any,
        *,
        judge: bool = False,
        observer: Observer | None = None,
        strict: bool = False,
    ) -> beliefs.BeliefPipeline: ...


class _Journal:
    """The importer's bookkeeping, written inside each memory write's own transaction.

    The belief pipeline commits every memory write in a transaction of its own,
    between LLM calls. Whenever it inserts a row or merges into one, the journal
    (the pipeline writer's observer) adds, in that same transaction, the item's
    provenance row and the session's ledger row with its memory count (watermark
    unchanged, status ``partial``). A crash can then never leave a memory without
    its provenance, a ledger count that disagrees with the memories, or a session
    whose first writes are not marked as started (so the next run resumes it
    rather than starting afresh).
    """

    def __init__(self, store: Any) -> None:
        self.store = store
        self.provenance: ProvenanceRow | None = None
        self.progress: _Progress | None = None
        self.written: list[str] = []

    def begin(self, provenance: ProvenanceRow, progress: _Progress) -> None:
        self.provenance, self.progress, self.written = provenance, progress, []

    def end(self) -> list[str]:
        written, self.provenance, self.progress, self.written = self.written, None, None, []
        return written

    def record(self, memory_id: str, inserted: bool) -> None:
        """The pipeline writer's observer: called inside the write transaction."""
        if self.provenance is None or self.progress is None:
            return
        now = time.time()
        self.store.add_provenance(replace(self.provenance, memory_id=memory_id, created_at=now))
        row = self.progress.row
        self.progress.row = replace(
            row, status="partial", memories=row.memories + int(inserted), updated_at=now
        )
        self.store.ledger_put(self.progress.row)
        self.written.append(memory_id)


def _iso_ts(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


_BLOCK = 1 << 20  # files are read a block at a time: a 200 MB transcript costs 1 MB


def _line_ends(path: Path, start: int, end: int, opener: ledger_mod.Opener) -> list[int]:
    """Absolute byte offsets just past each newline in [start, end)."""
    if end <= start:
        return []
    out: list[int] = []
    last = b""
    with opener(path) as fh:
        fh.seek(start)
        pos = start
        while pos < end:
            block = fh.read(min(_BLOCK, end - pos))
            if not block:
                break
            found = block.find(b"\n")
            while found >= 0:
                out.append(pos + found + 1)
                found = block.find(b"\n", found + 1)
            pos += len(block)
            last = block[-1:]
    if last != b"\n":
        out.append(end)  # a complete last record without its newline
    return out


def _hash_range(digest: Any, path: Path, start: int, end: int, opener: ledger_mod.Opener) -> None:
    """Feed bytes [start, end) of ``path`` to ``digest``, a block at a time."""
    with opener(path) as fh:
        fh.seek(start)
        remaining = end - start
        while remaining > 0:
            block = fh.read(min(_BLOCK, remaining))
            if not block:  # truncated meanwhile: the next run sees a changed file
                return
            digest.update(block)
            remaining -= len(block)


class Importer:
    def __init__(self, engine: ImportEngine, llm: LLM, options: ImportOptions) -> None:
        self.engine = engine
        self.llm = llm
        self.opt = options
        self.agent = get_agent(options.agent)
        self.report = ImportReport(
            llm=getattr(llm, "description", getattr(llm, "name", "")),
            offline=bool(getattr(llm, "offline", False)),
            dry_run=options.dry_run,
            agents=[options.agent],
        )
        self.journal = _Journal(engine.backend)
        # Strict: a classifier or judge call that fails fails the chunk (retried from
        # its watermark next run) instead of letting distance bands decide this once.
        self.pipeline = engine.belief_pipeline(
            llm, judge=options.judge, observer=self.journal.record, strict=True
        )
        self._progress: _Progress | None = None
        self._named = named_roots(options.paths) if options.named and options.paths else []
        self._repos: dict[str, anchors.Repo] = {}  # a session folder -> its repository
        self._tools = ToolLines([], [])

    # ------------------------------------------------------------ run

    def _emit(self, event: str, **data: Any) -> None:
        if self.opt.progress is not None:
            self.opt.progress({"event": event, **data})

    def run(self) -> ImportReport:
        started = time.perf_counter()
        opt = self.opt
        found = self.agent.discover(
            DiscoverOptions(
                paths=[Path(p) for p in opt.paths] if opt.paths else None,
                root=opt.root,
                days=opt.days,
                max_sessions=opt.sessions,
                project=opt.project,
                quiet_seconds=opt.quiet_seconds,
            )
        )
        # Absolute paths: the ledger and provenance must not depend on the current directory.
        found.files = [replace(f, path=f.path.resolve()) for f in found.files]
        for reason, count in found.skipped.items():
            self.report.skipped[reason] = self.report.skipped.get(reason, 0) + count
        key = self.agent.ledger_identity
        rows = self.engine.backend.ledger_get_many([key(f) for f in found.files])
        self._emit(
            "discovered",
            agent=self.agent.name,
            files=len(found.files),
            skipped=dict(self.report.skipped),
        )
        for file in found.files:
            try:
                session = self._session(file, rows.get(key(file)))
            except ProviderStopped:
                break
            except (OSError, ValueError) as exc:  # the file changed under us: count, go on
                session = self._unreadable(file, exc)
            if session is not None:
                self.report.per_session.append(session)
                self._emit("session_done", session=session.model_dump())
        self.report.elapsed_s = round(time.perf_counter() - started, 3)
        self._emit("done", report=self.report.model_dump())
        return self.report

    # ------------------------------------------------------------ one file

    def _session(self, file: SessionFile, row: LedgerRow | None) -> SessionReport | None:
        path = file.path
        key = self.agent.ledger_identity(file)  # the ledger row's and seen records' key
        plan = ledger_mod.plan(
            path, file.size, file.mtime, row, force=self.opt.force, opener=self.agent.open
        )
        rep = SessionReport(
            path=str(path), agent=self.agent.name, session_id=file.session_id, reason=plan.reason
        )
        named = named_root(session_container(str(path)), self._named) or (
            row.named_root if row is not None else None
        )
        if plan.action == "skip":
            self.report.skipped["up_to_date"] += 1
            self._emit("session_skipped", path=str(path), reason=plan.reason)
            changed = row is not None and (row.mtime, row.named_root) != (file.mtime, named)
            if row is not None and changed and not self.opt.dry_run:
                with self.engine.backend.transaction():
                    row.mtime, row.named_root = file.mtime, named
                    self.engine.backend.ledger_put(row)
            return None
        self.report.sessions += 1
        start_offset = plan.offset if plan.action == "resume" else 0
        start_line = plan.lines if plan.action == "resume" else 0

        context: list[Unit] = []
        context_cwd = None
        ctx_touched: list[tuple[int, str, str]] = []
        if start_offset:
            ctx_off, ctx_lines = ledger_mod.context_start(
                path, start_offset, start_line, opener=self.agent.open
            )
            with self.agent.open(path) as fh:
                fh.seek(ctx_off)
                ctx_bytes = fh.read(start_offset - ctx_off)
            ctx_parsed = self.agent.read_bytes(ctx_bytes, first_line=ctx_lines + 1, final=True)
            context, context_cwd = ctx_parsed.units, ctx_parsed.cwd
            ctx_touched = ctx_parsed.touched

        parsed = self.agent.read(path, start_offset=start_offset, start_line=start_line)
        self.report.malformed += parsed.malformed
        self.report.oversized += parsed.oversized
        # A resumed session keeps the project and id its start decided: the first cwd
        # after the watermark may be a subfolder the session moved to (a worktree
        # agent), and an interrupted import must file memories where a clean one does.
        kept = row if plan.action == "resume" and row is not None else None
        rep.session_id = (kept and kept.session_id) or parsed.session_id or file.session_id
        project = (
            (kept.project if kept else None)
            or parsed.cwd
            or context_cwd
            or (row.project if row else None)
            or file.project_dir
        ) or None  # "": no project known, the memories are global
        rep.project = project
        first_user = next((u.text for u in (*context, *parsed.units) if u.role == "user"), None)
        if is_llm_call(parsed.cwd or context_cwd, first_user):
            return self._own_call(rep, key, file, parsed.end_offset, parsed.lines_read)
        units = list(parsed.units)
        # The tool calls of the lines read (and of the context re-read before them), and
        # every unit read: which calls a memory drew on (:mod:`.tool_lines`).
        self._tools = ToolLines([*ctx_touched, *parsed.touched], [*context, *units])
        uuids = [u.uuid for u in units if u.uuid]
        if uuids:
            # A file its agent rewrites whole (Gemini's legacy .json), read again from
            # its start: what an earlier run distilled from it is not sent again.
            again = self.agent.rereads_whole and plan.reason in ("rewritten", "truncated")
            seen = self.engine.backend.records_seen(uuids, "" if again else key)
            if seen:
                before = len(units)
                fresh = [u for u in units if u.uuid not in seen]
                if again and fresh and not context:
                    context = _context_before(units, fresh[0], seen)
                units = fresh
                self.report.duplicates += before - len(units)
        rep.units = len(units)
        for unit in (*context, *units):
            unit.text = self._redact(unit.text)
        chunks, truncated = chunk_units([*context, *units], context=len(context))
        self.report.truncated += truncated
        rep.chunks = len(chunks)
        rep.chars = sum(c.chars for c in chunks)
        self.report.chunks += len(chunks)
        self.report.input_chars += rep.chars
        end_offset = max(parsed.end_offset, start_offset)
        end_lines = max(parsed.lines_read, start_line)
        if self.opt.dry_run:
            rep.status = "dry_run"
            return rep
        self._emit("session_start", path=str(path), chunks=len(chunks), units=len(units))

        digest = hashlib.sha256()
        consumed = 0
        if start_offset:
            digest = ledger_mod.prefix_digest(path, start_offset, self.agent.open)
            consumed = start_offset
        ends = _line_ends(path, start_offset, end_offset, self.agent.open)

        def offset_of_line(line: int) -> int:
            index = line - start_line - 1
            return ends[index] if 0 <= index < len(ends) else end_offset

        resumed = row is not None and plan.action == "resume"
        progress = self._progress = _Progress(
            row=replace(row, named_root=named)
            if resumed and row is not None
            else LedgerRow(
                path=key,
                session_id=rep.session_id,
                project=project,
                size=file.size,
                mtime=file.mtime,
                offset=0,
                lines=0,
                hash=_EMPTY_HASH,
                status="partial",
                memories=0,
                agent=self.agent.name,
                named_root=named,
            ),
            replaying=resumed,
        )

        def save_ledger(offset: int, lines: int, status: str, error: str | None = None) -> None:
            nonlocal consumed
            if offset > consumed:
                _hash_range(digest, path, consumed, offset, self.agent.open)
                consumed = offset
            # Counted as each memory was written (saved + versioned), in the same
            # transaction as the memory: see _Journal.
            progress.row = LedgerRow(
                path=key,
                session_id=rep.session_id,
                project=project,
                size=file.size,
                mtime=file.mtime,
                offset=offset,
                lines=lines,
                hash=digest.hexdigest(),
                status=status,
                memories=progress.row.memories,
                last_error=error,
                updated_at=time.time(),
                agent=self.agent.name,
                named_root=named,
            )
            self.engine.backend.ledger_put(progress.row)

        def keep_progress() -> None:
            """Record the last finished chunk's watermark; the next run resumes there."""
            with self.engine.backend.transaction():
                save_ledger(
                    consumed, self._lines_at(consumed, start_line, ends), "partial", rep.error
                )

        for index, chunk in enumerate(chunks):
            if self.opt.allow_call is not None and not self.opt.allow_call():
                self._stop(rep, "daily budget of unattended calls is spent")
                keep_progress()
                raise ProviderStopped
            try:
                self._distill_chunk(chunk, rep, project, str(path))
            except ProviderStopped as stop:
                self._stop(rep, str(stop))
                keep_progress()
                raise
            except Exception as exc:
                if not _chunk_only(exc):
                    self._interrupted(rep, f"chunk {index + 1}/{len(chunks)}: {exc}", keep_progress)
                    raise ProviderStopped(str(exc)) from exc
                log.warning("chunk %d of %s failed: %s", index + 1, path, exc)
                rep.status = "failed" if rep.chunks_done == 0 else "partial"
                rep.error = f"chunk {index + 1}/{len(chunks)}: {exc}"
                self.report.failed += 1
                keep_progress()
                return rep
            rep.chunks_done += 1
            last = index == len(chunks) - 1
            wm_line = end_lines if last else max(u.end_line for u in chunk.new_units)
            wm_offset = end_offset if last else offset_of_line(wm_line)
            try:
                with self.engine.backend.transaction():
                    self.engine.backend.records_add(
                        [u.uuid for u in chunk.new_units if u.uuid], key
                    )
                    save_ledger(wm_offset, wm_line, "complete" if last else "partial")
            except Exception as exc:  # the store failed (a full disk): resume here next run
                self._interrupted(rep, f"chunk {index + 1}/{len(chunks)}: {exc}", None)
                raise ProviderStopped(str(exc)) from exc
            self._emit("chunk_done", path=str(path), index=index + 1, total=len(chunks))
        if not chunks:
            rep.status = "empty"
            with self.engine.backend.transaction():
                save_ledger(end_offset, end_lines, "complete")
        return rep

    def _own_call(
        self, rep: SessionReport, key: str, file: SessionFile, offset: int, lines: int
    ) -> SessionReport:
        """One of memloom's own distillation calls (its CLI saved the session anyway):
        nothing distilled, and a ledger row at its end, so no later run reads it."""
        self.report.sessions -= 1
        self.report.skipped["memloom_calls"] = self.report.skipped.get("memloom_calls", 0) + 1
        self._emit("session_skipped", path=rep.path, reason="memloom_call")
        rep.status = "up_to_date"
        rep.reason = "memloom_call"
        if not self.opt.dry_run:
            with self.engine.backend.transaction():
                self.engine.backend.ledger_put(
                    LedgerRow(
                        path=key,
                        session_id=rep.session_id or file.session_id,
                        project=rep.project,
                        size=file.size,
                        mtime=file.mtime,
                        offset=offset,
                        lines=lines,
                        hash=ledger_mod.prefix_digest(
                            file.path, offset, self.agent.open
                        ).hexdigest(),
                        status="complete",
                        memories=0,
                        last_error=None,
                        updated_at=time.time(),
                        agent=self.agent.name,
                    )
                )
        return rep

    def _unreadable(self, file: SessionFile, exc: Exception) -> SessionReport:
        """A file that could not be read after discovery: counted, never fatal to the run."""
        log.warning("could not read %s: %s", file.path, exc)
        self.report.skipped["unreadable"] += 1
        return SessionReport(
            path=str(file.path),
            agent=self.agent.name,
            session_id=file.session_id,
            status="failed",
            error=f"{exc}",
        )

    @staticmethod
    def _lines_at(offset: int, start_line: int, ends: list[int]) -> int:
        """Line count at a watermark offset already recorded (for partial saves)."""
        count = start_line
        for end in ends:
            if end <= offset:
                count += 1
            else:
                break
        return count

    def _interrupted(
        self, rep: SessionReport, message: str, keep_progress: Callable[[], None] | None
    ) -> None:
        """An outage or a store failure part-way through a chunk: the run stops here,
        as if interrupted, and records where (if the store still takes the write: the
        last finished chunk's watermark is committed already)."""
        log.warning("%s: %s; stopping, the next run resumes here", rep.path, message)
        self._stop(rep, message)
        if keep_progress is None:
            return
        try:
            keep_progress()
        except Exception as exc:  # the store still fails: the committed watermark stands
            log.warning("could not record the stop of %s in the ledger: %s", rep.path, exc)

    def _stop(self, rep: SessionReport, message: str) -> None:
        rep.status = "partial" if rep.chunks_done else "failed"
        rep.error = message
        self.report.stopped = message
        self.report.failed += 1

    # ------------------------------------------------------------ pieces

    def _redact(self, text: str) -> str:
        clean, hits = self.engine.detector.redact(text)
        self.report.redactions += len(hits)
        return clean

    def _distill_chunk(
        self, chunk: Chunk, rep: SessionReport, project: str | None, path: str
    ) -> None:
        from memloom.llm import tasks
        from memloom.llm.base import ProviderStopError

        first = chunk.units[0] if chunk.units else None
        payload = {
            "session": {
                "id": (first and first.session_id) or rep.session_id,
                "project": (first and first.project) or project,
                "path": path,
            },
            "lines": [{"line": u.start_line, "role": u.role, "text": u.text} for u in chunk.units],
        }
        try:
            reply = self.llm.complete(
                tasks.DISTILL, tasks.DISTILL_SYSTEM, payload, tasks.DISTILL_SCHEMA
            )
        except ProviderStopError as exc:
            raise ProviderStopped(str(exc)) from exc
        finally:
            self.report.calls["extraction"] += 1
        new_from = chunk.new_units[0].start_line if chunk.context else None
        items, reasons = tasks.validate_distill_reasons(
            reply, chunk_lines=(chunk.first_line, chunk.last_line), new_from=new_from
        )
        dropped = sum(reasons.values())
        for reason, count in reasons.items():
            self.report.dropped_reasons[reason] = self.report.dropped_reasons.get(reason, 0) + count
        self.report.dropped += dropped
        rep.dropped += dropped
        if not items:
            return
        texts = [self._redact(item.content) for item in items]
        vectors = self.engine.embed_texts(texts)
        self.report.calls["embedding"] += 1
        by_line = chunk.units
        progress = self._progress
        assert progress is not None
        for i, item in enumerate(items):
            start, end = item.lines
            vec = None if vectors is None else vectors[i]
            near = [u for u in by_line if u.end_line >= start and u.start_line <= end]
            # A file of several sessions (Aider) or a session that changes directory
            # (Codex): the memory belongs to the turns it came from.
            session_id = next((u.session_id for u in near if u.session_id), rep.session_id)
            where = next((u.project for u in near if u.project), project)
            # The memory is filed under the folder's repository (worktrees and clones
            # are one project); its provenance keeps the folder the session ran in.
            filed = project_key(where)
            if progress.replaying and self._already_written(texts[i], vec, filed, path, item):
                log.debug("%s lines %d-%d: already written by an earlier run", path, start, end)
                continue
            excerpt = "\n".join(f"{u.role}: {u.text}" for u in near)
            if len(excerpt) > EXCERPT_CHARS:
                excerpt = excerpt[: EXCERPT_CHARS - 1] + "…"
            stamps = [t for t in (_iso_ts(u.timestamp) for u in near) if t is not None]
            level, _ = self.engine.detector.classify(texts[i])
            belief = beliefs.NewBelief(
                text=texts[i],
                vec=vec,
                type=item.type,
                project=filed,
                sensitivity=int(level),
                source=self.agent.name,
                session_id=session_id,
                asserted_at=max(stamps) if stamps else None,
                excerpt=excerpt,
                metadata={"session_id": session_id, "lines": [start, end]},
                anchors=self._anchors(texts[i], where, self._tools.paths(start, end)),
            )
            origin = ProvenanceRow(
                memory_id="",
                session_id=session_id,
                path=path,
                project=where,
                start_line=start,
                end_line=end,
                excerpt=excerpt,
                agent=self.agent.name,
            )
            before = progress.row
            self.journal.begin(origin, progress)
            try:
                out = self.pipeline.write(belief)
            except ProviderStopError as exc:  # the classifier or judge call, refused
                progress.row = before
                raise ProviderStopped(str(exc)) from exc
            except BaseException:
                progress.row = before  # the write's transaction rolled back
                raise
            finally:
                journaled = self.journal.end()
            for name, count in out.calls.items():
                self.report.calls[name] = self.report.calls.get(name, 0) + count
            self.report.auto_resolved += out.auto_resolved
            if out.outcome == "merged":
                self.report.merged += 1
                rep.merged += 1
            elif out.outcome == "versioned":
                self.report.versioned += 1
                rep.versioned += 1
            else:
                self.report.saved += 1
                rep.saved += 1
                if out.outcome == "conflict":
                    self.report.conflicts += len(out.conflicts)
                    rep.conflicts += len(out.conflicts)
            if out.memory_id not in journaled:
                # A write the journal did not see (not expected): provenance on its own.
                if out.outcome != "merged":
                    progress.row = replace(progress.row, memories=progress.row.memories + 1)
                self.engine.add_provenance(
                    replace(origin, memory_id=out.memory_id, created_at=time.time())
                )

    def _anchors(
        self, text: str, folder: str | None, touched: Sequence[str] = ()
    ) -> list[dict[str, Any]] | None:
        """The files of the session's folder the memory names, then those the tool
        calls of its lines read or edited (``touched``; :mod:`memloom.anchors`); None
        when the session names no folder that is there. One git question per folder
        and run."""
        if not folder or not os.path.isabs(folder) or not os.path.isdir(folder):
            return None
        repo = self._repos.get(folder)
        if repo is None:
            repo = self._repos[folder] = anchors.repo_of(folder)
        return anchors.find(text, folder, touched=touched, repo=repo).anchors

    def _already_written(
        self, text: str, vec: Any, project: str | None, path: str, item: Any
    ) -> bool:
        """Whether an earlier run already wrote this item: a memory with the same
        content (any status and project: the judge may have expired it, a later version
        superseded it) has a provenance row from this file and these lines. Both commit
        with the memory (see :class:`_Journal`), so this is exact however many rows
        share the text or its vector (a belief restated turn after turn).

        With the offline extractor, the distance bands merge near-duplicates into a
        memory of other text; one that close, with that provenance, counts as well.
        """
        store = self.engine.backend
        ids = store.ids_with_hash(content_hash(text))
        if vec is not None and self.pipeline.llm is None:
            flt = SearchFilter(statuses=_ANY_STATUS, project=project, project_mode="exact")
            hits = store.vector_search(vec, 20, flt)
            ids += [i for i, sim in hits if sim >= 1.0 - beliefs.DEDUP_DISTANCE]
        start, end = item.lines
        return any(
            p.path == path and p.start_line == start and p.end_line == end
            for p in store.provenance(ids)
        )


__all__ = ["Counter", "ImportOptions", "ImportReport", "Importer", "SessionReport"]


def _context_before(units: Sequence[Unit], first_new: Unit, seen: set[str]) -> list[Unit]:
    """The already-imported units just before ``first_new`` (within the same
    :data:`ledger.CONTEXT_LINES` a resumed read re-reads), sent as context only."""
    floor = first_new.start_line - ledger_mod.CONTEXT_LINES
    before = [u for u in units if u.end_line < first_new.start_line and u.uuid in seen]
    return [u for u in before if u.end_line > floor]
