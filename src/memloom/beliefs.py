"""How a new statement relates to what is already believed.

Two paths decide. The Distill path (``store``; ``save`` with no LLM) uses cosine
distance bands: below 0.15 the same belief, 0.15-0.35 a possible conflict. The
belief pipeline (import; ``save`` with an LLM) asks a classifier instead,
because embeddings barely separate "uses X" from "does not use X".
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from memloom.store.base import MemoryRow

if TYPE_CHECKING:
    from memloom.engine import Memloom
    from memloom.llm.base import LLM

log = logging.getLogger(__name__)

DEDUP_DISTANCE = 0.15
CONFLICT_DISTANCE = 0.35
#: The belief pipeline looks at neighbours at least this similar.
CANDIDATE_SIMILARITY = 0.5
MAX_CANDIDATES = 5

Band = Literal["duplicate", "conflict", "distinct"]
Label = Literal["identical", "complementary", "contradictory"]


@dataclass
class Neighbour:
    row: MemoryRow
    similarity: float

    @property
    def distance(self) -> float:
        # Rounded as reported: float32 noise must not move a memory across a band edge.
        return round(max(0.0, 1.0 - self.similarity), 6)


def band(distance: float) -> Band:
    if distance < DEDUP_DISTANCE:
        return "duplicate"
    if distance < CONFLICT_DISTANCE:
        return "conflict"
    return "distinct"


@dataclass
class Classification:
    index: int
    label: Label
    reason: str = ""


class BeliefClassifier(Protocol):
    """Labels each candidate against the new text (an LLM task: ``memloom_classify``)."""

    def classify(self, new_text: str, candidates: Sequence[str]) -> list[Classification]: ...


def merge_tags(old: Sequence[str], new: Sequence[str]) -> list[str]:
    out = list(old)
    out.extend(t for t in new if t not in out)
    return out


def merge_metadata(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Keep every key the caller sent; the first value of a key wins."""
    merged = dict(old)
    for key, value in new.items():
        merged.setdefault(key, value)
    return merged


def later_expiry(a: float | None, b: float | None) -> float | None:
    """The later of two expiries; no expiry is the latest of all."""
    if a is None or b is None:
        return None
    return max(a, b)


# ---------------------------------------------------------------- the belief pipeline


@dataclass
class NewBelief:
    """A statement about to be written, with where it came from."""

    text: str
    vec: Any  # numpy vector or None
    type: str
    project: str | None
    sensitivity: int
    tags: list[str] = field(default_factory=list)
    source: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    session_id: str | None = None
    asserted_at: float | None = None
    excerpt: str | None = None


@dataclass
class BeliefOutcome:
    outcome: Literal["added", "merged", "versioned", "conflict"]
    memory_id: str
    conflicts: list[Any] = field(default_factory=list)  # ConflictInfo
    auto_resolved: int = 0
    calls: Counter[str] = field(default_factory=Counter)
    fallback: bool = False  # the classifier failed; the distance bands decided


