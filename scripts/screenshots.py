"""Screenshots of the web viewer for docs/viewer.md.

Starts ``memloom serve`` on a throwaway, API-seeded store (offline LLM, local
embedder), opens each page in headless Chromium at 1280×800 and writes
``docs/screenshots/{memories,memory-detail,conflicts,activity}.png``.

    python scripts/screenshots.py [--out docs/screenshots] [--keep]

The demo memories are saved through the HTTP API like any client's; then their
``created_at`` is spread over the last three weeks directly in the throwaway
SQLite file, so that the Activity chart shows a history instead of one bar
(the API has no way to save a memory in the past, on purpose).
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.server.conftest import start_daemon, stop  # noqa: E402
from tests.viewer.conftest import CHROMIUM_ARGS, find_chromium  # noqa: E402
from tests.viewer.seed import save, seed  # noqa: E402

VIEWPORT = {"width": 1280, "height": 800}

#: A few weeks of an agent's notes on a made-up project, for a lived-in store.
DEMO = [
    ("procedure", "Start the dev stack with: docker compose up -d db redis", ["dev"]),
    ("procedure", "Regenerate the OpenAPI client with: make client", ["codegen"]),
    ("procedure", "Apply migrations with: alembic upgrade head", ["db"]),
    ("fact", "CI runs on GitHub Actions", ["ci"]),
    ("fact", "Feature flags live in config/flags.yaml and reload without a restart", ["config"]),
    ("fact", "The search service is written in Go; everything else is Python 3.12", ["stack"]),
    ("fact", "Staging deploys run from the release/* branches only", ["deploy"]),
    ("fact", "Webhook signatures use HMAC-SHA256 over the raw request body", ["billing"]),
    ("fact", "Images live in the acme-media S3 bucket, one prefix per tenant", ["storage"]),
    ("preference", "Keep pull requests under 400 changed lines", ["review"]),
    ("preference", "Write commit messages in the imperative mood", ["git"]),
    ("preference", "Prefer dataclasses over dicts for internal records", ["style"]),
    ("episode", "The nightly export failed on 2 May: the disk on worker-3 was full", ["ops"]),
    ("episode", "Migrated the job queue from Celery to arq; throughput doubled", ["queue"]),
    ("episode", "Fixed the timezone bug in invoices: dates are now stored as UTC", ["billing"]),
    ("fact", "Rate limits are 100 requests per minute per API key", ["api"]),
    ("procedure", "Rotate the signing keys with: make rotate-keys and redeploy auth", ["auth"]),
    ("preference", "Log with structlog, never print()", ["style"]),
    ("fact", "Customer support uses the #support-escalations Slack channel for pages", ["ops"]),
    ("episode", "Load test on search: p95 fell from 480 ms to 120 ms with caching", ["perf"]),
    ("fact", "The mobile app pins API version v3; never break v3 responses", ["api"]),
    # Later notes that contradict earlier ones: they land in the conflict queue.
    ("fact", "CI moved from GitHub Actions to Buildkite", ["ci"]),
]


def backdate(db: Path, days: int = 21) -> None:
    """Spread the demo memories' creation times over the last ``days`` days."""
    rng = random.Random(7)
    now = time.time()
    con = sqlite3.connect(db, timeout=30)
    try:
        rows = con.execute("SELECT id FROM memories ORDER BY created_at").fetchall()
        older = rows[: max(0, len(rows) - 6)]  # the newest few stay "today"
        # Oldest first, so every memory keeps its place in time (a conflict's "new" stays new).
        ages = sorted(
            (rng.triangular(0.5, days, 3) * 86400 for _ in older),
            reverse=True,
        )
        for (memory_id,), age in zip(older, ages, strict=True):
            con.execute(
                "UPDATE memories SET created_at = ?, asserted_at = MIN(asserted_at, ?) "
                "WHERE id = ?",
                (now - age, now - age, memory_id),
            )
        con.commit()
    finally:
        con.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--keep", action="store_true", help="leave the throwaway store on disk")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    base = Path(tempfile.mkdtemp(prefix="memloom-shots-"))
    daemon = start_daemon(base / "home", base / "claude")
    try:
        with daemon.client() as api:
            ids = seed(api, daemon.claude, xss=False)
            for type_, text, tags in DEMO:
                save(api, text, type_, tags=tags)
            backdate(daemon.home / "memloom.db")
            # Some use, so "recently used" and access counts look real.
            for query in ("how do I run the tests", "deploy to staging", "webhook retries"):
                api.post("/v1/memory/recall", json={"query": query, "max_results": 3})
            imported = api.get(
                "/v1/memories", params={"source": "claude-code", "limit": 50}
            ).json()["memories"]
            detail_id = next(
                (m["id"] for m in imported if "vite" in m["text"].lower()),
                imported[0]["id"] if imported else ids["procedures"][0],
            )

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
            context = browser.new_context(viewport=VIEWPORT, base_url=daemon.url)
            page = context.new_page()
            shots = [
                ("memories.png", "/#/memories", ".mem-row"),
                ("memory-detail.png", f"/#/memory/{detail_id}", ".t-line.cited"),
                ("conflicts.png", "/#/conflicts", ".conflict"),
                ("activity.png", "/#/activity", "svg#per-day-chart rect.bar"),
            ]
            for name, route, ready in shots:
                page.goto(route)
                page.locator(ready).first.wait_for()
                page.wait_for_load_state("networkidle")
                page.wait_for_timeout(300)  # progress-bar transitions
                page.screenshot(path=str(args.out / name))
                print(f"wrote {args.out / name}")
            browser.close()
    finally:
        stop(daemon)
        if args.keep:
            print(f"store kept in {base}")
        else:
            import shutil

            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
