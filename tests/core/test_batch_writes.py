"""Batched writes (``Memloom.store``) against the entry-by-entry semantics they replace.

Seeded random batches with planted exact repeats, near-duplicates and conflict-band
neighbours of the store's rows and of earlier entries of the same batch, across
projects, with expiries in the past and future and entries without a vector. The
same batch is written twice into the same starting store, on both backends: once by
:func:`write_banded_many`, once by an oracle that is the old loop (one
``find_by_hash`` and one single-query ``vector_search`` per entry, each entry seeing
every earlier one). Outcomes, conflicts and every row afterwards must agree, under
``save``'s rule (a changed value in the conflict band or a little further is a new
version) and under ``store``'s (only in the duplicate band).
"""

from __future__ import annotations

import re
import time
from dataclasses import asdict
from typing import Any

import numpy as np
import pytest

from memloom.core.beliefs import (
    DEDUP_DISTANCE,
    Banded,
    Settled,
    write_banded,
    write_banded_many,
)
from memloom.core.context import CoreContext
from memloom.core.writes import Draft, Neighbour, Writer
from memloom.hashing import content_hash
from memloom.store.base import MemoryRow, SearchFilter, Store

DIM = 16
PROJECTS = [None, "a", "b"]


def _unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v)).astype(np.float32)


def _at_distance(rng: np.random.Generator, base: np.ndarray, distance: float) -> np.ndarray:
    """A unit vector at cosine distance ``distance`` from ``base``."""
    u = rng.standard_normal(DIM)
    u -= u.dot(base) * base
    u /= np.linalg.norm(u)
    cos = 1.0 - distance
    return _unit(cos * base + np.sqrt(1.0 - cos * cos) * u)


def _case(seed: int, now: float) -> tuple[list[MemoryRow], list[Draft]]:
    rng = np.random.default_rng(seed)
    initial: list[MemoryRow] = []
    for i in range(40):
        draft = Draft(
            text=f"stored fact {seed}-{i}",
            vec=_unit(rng.standard_normal(DIM)),
            type="fact",
            project=PROJECTS[i % 3],
            sensitivity=int(rng.integers(0, 3)),
            tags=[f"t{i % 4}"],
            source=f"src{i % 2}",
            metadata={"origin": i},
            expires_at=None if i % 5 else now + 3600,
        )
        row = Writer.new_row(draft, now - 1000 + i)
        row.id = row.root_id = f"init-{seed}-{i:03d}"
        initial.append(row)
    drafts: list[Draft] = []
    for i in range(160):
        kind = rng.choice(
            [
                "repeat_store",
                "repeat_batch",
                "dup_store",
                "dup_batch",
                "conflict_store",
                "conflict_batch",
                "update_store",
                "update_batch",
                "distinct",
                "novec",
            ],
            p=[0.08, 0.08, 0.11, 0.11, 0.13, 0.13, 0.06, 0.06, 0.19, 0.05],
        )
        project = PROJECTS[int(rng.integers(0, 3))]
        text = f"new statement {seed}-{i}"
        vec: np.ndarray | None = _unit(rng.standard_normal(DIM))
        pool: list[Any] = initial if kind.endswith("store") else drafts
        if kind != "distinct" and kind != "novec" and pool:
            base = pool[int(rng.integers(0, len(pool)))]
            base_vec = base.embedding if isinstance(base, MemoryRow) else base.vec
            if rng.random() < 0.8:
                project = base.project  # mostly the same project, sometimes not
            if kind.startswith("repeat"):
                text = base.text
                vec = base_vec if base_vec is not None else vec
            elif base_vec is not None:
                band = 0.25 if kind.startswith("conflict") else 0.05
                if kind.startswith("update") and rng.random() < 0.4:
                    band = 0.25  # a changed value in the conflict band: store's rule differs
                vec = _at_distance(rng, base_vec, band + float(rng.uniform(-0.03, 0.03)))
                if kind.startswith("dup"):  # the same claim, said again
                    text = f"{base.text} indeed"
                elif kind.startswith("conflict"):  # a value changed, and more
                    text = f"{base.text} unlike release {seed}-{i}"
                elif kind.startswith("update"):  # the same claim with its number changed
                    text = re.sub(r"\d+$", lambda m: str(int(m.group()) + 1000), base.text)
        if kind == "novec":
            vec = None
        expiry_roll = rng.random()
        expires_at = now - 60 if expiry_roll < 0.1 else now + 600 if expiry_roll < 0.25 else None
        drafts.append(
            Draft(
                text=text,
                vec=vec,
                type="fact",
                project=project,
                sensitivity=int(rng.integers(0, 4)),
                tags=[f"t{int(rng.integers(0, 6))}"],
                source=f"src{int(rng.integers(0, 3))}",
                metadata={"entry": i, "kind": str(kind)},
                session_id="s",
                expires_at=expires_at,
            )
        )
    return initial, drafts


