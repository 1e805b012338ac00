"""Corrupt and hostile transcripts cannot hurt the import pipeline.

Two halves:

* **Generated** (hypothesis): arbitrary bytes, records whose fields the parser
  reads hold values of every wrong type, content blocks of wrong shapes, and
  unicode edge cases (lone surrogates, NULs, separators) -- parse, redact,
  chunk and distill never raise, and whatever survives parsing can be encoded
  for an HTTP request and stored.
* **Mutated real lines** (``tests/fixtures/transcripts``, seeded): truncation,
  byte flips, NUL runs, ``}{`` joins, invalid UTF-8, CRLF/CR endings, deep
  nesting, a 50 MB line, regex and recovery bombs, and files that are empty,
  folders, FIFOs, unreadable, or change between discovery and parsing. The
  importer (``Memloom.import_sessions``) never raises, counts what it skipped,
  and imports the valid lines around the corrupt ones.

``bench/soak_fuzz.py`` runs the same generators at a much larger scale.
"""

from __future__ import annotations

import importlib
import json
import os
import random
import threading
import tracemalloc
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memloom
from memloom.agents.claude_code import parse as parse_mod
from memloom.agents.claude_code.parse import parse_bytes, parse_transcript
from memloom.detect import default_detector
from memloom.sessions import ledger as ledger_mod
from tests.sessions import fuzzing
from tests.sessions.fuzzing import (
    MUTATIONS,
    NASTY_STRINGS,
    RECORD_FIELDS,
    KeepModel,
    assert_storable,
    check_parse,
    check_pipeline,
    clean_fixture_lines,
    keep_line,
    make_case,
    small_fixture_lines,
)

# The package re-exports a function named ``discover``: take the module itself.
discover_mod = importlib.import_module("memloom.agents.claude_code.discover")
FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    derandomize=True,
)
DETECTOR = default_detector()


# ------------------------------------------------------------------ strategies

nasty_text = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), max_size=4),
    st.sampled_from(NASTY_STRINGS),
    st.lists(st.one_of(st.sampled_from(NASTY_STRINGS), st.text(max_size=8)), max_size=5).map(
        "".join
    ),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    nasty_text,
    st.sampled_from(["user", "assistant", "text", "tool_result", "system", "enqueue", "popAll"]),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(RECORD_FIELDS), inner, max_size=4),
    ),
    max_leaves=12,
)
blocks = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"type": st.sampled_from(["text", "tool_result", "tool_use", "image", "thinking"])},
        optional={"text": json_values, "content": json_values},
    ),
    st.builds(lambda t: {"type": "text", "text": t}, nasty_text),
)
messages = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {},
        optional={
            "role": json_values,
            "content": st.one_of(json_values, nasty_text, st.lists(blocks, max_size=5)),
            "model": st.one_of(json_values, st.just("<synthetic>")),
            "id": st.one_of(json_values, st.sampled_from(["msg_1", "msg_2"])),
        },
    ),
)
records = st.fixed_dictionaries(
    {"type": st.one_of(st.sampled_from(["user", "assistant", "queue-operation"]), json_values)},
    optional={
        **{name: json_values for name in RECORD_FIELDS if name not in ("type", "message")},
        "message": messages,
        "operation": st.sampled_from(["enqueue", "dequeue", "remove", "popAll"]),
    },
)


def _lines_with_keep(physical: list[bytes], seed: int) -> tuple[bytes, list[str]]:
    rng = random.Random(seed)
    keep = []
    for n in range(2):
        line, text = keep_line(f"h{seed}-{n}", rng)
        physical.insert(rng.randrange(len(physical) + 1), line)
        keep.append(text)
    return b"\n".join(physical) + b"\n", keep


# ------------------------------------------------------------------ (a) generated


@FUZZ
@given(st.binary(max_size=3000), st.booleans())
def test_arbitrary_bytes_never_raise(data: bytes, final: bool) -> None:
    res = parse_bytes(data, final=final)
    assert 0 <= res.end_offset <= len(data)
    assert res.lines_read <= fuzzing.physical_lines(data)
    for unit in res.units:
        assert_storable(unit.text)
    if final:
        check_parse(data)