class BeliefPipeline:
    """Exact merge; else neighbours labelled by the LLM classifier; a judge for conflicts.

    LLM calls happen outside the engine's lock and transaction; the write then
    re-checks that the neighbours it was about to touch are still active.
    """

    def __init__(self, engine: Memloom, llm: LLM | None, *, judge: bool = False) -> None:
        self.engine = engine
        self.llm = llm if llm is not None and not getattr(llm, "offline", False) else None
        self.judge = judge and self.llm is not None

    def write(self, item: NewBelief) -> BeliefOutcome:
        from memloom.hashing import content_hash

        engine, store = self.engine, self.engine.backend
        now = time.time()
        asserted = item.asserted_at or now
        same = store.find_by_hash(content_hash(item.text), item.project)
        if same is not None:
            with engine._lock, store.transaction():
                fresh = store.get(same.id)
                if fresh is not None and fresh.status == "active":
                    engine._merge_into(fresh, **self._merge_args(item, now))
                    return BeliefOutcome("merged", fresh.id)
        neighbours = [
            n
            for n in engine._neighbours(item.vec, item.project, now, k=MAX_CANDIDATES)
            if n.similarity >= CANDIDATE_SIMILARITY
        ]
        if self.llm is None or not neighbours:
            return self._write_bands(item, neighbours, now, asserted)
        calls: Counter[str] = Counter()
        try:
            labels = self._classify(item.text, [n.row.text for n in neighbours])
            calls["classify"] += 1
        except Exception as exc:  # a failed call must not lose the memory
            log.warning("classifier failed (%s); deciding by distance", exc)
            calls["classify_failed"] += 1
            out = self._write_bands(item, neighbours, now, asserted)
            out.calls, out.fallback = calls, True
            return out
        by_label: dict[str, list[Neighbour]] = {}
        for label in labels:
            by_label.setdefault(label.label, []).append(neighbours[label.index])
        identical = by_label.get("identical", [])
        contradictory = by_label.get("contradictory", [])
        verdict = None
        if contradictory and self.judge:
            try:
                verdict = self._judge(item, contradictory, labels, asserted)
                calls["judge"] += 1
            except Exception as exc:
                log.warning("judge failed (%s); the conflict stays pending", exc)
                calls["judge_failed"] += 1
        with engine._lock, store.transaction():
            if identical:
                target = store.get(identical[0].row.id)
                if target is not None and target.status == "active":
                    row = self._version_of(target, item, now, asserted)
                    return BeliefOutcome("versioned", row.id, calls=calls)
            row = self._insert(item, now, asserted)
            conflicts = []
            reasons = {neighbours[lab.index].row.id: lab.reason for lab in labels}
            for n in contradictory:
                current = store.get(n.row.id)
                if current is None or current.status != "active":
                    continue
                info = engine._record_conflict(
                    row, current, n.distance, reasons.get(n.row.id) or "contradictory", now
                )
                conflicts.append(info)
            auto = 0
            if verdict is not None and conflicts:
                auto = self._apply_verdict(verdict, row, contradictory, conflicts, now)
            outcome = "conflict" if conflicts else "added"
            return BeliefOutcome(outcome, row.id, conflicts, auto, calls)

    # -------------------------------------------------------- pieces

    @staticmethod
    def _merge_args(item: NewBelief, now: float) -> dict[str, Any]:
        return {
            "tags": item.tags,
            "source": item.source,
            "metadata": item.metadata,
            "sensitivity": item.sensitivity,
            "expires_at": None,
            "now": now,
        }

    def _insert(self, item: NewBelief, now: float, asserted: float) -> MemoryRow:
        """A new belief, as stated (inside the caller's transaction)."""
        row = self.engine._new_row(
            text=item.text,
            vec=item.vec,
            type_=item.type,
            tags=item.tags,
            source=item.source,
            metadata=item.metadata,
            project=item.project,
            sensitivity=item.sensitivity,
            expires_at=None,
            session_id=item.session_id,
            now=now,
        )
        row.asserted_at = asserted
        self.engine.backend.insert(row)
        return row

    def _write_bands(
        self, item: NewBelief, neighbours: list[Neighbour], now: float, asserted: float
    ) -> BeliefOutcome:
        engine, store = self.engine, self.engine.backend
        with engine._lock, store.transaction():
            if neighbours and band(neighbours[0].distance) == "duplicate":
                current = store.get(neighbours[0].row.id)
                if current is not None and current.status == "active":
                    engine._merge_into(current, **self._merge_args(item, now))
                    return BeliefOutcome("merged", current.id)
            row = self._insert(item, now, asserted)
            conflicts = []
            for n in neighbours:
                if band(n.distance) != "conflict":
                    continue
                current = store.get(n.row.id)
                if current is not None and current.status == "active":
                    conflicts.append(
                        engine._record_conflict(row, current, n.distance, "distance band", now)
                    )
            return BeliefOutcome("conflict" if conflicts else "added", row.id, conflicts)

    def _version_of(self, target: MemoryRow, item: NewBelief, now: float, asserted: float):
        engine, store = self.engine, self.engine.backend
        head = store.versions(target.root_id)[0]
        row = engine._new_row(
            text=item.text,
            vec=item.vec,
            type_=item.type,
            tags=merge_tags(target.tags, item.tags),
            source=target.source or item.source,
            metadata=merge_metadata(target.metadata, item.metadata),
            project=target.project,
            sensitivity=max(target.sensitivity, item.sensitivity),
            expires_at=target.expires_at,
            session_id=item.session_id,
            now=now,
            root=head,
        )
        row.asserted_at = asserted
        row.pinned = target.pinned
        row.access_count = target.access_count
        store.insert(row)
        store.update(target.id, status="stale", superseded_by=row.id)
        return row

    def _classify(self, text: str, candidates: list[str]) -> list[Classification]:
        from memloom.llm import tasks

        assert self.llm is not None
        payload = {
            "new": {"text": text},
            "candidates": [{"index": i, "text": t} for i, t in enumerate(candidates)],
        }
        reply = self.llm.complete(
            tasks.CLASSIFY, tasks.CLASSIFY_SYSTEM, payload, tasks.CLASSIFY_SCHEMA
        )
        labels, _dropped = tasks.validate_classify(reply, len(candidates))
        return [Classification(lab.index, lab.label, lab.reason) for lab in labels]

    def _judge(
        self,
        item: NewBelief,
        contradictory: list[Neighbour],
        labels: list[Classification],
        asserted: float,
    ) -> Any:
        from datetime import UTC, datetime

        from memloom.llm import tasks

        assert self.llm is not None
        store = self.engine.backend

        def iso(ts: float) -> str:
            return datetime.fromtimestamp(ts, UTC).isoformat()

        existing = []
        for i, n in enumerate(contradictory):
            prov = store.provenance([n.row.id])
            existing.append(
                {
                    "index": i,
                    "text": n.row.text,
                    "asserted_at": iso(n.row.asserted_at),
                    "excerpt": prov[0].excerpt if prov and prov[0].excerpt else "",
                }
            )
        reason = "; ".join(lab.reason for lab in labels if lab.label == "contradictory")
        payload = {
            "new": {"text": item.text, "asserted_at": iso(asserted), "excerpt": item.excerpt or ""},
            "existing": existing,
            "reason": reason,
        }
        reply = self.llm.complete(tasks.JUDGE, tasks.JUDGE_SYSTEM, payload, tasks.JUDGE_SCHEMA)
        verdict, _dropped = tasks.validate_judge(reply, len(existing))
        return verdict

    def _apply_verdict(
        self,
        verdict: Any,
        new_row: MemoryRow,
        contradictory: list[Neighbour],
        conflicts: list[Any],
        now: float,
    ) -> int:
        """Resolve decisive verdicts at once (revertable); ``unsure`` leaves them pending."""
        action = verdict.verdict
        if action not in ("keep_new", "keep_existing", "keep_both"):
            return 0
        store = self.engine.backend
        chosen = {c.existing_id: c for c in conflicts}
        targets = list(chosen.values())
        if verdict.index is not None and 0 <= verdict.index < len(contradictory):
            picked = chosen.get(contradictory[verdict.index].row.id)
            targets = [picked] if picked else []
        resolved = 0
        for info in targets:
            c = store.get_conflict(info.conflict_id)
            existing = store.get(info.existing_id)
            new = store.get(new_row.id)
            if c is None or existing is None or new is None or c.status != "pending":
                continue
            self.engine._apply_resolution(c, action, new, existing, None, None, now, by="judge")
            resolved += 1
        return resolved