def _one_by_one(writer: Writer, draft: Draft, now: float, beyond: bool) -> Banded:
    """The entry-by-entry write the batch replaces (memloom 222fe00's write_banded):
    exact hash, then the nearest five by one single-query search, then the bands."""
    store = writer.store
    same = store.find_by_hash(content_hash(draft.text), draft.project)
    if same is not None:
        writer.merge_into(same, draft, now)
        return "merged", same.id, []
    neighbours: list[Neighbour] = []
    if draft.vec is not None:
        flt = SearchFilter(project=draft.project, project_mode="exact", alive_at=now, own_only=True)
        hits = store.vector_search(draft.vec, 5, flt)
        rows = {r.id: r for r in store.get_many([h[0] for h in hits])}
        neighbours = [Neighbour(rows[m], s) for m, s in hits if m in rows]
    return write_banded(writer, draft, now, neighbours, versions_beyond_duplicates=beyond)


def _reset(store: Store, initial: list[MemoryRow]) -> None:
    with store.transaction():
        every = [r.id for r in store.iter_all()]
        if every:
            store.delete(every)
        for row in initial:
            store.insert(row)


def _run(
    store: Store, writer: Writer, drafts: list[Draft], now: float, batched: bool, beyond: bool
) -> dict:
    replaced: list[str | None] = []
    with store.transaction():
        if batched:
            settled = write_banded_many(writer, drafts, now, versions_beyond_duplicates=beyond)
            results: list[Banded] = [(o, m, c) for o, m, c, _ in settled]
            replaced = [r for *_, r in settled]
        else:
            results = [_one_by_one(writer, d, now, beyond) for d in drafts]
    # New rows are named by the entry that made them; the starting rows keep their ids.
    names = {
        mid: f"entry-{i}"
        for i, (how, mid, _) in enumerate(results)
        if how in ("stored", "versioned")
    }

    def name(memory_id: str) -> str:
        return names.get(memory_id, memory_id)

    outcomes = [(outcome, name(mid)) for outcome, mid, _ in results]
    conflicts = [
        (i, name(c.new_id), name(c.existing_id), c.existing_text, c.distance)
        for i, (_, _, found) in enumerate(results)
        for c in found
    ]
    rows = {}
    for row in store.iter_all():
        doc = asdict(row)
        doc.pop("embedding")
        doc["id"], doc["root_id"] = name(row.id), name(row.root_id)
        if row.superseded_by is not None:  # a version the batch wrote
            doc["superseded_by"] = name(row.superseded_by)
        rows[doc["id"]] = doc
    recorded = sorted(
        (name(c.new_id), name(c.existing_id), c.status, c.reason) for c in store.all_conflicts()
    )
    # The batch names the memory each version replaced: the row that now points to it.
    for (outcome, mid, _), old in zip(results, replaced, strict=False):
        assert (old is not None) == (outcome == "versioned")
        if old is not None:
            assert rows[name(old)]["superseded_by"] == name(mid)
            assert rows[name(old)]["status"] == "stale"
    return {"outcomes": outcomes, "conflicts": conflicts, "rows": rows, "recorded": recorded}


def _distances_close(a: list[tuple], b: list[tuple]) -> None:
    assert [c[:4] for c in a] == [c[:4] for c in b]
    for x, y in zip(a, b, strict=True):
        # float32 products summed in another order (one matrix product for the batch,
        # one per query one by one) may differ in the last bit: one rounding step.
        assert x[4] == pytest.approx(y[4], abs=1.5e-6)


