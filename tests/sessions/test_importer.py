"""``import_sessions`` end to end: real files, a real SQLite store, the real local
embedder, and a scripted model served over the OpenAI-compatible HTTP protocol."""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import time
import uuid
from pathlib import Path

import pytest

import memloom
from tests.support.scripted_llm import ScriptedModel

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
REAL = (
    FIXTURES
    / "claude"
    / "projects"
    / "-Users-dain-workspace-JSSoundRecorder"
    / "7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl"
)


def record(
    role: str,
    text: str,
    *,
    cwd: str = "/home/dev/acme",
    sid: str = "s1",
    rng: random.Random | None = None,
) -> dict:
    """A Claude Code transcript record: random ids at 10:00, or, with ``rng``, its ids
    and minute drawn from ``rng`` (the same seed, the same records)."""
    if rng is None:
        rid, at = str(uuid.uuid4()), "2026-11-20T10:00:00.000Z"
    else:
        rid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        at = f"2026-11-20T10:{rng.randint(0, 59):02d}:00.000Z"
    base = {
        "uuid": rid,
        "sessionId": sid,
        "cwd": cwd,
        "timestamp": at,
        "type": role,
        "isSidechain": False,
    }
    if role == "user":
        base["message"] = {"role": "user", "content": text}
    else:
        mid = "msg_" + uuid.uuid4().hex[:12] if rng is None else f"msg_{rng.getrandbits(48):012x}"
        base["message"] = {
            "id": mid,
            "role": "assistant",
            "model": "claude-sonnet",
            "content": [{"type": "text", "text": text}],
        }
    return base


def write_session(path: Path, turns: list[tuple[str, str]], **kw) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        for role, text in turns:
            fh.write(json.dumps(record(role, text, **kw)) + "\n")
    return path


def session_path(root: Path, project_dir: str = "-home-dev-acme", sid: str | None = None) -> Path:
    return root / "projects" / project_dir / f"{sid or uuid.uuid4()}.jsonl"


@pytest.fixture
def model(monkeypatch):
    scripted = ScriptedModel()
    monkeypatch.setenv("MEMLOOM_LLM", "openai")
    monkeypatch.setenv("MEMLOOM_LLM_BASE_URL", scripted.base_url)
    monkeypatch.setenv("MEMLOOM_LLM_MODEL", "scripted")
    monkeypatch.setenv("MEMLOOM_LLM_API_KEY", "sk-scripted-test-key")
    yield scripted
    scripted.close()


@pytest.fixture
def m(tmp_path):
    engine = memloom.open(home=str(tmp_path / "home"))
    yield engine
    engine.close()


def ledger(m, path: Path):
    return m.backend.ledger_get_many([str(path)])[str(path)]


def active(m) -> list:
    return m.list({"limit": 1000}).memories


# ---------------------------------------------------------------- provenance, ledger


def test_real_transcript_gets_memories_with_provenance_and_a_ledger_row(m, model, tmp_path):
    path = tmp_path / "claude" / "projects" / "-Users-dain-workspace-JSSoundRecorder" / REAL.name
    path.parent.mkdir(parents=True)
    shutil.copy(REAL, path)
    # The real transcript has no REMEMBER: markers; add two typed prompts at the end.
    write_session(
        path,
        [
            ("user", "REMEMBER: the recorder targets Chrome and Firefox only"),
            ("assistant", "Noted."),
            ("user", "REMEMBER: I prefer vite over webpack for this project"),
        ],
        cwd="/Users/dain/workspace/JSSoundRecorder",
        sid=REAL.stem,
    )
    report = m.import_sessions([path])
    assert (report.sessions, report.saved, report.failed) == (1, 2, 0)
    assert report.calls["extraction"] == 1 and report.calls["embedding"] == 1

    memories = {d.text: d for d in active(m)}
    pref = memories["I prefer vite over webpack for this project"]
    assert pref.type == "preference"
    assert pref.project == "/Users/dain/workspace/JSSoundRecorder"
    doc = m.get(pref.id)
    (prov,) = doc.provenance
    lines = path.read_bytes().split(b"\n")
    assert prov.path == str(path) and prov.session_id == REAL.stem
    assert prov.start_line == prov.end_line == len(lines) - 1  # the last line of the file
    assert "I prefer vite over webpack" in prov.excerpt

    row = ledger(m, path)
    data = path.read_bytes()
    assert (row.status, row.offset, row.size) == ("complete", len(data), len(data))
    assert row.lines == data.count(b"\n")
    assert row.hash == hashlib.sha256(data).hexdigest()
    assert row.memories == 2

    # The distill request carried only conversation text, tagged with line numbers.
    payload = model.payloads["memloom_distill"][0]
    assert payload["session"]["id"] == REAL.stem
    assert all(set(line) == {"line", "role", "text"} for line in payload["lines"])
    assert not any("tool_use" in line["text"] for line in payload["lines"])


