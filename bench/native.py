"""The import of the agents' own memories: 1,000 notes in their files, with time and LLM calls.

    python bench/native.py [--files 1000] [--projects 10] [--rounds 3]

A sandbox HOME gets ``--files`` memory files in the agents' own layouts, one memory
each, spread over ``--projects`` git projects: Claude Code topic files (frontmatter,
**Why:** and **How to apply:** lines), Qwen Code's (top-level ``type``, a type
sub-folder), Gemini CLI's (a ``MEMORY.md`` list and sibling notes, ten files a
project registered in ``projects.json``) and Codex ad-hoc notes, a quarter each. The
texts are distinct facts (a service, a component and a value each), so that every note
is a memory of its own. Timed, on a fresh store each round with the
local embedder (loaded before the clock starts):

* **first import**: ``Memloom.import_native()`` over every folder;
* **re-run**: nothing changed (what the sweep costs every 30 minutes);
* **10 % edited**: a value changed in one file in ten (new versions);
* **10 % removed**: one file in ten deleted (expired);
* **the alternative**: the same note texts written with ``Memloom.store()`` in batches
  of 100 (what a user scripting the copy through the library would do: no files read,
  no parsing, no redaction, no provenance, nothing followed), as a ratio.

LLM calls are counted by the report and by a provider that fails the run if called.
Results go to ``bench/results/native.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
sys.path.insert(0, str(RESULTS.parent))
from memloom.agents.native import sanitized_key  # noqa: E402  (the agents' project keys)
from recall import fill_text  # noqa: E402  (distinct texts, as the recall bench fills)

COMPONENTS = [
    "api gateway", "billing worker", "search indexer", "auth service", "mail relay",
    "report builder", "image resizer", "cache warmer", "audit logger", "job scheduler",
]  # fmt: skip


def fact(i: int) -> str:
    """A distinct note: ``bench/recall.py``'s fill words (any two differ in at least two
    words, no digits: not one fact with a value changed, which memloom versions) about
    one of ten components."""
    component = COMPONENTS[i % len(COMPONENTS)]
    words = fill_text(i * 2654435761 % 64**4)[len("memory of ") :]  # every digit varies
    return f"The {component} keeps the {words} settings."


def build(root: Path, files: int, projects: int) -> tuple[Path, list[Path], list[str]]:
    """The sandbox HOME, the memory files written, and every note's text."""
    home = root / "home"
    repos = [root / "code" / f"proj{p}" for p in range(projects)]
    for repo in repos:
        (repo / ".git").mkdir(parents=True)
    written: list[Path] = []
    texts: list[str] = []
    gemini_registry: dict[str, str] = {}
    quarter = files // 4
    for i in range(files):
        repo = repos[i % projects]
        text = fact(i)
        if i < quarter:  # Claude Code
            folder = home / ".claude" / "projects" / sanitized_key(str(repo)) / "memory"
            body = (
                f"---\nname: note-{i}\ndescription: fact {i}\nmetadata:\n  node_type: memory\n"
                f"  type: project\n  originSessionId: s{i}\n---\n\n{text}\n"
                f"**Why:** it was decided in review {i}.\n**How to apply:** use it as stated.\n"
            )
            path = folder / f"note-{i}.md"
            texts.append(
                f"{text}\nWhy: it was decided in review {i}.\nHow to apply: use it as stated."
            )
        elif i < 2 * quarter:  # Qwen Code
            folder = home / ".qwen" / "projects" / sanitized_key(str(repo)) / "memory" / "project"
            body = f"---\nname: note-{i}\ndescription: fact {i}\ntype: project\n---\n{text}\n"
            path = folder / f"note-{i}.md"
            texts.append(text)
        elif i < 3 * quarter:  # Gemini CLI: a project's MEMORY.md and its sibling notes
            group, j = divmod(i - 2 * quarter, 10)
            gem_root = root / "code" / f"gem{group}"
            gem_root.mkdir(parents=True, exist_ok=True)
            gemini_registry[str(gem_root)] = gem_root.name
            folder = home / ".gemini" / "tmp" / gem_root.name / "memory"
            path = folder / ("MEMORY.md" if j == 0 else f"note-{i}.md")
            body = f"# Project Memory\n\n- {text}\n"
            texts.append(text)
        else:  # Codex ad-hoc notes
            folder = home / ".codex" / "memories_v2" / "extensions" / "ad_hoc" / "notes"
            path = folder / f"2026-12-07T10-00-{i % 60:02d}-note-{i}.md"
            body = f"{text}\n"
            texts.append(text)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
        written.append(path)
    registry = home / ".gemini" / "projects.json"
    registry.write_text(json.dumps({"projects": gemini_registry}))
    return home, written, texts


