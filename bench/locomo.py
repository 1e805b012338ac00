"""Retrieval quality on LoCoMo (dev split): memloom vs BM25 vs ChromaDB, same embedding model.

    python bench/locomo.py [--data ../shared/bench/locomo/locomo_dev.json] [--systems ...]

Protocol (the dataset's README): every dialogue turn is one memory, each
conversation its own project; every non-adversarial question is a query; the
evidence turns are the gold set. Reported: Recall@1/5/10 (share of gold turns
in the top k) and MRR (first gold turn), overall and per category.

LoCoMo is CC BY-NC 4.0 (Maharana et al., ACL 2024): it is read from outside the
repository and never copied into it. Without the file the script says so and
exits 0.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "bench" / "locomo" / "locomo_dev.json"
RESULTS = REPO / "bench" / "results"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
KS = (1, 5, 10)
_ID = re.compile(r"D:?(\d+):(\d+)")


# ---------------------------------------------------------------- data


def turns_of(conv: dict[str, Any], style: str) -> list[tuple[str, str]]:
    """(dia_id, memory text) for every turn, in order (the session is the id's D<n>)."""
    c = conv["conversation"]
    out = []
    sessions = sorted((int(k.split("_")[1]), k) for k in c if re.fullmatch(r"session_\d+", k))
    for number, key in sessions:
        date = c.get(f"{key}_date_time", "")
        for turn in c[key]:
            text = f"{turn['speaker']}: {turn['text']}"
            if style in ("caption", "rich") and turn.get("blip_caption"):
                text += f" [shares {turn['blip_caption']}]"
            if style == "rich" and date:
                text = f"({date}) {text}"
            out.append((turn["dia_id"], text))
        _ = number
    return out


def gold_of(qa: dict[str, Any], valid: set[str]) -> list[str]:
    ids: list[str] = []
    for raw in qa.get("evidence", []):
        for token in re.split(r"[;,\s]+", str(raw).replace("(", "").replace(")", "")):
            m = _ID.fullmatch(token.strip())
            if m:
                dia = f"D{int(m.group(1))}:{int(m.group(2))}"
                if dia in valid and dia not in ids:
                    ids.append(dia)
    return ids


def questions_of(conv: dict[str, Any], valid: set[str]) -> list[tuple[str, int, list[str]]]:
    out = []
    for qa in conv["qa"]:
        if qa.get("category") == 5:
            continue
        gold = gold_of(qa, valid)
        if gold:
            out.append((qa["question"], int(qa["category"]), gold))
    return out


# ---------------------------------------------------------------- metrics


def score(ranked: list[list[str]], gold: list[str]) -> dict[str, float]:
    """``ranked`` is a list of result slots, each the dia_ids that memory holds."""
    out: dict[str, float] = {}
    gold_set = set(gold)
    for k in KS:
        found = {d for slot in ranked[:k] for d in slot} & gold_set
        out[f"R@{k}"] = len(found) / len(gold_set)
    rr = 0.0
    for rank, slot in enumerate(ranked[:10], start=1):
        if gold_set & set(slot):
            rr = 1.0 / rank
            break
    out["MRR"] = rr
    return out


def summarise(rows: list[tuple[int, dict[str, float]]]) -> dict[str, dict[str, float]]:
    buckets: dict[str, list[dict[str, float]]] = defaultdict(list)
    for cat, metrics in rows:
        buckets[CATEGORIES[cat]].append(metrics)
        buckets["overall"].append(metrics)
    return {
        name: {
            "n": len(items),
            **{m: round(sum(x[m] for x in items) / len(items), 4) for m in items[0]},
        }
        for name, items in buckets.items()
    }


# ---------------------------------------------------------------- systems


STOP: frozenset[str] = frozenset()


def _stopwords() -> frozenset[str]:
    try:
        from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

        return frozenset(ENGLISH_STOP_WORDS)
    except ImportError:  # the memloom stop list is a close stand-in
        from memloom.ranking import STOPWORDS

        return STOPWORDS


def bm25_system(docs: list[str]) -> Callable[[str], list[int]]:
    """Okapi BM25, k1 = 1.2, b = 0.75, the README's tokenisation."""
    stop = _stopwords()

    def toks(text: str) -> list[str]:
        return [t for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in stop]

    tokenised = [toks(d) for d in docs]
    n = len(docs)
    avg = sum(len(t) for t in tokenised) / max(n, 1)
    df: Counter[str] = Counter()
    for t in tokenised:
        df.update(set(t))
    tfs = [Counter(t) for t in tokenised]

    def search(query: str) -> list[int]:
        q = toks(query)
        scores = []
        for i, tf in enumerate(tfs):
            s = 0.0
            dl = len(tokenised[i])
            for term in q:
                f = tf.get(term, 0)
                if not f:
                    continue
                idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
                s += idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * dl / avg))
            scores.append((-s, i))
        scores.sort()
        return [i for _, i in scores[:10]]

    return search


