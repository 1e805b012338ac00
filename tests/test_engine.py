"""The engine beyond Distill's API: versions, documents, listing, export, decay, embedders."""

from __future__ import annotations

import math
import time

import pytest
from pydantic import ValidationError as PydanticValidationError

import memloom
from memloom.embed import EmbedderMismatchError
from memloom.engine import ValidationError
from memloom.models import ForgetRequest
from memloom.store.base import ConflictStateError, NotFoundError


def vec(deg: float) -> list[float]:
    return [math.cos(math.radians(deg)), math.sin(math.radians(deg))]


@pytest.fixture
def m(tmp_path, backend):
    engine = memloom.open(home=str(tmp_path), database_url=backend)
    yield engine
    engine.close()


def put(m, text: str, deg: float, **kw) -> str:
    return m.store({"entries": [{"text": text, "embedding": vec(deg), **kw}]}).ids[0]


# ---------------------------------------------------------------- versions


def test_update_creates_a_version_and_history_lists_them_newest_first(m):
    first = put(m, "deploys go out on Tuesday", 0, tags=["ops"])
    # A 2-d store cannot embed new text itself: the new version is keyword-only.
    v2 = m.update(first, "deploys go out on Wednesday")
    assert (v2.root_id, v2.version) == (first, 2)
    v3 = m.update(v2.id, {"text": "deploys go out on Thursday", "tags": ["ops", "release"]})
    assert v3.version == 3

    history = m.history(first).versions
    assert [v.version for v in history] == [3, 2, 1]
    assert [v.status for v in history] == ["active", "stale", "stale"]
    old = m.get(first)
    assert old.superseded_by == v2.id and old.status == "stale"
    doc = m.get(v3.id)
    assert doc.tags == ["ops", "release"] and len(doc.versions) == 3
    with pytest.raises(ConflictStateError, match=v3.id):
        m.update(first, "editing an old version")


def test_stale_versions_take_no_part_in_recall(m):
    first = put(m, "the cache is memcached", 0)
    m.update(first, "the cache is redis")
    found = m.recall({"query": "cache"}).memories
    assert [x.text for x in found] == ["the cache is redis"]


def test_forget_by_id_removes_every_version(m):
    first = put(m, "token rotation happens monthly", 0)
    v2 = m.update(first, "token rotation happens weekly")
    other = put(m, "unrelated", 90)
    result = m.forget({"ids": [v2.id]})
    assert result.removed == 2 and result.total_memories == 1
    with pytest.raises(NotFoundError):
        m.get(first)
    assert m.get(other).text == "unrelated"


def test_forget_in_one_project_leaves_the_others(m):
    """The scope HTTP and MCP require of a forget by tags or time (docs/security.md)."""
    api = put(m, "scratch: api port", 0, tags=["scratch"], project="/work/api")
    web = put(m, "scratch: web port", 60, tags=["scratch"], project="/work/web")
    glob = put(m, "scratch: a global note", 120, tags=["scratch"])
    request = ForgetRequest.model_validate({"tags": ["scratch"], "project": "/work/api"})
    assert not request.unscoped
    assert m.forget(request).removed == 1
    with pytest.raises(NotFoundError):
        m.get(api)
    assert m.get(web).text and m.get(glob).text
    assert ForgetRequest.model_validate({"tags": ["scratch"]}).unscoped
    assert ForgetRequest.model_validate({"before": "2100-01-01T00:00:00Z"}).unscoped
    assert not ForgetRequest.model_validate({"ids": [web]}).unscoped
    with pytest.raises(PydanticValidationError, match="not both"):
        ForgetRequest.model_validate({"tags": ["x"], "project": "/work/web", "all": True})
    assert m.forget({"tags": ["scratch"], "all": True}).removed == 2


# ---------------------------------------------------------------- documents, ids, listing


def test_get_unknown_and_prefix_resolution(m):
    mid = put(m, "hello", 0)
    assert m.resolve_id(mid[:6]) == mid
    with pytest.raises(NotFoundError):
        m.get("0000000000000000")
    with pytest.raises(NotFoundError):
        m.resolve_id("zz")


def test_list_filters_and_pages(m):
    for i in range(12):
        m.store(
            {
                "entries": [
                    {
                        "text": f"note {i}",
                        "embedding": [1.0 if j == i else 0.0 for j in range(12)],
                        "type": "procedure" if i % 3 == 0 else "fact",
                        "project": "api" if i % 2 else None,
                        "source": "a.md" if i < 6 else "b.md",
                    }
                ]
            }
        )
    page = m.list({"types": ["procedure"]})
    assert page.total == 4
    page = m.list({"project": "api", "limit": 4})
    assert page.total == 6 and len(page.memories) == 4 and page.next_cursor
    rest = m.list({"project": "api", "limit": 4, "cursor": page.next_cursor})
    assert len(rest.memories) == 2 and rest.next_cursor is None
    assert m.list({"source": "b.md"}).total == 6


