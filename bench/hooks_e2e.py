"""What memloom's hooks add to a prompt in the real agents (tests/e2e's pinned CLIs).

    python bench/hooks_e2e.py [--runs 10] [--agents claude-code codex …]

For each agent with hooks, three sandboxes side by side, each a HOME of its own
with the same agent config (tests/e2e drivers, the scripted model on 127.0.0.1):

* ``off``: memloom not connected (the baseline a user compares with);
* ``down``: connected, no daemon (the prompt hook's keyword fallback reads the
  SQLite file);
* ``up``: connected, ``memloom serve`` running (the hook asks the daemon);
* ``unwritable``: ``down``'s sandbox with memloom's data folder unwritable.

The connected ones hold a saved project memory that the prompt recalls. Runs go
round-robin (off, down, up, unwritable, off, …) so that drift on a busy machine falls on
all of them alike. Printed and written to bench/results/hooks_e2e.json: per agent
and condition p50/p95 of the wall time of one headless prompt, and the added
latency (p95 connected minus p95 off; the target is at most 300 ms).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from scripts.e2e_matrix import AGENTS, versions  # noqa: E402
from tests.e2e import install  # noqa: E402
from tests.e2e.drivers import DRIVERS  # noqa: E402
from tests.e2e.harness import Sandbox, fresh_sandbox  # noqa: E402
from tests.e2e.model import AgentModel  # noqa: E402
from tests.support.scripted_llm import ScriptedModel  # noqa: E402

RESULTS = REPO / "bench" / "results" / "hooks_e2e.json"
FACT = "The staging database for the shop listens on port 5433"
QUESTION = "which port does the staging database of the shop listen on?"


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def start_daemon(sb: Sandbox) -> subprocess.Popen[bytes]:
    """``memloom serve`` in the sandbox, once it answers (its record names its URL)."""
    import urllib.request

    from memloom.daemon_record import read_daemon

    proc = subprocess.Popen(
        [sys.executable, "-m", "memloom._entry", "serve", "--port", "0"],
        cwd=str(sb.project),
        env=sb.env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        record = read_daemon(sb.data)
        if record is not None:
            try:
                token = (sb.data / "api-token").read_text().strip()
                request = urllib.request.Request(
                    record["url"] + "/v1/status", headers={"Authorization": f"Bearer {token}"}
                )
                with urllib.request.urlopen(request, timeout=2):
                    return proc
            except OSError:
                pass
        time.sleep(0.2)
    proc.kill()
    raise RuntimeError("memloom serve did not come up in the sandbox")


def measure(agent: str, runs: int, root: Path, model: AgentModel, llm: ScriptedModel) -> dict:
    driver = DRIVERS[agent]
    boxes = {}
    for cond in ("off", "down", "up"):
        sb = fresh_sandbox(root / f"{agent}-{cond}", model, llm)
        sb.bins["npm"] = install.npm_bin()
        driver.configure(sb)
        driver.seed_user_config(sb)
        if cond != "off":
            sb.memloom("connect", driver.name, "--all")
            sb.save(FACT)
        boxes[cond] = sb
    daemon = start_daemon(boxes["up"])
    # ``unwritable``: the connected, daemon-down sandbox with memloom's data folder
    # where nothing can be written (as in tests/e2e, even as root).
    conds = {c: (sb, None) for c, sb in boxes.items()}
    conds["unwritable"] = (boxes["down"], {"MEMLOOM_HOME": "/proc/memloom-bench-unwritable"})
    times: dict[str, list[float]] = {c: [] for c in conds}
    injected: dict[str, int] = {c: 0 for c in conds}
    try:
        for sb in boxes.values():  # warm-up: first runs unpack caches
            driver.run(sb, "hello")
        for _ in range(runs):
            for cond, (sb, env) in conds.items():
                run = driver.run(sb, QUESTION, env=env)
                if run.returncode != 0:
                    raise RuntimeError(
                        f"{agent} {cond}: exit {run.returncode}: {run.stderr[-500:]}"
                    )
                times[cond].append(run.elapsed)
                injected[cond] += int("5433" in run.sent)
    finally:
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(20)
        except subprocess.TimeoutExpired:
            daemon.kill()
    out: dict = {"runs": runs}
    for cond, values in times.items():
        out[cond] = {
            "p50_s": round(statistics.median(values), 3),
            "p95_s": round(p95(values), 3),
            "injected_runs": injected[cond],
        }
    for cond in ("down", "up", "unwritable"):
        out[f"added_p95_ms_{cond}"] = round((out[cond]["p95_s"] - out["off"]["p95_s"]) * 1000)
        out[f"added_p50_ms_{cond}"] = round((out[cond]["p50_s"] - out["off"]["p50_s"]) * 1000)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument(
        "--agents",
        nargs="*",
        help="these agents only; their results replace theirs in the results file "
        "(default: every agent with hooks, and a new file)",
    )
    parser.add_argument("--note", default="", help="what to say of this run in the docs")
    args = parser.parse_args()
    agents = args.agents or [d.name for d in DRIVERS.values() if d.hooks]
    doc: dict = {"agents": {}}
    if args.agents and RESULTS.exists():  # a re-run of some: the others' results stay
        doc = json.loads(RESULTS.read_text())
    doc["when"] = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    if args.note:
        doc["note"] = args.note
    pins = versions()
    doc["loadavg_before"] = os.getloadavg()
    with AgentModel() as model, tempfile.TemporaryDirectory(prefix="hooks-e2e-") as tmp:
        llm = ScriptedModel()
        try:
            for agent in agents:
                when, load = time.strftime("%Y-%m-%d %H:%M", time.gmtime()), os.getloadavg()
                res = measure(agent, args.runs, Path(tmp), model, llm)
                res["label"], res["version"] = AGENTS[agent][0], pins.get(agent, "")
                res["when"], res["loadavg_before"] = when, load
                res["loadavg_after"] = os.getloadavg()
                doc["agents"][agent] = res
                print(
                    f"{agent:12} off p95 {res['off']['p95_s']:.2f}s | "
                    f"daemon down +{res['added_p95_ms_down']} ms p95 "
                    f"(+{res['added_p50_ms_down']} p50) | "
                    f"daemon up +{res['added_p95_ms_up']} ms p95 (+{res['added_p50_ms_up']} p50) | "
                    f"data folder unwritable +{res['added_p95_ms_unwritable']} ms p95 | "
                    f"memory injected {res['down']['injected_runs']}/{args.runs} down, "
                    f"{res['up']['injected_runs']}/{args.runs} up",
                    flush=True,
                )
        finally:
            llm.close()
    doc["loadavg_after"] = os.getloadavg()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
