"""A Qwen Code session through the importer: provenance to the session and line, the
ledger (a re-run makes no extraction call, a grown session distils only what is new, a
rewritten one is read again), memloom's own injection never distilled, secrets redacted
before they leave."""

from __future__ import annotations

import memloom
from memloom.sessions.importer import Importer, ImportOptions
from tests.agents.qwen_records import lines, reply, session, user
from tests.sessions.test_importer import model  # noqa: F401  (fixture)


def distilled_lines(model) -> list[str]:  # noqa: F811
    return [ln["text"] for p in model.payloads.get("memloom_distill", []) for ln in p["lines"]]


def test_import_ledger_and_provenance(tmp_path, model):  # noqa: F811
    path = session(
        tmp_path / ".qwen",
        [
            user("REMEMBER: staging listens on port 5433", "u1"),
            reply("Noted.", "a1"),
        ],
    )
    m = memloom.open(home=str(tmp_path / "home"))
    try:
        options = ImportOptions(paths=[path], agent="qwen")
        report = Importer(m, m.llm, options).run()
        assert (report.sessions, report.saved, report.agents) == (1, 1, ["qwen"])
        (mem,) = m.list({"limit": 10}).memories
        assert mem.source == "qwen" and mem.project == "/home/dev/shop"
        (prov,) = m.get(mem.id).provenance
        assert prov.session_id == path.stem and prov.path == str(path)
        assert (prov.start_line, prov.end_line) == (1, 1)
        sent = distilled_lines(model)
        assert sent == ["REMEMBER: staging listens on port 5433", "Noted."]
        assert not any("qwen:" in t or "memloom-context" in t for t in sent)

        calls = report.calls["extraction"]
        again = Importer(m, m.llm, options).run()
        assert again.sessions == 0 and again.skipped["up_to_date"] == 1
        assert again.calls["extraction"] == 0

        with path.open("ab") as f:  # the session grows: the next turn
            f.write(lines([user("REMEMBER: deploys go out on Fridays", "u2"), reply("OK", "a2")]))
        before = len(model.payloads["memloom_distill"])
        grown = Importer(m, m.llm, options).run()
        assert grown.sessions == 1 and grown.per_session[0].reason == "grown"
        assert grown.saved == 1 and calls >= 1
        new = [ln["text"] for p in model.payloads["memloom_distill"][before:] for ln in p["lines"]]
        assert "REMEMBER: deploys go out on Fridays" in new
        assert len(m.list({"limit": 10}).memories) == 2

        path.write_bytes(lines([user("REMEMBER: the cache is redis", "u9"), reply("ok", "a9")]))
        rewritten = Importer(m, m.llm, options).run()
        assert rewritten.per_session[0].reason in ("rewritten", "truncated")
        assert any("redis" in x.text for x in m.list({"limit": 10}).memories)
    finally:
        m.close()


def test_secrets_are_redacted_before_the_distiller_sees_them(tmp_path, model):  # noqa: F811
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0"
    path = session(tmp_path / ".qwen", [user(f"REMEMBER: the key is {key}", "u1")])
    m = memloom.open(home=str(tmp_path / "home"))
    try:
        Importer(m, m.llm, ImportOptions(paths=[path], agent="qwen")).run()
    finally:
        m.close()
    assert key not in " ".join(model.bodies())


def test_the_default_import_finds_qwen_s_home(tmp_path, model, monkeypatch):  # noqa: F811
    import os
    import time

    monkeypatch.setenv("HOME", str(tmp_path))
    path = session(tmp_path / ".qwen", [user("REMEMBER: use uv for installs", "u1")])
    t = time.time() - 3600
    os.utime(path, (t, t))
    from memloom.agents import found_agents

    assert "qwen" in found_agents()
    m = memloom.open(home=str(tmp_path / "home"))
    try:
        report = Importer(m, m.llm, ImportOptions(agent="qwen")).run()
    finally:
        m.close()
    assert report.sessions == 1 and report.saved == 1