class NoLLM:
    """A provider that fails the run if the native import ever calls it."""

    name = description = "none (the native import must not call an LLM)"
    offline = False

    def complete(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the native import called the LLM")


def one_round(files: int, projects: int) -> dict[str, Any]:
    import memloom

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        home, written, texts = build(root, files, projects)
        os.environ["HOME"] = str(home)
        os.environ["CODEX_HOME"] = str(home / ".codex")
        for name in ("CLAUDE_CONFIG_DIR", "QWEN_HOME", "QWEN_RUNTIME_DIR", "GEMINI_CLI_HOME"):
            os.environ.pop(name, None)
        m = memloom.open(home=str(root / "store"))
        m.llm = NoLLM()
        m.embed_texts(["warm up the embedder"])
        out: dict[str, Any] = {"files": len(written), "notes": len(texts)}
        assert len(set(texts)) == len(texts)
        started = time.perf_counter()
        first = m.import_native()
        out["first_s"] = time.perf_counter() - started
        out["first"] = {
            k: getattr(first, k) for k in ("files", "changed", "notes", "added", "merged")
        }
        out["llm_calls"] = first.calls["llm"]
        out["embedding_calls"] = first.calls["embedding"]
        started = time.perf_counter()
        again = m.import_native()
        out["rerun_s"] = time.perf_counter() - started
        out["rerun_changed"] = again.changed
        edited = written[::10]
        for path in edited:
            text = path.read_text()
            path.write_text(text.replace(" settings.\n", " settings and the defaults.\n", 1))
            st = path.stat()
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        started = time.perf_counter()
        edit = m.import_native()
        out["edit_s"] = time.perf_counter() - started
        out["edit"] = {"changed": edit.changed, "versioned": edit.versioned, "added": edit.added}
        for path in written[5::10]:
            path.unlink()
        started = time.perf_counter()
        gone = m.import_native()
        out["remove_s"] = time.perf_counter() - started
        out["remove"] = {"removed": gone.removed, "expired": gone.expired}
        m.close()
        alt = memloom.open(home=str(root / "alt"))
        alt.embed_texts(["warm up the embedder"])
        started = time.perf_counter()
        for start in range(0, len(texts), 100):
            alt.store(
                {"entries": [{"text": t, "type": "fact"} for t in texts[start : start + 100]]}
            )
        out["store_s"] = time.perf_counter() - started
        alt.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--projects", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    os.environ["MEMLOOM_LLM"] = "offline"
    rounds = [one_round(args.files, args.projects) for _ in range(args.rounds)]
    med = {
        k: statistics.median(r[k] for r in rounds)
        for k in ("first_s", "rerun_s", "edit_s", "remove_s", "store_s")
    }
    doc = {
        "files": rounds[0]["files"],
        "notes": rounds[0]["notes"],
        "rounds": args.rounds,
        "load": os.getloadavg()[0],
        "median": {k: round(v, 3) for k, v in med.items()},
        "files_per_s": round(rounds[0]["files"] / med["first_s"], 1),
        "vs_store": round(med["first_s"] / med["store_s"], 2),
        "llm_calls": [r["llm_calls"] for r in rounds],
        "first": rounds[0]["first"],
        "edit": rounds[0]["edit"],
        "remove": rounds[0]["remove"],
        "embedding_calls": rounds[0]["embedding_calls"],
        "at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "python": sys.version.split()[0],
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "native.json").write_text(json.dumps(doc, indent=2) + "\n")
    print(json.dumps(doc, indent=2))


if __name__ == "__main__":
    main()