@FUZZ
@given(st.lists(records, min_size=1, max_size=8), st.integers(0, 2**16))
def test_records_with_wrong_types_never_raise_and_keep_valid_lines(recs, seed) -> None:
    physical = []
    for rec in recs:
        message = rec.get("message")
        if isinstance(message, dict) and "content" not in message:
            message["content"] = "plain text"  # a valid-looking message next to the junk
        physical.append(json.dumps(rec).encode())  # surrogates travel as \ud800 escapes
    data, keep = _lines_with_keep(physical, seed)
    counts = check_pipeline(data, keep=keep, redact=DETECTOR.redact)
    assert counts["items"] >= len(keep)  # every keep line became a memory item


@FUZZ
@given(nasty_text, st.sampled_from(["user", "assistant"]), st.booleans())
def test_unicode_edge_cases_survive_to_an_encodable_request(text, role, as_block) -> None:
    content = [{"type": "text", "text": text}] if as_block else text
    record = {
        "type": role,
        "uuid": str(uuid.uuid4()),
        "cwd": "/home/dev/" + text[:10],
        "sessionId": text[:8] or "s",
        "message": {"role": role, "content": content, "id": "msg_" + text[:4]},
    }
    raw = json.dumps(record, ensure_ascii=bool(len(text) % 2))
    data = raw.encode("utf-8", "surrogatepass")  # raw surrogates as invalid UTF-8, too
    res = check_parse(data + b"\n")
    assert res.malformed == 0 and res.records == 1
    check_pipeline(data, redact=DETECTOR.redact)


@FUZZ
@given(st.lists(st.sampled_from(sorted(MUTATIONS)), min_size=1, max_size=6), st.integers(0, 2**20))
def test_mutation_sequences_on_real_lines(names, seed) -> None:
    rng = random.Random(seed)
    pool = small_fixture_lines()
    physical = [MUTATIONS[name](rng.choice(pool), rng.choice(pool), rng) for name in names]
    data, keep = _lines_with_keep(physical, seed)
    check_pipeline(data, keep=keep, redact=DETECTOR.redact)


# ------------------------------------------------------------------ (b) mutated corpus

CORPUS_SEEDS = range(250)


def test_seeded_corpus_of_mutated_real_lines() -> None:
    """250 files of real lines, about half mutated, keep lines in between."""
    totals = {"malformed": 0, "units": 0, "items": 0}
    for seed in CORPUS_SEEDS:
        case = make_case(seed)
        counts = check_pipeline(case.data, keep=case.keep, redact=DETECTOR.redact)
        assert counts["items"] >= len(case.keep)
        for key in totals:
            totals[key] += counts[key]
    assert totals["malformed"] > 100  # the corpus really is corrupt, and it is counted


def _count_lines(name: str, n: int = 20, seed: int = 7) -> tuple[bytes, list[str], int]:
    rng = random.Random(seed)
    pool = clean_fixture_lines()
    physical = [MUTATIONS[name](rng.choice(pool), rng.choice(pool), rng) for _ in range(n)]
    data, keep = _lines_with_keep(physical, seed)
    return data, keep, n


@pytest.mark.parametrize(
    "name", ["truncate", "non_object", "deep_nesting", "recovery_bomb", "truncated_splice"]
)
def test_every_corrupt_line_is_counted_once(name: str) -> None:
    data, keep, n = _count_lines(name)
    res = check_parse(data, keep=keep)
    if name == "truncated_splice":  # the record after the splice point is recovered
        assert res.malformed == n and res.records >= n + len(keep)
    else:
        assert res.malformed == n
        assert res.records == len(keep)


@pytest.mark.parametrize("name", ["join", "crlf", "bom"])
def test_repairable_lines_are_read_whole(name: str) -> None:
    data, keep, n = _count_lines(name)
    res = check_parse(data, keep=keep)
    assert res.malformed == 0
    assert res.records == (2 * n if name == "join" else n) + len(keep)


