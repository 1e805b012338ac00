"""A small reader of real Claude Code transcripts for the offline-distiller tests.

Not the importer's parser (that lives in ``memloom.sessions``): just enough to
turn a fixture into the ``memloom_distill`` payload's ``lines`` — typed user
prompts and assistant text, with 1-based physical line numbers, dropping tool
results, sidechains, meta lines and slash-command markup.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memloom.agents.claude_code.parse import (
    COMPACT_SUMMARY_PREFIX,
    INTERRUPT_MARKERS,
    MARKUP_PREFIXES,
)

FIXTURES = Path("/work/shared/fixtures/transcripts")

#: Machine-written user text, as the importer's parser knows it.
_MARKUP = (*MARKUP_PREFIXES, *INTERRUPT_MARKERS, COMPACT_SUMMARY_PREFIX)


def _texts(content: Any) -> list[str] | None:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    out = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_result":
            return None
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            text = block["text"]
            if text.lstrip().startswith(("<ide_opened_file>", "<ide_selection>")):
                continue
            out.append(text)
    return out


def read_lines(path: Path) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = []
    for number, raw in enumerate(path.read_bytes().split(b"\n"), start=1):
        try:
            rec = json.loads(raw.decode("utf-8", errors="replace"))
        except json.JSONDecodeError:
            continue
        if not isinstance(rec, dict) or rec.get("type") not in ("user", "assistant"):
            continue
        if rec.get("isSidechain") or rec.get("isMeta") or rec.get("isCompactSummary"):
            continue
        message = rec.get("message") or {}
        if rec["type"] == "assistant" and message.get("model") == "<synthetic>":
            continue
        texts = _texts(message.get("content"))
        if not texts:
            continue
        text = "\n".join(t for t in texts if not t.lstrip().startswith(_MARKUP)).strip()
        if text:
            lines.append({"line": number, "role": rec["type"], "text": text})
    return lines


def payload(path: Path) -> dict[str, Any]:
    project = ""
    for raw in path.read_bytes().split(b"\n"):
        try:
            rec = json.loads(raw)
        except json.JSONDecodeError:
            continue
        if isinstance(rec, dict) and rec.get("cwd"):
            project = rec["cwd"]
            break
    return {
        "session": {"id": path.stem.rsplit("__", 1)[-1], "project": project, "path": str(path)},
        "lines": read_lines(path),
    }
