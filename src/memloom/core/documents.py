"""Rows as JSON documents: one converter per document, used by every service.

Store rows carry Unix seconds; documents carry aware UTC datetimes. The converters
here are the only place either crosses into the other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from pydantic import BaseModel

from memloom.models import (
    ConflictDocument,
    ConflictInfo,
    ConflictSide,
    MemoryDocument,
    ProvenanceInfo,
    RecalledMemory,
    VersionInfo,
)
from memloom.store.base import ConflictRow, MemoryRow, ProvenanceRow

M = TypeVar("M", bound=BaseModel)


def as_model(model: type[M], value: M | Mapping[str, Any]) -> M:
    """Requests arrive as pydantic models or plain dicts; services work on models."""
    return value if isinstance(value, model) else model.model_validate(value)


def ts(value: datetime | None) -> float | None:
    return None if value is None else value.timestamp()


def dt(value: float | None) -> datetime | None:
    return None if value is None else utc(value)


def utc(value: float) -> datetime:
    """Unix seconds as an aware UTC datetime."""
    return datetime.fromtimestamp(value, UTC)


def version_info(row: MemoryRow) -> VersionInfo:
    return VersionInfo(
        id=row.id,
        version=row.version,
        text=row.text,
        status=row.status,  # type: ignore[arg-type]
        created_at=utc(row.created_at),
    )


def provenance_info(p: ProvenanceRow) -> ProvenanceInfo:
    return ProvenanceInfo(
        session_id=p.session_id,
        path=p.path,
        project=p.project,
        start_line=p.start_line,
        end_line=p.end_line,
        excerpt=p.excerpt,
        agent=p.agent,
    )


def memory_document(
    row: MemoryRow, versions: Sequence[MemoryRow], provenance: Sequence[ProvenanceRow]
) -> MemoryDocument:
    """``GET /v1/memories/{id}`` (``list`` passes no versions and no provenance)."""
    return MemoryDocument(
        id=row.id,
        root_id=row.root_id,
        version=row.version,
        status=row.status,  # type: ignore[arg-type]
        type=row.type,  # type: ignore[arg-type]
        text=row.text,
        original_text=row.original_text,
        source=row.source,
        tags=row.tags,
        metadata=row.metadata,
        project=row.project,
        sensitivity=row.sensitivity,
        session_id=row.session_id,
        created_at=utc(row.created_at),
        asserted_at=utc(row.asserted_at),
        last_referenced=utc(row.last_referenced),
        access_count=row.access_count,
        expires_at=dt(row.expires_at),
        expired_at=dt(row.expired_at),
        superseded_by=row.superseded_by,
        decay_level=row.decay_level,
        pinned=row.pinned,
        versions=[version_info(v) for v in versions],
        provenance=[provenance_info(p) for p in provenance],
        anchors=row.anchors,
    )


def recalled_memory(
    row: MemoryRow,
    relevance: float,
    similarity: float,
    now: float,
    provenance: Sequence[ProvenanceInfo],
) -> RecalledMemory:
    """One recall hit; recall touches what it returns, so ``last_referenced`` is now."""
    return RecalledMemory(
        id=row.id,
        text=row.text,
        type=row.type,  # type: ignore[arg-type]
        source=row.source,
        tags=row.tags,
        relevance=round(relevance, 6),
        similarity=round(min(1.0, similarity), 6),
        decay_level=row.decay_level,
        sensitivity=row.sensitivity,
        last_referenced=utc(now),
        created_at=utc(row.created_at),
        project=row.project,
        provenance=list(provenance),
        anchors=row.anchors,
    )


def conflict_info(
    conflict_id: str, new: MemoryRow, existing: MemoryRow, distance: float | None
) -> ConflictInfo:
    """A conflict as a write reports it (``StoreResponse.conflicts``)."""
    return ConflictInfo(
        conflict_id=conflict_id,
        new_id=new.id,
        new_text=new.text,
        existing_id=existing.id,
        existing_text=existing.text,
        distance=round(distance, 6) if distance is not None else 0.0,
    )


def conflict_side(row: MemoryRow, provenance: Sequence[ProvenanceRow]) -> ConflictSide:
    """One side of a conflict, with the excerpt of its first provenance row."""
    return ConflictSide(
        id=row.id,
        text=row.text,
        status=row.status,  # type: ignore[arg-type]
        type=row.type,  # type: ignore[arg-type]
        project=row.project,
        created_at=utc(row.created_at),
        excerpt=provenance[0].excerpt if provenance else None,
    )


def conflict_document(
    c: ConflictRow, new: ConflictSide, existing: ConflictSide
) -> ConflictDocument:
    return ConflictDocument(
        id=c.id,
        status=c.status,  # type: ignore[arg-type]
        resolution=c.resolution,
        resolved_by=c.detail.get("by") if c.status == "resolved" else None,
        merged_id=c.detail.get("merged_id"),
        reason=c.reason,
        distance=c.distance,
        created_at=utc(c.created_at),
        resolved_at=dt(c.resolved_at),
        new=new,
        existing=existing,
    )
