"""How much do type, tags and project scope help recall over distilled memories?

    python bench/filters.py [--data ../shared/bench/locomo/locomo_dev.json]

LoCoMo ships, for every session, facts its authors distilled from the
conversation, each citing the turn it came from (`observation`), and a summary
of each session (`session_summary`). They stand in for memories distilled by
an LLM: facts (type `fact`, tagged with the speaker they are about, scoped to
the conversation as the project) plus session summaries as `episode`
memories. Each session's memories are stored as one request with that session's
id, as ``memloom import`` stores what it distils from one agent session (the
importer records the session on every memory it writes). Every non-adversarial
question is a query; a fact retrieved is a hit when the turn it cites is one of
the question's evidence turns.

Conditions, each over the same store:
  global           every conversation's memories in one pool, no filter
  project          scoped to the question's conversation
  project+types    ... and only `fact` memories (summaries left out)
  project+tag      ... and, when the question names one speaker, only memories
                   tagged with that speaker (a hard filter)
  project+boost    the same speaker as a boost tag (+0.1) instead of a filter

Next to them, in the same run, the baselines of ``bench/locomo.py`` over the same
memories of the question's conversation: Okapi BM25 and ChromaDB with the same
embedding model. Reported overall and per category.

LoCoMo is CC BY-NC 4.0 (Maharana et al., ACL 2024): read from outside the
repository, never copied into it; without it the script exits 0.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo import (
    CATEGORIES,
    DEFAULT_DATA,
    RESULTS,
    bm25_system,
    chroma_system,
    questions_of,
    score,
    summarise,
    turns_of,
)


def memories_of(conv: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    project = conv["sample_id"]
    for key, by_speaker in conv.get("observation", {}).items():
        session = key.removesuffix("_observation")
        for speaker, facts in by_speaker.items():
            for fact, dia in facts:
                dias = dia if isinstance(dia, list) else [dia]
                out.append(
                    {
                        "text": fact,
                        "type": "fact",
                        "tags": [speaker],
                        "project": project,
                        "dias": [str(d) for d in dias],
                        "session": session,
                    }
                )
    for key, summary in conv.get("session_summary", {}).items():
        out.append(
            {
                "text": summary,
                "type": "episode",
                "tags": [],
                "project": project,
                "dias": [],
                "session": key.removesuffix("_summary"),
            }
        )
    return out


def run_baselines(data: list[dict[str, Any]]) -> dict[str, Any]:
    """BM25 and (when installed) ChromaDB over each conversation's memories."""
    rows: dict[str, list[tuple[int, dict[str, float]]]] = defaultdict(list)
    try:
        import chromadb

        from memloom.embed import LocalEmbedder
    except ImportError:
        chromadb = None
    path = Path(tempfile.mkdtemp(prefix="chroma-filters-"))
    try:
        client = chromadb.PersistentClient(path=str(path)) if chromadb else None
        embedder = LocalEmbedder() if chromadb else None
        for conv in data:
            mems = memories_of(conv)
            docs = [x["text"] for x in mems]
            systems = {"bm25": bm25_system(docs)}
            if client is not None:
                systems["chroma"] = chroma_system(client, conv["sample_id"], docs, embedder)
            valid = {d for d, _ in turns_of(conv, "plain")}
            for question, cat, gold in questions_of(conv, valid):
                for name, search in systems.items():
                    rows[name].append(
                        (cat, score([mems[i]["dias"] for i in search(question)], gold))
                    )
    finally:
        shutil.rmtree(path, ignore_errors=True)
    return {k: summarise(v) for k, v in rows.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    if not args.data.exists():
        print(f"LoCoMo data not found at {args.data}; skipping (it is never bundled).")
        return 0
    import memloom

    data = json.loads(args.data.read_text())
    home = Path(tempfile.mkdtemp(prefix="memloom-filters-"))
    rows: dict[str, list[tuple[int, dict[str, float]]]] = defaultdict(list)
    counts = {"facts": 0, "episodes": 0}
    try:
        with memloom.open(home=str(home)) as m:
            held: dict[str, list[str]] = defaultdict(list)
            for conv in data:
                mems = memories_of(conv)
                counts["facts"] += sum(1 for x in mems if x["type"] == "fact")
                counts["episodes"] += sum(1 for x in mems if x["type"] == "episode")
                by_session: dict[str, list[dict[str, Any]]] = defaultdict(list)
                for x in mems:
                    by_session[x["session"]].append(x)
                for session, part in by_session.items():
                    res = m.store(
                        {
                            "session_id": f"{conv['sample_id']}/{session}",
                            "entries": [
                                {k: x[k] for k in ("text", "type", "tags", "project")} for x in part
                            ],
                        }
                    )
                    for x, mid in zip(part, res.ids, strict=True):
                        held[mid].extend(x["dias"])
            for conv in data:
                project = conv["sample_id"]
                speakers = [conv["conversation"]["speaker_a"], conv["conversation"]["speaker_b"]]
                valid = {d for d, _ in turns_of(conv, "plain")}
                for question, cat, gold in questions_of(conv, valid):
                    named = [s for s in speakers if s.lower() in question.lower()]
                    conditions: dict[str, dict[str, Any]] = {
                        "global": {},
                        "project": {"project": project},
                        "project+types": {"project": project, "types": ["fact"]},
                        "project+tag": {
                            "project": project,
                            **({"tags": named} if len(named) == 1 else {}),
                        },
                        "project+boost": {"project": project, "boost_tags": named},
                    }
                    for name, extra in conditions.items():
                        res = m.recall({"query": question, "max_results": 10, **extra})
                        rows[name].append((cat, score([held[x.id] for x in res.memories], gold)))
    finally:
        shutil.rmtree(home, ignore_errors=True)
    results = {
        "memories": counts,
        "conditions": {k: summarise(v) for k, v in rows.items()},
        "baselines": run_baselines(data),
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "filters.json").write_text(json.dumps(results, indent=2))
    print(f"{counts['facts']} facts, {counts['episodes']} session summaries")
    print("| condition | R@1 | R@5 | R@10 | MRR |")
    print("|---|---|---|---|---|")
    for name, summary in results["conditions"].items():
        o = summary["overall"]
        print(f"| {name} | {o['R@1']:.3f} | {o['R@5']:.3f} | {o['R@10']:.3f} | {o['MRR']:.3f} |")
    cats = list(CATEGORIES.values())
    print("\nRecall@10 by category, project scope and baselines:")
    print("| system | " + " | ".join(cats) + " | overall |")
    print("|---|" + "---|" * (len(cats) + 1))
    for name, summary in [
        ("memloom (project)", results["conditions"]["project"]),
        *results["baselines"].items(),
    ]:
        print(
            f"| {name} | "
            + " | ".join(f"{summary[c]['R@10']:.3f}" for c in [*cats, "overall"])
            + " |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