def test_memories_and_provenance_name_the_agent(m, model, tmp_path):
    """Memories carry the agent as ``source``; each provenance row names it too."""
    path = session_path(tmp_path / "claude" / "projects")
    write_session(path, [("user", "REMEMBER: the API listens on port 8080")])
    m.import_sessions([path])
    (doc,) = active(m)
    assert doc.source == "claude-code"
    (prov,) = m.get(doc.id).provenance
    assert prov.agent == "claude-code"
    assert m.get(doc.id).model_dump()["provenance"][0]["agent"] == "claude-code"


def test_dry_run_calls_and_writes_nothing(m, model, tmp_path):
    path = write_session(session_path(tmp_path), [("user", "REMEMBER: staging is on port 5433")])
    report = m.import_sessions([path], dry_run=True)
    assert report.dry_run and report.chunks == 1 and report.input_chars > 0
    assert report.per_session[0].status == "dry_run"
    assert model.server.requests == []
    assert m.backend.ledger_get_many([str(path)]) == {}
    assert m.stats().total_memories == 0


def test_unchanged_rerun_makes_no_call(m, model, tmp_path):
    path = write_session(session_path(tmp_path), [("user", "REMEMBER: CI runs on GitHub Actions")])
    m.import_sessions([path])
    before = len(model.server.requests)
    report = m.import_sessions([path])
    assert report.sessions == 0 and report.skipped["up_to_date"] == 1
    assert len(model.server.requests) == before


def test_grown_file_resumes_from_the_watermark_with_context(m, model, tmp_path):
    path = session_path(tmp_path)
    write_session(path, [("user", f"filler line {i}") for i in range(60)])
    write_session(path, [("user", "REMEMBER: the API is written in Go")])
    m.import_sessions([path])
    first_rows = ledger(m, path)
    assert first_rows.lines == 61

    write_session(path, [("assistant", "ok"), ("user", "REMEMBER: deploys go through ArgoCD")])
    report = m.import_sessions([path])
    assert report.sessions == 1 and report.saved == 1
    payload = model.payloads["memloom_distill"][-1]
    numbers = [line["line"] for line in payload["lines"]]
    # The last 40 lines before the watermark come along as context, nothing older.
    assert numbers[0] == 61 - 40 + 1 and numbers[-1] == 63
    assert ledger(m, path).lines == 63
    # The overlap re-read the Go line; what the model drew from context alone is
    # dropped (the first run wrote it), so it is neither duplicated nor re-judged.
    assert report.dropped_reasons == {"context_only": 1} and report.merged == 0
    texts = [d.text for d in active(m)]
    assert sorted(texts) == ["deploys go through ArgoCD", "the API is written in Go"]