def test_nul_only_lines_are_counted_and_nul_inside_a_record_is_not() -> None:
    keep_a, text_a = keep_line("nul-a", random.Random(1))
    keep_b, text_b = keep_line("nul-b", random.Random(2))
    data = b"\n".join([keep_a[:10] + b"\x00\x00" + keep_a[10:], b"\x00" * 5000, keep_b, b""])
    res = check_parse(data, keep=[text_a, text_b])
    assert (res.malformed, res.records) == (1, 2)


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    line, _text = keep_line("utf8", random.Random(3))
    bad = line.replace(b"REMEMBER:", b"REMEMBER:\xff\xfe\xc3")
    res = check_parse(bad + b"\n" + line + b"\n")
    assert res.malformed == 0 and "\ufffd" in res.units[0].text


def test_crlf_and_cr_only_line_endings() -> None:
    rng = random.Random(4)
    made = [keep_line(f"eol-{i}", rng) for i in range(4)]
    crlf = b"".join(line + b"\r\n" for line, _ in made)
    res = check_parse(crlf, keep=[t for _, t in made])
    assert (res.malformed, res.records, res.lines_read) == (0, 4, 4)
    cr_only = b"".join(line + b"\r" for line, _ in made)  # one physical line
    res = check_parse(cr_only, keep=[t for _, t in made])
    assert (res.malformed, res.records, res.lines_read) == (0, 4, 1)


def test_deep_nesting_is_a_counted_skipped_line_not_a_crash() -> None:
    rng = random.Random(5)
    (a, ta), (b, tb) = keep_line("deep-a", rng), keep_line("deep-b", rng)
    for bomb in (b"[" * 100_000 + b"]" * 100_000, b'{"a":' * 100_000 + b"1" + b"}" * 100_000):
        res = check_parse(b"\n".join([a, bomb, b, b""]), keep=[ta, tb])
        assert (res.malformed, res.records) == (1, 2)


def test_empty_input() -> None:
    res = check_parse(b"")
    assert (res.lines_read, res.records, res.malformed, res.units) == (0, 0, 0, [])


# ------------------------------------------------------------------ the importer


def _path(root: Path) -> Path:
    path = root / "projects" / "-home-dev-fuzz" / f"{uuid.uuid4()}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    m = memloom.open(home=str(tmp_path_factory.mktemp("fuzz-home")))
    yield m
    m.close()


def _import(engine, paths, **kw):
    model = KeepModel()
    report = engine.import_sessions(paths, llm=model, **kw)
    return report, model


def test_importer_imports_valid_lines_of_mutated_files_and_counts_the_rest(engine, tmp_path):
    cases = [make_case(1000 + seed, heavy=0.1) for seed in range(40)]
    paths = []
    for case in cases:
        path = _path(tmp_path)
        path.write_bytes(case.data)
        paths.append(path)
    report, model = _import(engine, paths, sessions=None, days=None)
    assert report.failed == 0 and report.skipped["unreadable"] == 0
    expected = sum(parse_bytes(c.data, final=False).malformed for c in cases)
    assert report.malformed == expected > 0
    keep = [k for c in cases for k in c.keep]
    assert report.saved + report.versioned + report.merged == len(keep)
    sent = json.dumps(model.distill_payloads, ensure_ascii=False)
    assert all(k.removeprefix("REMEMBER: ") in sent for k in keep)
    # A second run reads nothing again: the ledger covers what was skipped too.
    again, model = _import(engine, paths)
    assert again.sessions == 0 and again.skipped["up_to_date"] == len(paths)


@FUZZ
@given(st.lists(records, min_size=1, max_size=6), st.integers(0, 2**16))
def test_importer_never_raises_on_generated_records(engine, tmp_path, recs, seed):
    # Fresh keep records per example: the engine is shared, and a uuid it has seen in
    # another file is (rightly) skipped as a duplicate.
    data, keep = _lines_with_keep([json.dumps(r).encode() for r in recs], uuid.uuid4().int)
    path = _path(tmp_path)
    path.write_bytes(data)
    report, _ = _import(engine, [path])
    assert report.failed == 0
    assert report.saved + report.versioned + report.merged >= len(keep)