def test_export_carries_versions(m):
    first = put(m, "one", 0)
    m.update(first, "one, revised")
    docs = list(m.export())
    assert len(docs) == 2
    assert all(len(d.versions) == 2 for d in docs)


def test_supersede_cannot_point_at_itself(m):
    mid = put(m, "x", 0)
    with pytest.raises(ValidationError):
        m.supersede({"old_id": mid, "new_id": mid})


def test_pin_and_restore(m):
    mid = put(m, "pinned fact", 0)
    assert m.pin(mid).pinned is True
    assert m.pin(mid, False).pinned is False


# ---------------------------------------------------------------- decay


DAY = 24 * 3600.0


def test_decay_moves_one_level_per_pass_and_keeps_the_original(m):
    text = (
        "The staging cluster runs Kubernetes 1.29. It has three nodes. Each node has 16 GB. "
        "The ingress is nginx. Certificates come from Let's Encrypt. Backups run nightly. "
        "The on-call rotation is weekly. Alerts go to the ops channel. Logs live in Loki. "
        "Dashboards are in Grafana."
    )
    mid = put(m, text, 0)
    now = time.time()
    r = m.decay(now=now + 2 * DAY)
    assert (r.summarized, r.keywords, r.evicted) == (1, 0, 0)
    doc = m.get(mid)
    assert doc.decay_level == 1 and doc.original_text == text and len(doc.text) < len(text)
    # 40 days later, still only one more level in this pass.
    r = m.decay(now=now + 40 * DAY)
    assert (r.summarized, r.keywords, r.evicted) == (0, 1, 0)
    doc = m.get(mid)
    assert doc.decay_level == 2 and "kubernetes" in doc.text
    assert doc.original_text == text
    restored = m.restore(mid)
    assert restored.text == text and restored.decay_level == 0


def test_decay_evicts_keywords_after_thirty_days(m):
    mid = put(m, "short lived note about a flaky test", 0)
    now = time.time()
    m.decay(now=now + 2 * DAY)
    m.decay(now=now + 8 * DAY)
    r = m.decay(now=now + 31 * DAY)
    assert r.evicted == 1
    with pytest.raises(NotFoundError):
        m.get(mid)


def test_pinned_and_often_recalled_memories_resist_decay(m):
    pinned = put(m, "pinned memory about the release process", 0)
    popular = put(m, "popular memory about the test command", 90)
    plain = put(m, "plain memory about the linter", 180)
    m.pin(pinned)
    with m.backend.transaction():
        m.backend.update(popular, access_count=10)  # recalled often: ages 3x slower
    r = m.decay(now=time.time() + 2 * DAY)
    assert r.summarized == 1
    assert m.get(plain).decay_level == 1
    assert m.get(pinned).decay_level == 0
    assert m.get(popular).decay_level == 0
    assert m.decay(now=time.time() + 4 * DAY).summarized == 1  # popular now past 3 x 24 h
    assert m.get(pinned).decay_level == 0


# ---------------------------------------------------------------- embedders


def test_store_stamped_with_another_embedder_is_refused(tmp_path, backend):
    engine = memloom.open(home=str(tmp_path), database_url=backend)
    with engine.backend.transaction():
        engine.backend.set_meta("embedder", "openai:text-embedding-3-small@1536")
    engine.close()
    with pytest.raises(EmbedderMismatchError, match="reembed"):
        memloom.open(home=str(tmp_path), database_url=backend)


def test_caller_dimension_store_keeps_text_only_entries_searchable(m):
    put(m, "the build uses bazel", 0)
    res = m.store({"entries": [{"text": "the linter is ruff"}]})
    assert res.stored == 1
    assert m.backend.embeddings_for(res.ids) == {}  # no vector: another dimension
    found = m.recall({"query": "which linter"}).memories
    assert [x.text for x in found] == ["the linter is ruff"]


# ---------------------------------------------------------------- the real local model


@pytest.mark.slow
def test_paraphrase_is_deduplicated_by_the_local_model(m_real):
    a = m_real.save({"text": "The project uses PostgreSQL 16 for the main database"})
    b = m_real.save({"text": "The project uses PostgreSQL 16 as its main database", "tags": ["db"]})
    assert (a.outcome, b.outcome) == ("added", "merged")
    assert b.id == a.id
    doc = m_real.get(a.id)
    assert doc.tags == ["db"] and doc.access_count == 1


@pytest.mark.slow
def test_a_changed_port_is_a_new_version_and_more_is_a_conflict(m_real):
    """0.21 apart (the conflict band): the same sentence with another port is the
    memory's next version (issue 34); a changed port and more besides stays a conflict."""
    a = m_real.save({"text": "The API server listens on port 8080"})
    b = m_real.save({"text": "The API server listens on port 9090"})
    assert b.outcome == "versioned" and b.conflicts == []
    assert [v.text for v in m_real.history(b.id).versions] == [
        "The API server listens on port 9090",
        "The API server listens on port 8080",
    ]
    assert m_real.get(a.id).status == "stale"
    c = m_real.save({"text": "The API server listens on port 7070 behind the nginx proxy"})
    assert c.outcome == "conflict"
    assert c.conflicts[0].existing_id == b.id
    assert 0.15 <= c.conflicts[0].distance < 0.35
    assert m_real.stats().conflicts_pending == 1