def run_bm25(data: list[dict[str, Any]], style: str) -> dict[str, Any]:
    rows = []
    for conv in data:
        turns = turns_of(conv, style)
        search = bm25_system([t for _, t in turns])
        valid = {d for d, _ in turns}
        for q, cat, gold in questions_of(conv, valid):
            rows.append((cat, score([[turns[i][0]] for i in search(q)], gold)))
    return summarise(rows)


def run_memloom(data: list[dict[str, Any]], style: str, mode: str) -> dict[str, Any]:
    import memloom

    home = Path(tempfile.mkdtemp(prefix="memloom-locomo-"))
    rows = []
    try:
        with memloom.open(home=str(home)) as m:
            for conv in data:
                project = conv["sample_id"]
                turns = turns_of(conv, style)
                held: dict[str, list[str]] = defaultdict(list)
                sessions: dict[str, list[tuple[str, str]]] = defaultdict(list)
                for dia, text in turns:
                    sessions[dia.split(":")[0]].append((dia, text))
                # One store request per conversation session, as a chat client would send.
                for session, part in sessions.items():
                    res = m.store(
                        {
                            "session_id": f"{project}/{session}",
                            "entries": [{"text": t, "project": project} for _, t in part],
                        }
                    )
                    for (dia, _), mid in zip(part, res.ids, strict=True):
                        held[mid].append(dia)
                valid = {d for d, _ in turns}
                for q, cat, gold in questions_of(conv, valid):
                    res = m.recall(
                        {"query": q, "project": project, "max_results": 10, "mode": mode}
                    )
                    rows.append((cat, score([held[x.id] for x in res.memories], gold)))
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return summarise(rows)


def chroma_system(
    client: Any, name: str, docs: list[str], embedder: Any
) -> Callable[[str], list[int]]:
    """ChromaDB (cosine HNSW) over ``docs`` with memloom's embedder: query -> top-10 indices."""
    col = client.create_collection(name, metadata={"hnsw:space": "cosine"})
    col.add(ids=[str(i) for i in range(len(docs))], embeddings=embedder.embed(docs), documents=docs)

    def search(query: str) -> list[int]:
        res = col.query(query_embeddings=[embedder.embed_query(query)], n_results=10)
        return [int(i) for i in res["ids"][0]]

    return search


def run_chroma(data: list[dict[str, Any]], style: str) -> dict[str, Any] | None:
    try:
        import chromadb
    except ImportError:
        return None
    from memloom.embed import LocalEmbedder

    embedder = LocalEmbedder()
    path = Path(tempfile.mkdtemp(prefix="chroma-locomo-"))
    rows = []
    try:
        client = chromadb.PersistentClient(path=str(path))
        for conv in data:
            turns = turns_of(conv, style)
            search = chroma_system(client, conv["sample_id"], [t for _, t in turns], embedder)
            valid = {d for d, _ in turns}
            for q, cat, gold in questions_of(conv, valid):
                rows.append((cat, score([[turns[i][0]] for i in search(q)], gold)))
    finally:
        shutil.rmtree(path, ignore_errors=True)
    return summarise(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument(
        "--style",
        choices=["plain", "caption", "rich"],
        default="rich",
        help="plain: '<speaker>: <text>'; caption: plus the shared image's "
        "caption; rich: plus the session date too",
    )
    parser.add_argument(
        "--systems",
        nargs="+",
        default=["memloom", "memloom-keyword", "memloom-vector", "bm25", "chroma"],
    )
    parser.add_argument("--conversations", type=int, default=None)
    args = parser.parse_args()
    if not args.data.exists():
        print(f"LoCoMo data not found at {args.data}; skipping (it is never bundled).")
        return 0
    data = json.loads(args.data.read_text())[: args.conversations]
    results: dict[str, Any] = {"style": args.style, "systems": {}}
    for system in args.systems:
        t = time.perf_counter()
        if system == "bm25":
            out = run_bm25(data, args.style)
        elif system == "chroma":
            out = run_chroma(data, args.style)
        elif system.startswith("memloom"):
            mode = {"memloom": "hybrid", "memloom-keyword": "keyword", "memloom-vector": "vector"}
            out = run_memloom(data, args.style, mode[system])
        else:
            raise SystemExit(f"unknown system {system}")
        if out is None:
            print(f"{system}: not installed, skipped")
            continue
        out["seconds"] = round(time.perf_counter() - t, 1)
        results["systems"][system] = out
        o = out["overall"]
        print(
            f"{system:>16}  R@1 {o['R@1']:.3f}  R@5 {o['R@5']:.3f}  R@10 {o['R@10']:.3f}  "
            f"MRR {o['MRR']:.3f}  (n={o['n']}, {out['seconds']} s)",
            flush=True,
        )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"locomo-{args.style}.json").write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
