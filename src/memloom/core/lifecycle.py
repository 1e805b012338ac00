"""A memory's life after it is written: new versions, supersede, expire, forget, pin,
restore. Versions are never edited in place: an update writes the next version and
the old one turns stale with a forward pointer.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from memloom import anchors
from memloom.core.context import CoreContext
from memloom.core.documents import as_model, ts
from memloom.core.embedding import Embedding
from memloom.core.writes import Draft, Writer
from memloom.errors import ConflictStateError, NotFoundError, ValidationError
from memloom.models import (
    ExpireRequest,
    ExpireResponse,
    ForgetRequest,
    ForgetResponse,
    SupersedeRequest,
    SupersedeResponse,
    UpdateRequest,
    UpdateResponse,
)
from memloom.store.base import MemoryRow


def _replaced_by(old: MemoryRow, new: MemoryRow) -> bool:
    """Whether ``new`` is what replaced ``old``: the version it points to, or a later
    version of its belief."""
    if old.superseded_by == new.id:
        return True
    return new.root_id == old.root_id and new.version > old.version


class Lifecycle:
    def __init__(self, ctx: CoreContext, writer: Writer, embedding: Embedding) -> None:
        self.ctx = ctx
        self.writer = writer
        self.embedding = embedding

    def resolve_id(self, memory_id: str) -> str:
        """Accept a unique prefix (at least 4 characters) as people type ids by hand."""
        store = self.ctx.store
        if store.get(memory_id) is not None:
            return memory_id
        if len(memory_id) >= 4:
            found = store.resolve_prefix(memory_id)
            if len(found) == 1:
                return found[0]
            if len(found) > 1:
                raise ValidationError(f"id prefix {memory_id!r} is ambiguous: {', '.join(found)}")
        raise NotFoundError(f"memory {memory_id} not found")

    def update(
        self,
        memory_id: str,
        request: UpdateRequest | Mapping[str, Any] | str,
        folder: str | None = None,
    ) -> UpdateResponse:
        """A new version of the belief; the old version turns stale and points forward.
        Its anchors: those ``anchors`` gives and its text names (found under ``folder``),
        else the old version's the new text still names, and the old ``given`` ones."""
        req = (
            UpdateRequest(text=request)
            if isinstance(request, str)
            else as_model(UpdateRequest, request)
        )
        given = [a.model_dump() for a in req.anchors or []]
        found = anchors.for_write(req.text, folder, given)
        vec = self.embedding.embed_one(req.text)
        now = time.time()
        store = self.ctx.store
        with self.ctx.lock, store.transaction():
            old = self.ctx.require(memory_id)
            if old.status != "active":
                head = store.versions(old.root_id)[0]
                raise ConflictStateError(
                    f"memory {memory_id} is {old.status}; update the current version {head.id}"
                )
            sens = max(req.sensitivity or 0, self.ctx.classify_sensitivity(req.text))
            if req.sensitivity is not None:
                sens = max(req.sensitivity, sens)
            draft = Draft(
                text=req.text,
                vec=vec,
                type=(req.type.value if req.type else old.type),
                tags=req.tags if req.tags is not None else old.tags,
                source=old.source,
                metadata=req.metadata if req.metadata is not None else old.metadata,
                project=old.project,
                sensitivity=sens,
                expires_at=old.expires_at,
                session_id=old.session_id,
                anchors=found,
            )
            named = [a for a in old.anchors if a.get("via") == "text"]
            if req.anchors is not None and folder is None:  # the text's cannot be found again
                draft.anchors = anchors.merge(anchors.carry(named, req.text), found or [])
            elif req.anchors is None and found is not None:  # the caller's files stay
                kept = [a for a in old.anchors if a.get("via") != "text"]
                draft.anchors = anchors.merge(found, kept)
            row = self.writer.new_version(old, draft, now)
        return UpdateResponse(id=row.id, root_id=row.root_id, version=row.version)

    def expire(self, request: ExpireRequest | Mapping[str, Any]) -> ExpireResponse:
        req = as_model(ExpireRequest, request)
        with self.ctx.lock, self.ctx.store.transaction():
            count = self.ctx.store.expire_ids(req.ids, time.time())
        return ExpireResponse(expired=count)

    def supersede(self, request: SupersedeRequest | Mapping[str, Any]) -> SupersedeResponse:
        """Expire ``old_id`` with a forward pointer to ``new_id`` (404 unknown, 409 expired).

        Already done is not an error: when ``old_id`` is stale because ``new_id`` is a
        newer version of it (``store`` reports such a version in ``versioned``), the
        answer is the same and nothing changes."""
        req = as_model(SupersedeRequest, request)
        if req.new_id == req.old_id:
            raise ValidationError("a memory cannot supersede itself")
        store = self.ctx.store
        with self.ctx.lock, store.transaction():
            old = store.get(req.old_id)
            if old is None:
                raise NotFoundError(f"memory {req.old_id} not found")
            if old.status == "stale" and req.new_id is not None:
                new = store.get(req.new_id)
                if new is not None and _replaced_by(old, new):
                    return SupersedeResponse(superseded=True)
            if old.status != "active":
                raise ConflictStateError(f"memory {req.old_id} is already {old.status}")
            if req.new_id is not None and store.get(req.new_id) is None:
                raise NotFoundError(f"memory {req.new_id} not found")
            store.update(old.id, status="expired", expired_at=time.time(), superseded_by=req.new_id)
        return SupersedeResponse(superseded=True)

    def forget(self, request: ForgetRequest | Mapping[str, Any]) -> ForgetResponse:
        """Delete matching memories with every version of them (criteria combine with AND)."""
        req = as_model(ForgetRequest, request)
        store = self.ctx.store
        with self.ctx.lock, store.transaction():
            removed = 0
            if not req.is_empty:
                matched = store.select_ids(req.ids, req.tags, ts(req.before), req.project)
                removed = self.writer.delete_chains(matched)
            total = store.count()
        if removed:
            store.purge()  # forgotten means gone from the files too
        return ForgetResponse(removed=removed, total_memories=total)

    def pin(self, memory_id: str, pinned: bool = True) -> None:
        with self.ctx.lock, self.ctx.store.transaction():
            self.ctx.require(memory_id)
            self.ctx.store.update(memory_id, pinned=pinned)

    def restore(self, memory_id: str) -> None:
        """Undo decay: put the original text back."""
        with self.ctx.lock, self.ctx.store.transaction():
            row = self.ctx.require(memory_id)
            if row.decay_level and row.original_text is not None:
                self.ctx.store.update(
                    memory_id,
                    text=row.original_text,
                    original_text=None,
                    decay_level=0,
                    last_referenced=time.time(),
                )