def test_rewritten_prefix_is_reprocessed_from_the_start(m, model, tmp_path):
    path = write_session(session_path(tmp_path), [("user", "REMEMBER: tabs not spaces here")])
    m.import_sessions([path])
    data = path.read_bytes().replace(b"tabs not spaces", b"tabs NOT spaces")
    path.write_bytes(data)  # same size, different bytes
    report = m.import_sessions([path])
    assert report.per_session[0].reason == "rewritten"
    assert model.payloads["memloom_distill"][-1]["lines"][0]["line"] == 1


def test_force_reprocesses_an_imported_session(m, model, tmp_path):
    path = write_session(session_path(tmp_path), [("user", "REMEMBER: use uv for Python envs")])
    m.import_sessions([path])
    report = m.import_sessions([path], force=True)
    assert report.sessions == 1 and report.per_session[0].reason == "forced"
    assert report.merged == 1 and report.saved == 0  # same memory again: merged, not doubled
    assert len(active(m)) == 1


def test_secrets_are_redacted_before_the_provider_sees_them(m, model, tmp_path):
    secret = "ghp_" + "Q7w8E9r0T1y2U3i4O5p6A7s8D9f0G1h2J3k4"
    aws = "AKIA" + "Z7QWERTY2XCVB6NM"
    path = write_session(
        session_path(tmp_path),
        [
            ("user", f"REMEMBER: the deploy token is {secret}"),
            ("assistant", f"I set AWS_ACCESS_KEY_ID={aws} in the env for you"),
        ],
    )
    report = m.import_sessions([path])
    assert report.redactions >= 2
    everything = "".join(model.bodies())
    assert secret not in everything and aws not in everything
    assert "[redacted:" in everything
    (doc,) = active(m)
    assert secret not in doc.text
    assert secret not in m.get(doc.id).provenance[0].excerpt
    stored = m.backend.db.execute("SELECT group_concat(text) FROM memories").fetchone()[0]
    assert secret not in stored


#: Words for distinct facts: ``fact(i)`` and ``fact(j)`` differ in two words, so no two
#: read as one fact with a value changed (issue 34), as "fact number 1" and "fact number 2"
#: would.
_TEAMS = ("amber", "birch", "cedar", "dune", "ember", "fjord")
_TEAMS += ("grove", "harbor", "iris", "jade", "kelp", "lagoon")
_THINGS = ("anchor", "beacon", "canyon", "delta", "estuary", "glacier")
_THINGS += ("island", "jetty", "knoll", "ledge", "mesa", "oasis")


def fact(i: int) -> str:
    return f"the {_TEAMS[i % 12]} team owns the {_THINGS[(i * 5 + i // 12) % 12]} board {i // 12}"


def test_provider_402_keeps_progress_and_a_rerun_heals(m, model, tmp_path):
    path = session_path(tmp_path)
    big = "x" * 3_000
    turns = []
    for i in range(24):  # about 74k characters: four chunks
        turns.append(("user", f"REMEMBER: {fact(i)}"))
        turns.append(("assistant", big))
    write_session(path, turns)
    model.fail_on = {2: 402}
    report = m.import_sessions([path])
    assert report.stopped and "402" in report.stopped
    first = ledger(m, path)
    assert first.status == "partial" and 0 < first.offset < path.stat().st_size
    saved_first = {d.text for d in active(m)}
    assert saved_first and len(saved_first) < 24

    model.fail_on = {}
    report = m.import_sessions([path])
    assert report.stopped is None and report.per_session[0].reason == "partial"
    assert ledger(m, path).status == "complete"
    texts = sorted(d.text for d in active(m))
    assert texts == sorted(fact(i) for i in range(24))  # each exactly once


