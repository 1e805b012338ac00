"""Precision and type accuracy of the offline extractor, on real sessions.

    python bench/offline_precision.py run [--out FILE]      # import, dump every output
    python bench/offline_precision.py score OUTPUTS LABELS  # figures from a label file

``run`` imports the shared real transcripts (../shared/fixtures/transcripts, else
the repository's copies) and the other agents' session fixtures
(../shared/fixtures/agents, else tests/fixtures/agents) with the real importer
(``memloom import sessions --path …`` with ``MEMLOOM_LLM=offline``) in a
temporary MEMLOOM_HOME, and writes one JSON line per memory the extractor
returned and the importer accepted: text, type, agent, session file, line. It
also prints how many memories the store kept (near-duplicates merge).

The importer leaves subagent (sidechain) records out, so the real import of
this corpus yields few outputs. To label a larger sample, ``run`` also applies
the same extractor to the subagents' records of the Claude Code transcripts
(the prompts an agent wrote for its subagents and their replies: real prose,
rich in narration and questions), in chunks of 20 records, and writes them
with ``"corpus": "subagents"`` (the import's are ``"corpus": "import"``).

Those two give about 30 outputs, short of the 100 a measure needs, so ``run``
also applies the extractor to every other text in the same shared files
(``"corpus": "left-out"``): each string of 20 characters or more in each JSON
record (Claude Code's thinking blocks, tool-call inputs and tool results; the
other agents' reasoning, tool calls and outputs; aider's chat history lines),
redacted, 20 strings to a chunk, the role read from the record (``type`` or the
nearest ``role``; ``assistant`` when none says). An output the import or the
subagent pass already gave for that file, or that this pass already gave for
it, is not written twice. This is text the importer does not hand the
extractor today; it is real prose and pasted output from the same sessions, a
harder test of the rules than the import alone, and its figures are printed
apart.

``score`` joins the outputs with a label file keyed by text (``{"text", "good",
"type"}``: ``type`` is the right type of a good memory) and prints precision
(good / labelled), type accuracy (right type / good) and the count of good
memories. Unlabelled outputs are listed and left out of the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "fixtures"
RESULTS = REPO / "bench" / "results"


class Recorder:
    """The offline extractor, with every distill reply noted against its file."""

    def __init__(self, llm: Any) -> None:
        self._llm = llm
        self.outputs: list[dict[str, Any]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llm, name)

    def complete(self, task: str, system: str, payload: dict, schema: dict) -> dict:
        reply = self._llm.complete(task, system, payload, schema)
        if task == "memloom_distill":
            session = payload.get("session") or {}
            for item in reply.get("memories") or []:
                self.outputs.append(
                    {
                        "text": item["content"],
                        "type": item["type"],
                        "file": Path(str(session.get("path", ""))).name,
                        "line": item["lines"][0],
                        "corpus": "import",
                    }
                )
        return reply


def _sources() -> list[Path]:
    transcripts = SHARED / "transcripts"
    agents = SHARED / "agents"
    if not transcripts.is_dir():
        transcripts = REPO / "tests" / "fixtures" / "transcripts"
    if not agents.is_dir():
        agents = REPO / "tests" / "fixtures" / "agents"
    return [p for p in (transcripts, agents) if p.is_dir()]


def _record_text(record: dict[str, Any]) -> str:
    content = (record.get("message") or {}).get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def subagent_outputs(transcripts: Path) -> list[dict[str, Any]]:
    """The extractor over the sidechain records the importer skips (see the docstring)."""
    from memloom.detect import default_detector
    from memloom.llm.offline import extract_memories

    detector = default_detector()
    out: list[dict[str, Any]] = []
    for path in sorted(transcripts.glob("*.jsonl")):
        lines: list[dict[str, Any]] = []
        project = ""
        for number, raw in enumerate(path.read_text(errors="replace").splitlines(), 1):
            try:
                record = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(record, dict) or not record.get("isSidechain"):
                continue
            if record.get("type") not in ("user", "assistant"):
                continue
            text = _record_text(record)
            project = project or str(record.get("cwd") or "")
            if text.strip():
                text = detector.redact(text)[0]
                lines.append({"line": number, "role": record["type"], "text": text})
        for start in range(0, len(lines), 20):
            payload = {"session": {"project": project}, "lines": lines[start : start + 20]}
            for item in extract_memories(payload):
                out.append(
                    {
                        "text": item["content"],
                        "type": item["type"],
                        "file": path.name,
                        "line": item["lines"][0],
                        "corpus": "subagents",
                    }
                )
    return out


def _strings(node: Any, role: str, acc: list[tuple[str, str]]) -> None:
    """Every string of 20 characters or more under ``node``, with the role that owns it."""
    if isinstance(node, dict):
        if node.get("role") in ("user", "assistant"):
            role = node["role"]
        elif node.get("type") in ("user", "assistant"):
            role = node["type"]
        for value in node.values():
            _strings(value, role, acc)
    elif isinstance(node, list):
        for value in node:
            _strings(value, role, acc)
    elif isinstance(node, str) and len(node) >= 20:
        acc.append((role, node))


def _file_strings(path: Path) -> tuple[list[tuple[int, str, str]], str]:
    """A shared file's strings as (line, role, text), and its project folder.

    ``line`` is the record's line in a JSON Lines or Markdown file, the string's
    place in a whole-file JSON document."""
    text = path.read_text(errors="replace")
    out: list[tuple[int, str, str]] = []
    records: list[Any] = []
    if path.suffix == ".jsonl":
        for number, raw in enumerate(text.splitlines(), 1):
            try:
                record = json.loads(raw)
            except ValueError:
                continue
            records.append(record)
            found: list[tuple[str, str]] = []
            _strings(record, "assistant", found)
            out += [(number, role, string) for role, string in found]
    elif path.suffix == ".json":
        try:
            records = [json.loads(text)]
        except ValueError:
            return [], ""
        found = []
        _strings(records[0], "assistant", found)
        out = [(n, role, string) for n, (role, string) in enumerate(found, 1)]
    else:  # aider: its input history ("+" lines, all the user's) and Markdown chat,
        # where "#### " opens a user line
        user_only = path.suffix == ".history"
        out = [
            (n, "user" if user_only or x.startswith("#### ") else "assistant", x.lstrip("+"))
            for n, x in enumerate(text.splitlines(), 1)
            if x.strip()
        ]
    project = next((str(r["cwd"]) for r in records if isinstance(r, dict) and r.get("cwd")), "")
    return out, project


def left_out_outputs(sources: list[Path], seen: set[tuple[str, str]]) -> list[dict[str, Any]]:
    """The extractor over the text the importer leaves out (see the docstring)."""
    from memloom.detect import default_detector
    from memloom.llm.offline import extract_memories

    detector = default_detector()
    out: list[dict[str, Any]] = []
    files = sorted(
        p
        for src in sources
        for p in src.rglob("*")
        if p.is_file() and p.suffix in (".jsonl", ".json", ".md", ".history")
    )
    for path in files:
        if path.name in ("README.md", "MANIFEST.tsv") or "licenses" in path.parts:
            continue
        strings, project = _file_strings(path)
        lines = [
            {"line": n, "role": role, "text": detector.redact(text)[0]} for n, role, text in strings
        ]
        for start in range(0, len(lines), 20):
            payload = {"session": {"project": project}, "lines": lines[start : start + 20]}
            for item in extract_memories(payload):
                if (path.name, item["content"]) in seen:
                    continue
                seen.add((path.name, item["content"]))
                out.append(
                    {
                        "text": item["content"],
                        "type": item["type"],
                        "file": path.name,
                        "line": item["lines"][0],
                        "corpus": "left-out",
                    }
                )
    return out


def run(out: Path) -> None:
    os.environ["MEMLOOM_LLM"] = "offline"
    import memloom
    from memloom.llm.offline import OfflineLLM

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["MEMLOOM_HOME"] = str(Path(tmp) / "home")
        m = memloom.open(home=str(Path(tmp) / "home"))
        recorder = Recorder(OfflineLLM())
        report = m.import_sessions(
            [str(p) for p in _sources()],
            days=None,
            sessions=None,
            agent="all",
            named=True,
            llm=recorder,
        )
        stored = report.saved
    rows = recorder.outputs + subagent_outputs(_sources()[0])
    seen = {(r["file"], r["text"]) for r in rows}
    left_out = left_out_outputs(_sources(), seen)
    rows += left_out
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    sessions = len({r["file"] for r in recorder.outputs})
    print(
        f"import: {len(recorder.outputs)} extractor outputs from {sessions} session files, "
        f"{stored} memories saved ({report.merged} merged); subagent records: "
        f"{len(rows) - len(recorder.outputs) - len(left_out)} outputs; text left out: "
        f"{len(left_out)} outputs; written to {out}"
    )


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _figures(judged: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    good = [(r, lab) for r, lab in judged if lab["good"]]
    typed = sum(1 for r, lab in good if r["type"] == lab["type"])
    return {
        "labelled": len(judged),
        "good": len(good),
        "precision": round(len(good) / len(judged), 3) if judged else None,
        "type_accuracy": round(typed / len(good), 3) if good else None,
    }


def score(outputs: Path, labels: Path) -> dict[str, Any]:
    """Figures per corpus and over all outputs (see the module docstring)."""
    by_text = {row["text"]: row for row in _read(labels) if "text" in row}
    rows = _read(outputs)
    judged = [(r, by_text[r["text"]]) for r in rows if r["text"] in by_text]
    figures: dict[str, Any] = {"outputs": len(rows), "all": _figures(judged)}
    for corpus in sorted({r.get("corpus", "import") for r in rows}):
        figures[corpus] = _figures([j for j in judged if j[0].get("corpus", "import") == corpus])
    figures["unlabelled"] = [r["text"] for r in rows if r["text"] not in by_text]
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_run = sub.add_parser("run")
    p_run.add_argument("--out", type=Path, default=RESULTS / "offline_outputs.jsonl")
    p_score = sub.add_parser("score")
    p_score.add_argument("outputs", type=Path)
    p_score.add_argument("labels", type=Path)
    args = parser.parse_args()
    if args.cmd == "run":
        run(args.out)
        return
    figures = score(args.outputs, args.labels)
    print(json.dumps(figures, indent=2, ensure_ascii=False))
    if figures["unlabelled"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
