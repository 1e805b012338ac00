"""Stale memories: how right the flag is, and what the checks add to recall and the hook.

    python bench/stale.py [--runs 200] [--seed 7]

1. **Scenario** (precision and recall of ``stale``): this repository's own
   ``src/memloom`` Python files are copied into a temporary git repository and
   committed. One memory is written per (file, identifier) pair through
   ``anchors.find`` (the write path: the identifier must occur in the file), a few
   naming two identifiers. Then files are changed, each file one way: deleted
   (``git rm`` + commit, or a plain ``rm``), renamed (``git mv`` committed, ``git mv``
   staged, ``mv`` + ``git add``), edited keeping every identifier, edited removing one
   identifier everywhere in the file (renamed to ``<name>_gone``), or left alone. The
   truth is the plan: a memory is stale when its file was deleted, or one of its
   identifiers was removed. Each memory is checked in the repository's folder
   (``staleness.Tree.check_many``, what recall runs); every live memory flagged stale
   is listed.
2. **Latency** on a store of 10,000 memories anchored to 2,000 files (a generated git
   repository, 2 % of the files deleted since, 2 % with an identifier removed):
   - recall as the daemon answers the hook (``Memloom.recall``, top 5, a query
     embedding so no model loads), with ``folder`` and without, in one run;
   - the hook's own path when no daemon runs (``capture.prompt.keyword_recall`` top 5,
     then ``staleness.mark``), every cache cleared before each prompt as in a fresh
     hook process, with and without the check.

Writes ``bench/results/stale.json``; docs/benchmarks.md has the figures by hand.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(1, str(REPO))

from tests.support.git import git  # noqa: E402

from memloom import anchors, staleness  # noqa: E402
from memloom import project as project_mod  # noqa: E402

_DEF = re.compile(
    r"^(?:def|class)\s+([A-Za-z_][A-Za-z0-9_]{5,})|^([A-Z][A-Z0-9_]{5,})\s*[:=]", re.M
)


def clear_caches() -> None:
    """What a fresh hook process starts with."""
    staleness._texts.clear()
    staleness._answers.clear()
    staleness._trees.clear()
    staleness._git_answers.clear()
    project_mod._cache.clear()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# ---------------------------------------------------------------- 1. scenario


def scenario(work: Path, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    repo = work / "scenario"
    shutil.copytree(
        REPO / "src" / "memloom",
        repo / "memloom",
        ignore=shutil.ignore_patterns("*.pyc", "__pycache__", "static", "*.json"),
    )
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "import")
    files = sorted(str(p.relative_to(repo)) for p in repo.rglob("*.py"))
    idents: dict[str, list[str]] = {}
    for rel in files:
        text = (repo / rel).read_text()
        names = [a or b for a, b in _DEF.findall(text)]
        names = [n for n in dict.fromkeys(names) if len(re.findall(rf"\b{n}\b", text)) >= 1]
        if names:
            idents[rel] = names[:6]
    memories: list[dict[str, Any]] = []
    for rel, names in idents.items():
        for name in names:
            text = f"`{name}` in {rel} is what to change for this."
            found = anchors.find(text, str(repo)).anchors
            if found and found[0]["path"] == rel and name in found[0]["symbols"]:
                memories.append({"text": text, "path": rel, "names": [name], "anchors": found})
        if len(names) >= 2:
            a, b = names[0], names[1]
            text = f"`{a}` and `{b}` in {rel} go together."
            found = anchors.find(text, str(repo)).anchors
            if found and set(found[0]["symbols"]) >= {a, b}:
                memories.append({"text": text, "path": rel, "names": [a, b], "anchors": found})
    plan_files = list(idents)
    rng.shuffle(plan_files)
    n = len(plan_files)
    cut = [int(n * f) for f in (0.10, 0.20, 0.30, 0.45, 0.50)]
    deleted = plan_files[: cut[0]]
    renamed = plan_files[cut[0] : cut[1]]
    edited = plan_files[cut[1] : cut[2]]
    removed = plan_files[cut[2] : cut[3]]
    untracked = plan_files[cut[3] : cut[4]]  # moved with a plain mv, git not told
    gone_names: dict[str, str] = {}
    for rel in deleted[::2]:
        git(repo, "rm", "-q", rel)  # committed below; the other half: a plain rm, after
    for rel in edited:
        path = repo / rel
        path.write_text(
            "# reviewed\n" + path.read_text().replace("    return", "    # ok\n    return", 1)
        )
    for rel in removed:
        path = repo / rel
        name = rng.choice(idents[rel])
        gone_names[rel] = name
        path.write_text(re.sub(rf"\b{re.escape(name)}\b", name + "_gone", path.read_text()))
    git(repo, "commit", "-qam", "edits and deletions")
    moves: dict[str, str] = {}
    for i, rel in enumerate(renamed):
        new = rel[:-3] + "_moved.py"
        moves[rel] = new
        if i % 3 == 2:
            (repo / rel).rename(repo / new)
            git(repo, "add", "-A", "--", rel, new)
        else:
            git(repo, "mv", rel, new)
    git(repo, "commit", "-qm", "renames, part one")  # the rest stays staged:
    for i, rel in enumerate(renamed):
        if i % 2 == 1:
            newer = moves[rel][:-3] + "2.py"
            git(repo, "mv", moves[rel], newer)
            moves[rel] = newer
    for rel in deleted[1::2]:
        (repo / rel).unlink()
    for rel in untracked:
        (repo / rel).rename(repo / (rel[:-3] + "_new.py"))
    clear_caches()
    t = time.perf_counter()
    checks = staleness.Tree(str(repo)).check_many([(m["anchors"], None) for m in memories])
    check_s = time.perf_counter() - t
    tp = fp = fn = tn = 0
    wrongly: list[dict[str, Any]] = []
    missed: list[dict[str, Any]] = []
    for mem, check in zip(memories, checks, strict=True):
        truth = mem["path"] in deleted or gone_names.get(mem["path"]) in mem["names"]
        flagged = check.stale is not None
        tp += truth and flagged
        fp += flagged and not truth
        fn += truth and not flagged
        tn += not truth and not flagged
        if flagged and not truth:
            wrongly.append({"text": mem["text"], "stale": check.stale})
        if truth and not flagged:
            missed.append({"text": mem["text"], "note": check.note})
        if mem["path"] in moves and check.anchors[0]["path"] != moves[mem["path"]]:
            missed.append({"text": mem["text"], "not moved to": moves[mem["path"]]})
    return {
        "files": len(files),
        "files_with_identifiers": n,
        "memories": len(memories),
        "deleted_files": len(deleted),
        "renamed_files": len(renamed),
        "edited_files": len(edited),
        "identifier_removed_files": len(removed),
        "moved_untracked_files": len(untracked),
        "true_positive": tp,
        "false_positive": fp,
        "false_negative": fn,
        "true_negative": tn,
        "precision": round(tp / (tp + fp), 4) if tp + fp else None,
        "recall": round(tp / (tp + fn), 4) if tp + fn else None,
        "live_flagged_stale": wrongly,
        "missed_or_not_moved": missed,
        "check_all_s": round(check_s, 3),
    }


# ---------------------------------------------------------------- 2. latency


WORDS = ["cache", "retry", "queue", "parser", "token", "budget", "socket", "schema", "index"]


def codename(i: int) -> str:
    """A made-up word a few memories share (every 2,000th): what a prompt names."""
    i %= 2000
    return "".join(chr(97 + (i // 26**k) % 26) for k in range(3)) + "ex"


def make_store(work: Path, rng: random.Random, n_files: int, n_memories: int) -> dict[str, Any]:
    repo = work / "big"
    names: dict[str, list[str]] = {}
    for i in range(n_files):
        rel = f"pkg{i % 40:02d}/mod_{i:04d}.py"
        consts = [f"LIMIT_{i}_{k}" for k in range(5)]
        names[rel] = consts
        body = "\n".join(
            f"{c} = {k}\n\ndef helper_{i}_{k}(x):\n    return x + {c}\n"
            for k, c in enumerate(consts)
        )
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f'"""Module {i}."""\n\n' + body * 8)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "files")
    head = git(repo, "rev-parse", "HEAD")
    key = project_mod.project_key(str(repo))
    files = list(names)
    for rel in rng.sample(files, n_files // 50):
        git(repo, "rm", "-q", rel)
    for rel in rng.sample([f for f in files if (repo / f).exists()], n_files // 50):
        p = repo / rel
        p.write_text(p.read_text().replace(names[rel][0], "GONE"))
    git(repo, "commit", "-qam", "changes")

    os.environ["MEMLOOM_LLM"] = "offline"
    import memloom
    from memloom.hashing import content_hash, new_id
    from memloom.store.base import MemoryRow

    home = work / "home"
    m = memloom.open(home=str(home))
    now = time.time()
    dim = 384
    vecs = np.random.default_rng(1).standard_normal((n_memories, dim)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    with m.backend.transaction():
        for i in range(n_memories):
            rel = files[i % n_files]
            sym = names[rel][i % 5]
            topic = f"{WORDS[i % len(WORDS)]} {WORDS[(i // 7) % len(WORDS)]}"
            text = f"The {topic} rule of the {codename(i)} service: `{sym}` in {rel}"
            mid = new_id()
            m.backend.insert(
                MemoryRow(
                    id=mid, root_id=mid, version=1, status="active",
                    type="procedure" if i % 50 == 0 else "fact", text=text,
                    original_text=None, content_hash=content_hash(text), embedding=vecs[i],
                    source=None, tags=[], metadata={}, project=key, sensitivity=0,
                    session_id=None, created_at=now, asserted_at=now, last_referenced=now,
                    anchors=[{"path": rel, "symbols": [sym], "commit": head,
                              "root": str(repo), "via": "text"}],
                )
            )  # fmt: skip
    return {"repo": repo, "home": home, "engine": m, "project": key, "vecs": vecs}


def latency(work: Path, runs: int, seed: int, n_files: int, n_memories: int) -> dict[str, Any]:
    from memloom.capture.prompt import keyword_recall
    from memloom.location import locate

    rng = random.Random(seed)
    t = time.perf_counter()
    built = make_store(work, rng, n_files, n_memories)
    fill_s = time.perf_counter() - t
    m, repo, key = built["engine"], str(built["repo"]), built["project"]
    qs = np.random.default_rng(seed).standard_normal((runs, 384)).astype(np.float32)
    base = {"max_results": 5, "project": key, "touch": False}
    m.recall({**base, "query_embedding": qs[0].tolist(), "folder": repo})  # graph, warm-up
    from memloom.core.recall import mark_stale

    off: list[float] = []
    on: list[float] = []
    only: list[float] = []
    stale_hits = 0
    for i in range(runs):
        q = qs[i].tolist()
        order = [False, True] if i % 2 == 0 else [True, False]
        for checked in order:
            req = {**base, "query_embedding": q, **({"folder": repo} if checked else {})}
            t = time.perf_counter()
            res = m.recall(req)
            (on if checked else off).append((time.perf_counter() - t) * 1000)
            if checked:
                stale_hits += sum(1 for x in res.memories if x.stale)
            else:  # the check alone, on the same answer (what recall adds, paired)
                t = time.perf_counter()
                mark_stale(res.memories, repo)
                only.append((time.perf_counter() - t) * 1000)
    location = locate(built["home"])
    # A codename is shared by a handful of memories: each prompt finds a few (top 5).
    prompts = [
        f"what is the {codename(rng.randrange(n_memories))} service's rule" for _ in range(runs)
    ]
    h_off: list[float] = []
    h_on: list[float] = []
    h_check: list[float] = []
    h_found = 0
    git_runs = 0
    real_git = staleness._git

    def counting(*a: Any, **kw: Any) -> Any:
        nonlocal git_runs
        git_runs += 1
        return real_git(*a, **kw)

    staleness._git = counting
    try:
        for i, prompt in enumerate(prompts):
            for checked in [False, True] if i % 2 == 0 else [True, False]:
                clear_caches()
                t = time.perf_counter()
                found = keyword_recall(location, prompt, key, limit=5)
                t2 = time.perf_counter()
                if checked:
                    staleness.mark(found, repo)
                    h_found += len(found)
                end = time.perf_counter()
                (h_on if checked else h_off).append((end - t) * 1000)
                if checked:
                    h_check.append((end - t2) * 1000)
    finally:
        staleness._git = real_git
    m.close()

    def summary(values: list[float]) -> dict[str, float]:
        return {"p50": round(statistics.median(values), 2), "p95": round(pct(values, 0.95), 2)}

    return {
        "files": n_files,
        "memories": n_memories,
        "runs": runs,
        "fill_s": round(fill_s, 1),
        "recall_off_ms": summary(off),
        "recall_on_ms": summary(on),
        "recall_added_ms": {
            "p50": round(statistics.median(on) - statistics.median(off), 2),
            "p95": round(pct(on, 0.95) - pct(off, 0.95), 2),
        },
        "recall_check_only_ms": summary(only),
        "recall_stale_hits": stale_hits,
        "hook_off_ms": summary(h_off),
        "hook_on_ms": summary(h_on),
        "hook_check_only_ms": summary(h_check),
        "hook_added_ms": {
            "p50": round(statistics.median(h_on) - statistics.median(h_off), 2),
            "p95": round(pct(h_on, 0.95) - pct(h_off, 0.95), 2),
        },
        "hook_git_runs": git_runs,
        "hook_memories_checked": h_found,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--memories", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memloom-stale-") as tmp:
        work = Path(tmp)
        result = {"scenario": scenario(work, args.seed)}
        print(json.dumps(result["scenario"], indent=1)[:3000], flush=True)
        result["latency"] = latency(work, args.runs, args.seed, args.files, args.memories)
        result["load_before"] = os.getloadavg()
    result["command"] = "python bench/stale.py " + " ".join(sys.argv[1:])
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "stale.json").write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result["latency"], indent=1))


if __name__ == "__main__":
    main()
