"""Reading what the store holds: one memory, its history, pages of memories, the
statistics, the viewer's activity charts, and the export every backup is made of.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from typing import Any

from memloom.core.context import CoreContext
from memloom.core.documents import as_model, dt, memory_document, version_info
from memloom.core.writes import expire_if_due
from memloom.models import (
    HistoryResponse,
    ListRequest,
    ListResponse,
    MemoryDocument,
    StatsResponse,
)
from memloom.store.base import MemoryRow, SearchFilter


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

    def get(self, memory_id: str) -> MemoryDocument:
        """``GET /v1/memories/{id}``: the memory, its versions and its provenance."""
        store = self.ctx.store
        with self.ctx.lock:
            row = self.ctx.require(memory_id)
            versions = store.versions(row.root_id)
            provenance = store.provenance([v.id for v in versions])
        return memory_document(row, versions, provenance)

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
        a message of ``<store>#<session id>``)."""
        from pathlib import Path

        from memloom.agents import agent_for_source, session_container

        doc = self.get(memory_id)
        out = []
        for p in doc.provenance:
            entry: dict[str, Any] = {
                "path": p.path,
                "start_line": p.start_line,
                "end_line": p.end_line,
                "exists": False,
                "lines": [],
            }
            path = Path(p.path) if p.path else None
            exists = path is not None and Path(session_container(path)).is_file()
            if path is not None and exists and p.start_line and p.end_line:
                agent = agent_for_source(p.agent)
                entry["exists"] = True
                first = max(1, p.start_line - around)
                last = p.end_line + around
                chunk = bytearray()
                with agent.open(path) as fh:
                    for number, raw in enumerate(fh, start=1):
                        if number > last:
                            break
                        if number >= first:
                            chunk += raw
                parsed = agent.read_bytes(bytes(chunk), first_line=first, final=True)
                for unit in parsed.units:
                    text, _ = self.ctx.detector.redact(unit.text)
                    entry["lines"].append(
                        {
                            "start_line": unit.start_line,
                            "end_line": unit.end_line,
                            "role": unit.role,
                            "text": text,
                            "cited": unit.end_line >= p.start_line
                            and unit.start_line <= p.end_line,
                        }
                    )
            out.append(entry)
        return {"id": doc.id, "provenance": out}
