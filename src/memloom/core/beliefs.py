"""How a new statement relates to what is already believed.

Two paths decide. The Distill path (``store``; ``save`` with no LLM) uses cosine
distance bands: below 0.15 the same belief, 0.15-0.35 a possible conflict. The
belief pipeline (import; ``save`` with an LLM) asks a classifier instead,
because embeddings barely separate "uses X" from "does not use X". Both write
through the :class:`~memloom.core.writes.Writer`.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol

import numpy as np

from memloom import anchors
from memloom.claims import carries_a_value, compare, may_update, word_swapped
from memloom.core.conflicts import DECISIVE, Conflicts, Statement, judge
from memloom.core.documents import as_model, ts, utc
from memloom.core.embedding import Embedding
from memloom.core.writes import (
    Draft,
    Neighbour,
    Observer,
    Writer,
    merge_metadata,
    merge_tags,
)
from memloom.hashing import content_hash
from memloom.models import (
    ConflictInfo,
    SaveRequest,
    SaveResponse,
    StoreRequest,
    StoreResponse,
    VersionedInfo,
)
from memloom.store.base import MemoryRow

if TYPE_CHECKING:
    from memloom.llm.base import LLM

log = logging.getLogger(__name__)

DEDUP_DISTANCE = 0.15
CONFLICT_DISTANCE = 0.35
#: Past the conflict band, a neighbour this near is still read for a changed value: the
#: embedding of "uses Sentry" is 0.54 from "uses Rollbar" (``claims.compare(far=True)``:
#: only a changed value or a name swapped for a name counts there).
UPDATE_DISTANCE = 0.6
#: The belief pipeline looks at neighbours at least this similar.
CANDIDATE_SIMILARITY = 0.5
MAX_CANDIDATES = 5

Band = Literal["duplicate", "conflict", "distinct"]
Label = Literal["identical", "complementary", "contradictory"]
#: ``versioned``: the write changed a value of a near neighbour and became its next
#: version (``store`` counts it as stored, ``save`` answers ``versioned``).
BandOutcome = Literal["merged", "deduplicated", "stored", "versioned"]

__all__ = [
    "CANDIDATE_SIMILARITY",
    "CONFLICT_DISTANCE",
    "DEDUP_DISTANCE",
    "MAX_CANDIDATES",
    "UPDATE_DISTANCE",
    "BeliefClassifier",
    "BeliefOutcome",
    "BeliefPipeline",
    "Beliefs",
    "Classification",
    "Neighbour",
    "NewBelief",
    "Settled",
    "band",
    "write_banded",
    "write_banded_many",
]


def band(distance: float) -> Band:
    if distance < DEDUP_DISTANCE:
        return "duplicate"
    if distance < CONFLICT_DISTANCE:
        return "conflict"
    return "distinct"


Banded = tuple[BandOutcome, str, list[ConflictInfo]]


class Settled(NamedTuple):
    """One write of :func:`write_banded_many`: :data:`Banded`, and the id of the memory
    a ``versioned`` write replaced (None otherwise)."""

    outcome: BandOutcome
    memory_id: str
    conflicts: list[ConflictInfo]
    replaced: str | None


def write_banded(
    writer: Writer,
    draft: Draft,
    now: float,
    neighbours: Sequence[Neighbour] | None = None,
    *,
    versions_beyond_duplicates: bool = True,
) -> Banded:
    """One write decided by the distance bands, inside the caller's lock and transaction.

    Without ``neighbours``, an exact content match merges first ("merged") and the
    neighbours are looked up here. ``neighbours`` found earlier, outside this
    transaction, are each read again and skipped unless still active.
    ``versions_beyond_duplicates``: see :func:`_settle` (``save``'s rule by default).
    """
    beyond = versions_beyond_duplicates
    if neighbours is None:
        written = write_banded_many(writer, [draft], now, versions_beyond_duplicates=beyond)
        outcome, memory_id, conflicts, _ = written[0]
    else:
        outcome, memory_id, conflicts, _, _ = _settle(
            writer, draft, neighbours, now, writer.active, versions_beyond_duplicates=beyond
        )
    return outcome, memory_id, conflicts


def stated(row: MemoryRow) -> str:
    """What a memory said when it was written (decay may have shortened ``text``)."""
    return row.original_text or row.text


def _settle(
    writer: Writer,
    draft: Draft,
    neighbours: Sequence[Neighbour],
    now: float,
    current: Callable[[str], MemoryRow | None],
    reach: bool | None = None,
    *,
    versions_beyond_duplicates: bool = True,
) -> tuple[BandOutcome, str, list[ConflictInfo], MemoryRow | None, str | None]:
    """The bands over ``neighbours`` (nearest first), each pair read by
    :func:`memloom.claims.compare` first, so that no changed value is merged away:

    * the nearest in the duplicate band: the same claim merges into it; a changed
      value makes the draft its next version; a changed value and more is stored
      and flagged as a conflict with it;
    * otherwise the nearest in the conflict band whose claim the draft updates, or,
      when none is in the bands, the nearest one a little further
      (``UPDATE_DISTANCE``) whose value or name the draft changes: with
      ``versions_beyond_duplicates`` (``save``) the draft is its next version; without
      (``store``) both stay active and the pair is flagged, so that the caller, told
      of it, supersedes;
    * failing that the draft is stored and the conflict band flagged (Distill's
      contract, ``store``'s rule: both stay active until the caller settles it),
      unless the two beliefs were already settled as both true
      (:meth:`Writer.flag_conflict`).

    ``current(id)`` gives a neighbour's row as it is now, or None to skip it.
    ``reach``: whether the draft states a value or a name (:func:`carries_a_value`,
    computed here when not given), without which nothing past the bands is read.
    Returns the inserted row too (None for a merge), and the id of the row a new
    version replaced (None otherwise)."""
    if not neighbours:  # most writes: nothing near
        row = writer.add(draft, now)
        return "stored", row.id, [], row, None
    dists = [n.distance for n in neighbours]
    flagged: dict[str, str] = {}
    if band(dists[0]) == "duplicate":
        target = current(neighbours[0].row.id)
        if target is not None:
            change = compare(stated(target), draft.text)
            if change == "same":
                writer.merge_into(target, draft, now)
                return "deduplicated", target.id, [], None, None
            if change == "update":
                row = writer.new_version(target, version_draft(target, draft), now)
                return "versioned", row.id, [], row, target.id
            flagged[target.id] = "a value changed, and more (distance band)"
    # The conflict band; or, when nothing is that near, the nearest a little further.
    readable = [(n, False) for n, d in zip(neighbours, dists, strict=True) if band(d) == "conflict"]
    if (
        not readable
        and band(dists[0]) == "distinct"
        and dists[0] < UPDATE_DISTANCE
        and (carries_a_value(draft.text) if reach is None else reach)
    ):
        readable = [(neighbours[0], True)]
    for n, far in readable:
        if n.row.id in flagged or not may_update(stated(n.row), draft.text):
            continue
        target = current(n.row.id)
        if target is not None and compare(stated(target), draft.text, far=far) == "update":
            if versions_beyond_duplicates:
                row = writer.new_version(target, version_draft(target, draft), now)
                return "versioned", row.id, [], row, target.id
            # ``store``: both stay active, and the caller is told (it supersedes).
            flagged[target.id] = "a value changed (the caller may supersede)"
            break
    row = writer.add(draft, now)
    conflicts = []
    for n, d in zip(neighbours, dists, strict=True):
        reason = flagged.get(n.row.id) or ("distance band" if band(d) == "conflict" else None)
        if reason is None:
            continue
        existing = current(n.row.id)
        info = None if existing is None else writer.flag_conflict(row, existing, d, reason, now)
        if info is not None:
            conflicts.append(info)
    return "stored", row.id, conflicts, row, None


def version_draft(target: MemoryRow, item: Draft) -> Draft:
    """What a statement that updates ``target`` writes: its words, the belief's rest
    (tags and metadata merged, the higher sensitivity, the belief's project and TTL)."""
    return Draft(
        text=item.text,
        vec=item.vec,
        type=item.type,
        tags=merge_tags(target.tags, item.tags),
        source=target.source or item.source,
        metadata=merge_metadata(target.metadata, item.metadata),
        project=target.project,
        sensitivity=max(target.sensitivity, item.sensitivity),
        expires_at=target.expires_at,
        session_id=item.session_id,
        asserted_at=item.asserted_at,
    )


def write_banded_many(
    writer: Writer, drafts: Sequence[Draft], now: float, *, versions_beyond_duplicates: bool = True
) -> list[Settled]:
    """:func:`write_banded` for each draft in turn, with the lookups done for the batch.

    The exact-match lookup is one query per project and the store's neighbours one
    search per project, both before any write; the batch's own rows are compared
    through one matrix product. Draft ``i`` then decides over the store's nearest
    plus the rows drafts ``0..i-1`` inserted (same project, unexpired), with every
    row as earlier merges left it: the outcome of writing the drafts one by one.
    Without ``versions_beyond_duplicates`` (``store``) nothing past the duplicate band
    becomes a version: a changed value there is flagged for the caller instead.
    """
    if not drafts:
        return []
    store = writer.store
    hashes = [content_hash(d.text) for d in drafts]
    projects = [d.project for d in drafts]
    same: dict[tuple[str | None, str], str] = {}
    rows: dict[str, MemoryRow] = {}  # the current state of every row the batch may touch
    for project in dict.fromkeys(projects):
        wanted = [h for h, p in zip(hashes, projects, strict=True) if p == project]
        for h, row in store.find_by_hashes(wanted, project).items():
            same[(project, h)] = row.id
            rows[row.id] = row
    # Only a neighbour in the duplicate or conflict band, or the nearest one a little
    # further (UPDATE_DISTANCE: read for a changed value), can change a write; the
    # margin keeps one whose rounded distance falls just inside.
    floor = 1.0 - CONFLICT_DISTANCE - 1e-5
    reach = 1.0 - UPDATE_DISTANCE - 1e-5
    vecs = [d.vec for d in drafts]
    wants = [carries_a_value(d.text) for d in drafts]
    nearby = writer.neighbours_many(vecs, projects, now, MAX_CANDIDATES, floor, reach, wants)
    mates = _BatchMates(drafts, now, [reach if w else floor for w in wants])

    def current(memory_id: str) -> MemoryRow | None:
        row = rows[memory_id]
        return row if row.status == "active" else None  # a batch-mate may have versioned it

    def refresh(memory_id: str) -> None:
        row = store.get(memory_id)
        if row is not None:
            rows[memory_id] = row
            mates.refresh(row)

    out: list[Settled] = []
    versioned = False  # whether a draft of this batch made a version (and a row stale)
    for i, draft in enumerate(drafts):
        key = (draft.project, hashes[i])
        if key in same and current(same[key]) is not None:
            writer.merge_into(rows[same[key]], draft, now)
            refresh(same[key])
            out.append(Settled("merged", same[key], [], None))
            continue
        found = [Neighbour(rows.setdefault(n.row.id, n.row), n.similarity) for n in nearby[i]]
        if versioned and any(current(n.row.id) is None for n in found):
            # A row an earlier draft versioned is stale now, and what lay past it was never
            # searched for: search again, as entry by entry would (rare). The store holds
            # the batch's rows by now, so no batch-mate is added.
            args = (MAX_CANDIDATES, floor, reach, [wants[i]])
            near = writer.neighbours_many([draft.vec], [draft.project], now, *args)[0]
            found = [Neighbour(rows.setdefault(n.row.id, n.row), n.similarity) for n in near]
        else:
            found.extend(Neighbour(rows[m], s) for m, s in mates.nearest(i, MAX_CANDIDATES))
            found.sort(key=lambda n: -n.similarity)  # stable: the store's rows first on a tie
        outcome, memory_id, conflicts, new, replaced = _settle(
            writer,
            draft,
            found[:MAX_CANDIDATES],
            now,
            current,
            wants[i],
            versions_beyond_duplicates=versions_beyond_duplicates,
        )
        if replaced is not None:
            refresh(replaced)  # now stale: no later draft merges into it
            versioned = True
        if new is None:
            refresh(memory_id)
        else:
            rows[new.id] = new
            same[key] = new.id
            mates.added(i, new)
        out.append(Settled(outcome, memory_id, conflicts, replaced))
    return out


class _BatchMates:
    """The rows a batch has inserted so far, as neighbour candidates for later drafts:
    similarities from one product of the batch's vectors, filtered as the store's
    neighbour search filters (same project, active, unexpired at ``now``)."""

    def __init__(self, drafts: Sequence[Draft], now: float, floors: Sequence[float]) -> None:
        self.now = now
        #: Per draft: how similar a batch-mate must be to be its candidate.
        self.floors = floors
        self.ids: list[str | None] = [None] * len(drafts)
        self.live = np.zeros(len(drafts), dtype=bool)
        codes: dict[str | None, int] = {}
        self.project = np.array([codes.setdefault(d.project, len(codes)) for d in drafts])
        self.has_vec = np.array([d.vec is not None for d in drafts], dtype=bool)
        self.sims: np.ndarray | None = None
        if self.has_vec.sum() > 1:
            dim = next(len(d.vec) for d in drafts if d.vec is not None)
            mat = np.zeros((len(drafts), dim), dtype=np.float32)
            for i, d in enumerate(drafts):
                if d.vec is not None:
                    mat[i] = d.vec
            self.sims = mat @ mat.T
        self.index: dict[str, int] = {}

    def added(self, i: int, row: MemoryRow) -> None:
        self.ids[i] = row.id
        self.index[row.id] = i
        self.refresh(row)

    def refresh(self, row: MemoryRow) -> None:
        i = self.index.get(row.id)
        if i is not None:
            alive = row.expires_at is None or row.expires_at > self.now
            self.live[i] = row.status == "active" and alive and bool(self.has_vec[i])

    def nearest(self, i: int, k: int) -> list[tuple[str, float]]:
        """Up to ``k`` earlier batch rows nearest draft ``i``, nearest first."""
        if self.sims is None or not self.has_vec[i]:
            return []
        near = self.sims[i, :i] >= self.floors[i]
        cand = np.flatnonzero(near & self.live[:i] & (self.project[:i] == self.project[i]))
        if cand.size == 0:
            return []
        sims = self.sims[i, cand]
        if cand.size > k:
            top = np.argpartition(-sims, k - 1)[:k]
            cand, sims = cand[top], sims[top]
        order = np.lexsort((cand, -sims))
        return [(self.ids[int(cand[j])] or "", float(sims[j])) for j in order]


# ---------------------------------------------------------------- the belief pipeline


@dataclass
class Classification:
    index: int
    label: Label
    reason: str = ""


class BeliefClassifier(Protocol):
    """Labels each candidate against the new text (an LLM task: ``memloom_classify``)."""

    def classify(self, new_text: str, candidates: Sequence[str]) -> list[Classification]: ...


@dataclass
class NewBelief(Draft):
    """A distilled statement about to be written, with the transcript it came from."""

    excerpt: str | None = None


@dataclass
class BeliefOutcome:
    outcome: Literal["added", "merged", "versioned", "conflict"]
    memory_id: str
    conflicts: list[ConflictInfo] = field(default_factory=list)
    auto_resolved: int = 0
    calls: Counter[str] = field(default_factory=Counter)
    fallback: bool = False  # the classifier failed; the distance bands decided


class BeliefPipeline:
    """Exact merge; else neighbours labelled by the LLM classifier; a judge for conflicts.

    LLM calls happen outside the lock and transaction; the write then re-checks
    that the neighbours it was about to touch are still active.

    A failed classifier or judge call is not fatal by default: the distance bands
    decide, or the conflict stays pending, so a user's ``save`` is never lost.
    ``strict`` raises instead, writing nothing for that item: the importer keeps
    its watermark before the chunk and distills it again on the next run, so an
    import interrupted by the provider (402, 429, 5xx) ends with the decisions an
    uninterrupted one makes rather than with band decisions of its own.
    """

    def __init__(
        self,
        writer: Writer,
        conflicts: Conflicts,
        llm: LLM | None,
        *,
        judge: bool = False,
        strict: bool = False,
    ) -> None:
        self.writer = writer
        self.conflicts = conflicts
        self.llm = llm if llm is not None and not getattr(llm, "offline", False) else None
        self.judge = judge and self.llm is not None
        self.strict = strict

    def write(self, item: NewBelief) -> BeliefOutcome:
        writer, ctx = self.writer, self.writer.ctx
        store = ctx.store
        now = time.time()
        asserted = item.asserted_at or now
        same = store.find_by_hash(content_hash(item.text), item.project)
        if same is not None:
            with ctx.lock, store.transaction():
                fresh = writer.active(same.id)
                if fresh is not None:
                    writer.merge_into(fresh, item, now)
                    return BeliefOutcome("merged", fresh.id)
        near = [
            n
            for n in writer.neighbours(item.vec, item.project, now, k=MAX_CANDIDATES)
            if n.distance < UPDATE_DISTANCE
        ]
        # One word swapped is for the classifier to place (another subject, or a new
        # value for the same one), however far the embedding puts it.
        neighbours = [
            n
            for n in near
            if n.similarity >= CANDIDATE_SIMILARITY or word_swapped(stated(n.row), item.text)
        ]
        if self.llm is None or not neighbours:
            return self._write_bands(item, near, now)
        calls: Counter[str] = Counter()
        try:
            labels = self._classify(item.text, [n.row.text for n in neighbours])
            calls["classify"] += 1
        except Exception as exc:  # a failed call must not lose the memory
            if self.strict:
                raise
            log.warning("classifier failed (%s); deciding by distance", exc)
            calls["classify_failed"] += 1
            out = self._write_bands(item, near, now)
            out.calls, out.fallback = calls, True
            return out
        by_label: dict[str, list[Neighbour]] = {}
        for label in labels:
            by_label.setdefault(label.label, []).append(neighbours[label.index])
        identical = by_label.get("identical", [])
        contradictory = by_label.get("contradictory", [])
        if not identical and not self.judge:
            # A changed value is an update, whatever the label said: the prompt asks for
            # "identical" there, and this holds a model that answered otherwise to it.
            # (An import's judge settles a "contradictory" pair itself, from both
            # excerpts: there the label stands; and one plain word swapped may be
            # another subject, which the classifier reads better than the tokens.)
            updated = [
                n
                for n in neighbours
                if may_update(stated(n.row), item.text)
                and not word_swapped(stated(n.row), item.text)
                and compare(stated(n.row), item.text, far=band(n.distance) == "distinct")
                == "update"
            ]
            if updated:
                identical = updated[:1]
                contradictory = [n for n in contradictory if n.row.id != updated[0].row.id]
        verdict = None
        if contradictory and self.judge:
            try:
                verdict = self._judge(item, contradictory, labels, asserted)
                calls["judge"] += 1
            except Exception as exc:
                if self.strict:
                    raise
                log.warning("judge failed (%s); the conflict stays pending", exc)
                calls["judge_failed"] += 1
        with ctx.lock, store.transaction():
            if identical:
                target = writer.active(identical[0].row.id)
                if target is not None:
                    row = writer.new_version(target, version_draft(target, item), now)
                    return BeliefOutcome("versioned", row.id, calls=calls)
            row = writer.add(item, now)
            conflicts = []
            reasons = {neighbours[lab.index].row.id: lab.reason for lab in labels}
            for n in contradictory:
                current = writer.active(n.row.id)
                if current is None:
                    continue
                info = writer.flag_conflict(
                    row, current, n.distance, reasons.get(n.row.id) or "contradictory", now
                )
                if info is not None:  # None: the pair was settled as both true before
                    conflicts.append(info)
            auto = 0
            if verdict is not None and conflicts:
                auto = self._apply_verdict(verdict, row, contradictory, conflicts, now)
            outcome = "conflict" if conflicts else "added"
            return BeliefOutcome(outcome, row.id, conflicts, auto, calls)

    # -------------------------------------------------------- pieces

    def _write_bands(
        self, item: NewBelief, neighbours: list[Neighbour], now: float
    ) -> BeliefOutcome:
        ctx = self.writer.ctx
        with ctx.lock, ctx.store.transaction():
            outcome, memory_id, conflicts = write_banded(self.writer, item, now, neighbours)
        if outcome == "deduplicated":
            return BeliefOutcome("merged", memory_id)
        if outcome == "versioned":
            return BeliefOutcome("versioned", memory_id)
        return BeliefOutcome("conflict" if conflicts else "added", memory_id, conflicts)

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
        store = self.writer.store
        existing = []
        for n in contradictory:
            prov = store.provenance([n.row.id])
            excerpt = prov[0].excerpt if prov else None
            existing.append(Statement(n.row.text, utc(n.row.asserted_at), excerpt))
        reason = "; ".join(lab.reason for lab in labels if lab.label == "contradictory")
        new = Statement(item.text, utc(asserted), item.excerpt)
        return judge(self.llm, new, existing, reason)

    def _apply_verdict(
        self,
        verdict: Any,
        new_row: MemoryRow,
        contradictory: list[Neighbour],
        conflicts: list[ConflictInfo],
        now: float,
    ) -> int:
        """Resolve decisive verdicts at once (revertable); ``unsure`` leaves them pending."""
        action = verdict.verdict
        if action not in DECISIVE:
            return 0
        store = self.writer.store
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
            self.conflicts.apply(c, action, new, existing, None, None, now, by="judge")
            resolved += 1
        return resolved


# ---------------------------------------------------------------- the two entry points


class Beliefs:
    """``store`` (Distill's bulk writes: the bands) and ``save`` (one memory: the
    pipeline when an LLM is configured, else the bands)."""

    def __init__(self, writer: Writer, conflicts: Conflicts, embedding: Embedding) -> None:
        self.writer = writer
        self.ctx = writer.ctx
        self.conflicts = conflicts
        self.embedding = embedding

    def pipeline(
        self,
        llm: LLM | None,
        *,
        judge: bool = False,
        observer: Observer | None = None,
        strict: bool = False,
    ) -> BeliefPipeline:
        """The belief pipeline; ``observer`` sees its inserts and merges inside their
        transactions (the importer's journal); ``strict``: LLM failures raise."""
        writer = self.writer if observer is None else self.writer.observing(observer)
        return BeliefPipeline(writer, self.conflicts, llm, judge=judge, strict=strict)

    def store(self, request: StoreRequest | Mapping[str, Any]) -> StoreResponse:
        """``POST /v1/memory/store``: bulk writes with Distill's distance bands. Only the
        duplicate band makes a new version (reported in ``versioned``); the conflict band
        is stored and flagged, both active; past the bands an entry is simply stored."""
        req = as_model(StoreRequest, request)
        now = time.time()
        vectors = self.embedding.prepare(req.entries)
        sensitivities = [
            self.ctx.sensitivity(e.text, e.sensitivity, e.auto_classify) for e in req.entries
        ]
        drafts = [
            Draft(
                text=entry.text,
                vec=vec,
                type=(entry.type.value if entry.type else "fact"),
                tags=entry.tags,
                source=entry.source,
                metadata=entry.metadata,
                project=entry.project,
                sensitivity=sens,
                expires_at=ts(entry.expires_at),
                session_id=req.session_id,
            )
            for entry, vec, sens in zip(req.entries, vectors, sensitivities, strict=True)
        ]
        out = StoreResponse()
        store = self.ctx.store
        with self.ctx.lock, store.transaction():
            store.expire_due(now)
            written = write_banded_many(self.writer, drafts, now, versions_beyond_duplicates=False)
            for outcome, memory_id, conflicts, replaced in written:
                out.ids.append(memory_id)
                out.conflicts.extend(conflicts)
                if outcome == "merged":
                    out.merged += 1
                elif outcome == "deduplicated":
                    out.deduplicated += 1
                else:
                    out.stored += 1
                if replaced is not None:
                    out.versioned.append(VersionedInfo(id=memory_id, old_id=replaced))
            out.total_memories = store.count()
        return out

    def save(
        self, request: SaveRequest | Mapping[str, Any], folder: str | None = None
    ) -> SaveResponse:
        """One memory, checked against what is already believed.

        With an LLM configured the belief pipeline decides (identical → a new
        version, contradictory → a conflict); without one, the distance bands.
        ``folder``: the project folder it was written in, where its files are anchored.
        """
        req = as_model(SaveRequest, request)
        found = anchors.for_write(req.text, folder, [a.model_dump() for a in req.anchors])
        now = time.time()
        vec = self.embedding.embed_one(req.text)
        sens = self.ctx.sensitivity(req.text, req.sensitivity, req.auto_classify)
        draft = NewBelief(
            text=req.text,
            vec=vec,
            type=req.type.value,
            project=req.project,
            sensitivity=sens,
            tags=req.tags,
            source=req.source,
            metadata=req.metadata,
            anchors=found,
        )
        llm = self.ctx.requested_llm()
        if llm is not None and not getattr(llm, "offline", True) and req.expires_at is None:
            out = self.pipeline(llm).write(draft)
            return SaveResponse(id=out.memory_id, outcome=out.outcome, conflicts=out.conflicts)
        draft.expires_at = ts(req.expires_at)
        store = self.ctx.store
        with self.ctx.lock, store.transaction():
            store.expire_due(now)
            outcome, memory_id, conflicts = write_banded(
                self.writer, draft, now, versions_beyond_duplicates=True
            )
        if outcome in ("merged", "deduplicated"):
            return SaveResponse(id=memory_id, outcome="merged")
        if outcome == "versioned":
            return SaveResponse(id=memory_id, outcome="versioned")
        return SaveResponse(
            id=memory_id, outcome="conflict" if conflicts else "added", conflicts=conflicts
        )