@pytest.mark.slow
def test_hybrid_recall_finds_exact_identifiers(m_real):
    filler = [
        "The frontend is built with React and Vite",
        "Database migrations live in the alembic folder",
        "Use pnpm instead of npm in this repository",
        "The staging server is restarted every night",
        "Network errors during startup are retried three times",
        "Connection problems with the cache show up in the logs",
        "The service fails to reach the message broker when the VPN is down",
    ]
    target = "Redis at startup gives ECONNREFUSED until the container is healthy; wait for it"
    m_real.store({"entries": [{"text": t} for t in [*filler, target]]})
    found = m_real.recall({"query": "ECONNREFUSED", "max_results": 3}).memories
    assert found[0].text == target
    found = m_real.recall({"query": "settings for the frontend bundler"}).memories
    assert found[0].text == filler[0]
    vector_only = m_real.recall(
        {"query_embedding": m_real.embedder.embed_query("ECONNREFUSED").tolist()}
    ).memories
    # The embedding alone does not know the identifier; the keyword arm is what finds it.
    assert vector_only[0].similarity < found[0].similarity or vector_only[0].text != target


@pytest.fixture
def m_real(tmp_path, backend):
    engine = memloom.open(home=str(tmp_path), database_url=backend)
    yield engine
    engine.close()


def test_openai_compatible_embedder_from_the_environment(tmp_path, monkeypatch):
    from tests.support.openai_server import ScriptedOpenAI

    server = ScriptedOpenAI(dim=48)
    try:
        monkeypatch.setenv("MEMLOOM_EMBEDDER", "openai")
        monkeypatch.setenv("MEMLOOM_EMBED_BASE_URL", server.base_url)
        monkeypatch.setenv("MEMLOOM_EMBED_MODEL", "scripted-embed")
        monkeypatch.setenv("MEMLOOM_EMBED_API_KEY", "sk-test-not-a-real-key")
        with memloom.open(home=str(tmp_path)) as engine:
            engine.save({"text": "the deploy script lives in tools/deploy.sh"})
            engine.save({"text": "lunch is at noon"})
            found = engine.recall({"query": "where is the deploy script"}).memories
            assert found[0].text == "the deploy script lives in tools/deploy.sh"
            assert engine.stats().embedder == "openai:scripted-embed@48"
        paths = [p for p, _ in server.requests]
        assert paths and all(p == "/v1/embeddings" for p in paths)
        assert all(body["model"] == "scripted-embed" for _, body in server.requests)
        # The store now belongs to that embedder: the local default is refused.
        for name in ("MEMLOOM_EMBEDDER", "MEMLOOM_EMBED_MODEL", "MEMLOOM_EMBED_BASE_URL"):
            monkeypatch.delenv(name)
        with pytest.raises(EmbedderMismatchError, match="openai:scripted-embed@48"):
            memloom.open(home=str(tmp_path))
    finally:
        server.close()


def test_reembed_migrates_a_store_to_the_configured_embedder(tmp_path, backend, monkeypatch):
    from tests.support.openai_server import ScriptedOpenAI

    server = ScriptedOpenAI(dim=32)
    try:
        monkeypatch.setenv("MEMLOOM_EMBEDDER", "openai")
        monkeypatch.setenv("MEMLOOM_EMBED_BASE_URL", server.base_url)
        monkeypatch.setenv("MEMLOOM_EMBED_MODEL", "scripted-embed")
        with memloom.open(home=str(tmp_path), database_url=backend) as engine:
            engine.save({"text": "the release checklist lives in RELEASING.md"})
            engine.save({"text": "coffee machine is on the third floor"})
    finally:
        server.close()
    for name in ("MEMLOOM_EMBEDDER", "MEMLOOM_EMBED_MODEL", "MEMLOOM_EMBED_BASE_URL"):
        monkeypatch.delenv(name)
    with pytest.raises(EmbedderMismatchError):
        memloom.open(home=str(tmp_path), database_url=backend)
    with memloom.open(home=str(tmp_path), database_url=backend, check_embedder=False) as engine:
        assert engine.reembed()["reembedded"] == 2
    with memloom.open(
        home=str(tmp_path), database_url=backend
    ) as engine:  # the local model now owns it
        assert engine.stats().embedder == "local:all-MiniLM-L6-v2-int8@384"
        top = engine.recall({"query": "how do we cut a release?"}).memories[0]
        assert top.text == "the release checklist lives in RELEASING.md"
