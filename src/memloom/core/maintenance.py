"""Keeping the store in shape: the decay pass and re-embedding with a new embedder."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from memloom import decay
from memloom.core.context import CoreContext
from memloom.core.projects import relabel
from memloom.core.writes import Writer
from memloom.models import DecayResponse


class Maintenance:
    def __init__(self, ctx: CoreContext, writer: Writer) -> None:
        self.ctx = ctx
        self.writer = writer

    def decay(self, now: float | None = None) -> DecayResponse:
        """One decay pass: each memory moves at most one level."""
        now = time.time() if now is None else now
        cfg = self.ctx.settings.decay
        store = self.ctx.store
        out = DecayResponse()
        # Folders mounted since, or a teammate's machine on a shared store: the decay
        # schedule is where labels of repositories here reach their project.
        relabel(self.ctx)
        moved: set[str] = set()
        with self.ctx.lock, store.transaction():
            store.expire_due(now)
            for level in (2, 1, 0):  # highest first, so nothing moves twice
                hours = decay.threshold_hours(level, cfg)
                candidates = store.decay_candidates(now - hours * 3600, level, 100_000)
                evict: list[str] = []
                for row in candidates:
                    out.examined += 1
                    if row.id in moved:
                        continue
                    age_h = (now - row.last_referenced) / 3600
                    if age_h < hours * decay.age_factor(row.access_count, cfg):
                        continue
                    moved.add(row.id)
                    if level == 2:
                        evict.append(row.id)
                        continue
                    original = row.original_text or row.text
                    shorter = decay.summarize(original) if level == 0 else decay.keywords(original)
                    store.update(
                        row.id, text=shorter, original_text=original, decay_level=level + 1
                    )
                    if level == 0:
                        out.summarized += 1
                    else:
                        out.keywords += 1
                if evict:
                    out.evicted += self.writer.delete_chains(evict)
        return out

    def reembed(self, batch: int = 256, progress: Any = None) -> dict[str, Any]:
        """Re-embed every memory with the configured embedder and restamp the store."""
        store, embedder = self.ctx.store, self.ctx.embedder
        with self.ctx.lock:
            rows = [(r.id, r.original_text or r.text) for r in store.iter_all()]
        vectors: dict[str, np.ndarray | None] = {}
        for start in range(0, len(rows), batch):
            part = rows[start : start + batch]
            embedded = embedder.embed([t for _, t in part])
            for (mid, _), vec in zip(part, embedded, strict=True):
                vectors[mid] = vec
            if progress is not None:
                progress(min(start + batch, len(rows)), len(rows))
        with self.ctx.lock, store.transaction():
            store.replace_embeddings(vectors, embedder.dim)
            store.set_meta("embedder", embedder.fingerprint)
        store.reload_index()
        return {"reembedded": len(vectors), "embedder": embedder.fingerprint}