def test_credits_running_out_after_the_second_extraction_call_heal_to_the_clean_store(
    model, tmp_path
):
    """The issue's first divergence: a 100-turn session; the provider answers 402 to
    every call after the second extraction call (the classifier's and judge's calls
    of chunk 2 included), then the run is repeated with credits back. The failed
    classifier calls used to fall back to the distance bands, so the healed store
    held other memories than a clean import: now they fail the chunk, which the
    next run distills again."""
    rng = random.Random(100)
    subjects, tools = ("the build", "the API", "deploys", "the cache"), ("vite", "make", "docker")
    turns = []
    for i in range(100):
        subject, tool = rng.choice(subjects), rng.choice(tools)
        said = rng.choice(
            [
                f"{subject} uses {tool}",
                f"{subject} never uses {tool}",
                f"{subject[0].upper()}{subject[1:]} uses {tool}.",  # a restatement
            ]
        )
        turns.append(("user", f"REMEMBER: {said}"))
        turns.append(("assistant", f"noted {i} " + "z" * 2_500))
    clean_path = write_session(session_path(tmp_path / "clean"), turns)
    path = session_path(tmp_path / "healed")
    path.parent.mkdir(parents=True)
    shutil.copy(clean_path, path)

    def state(engine) -> list[tuple]:
        rows = [r for batch in engine.backend.iter_rows() for r in batch]
        by_id = {r.id: r for r in rows}
        conflicts = sorted(
            (by_id[c.new_id].text, by_id[c.existing_id].text, c.status)
            for c in engine.backend.all_conflicts()
        )
        memories = sorted((r.text, r.status, r.version, r.access_count) for r in rows)
        return [memories, conflicts]

    with memloom.open(home=str(tmp_path / "clean-home")) as clean:
        assert clean.import_sessions([clean_path]).stopped is None
        want = state(clean)
    assert any(status == "stale" for _, status, _, _ in want[0]) and want[1]

    model.distill_calls, model.broke_after = 0, 2
    with memloom.open(home=str(tmp_path / "home")) as m:
        report = m.import_sessions([path])
        assert report.stopped and "402" in report.stopped
        assert model.distill_calls == 2 and ledger(m, path).status == "partial"
        model.broke_after = None
        report = m.import_sessions([path])
        assert report.stopped is None and ledger(m, path).status == "complete"
        assert state(m) == want


def test_provider_401_stops_the_whole_run_with_a_clear_message(m, model, tmp_path):
    a = write_session(session_path(tmp_path), [("user", "REMEMBER: one")])
    b = write_session(session_path(tmp_path), [("user", "REMEMBER: two")])
    model.fail_on = {1: 401}
    report = m.import_sessions([a, b])
    assert "401" in report.stopped
    assert model.distill_calls == 1  # the second session was not attempted


# ---------------------------------------------------------------- discovery filters


def test_quiet_window_days_cap_and_project_filter(m, model, tmp_path):
    root = tmp_path / "claude"
    now = time.time()

    def make(project_dir: str, cwd: str, age_s: float) -> Path:
        path = write_session(
            session_path(root, project_dir), [("user", f"REMEMBER: from {cwd} {age_s}")], cwd=cwd
        )
        os.utime(path, (now - age_s, now - age_s))
        return path

    make("-home-dev-acme", "/home/dev/acme", 30)  # still being written
    make("-home-dev-acme", "/home/dev/acme", 3600)
    make("-home-dev-acme", "/home/dev/acme", 7200)
    make("-home-dev-web", "/home/dev/web", 10_800)
    make("-home-dev-acme", "/home/dev/acme", 30 * 86400)  # outside 14 days
    agent = root / "projects" / "-home-dev-acme" / "agent-1234abcd.jsonl"
    write_session(agent, [("user", "REMEMBER: sidecar text")])
    os.utime(agent, (now - 3600, now - 3600))

    report = m.import_sessions(root=root, days=14, sessions=2)
    assert report.sessions == 2
    assert report.skipped["active"] == 1
    assert report.skipped["outside_window"] == 1
    assert report.skipped["over_cap"] == 1
    assert report.skipped["sidecars"] == 1

    report = m.import_sessions(root=root, days=14, sessions=20, project="web")
    assert report.sessions == 1 and report.skipped["project_filter"] == 4  # filtered first
    assert {d.project for d in active(m)} == {"/home/dev/acme", "/home/dev/web"}


