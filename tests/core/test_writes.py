"""The core services' seams: writer observers inside the write transaction, the one
judge request, and core never importing the facade."""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any

import numpy as np
import pytest

from memloom.core.beliefs import NewBelief, write_banded
from memloom.core.conflicts import Statement, judge
from memloom.core.context import CoreContext
from memloom.core.documents import utc
from memloom.core.writes import Draft, Writer
from memloom.store.base import ProvenanceRow


def _vec(*xs: float) -> np.ndarray:
    v = np.zeros(8, dtype=np.float32)
    v[: len(xs)] = xs
    return v / np.linalg.norm(v)


def _writer(engine) -> Writer:
    return Writer(CoreContext(engine.settings, engine.backend, engine.embedder))


def _draft(text: str, vec: np.ndarray | None = None) -> Draft:
    return Draft(text=text, vec=vec, type="fact", project="p", sensitivity=0)


def test_observers_see_inserts_and_merges_inside_the_write_transaction(engine) -> None:
    writer = _writer(engine)
    store = engine.backend
    seen: list[tuple[str, bool, bool]] = []

    def observer(memory_id: str, inserted: bool) -> None:
        seen.append((memory_id, inserted, store.get(memory_id) is not None))

    writer.observe(observer)
    now = time.time()
    with store.transaction():
        first = write_banded(writer, _draft("The build uses make"), now)
    with store.transaction():
        again = write_banded(writer, _draft("The build uses make"), now)
    assert first[0] == "stored" and again == ("merged", first[1], [])
    assert seen == [(first[1], True, True), (first[1], False, True)]


def test_an_observers_writes_roll_back_with_the_memory(engine) -> None:
    store = engine.backend
    writer = _writer(engine).observing(
        lambda memory_id, inserted: store.add_provenance(
            ProvenanceRow(memory_id, None, "/t.jsonl", "p", 1, 2, "x")
        )
    )
    with pytest.raises(RuntimeError), store.transaction():
        row = writer.add(_draft("Deploys go through CI"), time.time())
        assert store.provenance([row.id])  # written in the same transaction
        raise RuntimeError("crash before commit")
    assert store.get(row.id) is None
    assert store.provenance([row.id]) == []


def test_observing_leaves_the_base_writer_unobserved(engine) -> None:
    base = _writer(engine)
    calls: list[str] = []
    observed = base.observing(lambda memory_id, inserted: calls.append(memory_id))
    with engine.backend.transaction():
        base.add(_draft("one"), time.time())
        row = observed.add(_draft("two"), time.time())
    assert base.observers == [] and calls == [row.id]


def test_the_facade_hands_the_pipeline_an_observed_writer(engine) -> None:
    calls: list[tuple[str, bool]] = []
    pipeline = engine.belief_pipeline(None, observer=lambda m, i: calls.append((m, i)))
    belief = NewBelief(
        text="Tests run with pytest", vec=_vec(1, 0), type="fact", project=None, sensitivity=0
    )
    first = pipeline.write(belief)
    second = pipeline.write(belief)
    assert (first.outcome, second.outcome) == ("added", "merged")
    assert calls == [(first.memory_id, True), (first.memory_id, False)]
    engine.save({"text": "Unobserved save"})  # the engine's own writes stay unobserved
    assert len(calls) == 2


def test_one_judge_request_for_both_callers() -> None:
    asked: list[dict[str, Any]] = []

    class Judge:
        def complete(self, task: str, system: str, payload: dict, schema: dict) -> dict:
            asked.append({"task": task, **payload})
            return {"verdict": "keep_new", "index": 0, "reason": "newer"}

    at = utc(1_700_000_000.25)
    verdict = judge(
        Judge(),
        Statement("uses tabs", at, None),
        [Statement("uses spaces", at, "user: spaces please")],
        "indentation",
    )
    assert verdict.verdict == "keep_new"
    assert asked == [
        {
            "task": "memloom_judge",
            "new": {"text": "uses tabs", "asserted_at": at.isoformat(), "excerpt": ""},
            "existing": [
                {
                    "index": 0,
                    "text": "uses spaces",
                    "asserted_at": at.isoformat(),
                    "excerpt": "user: spaces please",
                }
            ],
            "reason": "indentation",
        }
    ]


def test_core_services_never_import_the_facade() -> None:
    code = (
        "import sys, memloom.core.activity, memloom.core.beliefs, memloom.core.conflicts, "
        "memloom.core.lifecycle, memloom.core.maintenance, memloom.core.recall; "
        "print('memloom.engine' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
