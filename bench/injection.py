"""What the prompt-recall hook would inject, on LoCoMo dev: relevant questions vs unrelated ones.

    python bench/injection.py [--data ../shared/bench/locomo/locomo_dev.json] [--style plain]

Every conversation gets its own store (its turns as memories, one store request
per conversation session, as ``bench/locomo.py`` does). Every non-adversarial
question is asked (a) of its own conversation's store and (b) of the next
conversation's store, through the request the hook sends the daemon
(``capture.prompt.hook_query``: top 5, the project, sensitivity ≤ 2), with no
threshold, so that every threshold can be judged on the same answers:

* (b) abstains: the share of questions about another conversation that inject
  nothing (target ≥ 90 %);
* (a) hits: the share of questions about this conversation whose injection holds
  at least one evidence turn (target ≥ 90 % of what top-5-always achieves);
* the mean injected tokens per prompt, over (a) and (b).

Reported for today's behaviour (top 5 always), for ``auto``
(``ranking.AUTO_MIN_RELEVANCE``) and as a curve over thresholds, plotted into
``docs/injection.png``. LoCoMo is CC BY-NC 4.0: read from outside the repository.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo import DEFAULT_DATA, questions_of, turns_of

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
PLOT = REPO / "docs" / "injection.png"
#: Every 0.05, and every 0.01 where the threshold is chosen.
THRESHOLDS = sorted(
    {round(0.05 * i, 2) for i in range(20)} | {round(0.01 * i, 2) for i in range(50, 76)}
)


def build(
    home: Path, conv: dict[str, Any], style: str, standalone: bool = False
) -> tuple[Any, dict[str, list[str]]]:
    """A store of one conversation's turns; memory id -> the dia_ids it holds.
    ``standalone``: without their session (no conversation windows), as distilled
    memories are recalled."""
    import memloom

    m = memloom.open(home=str(home))
    project = conv["sample_id"]
    held: dict[str, list[str]] = defaultdict(list)
    sessions: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for dia, text in turns_of(conv, style):
        sessions[dia.split(":")[0]].append((dia, text))
    for session, part in sessions.items():
        request: dict[str, Any] = {"entries": [{"text": t, "project": project} for _, t in part]}
        if not standalone:
            request["session_id"] = f"{project}/{session}"
        res = m.store(request)
        for (dia, _), mid in zip(part, res.ids, strict=True):
            held[mid].append(dia)
    return m, held


def answers(m: Any, project: str, question: str) -> list[tuple[str, float, int]]:
    """(memory id, relevance, tokens) of the hook's top 5, with no threshold."""
    from memloom.capture.prompt import hook_query
    from memloom.ranking import estimate_tokens

    req = {**hook_query(question, project), "min_relevance": None, "touch": False}
    res = m.recall(req)
    return [(x.id, x.relevance, estimate_tokens(x.text)) for x in res.memories]


def judge(
    own: list[tuple[list[tuple[str, float, int]], set[str]]],
    other: list[list[tuple[str, float, int]]],
    threshold: float,
) -> dict[str, float]:
    hits = sum(1 for ans, gold in own if any(r >= threshold and m in gold for m, r, _ in ans))
    quiet = sum(1 for ans in other if not any(r >= threshold for _, r, _ in ans))
    tokens = [sum(t for _, r, t in ans if r >= threshold) for ans, _ in own] + [
        sum(t for _, r, t in ans if r >= threshold) for ans in other
    ]
    return {
        "threshold": threshold,
        "own_hit": round(hits / len(own), 4),
        "other_silent": round(quiet / len(other), 4),
        "mean_tokens": round(sum(tokens) / len(tokens), 1),
    }


def plot(curve: list[dict[str, float]], always: dict[str, float], auto: float) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [c["threshold"] for c in curve]
    fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
    ax.plot(xs, [c["other_silent"] for c in curve], label="(b) unrelated: injects nothing")
    ax.plot(xs, [c["own_hit"] for c in curve], label="(a) related: injects an evidence turn")
    ax.axhline(0.9, color="grey", lw=0.8, ls=":")
    ax.axhline(0.9 * always["own_hit"], color="tab:orange", lw=0.8, ls=":")
    ax.axvline(auto, color="black", lw=0.8, ls="--", label=f"auto = {auto}")
    ax.set_xlabel("min_relevance")
    ax.set_ylabel("share of prompts")
    ax.set_ylim(0, 1.02)
    ax.set_title("Prompt-recall injection on LoCoMo dev (bench/injection.py)")
    ax.legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    fig.savefig(PLOT)


def main() -> int:
    from memloom.ranking import AUTO_MIN_RELEVANCE

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--style", choices=["plain", "caption", "rich"], default="plain")
    parser.add_argument("--no-plot", action="store_true")
    parser.add_argument(
        "--standalone", action="store_true", help="turns stored without their session"
    )
    args = parser.parse_args()
    if not args.data.exists():
        print(f"LoCoMo data not found at {args.data}; skipping (it is never bundled).")
        return 0
    data = json.loads(args.data.read_text())
    started = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="memloom-injection-"))
    own: list[tuple[list[tuple[str, float, int]], set[str]]] = []
    other: list[list[tuple[str, float, int]]] = []
    try:
        stores = [build(work / c["sample_id"], c, args.style, args.standalone) for c in data]
        for i, conv in enumerate(data):
            m, held = stores[i]
            nxt, _ = stores[(i + 1) % len(data)]
            valid = {d for ids in held.values() for d in ids}
            by_dia = {d: mid for mid, ids in held.items() for d in ids}
            for question, _cat, gold in questions_of(conv, valid):
                gold_ids = {by_dia[d] for d in gold if d in by_dia}
                own.append((answers(m, conv["sample_id"], question), gold_ids))
                other.append(answers(nxt, data[(i + 1) % len(data)]["sample_id"], question))
        for m, _ in stores:
            m.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    always = judge(own, other, 0.0)
    auto = judge(own, other, AUTO_MIN_RELEVANCE)
    curve = [judge(own, other, t) for t in THRESHOLDS]
    result = {
        "style": args.style,
        "standalone": args.standalone,
        "questions": len(own),
        "top5_always": always,
        "auto": auto,
        "auto_threshold": AUTO_MIN_RELEVANCE,
        "auto_keeps_of_always": round(auto["own_hit"] / max(always["own_hit"], 1e-9), 4),
        "curve": curve,
        "seconds": round(time.perf_counter() - started, 1),
    }
    RESULTS.mkdir(exist_ok=True)
    name = "injection-standalone.json" if args.standalone else "injection.json"
    (RESULTS / name).write_text(json.dumps(result, indent=2))
    if not args.no_plot and not args.standalone:
        plot(curve, always, AUTO_MIN_RELEVANCE)
    for c in curve:
        print(
            f"t={c['threshold']:.2f}  own hit {c['own_hit']:.3f}  other silent "
            f"{c['other_silent']:.3f}  tokens {c['mean_tokens']}"
        )
    print(json.dumps({k: v for k, v in result.items() if k != "curve"}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