# ---------------------------------------------------------------- the belief pipeline


def test_classifier_outcomes_identical_complementary_contradictory(m, model, tmp_path):
    path = session_path(tmp_path)
    write_session(path, [("user", "REMEMBER: The project uses PostgreSQL for storage")])
    m.import_sessions([path])
    write_session(
        path,
        [
            ("user", "REMEMBER: the project uses postgresql for storage."),  # identical
            ("user", "REMEMBER: The project uses PostgreSQL for storage and Redis for caching"),
            ("user", "REMEMBER: The project does not use PostgreSQL for storage"),
        ],
    )
    report = m.import_sessions([path])
    assert report.versioned == 1
    assert report.saved == 2 and report.conflicts >= 1
    assert report.calls["classify"] >= 3 and report.calls["judge"] >= 1
    pending = m.conflicts()
    assert pending.total >= 1
    assert any("does not use" in c.new.text for c in pending.conflicts)  # judge said unsure


def test_judge_keep_new_resolves_at_once_and_can_be_reverted(m, model, tmp_path):
    model.verdict = "keep_new"
    path = session_path(tmp_path)
    write_session(path, [("user", "REMEMBER: Deploys happen on Fridays")])
    m.import_sessions([path])
    write_session(path, [("user", "REMEMBER: Deploys never happen on Fridays during the freeze")])
    report = m.import_sessions([path])
    assert report.conflicts == 1 and report.auto_resolved == 1
    assert [d.text for d in active(m)] == ["Deploys never happen on Fridays during the freeze"]
    (resolved,) = m.conflicts("resolved").conflicts
    assert resolved.resolution == "keep_new" and resolved.resolved_by == "judge"
    m.revert(resolved.id)
    assert len(active(m)) == 2


def test_offline_import_uses_distance_bands_and_says_so(tmp_path):
    path = write_session(
        session_path(tmp_path), [("user", "I prefer pnpm over npm for this repository.")]
    )
    with memloom.open(home=str(tmp_path / "home")) as engine:
        report = engine.import_sessions([path])
        assert report.offline and "offline" in report.llm
        assert report.saved == 1 and report.calls["classify"] == 0
        (doc,) = active(engine)
        assert "pnpm" in doc.text and doc.type == "preference"


def test_offline_import_makes_a_changed_value_the_next_version(tmp_path, monkeypatch):
    """Issue 34 on the offline import's path (the distance bands, no classifier): a later
    session that changes the port is the memory's next version, not merged away."""
    monkeypatch.setenv("MEMLOOM_LLM", "offline")
    first = write_session(
        session_path(tmp_path), [("user", "Note that the billing service runs on port 8081.")]
    )
    second = write_session(
        session_path(tmp_path), [("user", "Note that the billing service runs on port 8082.")]
    )
    with memloom.open(home=str(tmp_path / "home")) as engine:
        engine.import_sessions([first])
        report = engine.import_sessions([second])
        assert report.versioned == 1 and report.merged == 0
        (doc,) = active(engine)
        assert "8082" in doc.text
        assert ["8082" in v.text for v in engine.history(doc.id).versions] == [True, False]


# ---------------------------------------------------------------- resume cost


def distill_requests(model) -> int:
    """The extraction calls the scripted server received (real HTTP requests)."""
    return sum(
        1
        for path, body in model.server.requests
        if path.endswith("/chat/completions")
        and body["response_format"]["json_schema"]["name"] == "memloom_distill"
    )