def test_50mb_single_line_is_skipped_with_bounded_memory(engine, tmp_path):
    rng = random.Random("50mb")
    (a, ta), (b, tb) = keep_line("big-a", rng), keep_line("big-b", rng)
    path = _path(tmp_path)
    size = 50 * 1024 * 1024
    with path.open("wb") as fh:
        fh.write(a + b"\n")
        fh.write(b'{"type":"user","message":{"content":"')
        chunk = b"I prefer huge lines. " * 50_000
        written = 0
        while written < size:
            fh.write(chunk)
            written += len(chunk)
        fh.write(b'"}}\n' + b + b"\n")
    tracemalloc.start()
    try:
        res = parse_transcript(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < parse_mod.MAX_LINE_BYTES + 8 * 1024 * 1024, peak  # not the 50 MB line
    assert (res.oversized, res.malformed, res.records, res.lines_read) == (1, 0, 2, 3)
    assert [u.text for u in res.units] == [ta, tb]
    assert res.end_offset == path.stat().st_size

    report, _ = _import(engine, [path])
    written = report.saved + report.merged + report.versioned
    assert (report.oversized, report.failed, written) == (1, 0, 2)


def test_unterminated_oversized_tail_waits_unless_final(tmp_path, monkeypatch):
    monkeypatch.setattr(parse_mod, "MAX_LINE_BYTES", 1000)
    line, _text = keep_line("tail", random.Random(8))
    path = tmp_path / "t.jsonl"
    path.write_bytes(line + b"\n" + b"x" * 5000)  # still being written
    res = parse_transcript(path)
    assert (res.oversized, res.lines_read, res.end_offset) == (0, 1, len(line) + 1)
    res = parse_transcript(path, final=True)
    assert (res.oversized, res.lines_read) == (1, 2)
    # Resuming before or inside an over-long line keeps the numbering.
    path.write_bytes(line + b"\n" + b"y" * 5000 + b"\n" + line + b"\n")
    res = parse_transcript(path, start_offset=len(line) + 1, start_line=1)
    assert (res.oversized, res.lines_read, res.records) == (1, 3, 1)
    res = parse_transcript(path, start_offset=len(line) + 101, start_line=2)
    assert (res.oversized, res.lines_read, res.records) == (1, 3, 1)
    assert res.units[0].start_line == 3


def test_empty_file_and_summary_only_file(engine, tmp_path):
    empty, summary = _path(tmp_path), _path(tmp_path)
    empty.write_bytes(b"")
    summary.write_bytes(b'{"type":"summary","summary":"x","leafUuid":"u"}\n')
    report, _model = _import(engine, [empty, summary])
    assert report.failed == 0 and report.calls["extraction"] == 0
    assert {s.status for s in report.per_session} == {"empty"}


def test_a_folder_named_like_a_transcript(engine, tmp_path):
    folder = _path(tmp_path)
    folder.mkdir()
    report, _ = _import(engine, [folder])
    assert report.failed == 0 and report.sessions == 0
    found = discover_mod.discover(tmp_path, days=None, max_sessions=None, quiet_seconds=0)
    assert found.files == []


def _fifo(path: Path) -> Path:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    os.mkfifo(path)
    return path


def _bounded(fn, timeout: float = 20.0):
    """Run ``fn`` in a thread: a regression that opens a FIFO must fail, not hang CI."""
    out: dict[str, object] = {}

    def run() -> None:
        try:
            out["value"] = fn()
        except BaseException as exc:  # re-raised below
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), "blocked (a FIFO was opened?)"
    if "error" in out:
        raise out["error"]  # type: ignore[misc]
    return out["value"]


