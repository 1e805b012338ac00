"""Is a changed fact kept? Update pairs and paraphrase pairs through ``store`` and ``save``.

    python bench/updates.py [--label after] [--seed 34]
    PYTHONPATH=<checkout of an older commit>/src python bench/updates.py --label before

A new user with no API key writes on the distance bands (``MEMLOOM_LLM=offline``,
the local embedding model). Each pair is written in a project of its own (the
bands only compare memories of one project), the old statement first:

* an **update pair** changes one value of the old statement (a number, version,
  size, duration, path, URL, e-mail, identifier, quoted string, flag, time, cron
  schedule, state word, negation, or one word swapped). It is kept when the new
  statement is the project's active memory and the old one is not;
* a **paraphrase pair** says the same thing again. It is merged when the project
  has one active memory afterwards;
* a **distinct pair** is two facts that look alike and are both true (another
  subject). Both should stay active: what the rule costs where it errs.

Both through ``POST /v1/memory/store``'s library call (``Memloom.store``) and
``Memloom.save``. Results are merged by label into ``bench/results/updates.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"

SERVICES = ["billing", "payments", "auth", "search", "checkout", "notifications", "reports"]
TOOLS = [
    ("npm", "pnpm"), ("yarn", "pnpm"), ("Postgres", "MySQL"), ("Redis", "Memcached"),
    ("Jest", "Vitest"), ("webpack", "Vite"), ("flake8", "ruff"), ("black", "ruff"),
    ("Docker", "Podman"), ("Kafka", "RabbitMQ"), ("GitHub", "GitLab"), ("Sentry", "Rollbar"),
]  # fmt: skip
STATES = [
    ("enabled", "disabled"), ("on", "off"), ("true", "false"), ("allowed", "denied"),
    ("required", "optional"), ("public", "private"), ("sync", "async"),
]  # fmt: skip


def update_pairs(rng: random.Random) -> list[tuple[str, str, str]]:
    """(kind, old, new): the same statement with one value changed."""
    out: list[tuple[str, str, str]] = []

    def add(kind: str, template: str, old: object, new: object) -> None:
        svc = rng.choice(SERVICES)
        out.append((kind, template.format(v=old, s=svc), template.format(v=new, s=svc)))

    for _ in range(14):
        p = rng.randrange(3000, 9999)
        add("port", "The {s} service runs on port {v}", p, p + rng.randrange(1, 9))
    for _ in range(12):
        a = rng.randrange(14, 20)
        add("version", "Use Node {v} for the {s} frontend build", a, a + 2)
    for _ in range(12):
        a, b, c = rng.randrange(0, 3), rng.randrange(0, 30), rng.randrange(0, 10)
        add("semver", "Pin the {s} SDK to v{v}", f"{a}.{b}.{c}", f"{a}.{b}.{c + 1}")
    for _ in range(12):
        a = rng.choice([5, 10, 20, 50, 100])
        unit = rng.choice(["MB", "GB", "KB"])
        add("size", "Uploads to the {s} API are limited to {v}", f"{a} {unit}", f"{a * 2} {unit}")
    for _ in range(12):
        a = rng.choice([10, 15, 30, 45, 60, 90])
        add("duration", "The {s} request timeout is {v} seconds", a, a + 15)
    for _ in range(8):
        a = rng.choice([70, 75, 80, 85])
        add("percent", "Keep test coverage of the {s} package above {v}%", a, a + 5)
    for _ in range(12):
        a, b = rng.sample(["config.yaml", "settings.toml", "app.json", "env.ini", "conf.d"], 2)
        add("path", "The {s} service reads its config from /etc/{s}/{v}", a, b)
    for _ in range(10):
        a, b = rng.sample(["staging", "stage", "preprod", "qa", "test"], 2)
        add("url", "The {s} dashboard is at https://{v}.acme.dev/{s}", a, b)
    for _ in range(8):
        a, b = rng.sample(["ops", "sre", "oncall", "platform", "infra"], 2)
        add("email", "Page the {s} team at {v}@acme.io", a, b)
    for _ in range(10):
        a, b = rng.sample(["prod", "dr", "archive", "eu", "us"], 2)
        add("bucket", "Backups of the {s} database go to s3://acme-{s}-{v}", a, b)
    for _ in range(12):
        a, b = rng.sample(["api_key", "api_token", "access_token", "client_secret"], 2)
        add("snake_case", "The {s} client reads settings.{v} at start-up", a, b)
    for _ in range(8):
        a, b = rng.sample(["ApiError", "ServiceError", "ClientError", "HttpError"], 2)
        add("CamelCase", "Errors from the {s} client are wrapped in {v}", a, b)
    for _ in range(10):
        a, b = rng.sample(["NEW_CHECKOUT", "FAST_SEARCH", "BETA_REPORTS", "DARK_MODE"], 2)
        add("ALL_CAPS", "The {s} rollout is gated by the flag {v}", a, b)
    for _ in range(8):
        a, b = rng.sample(["eu-west-1", "eu-central-1", "us-east-2", "ap-south-1"], 2)
        add("region", "The {s} service is deployed in {v}", a, b)
    for _ in range(8):
        a, b = rng.sample(["debug", "info", "warning", "error"], 2)
        add("quoted", "Set the {s} log level to '{v}'", a, b)
    for _ in range(8):
        a, b = rng.sample(["-x", "-q", "-v", "--lf", "--ff"], 2)
        add("flag", "Run the {s} tests with pytest {v}", a, b)
    for _ in range(8):
        h = rng.randrange(0, 6)
        add("time", "The {s} nightly job runs at {v} UTC", f"0{h}:00", f"0{h + 2}:30")
    for _ in range(6):
        h = rng.randrange(0, 6)
        add("cron", "The {s} cleanup cron is {v}", f"0 {h} * * *", f"30 {h + 1} * * 1")
    for _ in range(12):
        a, b = rng.choice(STATES)
        add("state", "The {s} feature flag NEW_FLOW is {v} in staging", a, b)
    for _ in range(10):
        svc = rng.choice(SERVICES)
        old = f"The {svc} tests must hit the network"
        out.append(("negation", old, f"The {svc} tests must not hit the network"))
    for _ in range(12):
        a, b = rng.choice(TOOLS)
        add("word swap", "The {s} project uses {v}", a, b)
    return out


def paraphrase_pairs(rng: random.Random) -> list[tuple[str, str, str]]:
    """(kind, old, new): the same statement said again, otherwise."""
    forms = [
        ("synonym", "The {s} service runs on port {p}", "The {s} service listens on port {p}"),
        ("function words", "The {s} service runs on port {p}", "{S} service now runs on port {p}"),
        ("case", "The {s} service runs on port {p}", "the {s} service runs on port {p}"),
        ("order", "In staging, the {s} service runs on port {p}",
         "The {s} service runs on port {p} in staging"),
        ("unit spacing", "Uploads to {s} stop at {n} MB", "Uploads to {s} stop at {n}MB"),
        ("v prefix", "The {s} SDK is pinned to v{n}.2", "The {s} SDK is pinned to {n}.2"),
        ("acronym", "The {s} database listens on port {p}", "The {s} DB listens on port {p}"),
        ("punctuation", "Deploy {s} with make deploy.", "Deploy {s} with make deploy"),
        ("article", "Run the {s} tests with make check", "Run {s} tests with make check"),
        ("inflection", "The {s} worker retries failed jobs", "The {s} worker retried failed jobs"),
        ("repo", "The {s} repo uses GitHub Actions", "The {s} repository uses GitHub Actions"),
    ]  # fmt: skip
    out = []
    for i in range(110):
        kind, a, b = forms[i % len(forms)]
        svc = rng.choice(SERVICES)
        values = {"s": svc, "S": svc.capitalize(), "p": rng.randrange(3000, 9999),
                  "n": rng.randrange(2, 40)}  # fmt: skip
        out.append((kind, a.format(**values), b.format(**values)))
    return out


def distinct_pairs(rng: random.Random) -> list[tuple[str, str, str]]:
    """(kind, first, second): two facts that look alike and are both true. What the
    value rule costs: each one made a version of the other hides a fact from recall."""
    out = []
    subjects = [("frontend", "backend"), ("staging", "production"), ("web", "worker")]
    for _ in range(15):
        a, b = rng.choice(subjects)
        p = rng.randrange(3000, 9999)
        out.append(("subject and value", f"The {a} listens on port {p}",
                    f"The {b} server listens on port {p + 1}"))  # fmt: skip
    for _ in range(15):
        a, b = rng.choice(subjects)
        tool = rng.choice(["pnpm", "Vite", "ruff", "Docker"])
        out.append(("subject swap", f"The {a} uses {tool}", f"The {b} uses {tool}"))
    for _ in range(10):
        s1, s2 = rng.sample(SERVICES, 2)
        out.append(("two services", f"The {s1} service owns the invoices table",
                    f"The {s2} service reads the invoices table every hour"))  # fmt: skip
    return out


def run(label: str, seed: int) -> dict:
    os.environ["MEMLOOM_LLM"] = "offline"
    import memloom

    rng = random.Random(seed)
    updates, paraphrases = update_pairs(rng), paraphrase_pairs(rng)
    distinct = distinct_pairs(rng)
    doc: dict = {
        "label": label,
        "memloom": str(Path(memloom.__file__).parent),
        "seed": seed,
        "updates": len(updates),
        "paraphrases": len(paraphrases),
        "distinct": len(distinct),
    }
    for path in ("store", "save"):
        home = Path(tempfile.mkdtemp(prefix=f"memloom-updates-{path}-"))
        m = memloom.open(home=str(home))
        try:
            kept: Counter[str] = Counter()
            total: Counter[str] = Counter()
            outcomes: Counter[str] = Counter()
            merged = 0
            started = time.perf_counter()
            for n, (kind, old, new) in enumerate(updates):
                project = f"/bench/update/{n}"
                write(m, path, old, project)
                outcomes[write(m, path, new, project)] += 1
                active = active_texts(m, project)
                total[kind] += 1
                kept[kind] += active == [new]
            for n, (_, old, new) in enumerate(paraphrases):
                project = f"/bench/paraphrase/{n}"
                write(m, path, old, project)
                write(m, path, new, project)
                merged += len(active_texts(m, project)) == 1
            both: Counter[str] = Counter()
            for n, (kind, first, second) in enumerate(distinct):
                project = f"/bench/distinct/{n}"
                write(m, path, first, project)
                write(m, path, second, project)
                both[kind] += len(active_texts(m, project)) == 2
            seconds = time.perf_counter() - started
        finally:
            m.close()
        doc[path] = {
            "updates_kept": sum(kept.values()),
            "updates_kept_pct": round(100 * sum(kept.values()) / len(updates), 1),
            "by_kind": {k: f"{kept[k]}/{total[k]}" for k in total},
            "update_outcomes": dict(outcomes),
            "paraphrases_merged": merged,
            "paraphrases_merged_pct": round(100 * merged / len(paraphrases), 1),
            "distinct_both_kept": sum(both.values()),
            "distinct_by_kind": {
                k: f"{both[k]}/{sum(1 for d in distinct if d[0] == k)}"
                for k in dict.fromkeys(d[0] for d in distinct)
            },
            "seconds": round(seconds, 1),
        }
    return doc


def write(m: Any, path: str, text: str, project: str) -> str:
    """One statement through ``store`` or ``save``; what happened to it."""
    if path == "store":
        r = m.store({"entries": [{"text": text, "project": project}]})
        if r.merged or r.deduplicated:
            return "merged"
        if r.versioned:
            return "versioned"
        return "conflict" if r.conflicts else "stored"
    return m.save({"text": text, "project": project}).outcome


def active_texts(m: Any, project: str) -> list[str]:
    page = m.list({"project": project, "limit": 10})
    return sorted(d.text for d in page.memories if d.project == project)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--label", default="after")
    parser.add_argument("--seed", type=int, default=34)
    args = parser.parse_args()
    doc = run(args.label, args.seed)
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / "updates.json"
    runs = json.loads(out.read_text()) if out.exists() else {}
    runs[args.label] = {**doc, "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                        "loadavg": os.getloadavg()}  # fmt: skip
    out.write_text(json.dumps(runs, indent=2) + "\n")
    print(json.dumps(doc, indent=2))


if __name__ == "__main__":
    sys.exit(main())
