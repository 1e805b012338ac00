"""Reading what the store holds: one memory, its history, pages of memories, the
statistics, the viewer's activity charts, and the export every backup is made of.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from typing import Any

from memloom.core.context import CoreContext
from memloom.core.documents import as_model, dt, memory_document, version_info
from memloom.core.recall import mark_stale
from memloom.core.writes import expire_if_due
from memloom.models import (
    HistoryResponse,
    ListRequest,
    ListResponse,
    MemoryDocument,
    ProvenanceInfo,
    StatsResponse,
)
from memloom.store.base import MemoryRow, SearchFilter

#: ``/context`` serves at most this many bytes of (redacted) text per provenance row...
CONTEXT_ROW_BYTES = 64 * 1024
#: ...and this many for the whole document; an entry cut short says ``truncated``.
CONTEXT_TOTAL_BYTES = 256 * 1024
#: A transcript line longer than this is not read (it is served as nothing).
CONTEXT_LINE_BYTES = 1 << 20


def list_filter(req: ListRequest) -> SearchFilter:
    return SearchFilter(
        statuses=frozenset(s.value for s in req.statuses),
        project=req.project,
        project_mode="exact" if req.project is not None else "any",
        types=frozenset(t.value for t in req.types) if req.types else None,
        tags=frozenset(req.tags) if req.tags else None,
        max_sensitivity=req.max_sensitivity,
    )


class Activity:
    def __init__(self, ctx: CoreContext) -> None:
        self.ctx = ctx

    def get(self, memory_id: str, folder: str | None = None) -> MemoryDocument:
        """``GET /v1/memories/{id}``: the memory, its versions and its provenance; with
        ``folder``, its anchors checked in that folder's working tree (``stale``)."""
        store = self.ctx.store
        with self.ctx.lock:
            row = self.ctx.require(memory_id)
            versions = store.versions(row.root_id)
            provenance = store.provenance([v.id for v in versions])
        doc = memory_document(row, versions, provenance)
        if folder is not None:
            mark_stale([doc], folder)
        return doc

    def history(self, memory_id: str) -> HistoryResponse:
        with self.ctx.lock:
            row = self.ctx.require(memory_id)
            versions = self.ctx.store.versions(row.root_id)
        return HistoryResponse(versions=[version_info(v) for v in versions])

    def list(self, request: ListRequest | Mapping[str, Any] | None = None) -> ListResponse:
        req = as_model(ListRequest, request or {})
        with self.ctx.lock:
            page = self.ctx.store.list(
                list_filter(req),
                source=req.source,
                min_sensitivity=req.min_sensitivity,
                order=req.order,
                limit=req.limit,
                cursor=req.cursor,
            )
        return ListResponse(
            memories=[memory_document(r, [], []) for r in page.rows],
            next_cursor=page.next_cursor,
            total=page.total,
        )

    def export(self) -> Iterator[MemoryDocument]:
        """Every memory with its versions and provenance, oldest first (backups, diffs)."""
        store = self.ctx.store
        with self.ctx.lock:
            rows = list(store.iter_all())
        chains: dict[str, list[MemoryRow]] = {}
        for row in rows:
            chains.setdefault(row.root_id, []).append(row)
        for row in rows:
            versions = sorted(chains[row.root_id], key=lambda v: -v.version)
            yield memory_document(row, versions, store.provenance([row.id]))

    def stats(self) -> StatsResponse:
        store = self.ctx.store
        with self.ctx.lock:
            expire_if_due(store, time.time())
            raw = store.stats()
        by_status = raw["by_status"]
        return StatsResponse(
            total_memories=raw["total_memories"],
            active_count=by_status.get("active", 0),
            expired_count=by_status.get("expired", 0),
            stale_count=by_status.get("stale", 0),
            by_decay_level=raw["by_decay_level"],
            by_source=raw["by_source"],
            by_type=raw["by_type"],
            by_project=raw["by_project"],
            conflicts_pending=raw["conflicts_pending"],
            oldest_memory=dt(raw["oldest"]),
            newest_memory=dt(raw["newest"]),
            embedder=store.get_meta("embedder"),
            dimension=store.dimension,
        )

    def activity(self, days: int = 30) -> dict[str, Any]:
        """Memories saved per day and type, and the import ledger: what the viewer charts."""
        since = time.time() - days * 86400
        store = self.ctx.store
        with self.ctx.lock:
            per_day: dict[str, dict[str, int]] = {}
            for day, type_, count in store.saved_per_day(since):
                per_day.setdefault(day, {})[type_] = count
            imports = store.ledger_stats()
            recent = store.ledger_recent(10)
            by_type = self.stats().by_type
        return {
            "days": days,
            "per_day": [{"day": d, **counts} for d, counts in sorted(per_day.items())],
            "by_type": by_type,
            "imports": {**imports, "last_import_at": dt(imports.get("last_import"))},
            "recent_sessions": [
                {
                    "path": r.path,
                    "session_id": r.session_id,
                    "project": r.project,
                    "status": r.status,
                    "memories": r.memories,
                    "error": r.last_error,
                    "updated_at": dt(r.updated_at),
                }
                for r in recent
            ],
        }

    def memory_context(self, memory_id: str, around: int = 5) -> dict[str, Any]:
        """The transcript lines each provenance row points at, with ``around`` lines either
        side, read from the session file if it still exists (redacted as on import), by
        the reader of the agent the row names (lines are that agent's: an OpenCode line is
        a message of ``<store>#<session id>``).

        A stored row is not trusted to name a file (a backup restored, an import of a
        file swapped afterwards): lines are served only up to the ledger's watermark of
        that session (no ledger row: none; the ledger is this owner's), from a file that
        still lies in the agent's folders -- or, imported with ``--path``, in the folder
        the owner named (the ledger's ``named_root``, never restored from a backup) --,
        passes the ownership rules and is that agent's session by its content
        (``withheld`` says why not), at most :data:`CONTEXT_ROW_BYTES` per row and
        :data:`CONTEXT_TOTAL_BYTES` in all (``truncated``)."""
        from pathlib import Path

        from memloom.agents import agent_for_source, session_container

        doc = self.get(memory_id)
        out = []
        budget = CONTEXT_TOTAL_BYTES
        for p in doc.provenance:
            entry: dict[str, Any] = {
                "path": p.path,
                "start_line": p.start_line,
                "end_line": p.end_line,
                "exists": False,
                "lines": [],
                "truncated": False,
                "withheld": None,
            }
            out.append(entry)
            path = Path(p.path) if p.path else None
            if path is None or not Path(session_container(path)).is_file():
                continue
            entry["exists"] = True
            if not (p.start_line and p.end_line):
                continue
            agent = agent_for_source(p.agent)
            upto, why = self._served_until(p, agent)
            if why is not None:
                entry["withheld"] = why
                continue
            first = max(1, p.start_line - around)
            last = min(p.end_line + around, upto)
            if last < first:
                continue
            lines, cut = _read_lines(agent, path, first, last)
            parsed = agent.read_bytes(lines, first_line=first, final=True)
            room = min(CONTEXT_ROW_BYTES, budget)
            for unit in parsed.units:
                text, _ = self.ctx.detector.redact(unit.text)
                size = len(text.encode("utf-8"))
                if size > room:
                    text = text.encode("utf-8")[:room].decode("utf-8", "ignore")
                    size, cut = room, True
                room -= size
                budget -= size
                entry["lines"].append(
                    {
                        "start_line": unit.start_line,
                        "end_line": unit.end_line,
                        "role": unit.role,
                        "text": text,
                        "cited": unit.end_line >= p.start_line and unit.start_line <= p.end_line,
                    }
                )
                if room <= 0:
                    cut = cut or unit is not parsed.units[-1]
                    break
            entry["truncated"] = cut
        return {"id": doc.id, "provenance": out}

    def _served_until(self, p: ProvenanceInfo, agent: Any) -> tuple[int, str | None]:
        """The last line of ``p``'s session that may be served, or the reason none is."""
        from pathlib import Path

        from memloom.agents import session_container
        from memloom.agents.base import SessionFile
        from memloom.agents.discovery import unsafe_reason

        assert p.path is not None
        file = SessionFile(Path(p.path), p.session_id or "", "", 0, 0)
        keys = {p.path, agent.ledger_identity(file)}
        rows = self.ctx.store.ledger_get_many(sorted(keys))
        row = next((rows[k] for k in sorted(keys) if k in rows), None)
        if row is None:
            return 0, "not_imported"
        # A file the owner named with --path is theirs to read where it is: fenced in the
        # folder they named, as the import was; any other in the agent's own folders.
        folders = [row.named_root] if row.named_root else agent.session_folders()
        rule = unsafe_reason(session_container(p.path), folders)
        if rule is not None:
            return 0, rule
        if not agent.recognises(Path(p.path)):
            return 0, "not_a_session"
        return row.lines, None


def _read_lines(agent: Any, path: Any, first: int, last: int) -> tuple[bytes, bool]:
    """Lines ``first``..``last`` of the session as the agent opens it, and whether any was
    left out: a line longer than :data:`CONTEXT_LINE_BYTES` is read as an empty line
    (its numbering kept), and reading stops past ``CONTEXT_LINE_BYTES`` in all."""
    from memloom.agents.files import line_segments

    chunk = bytearray()
    cut = False
    with agent.open(path) as fh:
        blocks = iter(lambda: fh.read(64 * 1024), b"")
        for number, (raw, _size, _ended) in enumerate(
            line_segments(blocks, CONTEXT_LINE_BYTES), start=1
        ):
            if number > last:
                break
            if number < first:
                continue
            if raw is None or len(chunk) + len(raw) > CONTEXT_LINE_BYTES:
                cut = True
                raw = b""
            chunk += raw + b"\n"
    return bytes(chunk), cut
