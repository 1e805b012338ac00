"""SearchFilter means one thing: the SQL filter (either dialect), the vector index's
mask and the Python predicate select the same rows, on random rows and filters."""

from __future__ import annotations

import uuid

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memloom.store.base import MemoryRow, SearchFilter
from memloom.store.dialect import SQLITE, PostgresDialect
from memloom.store.filters import where
from memloom.store.vectors import RowMeta, VectorIndex

T = 1_700_000_000.0  # the filters' "now"; TTLs fall on either side of it, and on it
DIM = 4
STATUSES = ["active", "stale", "expired"]
TYPES = ["fact", "preference", "episode", "procedure"]
TAGS = ["x", "y", "z"]
PROJECTS = [None, "a", "b", "a/b"]


def _subset(items: list[str], min_size: int = 0) -> st.SearchStrategy[frozenset[str]]:
    return st.frozensets(st.sampled_from(items), min_size=min_size)


rows = st.builds(
    dict,
    status=st.sampled_from(STATUSES),
    project=st.sampled_from(PROJECTS),
    type=st.sampled_from(TYPES),
    tags=st.lists(st.sampled_from(TAGS), unique=True, max_size=3),
    sensitivity=st.integers(0, 3),
    expires_at=st.sampled_from([None, T - 1, T, T + 1]),
)
filters = st.builds(
    SearchFilter,
    statuses=_subset(STATUSES, min_size=1),
    project=st.sampled_from([*PROJECTS, "unknown"]),
    project_mode=st.sampled_from(["any", "exact", "scoped"]),
    types=st.none() | _subset(TYPES),
    tags=st.none() | _subset(TAGS),
    exclude_tags=st.none() | _subset(TAGS, min_size=1),
    max_sensitivity=st.none() | st.integers(0, 3),
    alive_at=st.sampled_from([None, T - 1, T, T + 1]),
)


def _memory(fields: dict, rng: np.random.Generator) -> MemoryRow:
    vec = rng.normal(size=DIM).astype(np.float32)
    vec /= np.linalg.norm(vec)
    mid = uuid.uuid4().hex
    return MemoryRow(
        id=mid,
        root_id=mid,
        version=1,
        text=f"memory {mid}",
        original_text=None,
        content_hash=mid,
        embedding=vec,
        source=None,
        metadata={},
        session_id=None,
        created_at=T - 100,
        asserted_at=T - 100,
        last_referenced=T - 100,
        **fields,
    )


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request, tmp_path):
    if request.param == "postgres":
        from memloom.store.postgres import PostgresStore

        s = PostgresStore(request.getfixturevalue("pg_url"))
    else:
        from memloom.store.sqlite import SQLiteStore

        s = SQLiteStore(tmp_path / "memloom.db")
    yield s
    s.close()


def _sql_ids(store, flt: SearchFilter) -> set[str]:
    page = store.list(
        flt, source=None, min_sensitivity=None, order="created", limit=10**6, cursor=None
    )
    return {r.id for r in page.rows}


def _index_ids(stored: list[MemoryRow], flt: SearchFilter) -> set[str]:
    """The vector index's mask, on an index holding the same rows (tags, which the
    index does not hold, come as the allowed rowids, as the SQLite store passes them)."""
    index = VectorIndex(DIM, ann_threshold=10**9)
    for key, r in enumerate(stored):
        index.upsert(
            key, r.embedding, RowMeta(r.status, r.project, r.type, r.sensitivity, r.expires_at)
        )

    def carrying(tags: frozenset[str] | None) -> np.ndarray | None:
        if tags is None:
            return None
        return np.array([k for k, r in enumerate(stored) if tags.intersection(r.tags)], np.int64)

    allowed = None
    if flt.tags is not None or flt.exclude_tags is not None:
        allowed = (carrying(flt.tags), carrying(flt.exclude_tags))
    query = np.ones(DIM, dtype=np.float32) / 2
    return {stored[key].id for key, _ in index.search(query, len(stored), flt, allowed)}


def test_sql_filter_index_mask_and_predicate_agree(store):
    rng = np.random.default_rng(14)
    stored: list[MemoryRow] = []

    @settings(
        max_examples=60,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(new=st.lists(rows, min_size=1, max_size=5), checks=st.lists(filters, max_size=8))
    def check(new: list[dict], checks: list[SearchFilter]) -> None:
        fresh = [_memory(fields, rng) for fields in new]
        with store.transaction():
            for row in fresh:
                store.insert(row)
        stored.extend(fresh)
        for flt in checks:
            expected = {r.id for r in stored if flt.matches(r, flt.alive_at or T)}
            assert _sql_ids(store, flt) == expected, flt
            assert _index_ids(stored, flt) == expected, flt
            if hasattr(store, "db"):  # SQLite: its own index, tags from memory_tags
                hits = store.vector_search(np.ones(DIM, dtype=np.float32), len(stored), flt)
                assert {h[0] for h in hits} == expected, flt

    check()


@pytest.mark.parametrize(
    "flt",
    [
        SearchFilter(project=None, project_mode="scoped"),
        SearchFilter(project="a", project_mode="exact", types=frozenset({"fact"})),
        SearchFilter(tags=frozenset({"y", "x"}), max_sensitivity=2, alive_at=T),
    ],
)
def test_one_definition_renders_to_both_dialects(flt):
    """The same clauses, in the same order, in each dialect's words."""
    lite, lite_params = where(flt, SQLITE)
    pg, pg_params = where(flt, PostgresDialect())
    assert len(lite) == len(pg) == len(flt.clauses())
    assert lite[0] == "m.status IN (?)" and pg[0] == "m.status = ANY(%s)"
    assert len(lite_params) >= len(pg_params)