def test_a_healed_rerun_costs_fewer_calls_than_a_clean_run(m, model, tmp_path):
    from memloom.sessions.chunk import CONTEXT_SHARE, LINE_OVERHEAD, MAX_CHUNK_CHARS

    turns = []
    for i in range(40):  # about 97k characters: four chunks
        turns.append(("user", "u" * 300 + f" REMEMBER: {fact(i)}"))
        turns.append(("assistant", f"answer {i} " + "y" * 1_775))
    path = write_session(session_path(tmp_path / "a"), turns)
    clean_copy = session_path(tmp_path / "b")
    clean_copy.parent.mkdir(parents=True)
    shutil.copy(path, clean_copy)

    with memloom.open(home=str(tmp_path / "clean")) as other:
        other.import_sessions([clean_copy])
    clean = distill_requests(model)

    model.fail_on = {clean + 3: 402}  # the third call of the next run fails
    before = distill_requests(model)
    report = m.import_sessions([path])
    assert report.stopped and "402" in report.stopped
    done = distill_requests(model) - before - 1  # chunks distilled before the failure
    row = ledger(m, path)
    assert row.status == "partial" and done == 2
    # The 40 lines before the watermark would alone fill more than a chunk.
    lines = path.read_text().splitlines()[row.lines - 40 : row.lines]
    texts = [json.loads(x)["message"]["content"] for x in lines]
    overlap = sum(len(t if isinstance(t, str) else t[0]["text"]) + LINE_OVERHEAD for t in texts)
    assert overlap > MAX_CHUNK_CHARS

    model.fail_on = {}
    before = distill_requests(model)
    report = m.import_sessions([path])
    healed = distill_requests(model) - before
    assert report.stopped is None and ledger(m, path).status == "complete"
    assert healed < clean
    assert healed == clean - done  # the context cost no call of its own
    first = model.payloads["memloom_distill"][-healed]
    context = [x for x in first["lines"] if x["line"] <= row.lines]
    assert context and context[-1]["line"] == row.lines  # the line just before goes along
    sent = sum(len(x["text"]) + LINE_OVERHEAD for x in context)
    assert sent <= MAX_CHUNK_CHARS * CONTEXT_SHARE
    texts = sorted(d.text for d in active(m))
    assert texts == sorted(fact(i) for i in range(40))  # each exactly once


# ---------------------------------------------------------------- Aider's roots


@pytest.mark.security
def test_a_memory_label_never_makes_a_folder_an_aider_root(m, tmp_path, monkeypatch):
    """Any API caller can label a memory ``project=/some/dir``; the sweep then read
    /some/dir/.aider.chat.history.md. Roots come from the ledger (sessions imported
    from an agent's own folder) and the folders ``connect aider`` named."""
    from memloom.agents import get_agent
    from memloom.agents.base import DiscoverOptions
    from memloom.sessions.runs import share_project_roots

    victim = tmp_path / "victim"
    victim.mkdir()
    hist = victim / ".aider.chat.history.md"
    hist.write_text("# aider chat started at 2026-01-01 10:00:00\n\n#### the secret plan\n\n")
    then = time.time() - 3600
    os.utime(hist, (then, then))
    m.save({"text": "deploys go through ArgoCD", "project": str(victim)})
    assert victim not in share_project_roots(m)
    found = get_agent("aider").discover(DiscoverOptions(days=None, max_sessions=None))
    assert hist not in [f.path for f in found.files]
    # A session imported from elsewhere (--path) vouches for nothing...
    stray = tmp_path / "downloads" / "-x" / f"{uuid.uuid4()}.jsonl"
    write_session(stray, [("user", "REMEMBER: a stray fact")], cwd=str(victim))
    m.import_sessions([stray])
    assert victim not in share_project_roots(m)
    # ...one from Claude Code's own folder does, and so does a folder connect named.
    claude = tmp_path / "claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    own = session_path(claude)
    write_session(own, [("user", "REMEMBER: the victim repo builds with make")], cwd=str(victim))
    m.import_sessions([own])
    assert victim in share_project_roots(m)
    named = tmp_path / "named"
    named.mkdir()
    assert named in share_project_roots(m, named=[str(named)])
