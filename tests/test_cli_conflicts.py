"""``memloom conflicts``: paged list, show, resolve, revert, auto (with a scripted judge)."""

from __future__ import annotations

import json
import math

import pytest

import memloom
from tests.test_cli import cli


def vec(deg: float) -> list[float]:
    return [math.cos(math.radians(deg)), math.sin(math.radians(deg)), 0.0]


def make_conflicts(home, n: int) -> list[str]:
    """n pairs 40 degrees apart (distance 0.23: the conflict band), each in its own project."""
    ids = []
    with memloom.open(home=str(home)) as m:
        for i in range(n):
            first = {"text": f"claim {i} alpha", "embedding": vec(0), "project": f"p{i}"}
            second = {
                "text": f"claim {i} beta, said otherwise",
                "embedding": vec(40),
                "project": f"p{i}",
            }
            m.store({"entries": [first]})
            ids.append(m.store({"entries": [second]}).conflicts[0].conflict_id)
    return ids


def test_list_is_paged_and_show_resolve_revert_work(capsys, tmp_path):
    ids = make_conflicts(tmp_path, 5)
    code, out, _ = cli(capsys, tmp_path, "conflicts", "list", "--limit", "2")
    assert code == 0 and "1-2 of 5" in out and "--page 2" in out
    assert out.count(" pending ") == 2
    code, out, _ = cli(capsys, tmp_path, "conflicts", "list", "--limit", "2", "--page", "3")
    assert "5-5 of 5" in out and "next page" not in out
    code, out, _ = cli(capsys, tmp_path, "conflicts")  # default: list
    assert code == 0 and "of 5" in out

    code, out, _ = cli(capsys, tmp_path, "conflicts", "show", ids[0], "--json")
    doc = json.loads(out)
    assert doc["id"] == ids[0] and doc["new"]["text"] == "claim 0 beta, said otherwise"

    code, out, _ = cli(capsys, tmp_path, "conflicts", "resolve", ids[0], "--keep", "existing")
    assert code == 0 and "keep_existing" in out
    code, out, _ = cli(capsys, tmp_path, "conflicts", "list", "--status", "resolved", "--json")
    assert [c["id"] for c in json.loads(out)["conflicts"]] == [ids[0]]
    code, out, _ = cli(capsys, tmp_path, "conflicts", "revert", ids[0])
    assert code == 0 and "pending again" in out

    code, out, _ = cli(
        capsys, tmp_path, "conflicts", "resolve", ids[1], "--merge", "claim 1 merged"
    )
    assert code == 0
    with memloom.open(home=str(tmp_path)) as m:
        texts = {d.text for d in m.list({"project": "p1"}).memories}
    assert texts == {"claim 1 merged"}


def test_resolve_needs_exactly_one_instruction(capsys, tmp_path):
    (cid,) = make_conflicts(tmp_path, 1)
    code, _, err = cli(capsys, tmp_path, "conflicts", "resolve", cid)
    assert code == 1 and "--keep" in err
    code, _, err = cli(capsys, tmp_path, "conflicts", "resolve", cid, "--keep", "maybe")
    assert code == 1 and "new, existing or both" in err
    code, _, err = cli(capsys, tmp_path, "conflicts", "show", "nope")
    assert code == 1 and "not found" in err


def test_auto_runs_the_judge_over_the_queue(capsys, tmp_path, monkeypatch):
    from tests.support.scripted_llm import ScriptedModel

    ids = make_conflicts(tmp_path, 3)
    code, out, _ = cli(capsys, tmp_path, "conflicts", "auto", "--json")
    offline = json.loads(out)
    assert offline["resolved"] == 0 and "offline" in offline["reason"]

    model = ScriptedModel(verdict="keep_new")
    try:
        monkeypatch.setenv("MEMLOOM_LLM", "openai")
        monkeypatch.setenv("MEMLOOM_LLM_BASE_URL", model.base_url)
        monkeypatch.setenv("MEMLOOM_LLM_MODEL", "scripted")
        code, out, _ = cli(capsys, tmp_path, "conflicts", "auto", "--json")
        assert code == 0
        summary = json.loads(out)
        assert (summary["pending"], summary["judged"], summary["resolved"]) == (3, 3, 3)
        assert len(model.payloads["memloom_judge"]) == 3
    finally:
        model.close()
    with memloom.open(home=str(tmp_path)) as m:
        assert m.conflicts("pending").total == 0
        resolved = m.conflicts("resolved").conflicts
        assert {c.id for c in resolved} == set(ids)
        assert all(c.existing.status == "expired" for c in resolved)


FRONTEND = "The frontend uses pnpm for package management"
BACKEND = "The backend uses pnpm for package management"


def test_a_subject_swap_pair_is_listed_and_shown_with_both_texts(capsys, tmp_path):
    """The same tool said of another component: each side's text is there to compare."""
    with memloom.open(home=str(tmp_path)) as m:
        m.store({"entries": [{"text": FRONTEND, "embedding": vec(0)}]})
        cid = m.store({"entries": [{"text": BACKEND, "embedding": vec(40)}]}).conflicts[0]
    code, out, _ = cli(capsys, tmp_path, "conflicts", "list")
    assert code == 0 and FRONTEND in out and BACKEND in out
    code, out, _ = cli(capsys, tmp_path, "conflicts", "show", cid.conflict_id)
    assert code == 0 and FRONTEND in out and BACKEND in out
    code, out, _ = cli(capsys, tmp_path, "conflicts", "--json")
    (doc,) = json.loads(out)["conflicts"]
    assert (doc["new"]["text"], doc["existing"]["text"]) == (BACKEND, FRONTEND)
    assert (doc["new"]["id"], doc["existing"]["id"]) == (cid.new_id, cid.existing_id)


@pytest.mark.slow
def test_kept_both_from_the_cli_is_not_flagged_again(capsys, tmp_path, monkeypatch):
    """``conflicts resolve ID --keep both``, then the new side's words saved again after
    it expired: added, and nothing pending (it used to be flagged again)."""
    monkeypatch.setenv("MEMLOOM_LLM", "offline")
    billing = "The billing service runs on port 8081 in staging"
    nginx = "The billing service runs on port 9090 in staging behind the nginx proxy"
    code, out, _ = cli(capsys, tmp_path, "save", billing, "--json")
    assert code == 0 and json.loads(out)["outcome"] == "added"
    code, out, _ = cli(capsys, tmp_path, "save", nginx, "--json")
    saved = json.loads(out)
    assert saved["outcome"] == "conflict"
    cid = saved["conflicts"][0]["conflict_id"]
    code, out, _ = cli(capsys, tmp_path, "conflicts", "resolve", cid, "--keep", "both")
    assert code == 0 and "keep_both" in out
    code, _, _ = cli(capsys, tmp_path, "expire", saved["id"])
    assert code == 0
    code, out, _ = cli(capsys, tmp_path, "save", nginx, "--json")
    again = json.loads(out)
    assert (code, again["outcome"], again["conflicts"]) == (0, "added", [])
    code, out, _ = cli(capsys, tmp_path, "conflicts", "--json")
    assert json.loads(out)["total"] == 0
    code, out, _ = cli(capsys, tmp_path, "conflicts", "list", "--status", "resolved", "--json")
    assert [c["id"] for c in json.loads(out)["conflicts"]] == [cid]