@pytest.mark.parametrize("beyond", [True, False], ids=["save-rule", "store-rule"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_batch_writes_exactly_what_entry_by_entry_writes_would(
    engine, seed: int, beyond: bool
) -> None:
    store = engine.backend
    writer = Writer(CoreContext(engine.settings, store, engine.embedder))
    now = time.time()
    initial, drafts = _case(seed, now)

    _reset(store, initial)
    one_by_one = _run(store, writer, drafts, now, batched=False, beyond=beyond)
    _reset(store, initial)
    batched = _run(store, writer, drafts, now, batched=True, beyond=beyond)

    assert batched["outcomes"] == one_by_one["outcomes"]
    _distances_close(batched["conflicts"], one_by_one["conflicts"])
    assert batched["rows"] == one_by_one["rows"]
    assert batched["recorded"] == one_by_one["recorded"]

    # The planted cases happened, inside the batch as well as against the store.
    outcomes = batched["outcomes"]
    kinds = {o for o, _ in outcomes}
    assert kinds == {"merged", "deduplicated", "stored", "versioned"}
    assert any(o != "stored" and target.startswith("entry-") for o, target in outcomes)
    assert any(o != "stored" and target.startswith("init-") for o, target in outcomes)
    assert any(c[2].startswith("entry-") for c in batched["conflicts"])
    assert any(c[2].startswith("init-") for c in batched["conflicts"])


@pytest.mark.parametrize("seed", [1, 2])
def test_the_store_rule_versions_only_in_the_duplicate_band(engine, seed: int) -> None:
    """The same batch under both rules: under ``store``'s every version replaced a row
    nearer than 0.15, and a changed value ``save``'s rule versions in the conflict band
    is stored and flagged instead."""
    store = engine.backend
    writer = Writer(CoreContext(engine.settings, store, engine.embedder))
    now = time.time()
    initial, drafts = _case(seed, now)
    settled: dict[bool, list[Settled]] = {}
    for beyond in (True, False):
        _reset(store, initial)
        with store.transaction():
            settled[beyond] = write_banded_many(
                writer, drafts, now, versions_beyond_duplicates=beyond
            )
        if beyond:
            continue
        replaced = [(d, s) for d, s in zip(drafts, settled[beyond], strict=True) if s.replaced]
        assert replaced, "the planted duplicate-band updates made versions"
        vectors = store.embeddings_for([s.replaced for _, s in replaced if s.replaced])
        for draft, s in replaced:
            assert draft.vec is not None and s.replaced is not None
            assert 1.0 - float(draft.vec @ vectors[s.replaced]) < DEDUP_DISTANCE + 1e-5
    changed = [
        after
        for before, after in zip(settled[True], settled[False], strict=True)
        if before.outcome == "versioned" and after.outcome == "stored"
    ]
    assert changed, "a conflict-band update was planted"
    flagged = [c for s in changed for c in s.conflicts]
    assert flagged and all(store.get_conflict(c.conflict_id).status == "pending" for c in flagged)


def test_store_reports_a_batch_as_entry_by_entry_requests_would(engine) -> None:
    """Through the library contract: duplicates inside one request merge with each
    other, as they do across two requests."""
    base = _unit(np.arange(1, DIM + 1, dtype=np.float32))
    near = _at_distance(np.random.default_rng(0), base, 0.05)
    conflict = _at_distance(np.random.default_rng(1), base, 0.25)
    entries = [
        {"text": "the API listens on 8080", "embedding": base.tolist(), "tags": ["a"]},
        {"text": "the API listens on 8080", "embedding": base.tolist(), "tags": ["b"]},
        {"text": "the API listens on port 8080", "embedding": near.tolist()},
        # A value changed and more: a conflict (the port alone would be a new version).
        {"text": "the API listens on 9090 behind the nginx proxy", "embedding": conflict.tolist()},
    ]
    out = engine.store({"entries": entries})
    assert (out.stored, out.merged, out.deduplicated) == (2, 1, 1)
    assert out.ids[0] == out.ids[1] == out.ids[2] != out.ids[3]
    assert [(c.new_id, c.existing_id) for c in out.conflicts] == [(out.ids[3], out.ids[0])]
    merged = engine.get(out.ids[0])
    assert merged.tags == ["a", "b"] and merged.access_count == 2
