"""Conflicts: list, resolve, revert, and the LLM judge that settles them.

Every resolution records the state it changed, so :meth:`Conflicts.revert` can undo
it, whoever resolved it (a user, or the judge during import or ``conflicts auto``).
The judge's request is built in one place (:func:`judge`) for both callers.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from memloom.core.context import CoreContext
from memloom.core.documents import as_model, conflict_document, conflict_side
from memloom.core.embedding import Embedding
from memloom.core.writes import Draft, Writer, merge_metadata, merge_tags
from memloom.errors import ConflictStateError, NotFoundError, ValidationError
from memloom.models import ConflictDocument, ConflictList, ResolveRequest
from memloom.store.base import ConflictRow, MemoryRow

log = logging.getLogger(__name__)

#: Verdicts the judge may apply at once; ``unsure`` leaves the conflict pending.
DECISIVE = ("keep_new", "keep_existing", "keep_both")
#: Why a budgeted judge run stopped (its summary's ``stopped``).
BUDGET_SPENT = (
    "the daily budget of LLM calls (MEMLOOM_DAILY_CAP) is spent: the judge stopped, "
    "what it resolved is kept, the other conflicts stay pending"
)


@dataclass
class Statement:
    """One side of a question to the judge: what was said, when, and the transcript."""

    text: str
    asserted_at: datetime
    excerpt: str | None


def judge(llm: Any, new: Statement, existing: Sequence[Statement], reason: str) -> Any:
    """Ask the judge (``memloom_judge``) which statement holds; the validated verdict or None."""
    from memloom.llm import tasks

    payload = {
        "new": {
            "text": new.text,
            "asserted_at": new.asserted_at.isoformat(),
            "excerpt": new.excerpt or "",
        },
        "existing": [
            {
                "index": i,
                "text": s.text,
                "asserted_at": s.asserted_at.isoformat(),
                "excerpt": s.excerpt or "",
            }
            for i, s in enumerate(existing)
        ],
        "reason": reason,
    }
    reply = llm.complete(tasks.JUDGE, tasks.JUDGE_SYSTEM, payload, tasks.JUDGE_SCHEMA)
    verdict, _dropped = tasks.validate_judge(reply, len(existing))
    return verdict


def _state(row: MemoryRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "status": row.status,
        "superseded_by": row.superseded_by,
        "expired_at": row.expired_at,
    }


class Conflicts:
    def __init__(self, ctx: CoreContext, writer: Writer, embedding: Embedding) -> None:
        self.ctx = ctx
        self.writer = writer
        self.embedding = embedding

    # -------------------------------------------------------- reading

    def document(self, c: ConflictRow) -> ConflictDocument:
        store = self.ctx.store
        new = self.ctx.require(c.new_id)
        existing = self.ctx.require(c.existing_id)
        return conflict_document(
            c,
            conflict_side(new, store.provenance([new.id])),
            conflict_side(existing, store.provenance([existing.id])),
        )

    def list(
        self, status: str | None = "pending", limit: int = 50, offset: int = 0
    ) -> ConflictList:
        """Conflicts, newest first; ``status`` None lists resolved ones too."""
        if status not in (None, "pending", "resolved"):
            raise ValidationError("status must be pending, resolved or omitted")
        if limit < 1 or offset < 0:
            raise ValidationError("limit must be positive and offset not negative")
        with self.ctx.lock:
            rows, total = self.ctx.store.list_conflicts(status, limit, offset)
            docs = [self.document(c) for c in rows]
        return ConflictList(conflicts=docs, total=total)

    def get(self, conflict_id: str) -> ConflictDocument:
        with self.ctx.lock:
            return self.document(self._conflict(conflict_id))

    def _conflict(self, conflict_id: str) -> ConflictRow:
        c = self.ctx.store.get_conflict(conflict_id)
        if c is None:
            raise NotFoundError(f"conflict {conflict_id} not found")
        return c

    # -------------------------------------------------------- changing

    def resolve(
        self, conflict_id: str, request: ResolveRequest | Mapping[str, Any]
    ) -> ConflictDocument:
        """Settle a conflict; every change is recorded so :meth:`revert` can undo it."""
        req = as_model(ResolveRequest, request)
        merged_vec = self.embedding.embed_one(req.text or "") if req.action == "merge" else None
        now = time.time()
        with self.ctx.lock, self.ctx.store.transaction():
            c = self._conflict(conflict_id)
            if c.status != "pending":
                raise ConflictStateError(f"conflict {conflict_id} is already {c.status}")
            if req.candidate_id is not None and req.candidate_id not in (c.new_id, c.existing_id):
                raise ValidationError("candidate_id must be the conflict's new or existing id")
            new = self.ctx.require(c.new_id)
            existing = self.ctx.require(c.existing_id)
            self.apply(c, req.action, new, existing, req.text, merged_vec, now)
        return self.get(conflict_id)

    def apply(
        self,
        c: ConflictRow,
        action: str,
        new: MemoryRow,
        existing: MemoryRow,
        text: str | None,
        merged_vec: np.ndarray | None,
        now: float,
        by: str = "user",
    ) -> None:
        """Apply a resolution inside the caller's transaction, recording what it changed."""
        store = self.ctx.store
        detail: dict[str, Any] = {"before": [_state(new), _state(existing)], "by": by}
        if action in ("keep_new", "keep_existing"):
            loser, winner = (existing, new) if action == "keep_new" else (new, existing)
            if loser.status == "active":
                store.update(loser.id, status="expired", expired_at=now, superseded_by=winner.id)
        elif action == "merge":
            head = store.versions(existing.root_id)[0]
            draft = Draft(
                text=text or "",
                vec=merged_vec,
                type=existing.type,
                tags=merge_tags(existing.tags, new.tags),
                source=existing.source or new.source,
                metadata=merge_metadata(existing.metadata, new.metadata),
                project=existing.project,
                sensitivity=max(
                    existing.sensitivity,
                    new.sensitivity,
                    self.ctx.classify_sensitivity(text or ""),
                ),
                session_id=new.session_id,
            )
            merged = self.writer.insert(self.writer.new_row(draft, now, root=head))
            for row, status in ((existing, "stale"), (new, "expired")):
                if row.status == "active":
                    store.update(row.id, status=status, expired_at=now, superseded_by=merged.id)
            for p in store.provenance([new.id, existing.id]):
                p.memory_id = merged.id
                store.add_provenance(p)
            detail["merged_id"] = merged.id
        store.update_conflict(
            c.id, status="resolved", resolution=action, detail=detail, resolved_at=now
        )

    def revert(self, conflict_id: str) -> ConflictDocument:
        """Undo a resolution: both memories return to how they were; the conflict is pending."""
        store = self.ctx.store
        with self.ctx.lock, store.transaction():
            c = self._conflict(conflict_id)
            if c.status != "resolved":
                raise ConflictStateError(f"conflict {conflict_id} is not resolved")
            merged_id = c.detail.get("merged_id")
            if merged_id:
                store.delete([merged_id])
            for before in c.detail.get("before", []):
                if store.get(before["id"]) is not None:
                    store.update(
                        before["id"],
                        status=before["status"],
                        superseded_by=before["superseded_by"],
                        expired_at=before["expired_at"],
                    )
            store.update_conflict(
                c.id, status="pending", resolution=None, detail={}, resolved_at=None
            )
        return self.get(conflict_id)

    def auto_resolve(
        self,
        progress: Any = None,
        limit: int = 500,
        allow_call: Callable[[], bool] | None = None,
    ) -> dict[str, Any]:
        """Run the judge over pending conflicts; decisive verdicts are applied (revertable).
        ``allow_call`` (a run the server starts: the daily budget) is asked before each
        judge call; False stops the run there, keeping what it resolved."""
        llm = self.ctx.llm
        pending = self.list("pending", limit=limit).conflicts
        out = {
            "pending": len(pending),
            "judged": 0,
            "resolved": 0,
            "unsure": 0,
            "failed": 0,
            "llm": getattr(llm, "description", ""),
        }
        if getattr(llm, "offline", False):
            out["skipped"] = len(pending)
            out["reason"] = "no LLM configured: the offline judge is always unsure"
            return out
        store = self.ctx.store
        for i, conflict in enumerate(pending, start=1):
            if allow_call is not None and not allow_call():
                out["stopped"] = BUDGET_SPENT
                out["remaining"] = len(pending) - i + 1
                break
            new, existing = conflict.new, conflict.existing
            try:
                verdict = judge(
                    llm,
                    Statement(new.text, new.created_at, new.excerpt),
                    [Statement(existing.text, existing.created_at, existing.excerpt)],
                    conflict.reason or "",
                )
            except Exception as exc:
                out["failed"] += 1
                log.warning("judge failed on conflict %s: %s", conflict.id, exc)
                verdict = None
            else:
                out["judged"] += 1
            if verdict is not None and verdict.verdict in DECISIVE:
                with self.ctx.lock, store.transaction():
                    c = store.get_conflict(conflict.id)
                    n, e = store.get(new.id), store.get(existing.id)
                    if c is not None and c.status == "pending" and n and e:
                        self.apply(c, verdict.verdict, n, e, None, None, time.time(), by="judge")
                        out["resolved"] += 1
            elif verdict is not None:
                out["unsure"] += 1
            if progress is not None:
                progress(
                    {
                        "event": "judged",
                        "done": i,
                        "total": len(pending),
                        "conflict_id": conflict.id,
                        "verdict": None if verdict is None else verdict.verdict,
                    }
                )
        return out
