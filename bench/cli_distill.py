"""What an agent's CLI costs as the distiller: seconds per call over the HTTP provider.

    python bench/cli_distill.py [--calls 10] [--agents claude-cli,codex-cli,...]

For each agent CLI memloom can distil with (the pinned ones of the end-to-end suite,
installed by ``python -m tests.e2e.install``), in a sandbox HOME that points the CLI
at the scripted model on 127.0.0.1 (tests/e2e: the same model speaking that agent's
own provider protocol, answering at once), it makes ``--calls`` distillation calls
through memloom's CLI provider, then the same number through the OpenAI-compatible
HTTP provider against memloom's scripted model, alternating CLI and HTTP call by
call, with one realistic chunk (20 transcript lines). The difference is what the
route adds per call: the CLI's start-up (Node, its config, its tools' registry) and
its own request shaping; the model itself costs nothing here. Prints p50 and p95
of each and the added seconds; ``--json`` writes them to bench/results/.
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "src"))

from tests.e2e import install  # noqa: E402
from tests.e2e.distiller import CUE, DISTILLERS, reply  # noqa: E402
from tests.e2e.drivers import DRIVERS  # noqa: E402
from tests.e2e.harness import fresh_sandbox  # noqa: E402
from tests.e2e.model import AgentModel  # noqa: E402
from tests.support.scripted_llm import ScriptedModel  # noqa: E402

from memloom.llm import DISTILL, OpenAIProvider, schema_for, system_for  # noqa: E402
from memloom.llm.registry import CLI_ORDER  # noqa: E402


def payload() -> dict[str, Any]:
    """One chunk as the importer sends it: 20 lines of a working session."""
    lines = []
    for i in range(1, 21):
        role = "user" if i % 2 else "assistant"
        text = (
            f"{CUE} step {i}: the integration tests need PostgreSQL 16 on port 5433; run them "
            "with make check after docker compose up -d db. The CI pins Node 20."
            if role == "user"
            else f"Ran the suite (step {i}): 212 passed. The flaky test is test_refunds_retry."
        )
        lines.append({"line": i, "role": role, "text": text})
    return {
        "session": {"id": "bench", "project": "/home/dev/shop", "path": "/x.jsonl"},
        "lines": lines,
    }


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--agents", default=",".join(c.name for c in CLI_ORDER))
    ap.add_argument("--json", action="store_true", help="also write bench/results/cli_distill.json")
    args = ap.parse_args()
    bins = {"npm": install.npm_bin()}
    system, schema, doc = system_for(DISTILL), schema_for(DISTILL), payload()
    rows = []
    with AgentModel() as agent_model, tempfile.TemporaryDirectory() as tmp:
        memloom_llm = ScriptedModel()
        http = OpenAIProvider(base_url=memloom_llm.base_url, model="scripted", api_key="sk-b")
        for name in args.agents.split(","):
            cli = next(c for c in CLI_ORDER if c.name == name)
            driver = DRIVERS[DISTILLERS[name]]
            sb = fresh_sandbox(Path(tmp) / name, agent_model, memloom_llm)
            sb.bins.update(bins)
            driver.configure(sb)
            driver.seed_user_config(sb)
            agent_model.script(when=CUE, answer=reply())
            module, _, cls = cli.target.partition(":")
            provider_cls = getattr(importlib.import_module(f"memloom.llm.{module}"), cls)
            provider = provider_cls(
                executable=str(bins["npm"] / cli.binary),
                env=sb.env(driver.run_env(sb)),
                timeout=180,
                max_tries=1,
            )
            cli_s: list[float] = []
            http_s: list[float] = []
            provider.complete(DISTILL, system, doc, schema)  # warm the disk cache once
            http.complete(DISTILL, system, doc, schema)
            for _ in range(args.calls):
                t = time.perf_counter()
                out = provider.complete(DISTILL, system, doc, schema)
                cli_s.append(time.perf_counter() - t)
                assert out.get("memories"), f"{name} gave no memories: {out}"
                t = time.perf_counter()
                http.complete(DISTILL, system, doc, schema)
                http_s.append(time.perf_counter() - t)
            agent_model.clear_scripts()
            row = {
                "provider": name,
                "calls": args.calls,
                "cli_p50": round(statistics.median(cli_s), 2),
                "cli_p95": round(pct(cli_s, 0.95), 2),
                "http_p50": round(statistics.median(http_s), 3),
                "http_p95": round(pct(http_s, 0.95), 3),
            }
            row["added_p50"] = round(row["cli_p50"] - row["http_p50"], 2)
            row["added_p95"] = round(row["cli_p95"] - row["http_p95"], 2)
            rows.append(row)
            print(
                f"{name:<13} CLI p50 {row['cli_p50']:6.2f} s p95 {row['cli_p95']:6.2f} s | "
                f"HTTP p50 {row['http_p50']:.3f} s p95 {row['http_p95']:.3f} s | "
                f"added p50 {row['added_p50']:.2f} s p95 {row['added_p95']:.2f} s",
                flush=True,
            )
        http.close()
        memloom_llm.close()
    if args.json:
        out = REPO / "bench" / "results" / "cli_distill.json"
        out.parent.mkdir(exist_ok=True)
        out.write_text(
            json.dumps(
                {"at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "rows": rows}, indent=1
            )
            + "\n"
        )


if __name__ == "__main__":
    main()