def test_fifo_is_never_opened(engine, tmp_path):
    fifo = _fifo(_path(tmp_path))
    found = discover_mod.discover(tmp_path, days=None, max_sessions=None, quiet_seconds=0)
    assert found.files == [] and found.skipped["not_transcripts"] == 1
    report, _ = _bounded(lambda: _import(engine, [fifo]))
    assert report.sessions == 0 and report.skipped["not_transcripts"] == 1
    with pytest.raises(OSError, match="not a regular file"):
        _bounded(lambda: parse_transcript(fifo))


def test_unreadable_file_is_counted(engine, tmp_path, monkeypatch):
    rng = random.Random(9)
    bad, good = _path(tmp_path), _path(tmp_path)
    bad.write_bytes(keep_line("unreadable", rng)[0] + b"\n")
    good.write_bytes(keep_line("readable", rng)[0] + b"\n")
    bad.chmod(0)
    if os.geteuid() == 0:  # root reads mode-000 files: make the open fail as it would
        real_open = os.open

        def deny(path, flags, *args, **kw):
            if os.fspath(path) == str(bad):
                raise PermissionError(13, "Permission denied", os.fspath(path))
            return real_open(path, flags, *args, **kw)

        monkeypatch.setattr(os, "open", deny)
    try:
        report, _model = _import(engine, [bad, good])
    finally:
        bad.chmod(0o600)
    assert report.skipped["unreadable"] == 1
    assert report.saved + report.merged + report.versioned == 1
    failed = [s for s in report.per_session if s.status == "failed"]
    assert len(failed) == 1 and "Permission denied" in (failed[0].error or "")


@pytest.mark.parametrize("change", ["grow", "truncate", "delete", "fifo", "folder", "resume_cut"])
def test_file_changing_between_discovery_and_parsing(engine, tmp_path, monkeypatch, change):
    rng = random.Random(f"change-{change}")
    path = _path(tmp_path)
    made = [keep_line(f"chg-{change}-{i}", rng) for i in range(6)]
    path.write_bytes(b"".join(line + b"\n" for line, _ in made[:3]))
    if change == "resume_cut":  # imported once, then grown: the next run resumes
        _import(engine, [path])
        with path.open("ab") as fh:
            fh.write(made[3][0] + b"\n")

    def make_change() -> None:
        if change == "grow":
            with path.open("ab") as fh:
                fh.write(b"".join(line + b"\n" for line, _ in made[3:]))
        elif change == "truncate":  # cut inside the second line
            with path.open("r+b") as fh:
                fh.truncate(len(made[0][0]) + 1 + len(made[1][0]) // 2)
        elif change == "resume_cut":  # cut before the watermark the plan resumes from
            with path.open("r+b") as fh:
                fh.truncate(len(made[0][0]) // 2)
        elif change == "delete":
            path.unlink()
        elif change == "fifo":
            path.unlink()
            _fifo(path)
        elif change == "folder":
            path.unlink()
            path.mkdir()

    if change == "resume_cut":  # between the ledger check and the parse
        real_plan = ledger_mod.plan

        def plan_then_change(*args, **kw):
            out = real_plan(*args, **kw)
            make_change()
            return out

        monkeypatch.setattr(ledger_mod, "plan", plan_then_change)
    else:  # between discovery and everything else
        real = discover_mod.discover_paths

        def discover_then_change(paths, **kw):
            found = real(paths, **kw)
            make_change()
            return found

        monkeypatch.setattr(discover_mod, "discover_paths", discover_then_change)
    report, _model = _bounded(lambda: _import(engine, [path]))
    monkeypatch.undo()
    written = report.saved + report.merged + report.versioned
    if change == "grow":  # everything there at parse time is read, and recorded as read
        assert report.failed == 0 and written == 6
        again, _ = _import(engine, [path])
        assert again.sessions == 0
        return
    if change == "truncate":  # the first line is imported; the cut line waits for its end
        assert (report.failed, report.malformed, written) == (0, 0, 1)
        return
    assert report.skipped["unreadable"] == 1, report.skipped
    assert report.per_session[-1].status == "failed"
    if change == "resume_cut":  # the next run starts over and does not crash either
        again, _ = _import(engine, [path])
        assert again.failed == 0 and again.per_session[0].reason == "truncated"
