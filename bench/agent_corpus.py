"""Bigger session corpora for the agents whose real fixtures are a few kB.

The Qwen Code and OpenCode fixtures were written by the pinned agents in the
end-to-end suite, and Cursor's are built from its documented format: each is one
or two short sessions, too small for a throughput figure (per-file overhead
dominates). This replays each fixture's own records -- every record type, system
and tool records included, in the agent's own layout -- as many sessions as it
takes to reach a target size, with the typed prompts and the replies replaced by
the real conversation text of the Claude Code transcripts. The reader then sees
the agent's real structure at a realistic size.
"""

from __future__ import annotations

import itertools
import json
import shutil
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path


def prose(transcripts: list[Path]) -> Iterator[tuple[str, str]]:
    """(role, text) of every prompt and reply in the Claude Code transcripts, forever."""
    from memloom.agents import get_agent

    agent = get_agent("claude-code")
    turns = [
        (unit.role, unit.text)
        for path in transcripts
        for unit in agent.read(path, final=True).units
        if unit.text.strip()
    ]
    if not turns:
        raise SystemExit("no conversation text in the Claude Code transcripts")
    return itertools.cycle(turns)


def _next(text: Iterator[tuple[str, str]], role: str) -> str:
    for got, body in text:
        if got == role:
            return body
    raise AssertionError("unreachable: the cycle is endless")


def qwen(template: Path, dest: Path, text: Iterator[tuple[str, str]], target: int) -> list[Path]:
    """Qwen Code chats: the template's records, user and assistant text parts replaced."""
    records = [json.loads(line) for line in template.read_text().splitlines() if line.strip()]
    out: list[Path] = []
    size = 0
    while size < target:
        sid = str(uuid.uuid4())
        path = dest / "projects" / "-home-dev-shop" / "chats" / f"{sid}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = []
        for rec in records:
            rec = json.loads(json.dumps(rec))
            rec["sessionId"], rec["uuid"] = sid, str(uuid.uuid4())
            parts = (rec.get("message") or {}).get("parts")
            if rec.get("type") in ("user", "assistant") and parts:
                role = "user" if rec["type"] == "user" else "assistant"
                body = _next(text, role)
                for part in parts:
                    if "text" in part and not part["text"].startswith("<qwen:"):
                        part["text"] = body
                if (
                    isinstance(rec.get("systemPayload"), dict)
                    and "displayText" in rec["systemPayload"]
                ):
                    rec["systemPayload"]["displayText"] = body
            lines.append(json.dumps(rec))
        path.write_text("\n".join(lines) + "\n")
        size += path.stat().st_size
        out.append(path)
    return out


def cursor(template: Path, dest: Path, text: Iterator[tuple[str, str]], target: int) -> list[Path]:
    """Cursor agent transcripts: the template's records, text blocks replaced (a user's
    inside its ``<user_query>``)."""
    records = [json.loads(line) for line in template.read_text().splitlines() if line.strip()]
    out: list[Path] = []
    size = 0
    while size < target:
        sid = str(uuid.uuid4())
        path = dest / "projects" / "home-dev-shop" / "agent-transcripts" / sid / f"{sid}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = []
        for rec in records:
            rec = json.loads(json.dumps(rec))
            role = rec.get("role")
            blocks = (rec.get("message") or {}).get("content")
            if role in ("user", "assistant") and isinstance(blocks, list):
                for block in blocks:
                    if block.get("type") != "text":
                        continue
                    body = _next(text, role)
                    if role == "user" and "<user_query>" in block["text"]:
                        head = block["text"].split("<user_query>")[0]
                        block["text"] = f"{head}<user_query>\n{body}\n</user_query>"
                    else:
                        block["text"] = body
            lines.append(json.dumps(rec))
        path.write_text("\n".join(lines) + "\n")
        size += path.stat().st_size
        out.append(path)
    return out


def opencode(template: Path, dest: Path, text: Iterator[tuple[str, str]], target: int) -> Path:
    """An OpenCode store: the template store's sessions copied with new ids until the
    store holds ``target`` bytes, text parts replaced (tool and step parts kept)."""
    dest.mkdir(parents=True, exist_ok=True)
    store = dest / "opencode.db"
    shutil.copyfile(template, store)
    db = sqlite3.connect(str(store))
    try:
        sessions = db.execute("SELECT * FROM session").fetchall()
        s_cols = [c[1] for c in db.execute("PRAGMA table_info(session)")]
        messages = db.execute("SELECT * FROM message ORDER BY time_created, id").fetchall()
        parts = db.execute("SELECT * FROM part ORDER BY time_created, id").fetchall()
        round_ = 0
        while store.stat().st_size < target:
            round_ += 1
            with db:
                for srow in sessions:
                    old_sid = srow[s_cols.index("id")]
                    sid = f"{old_sid}x{round_}"
                    row = list(srow)
                    row[s_cols.index("id")] = sid
                    marks = ",".join("?" * len(row))
                    db.execute(f"INSERT INTO session VALUES ({marks})", row)
                    roles: dict[str, str] = {}
                    for mid, msid, created, updated, data in messages:
                        if msid != old_sid:
                            continue
                        doc = json.loads(data)
                        roles[mid] = doc.get("role", "user")
                        if "parentID" in doc:
                            doc["parentID"] = f"{doc['parentID']}x{round_}"
                        db.execute(
                            "INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                            (f"{mid}x{round_}", sid, created, updated, json.dumps(doc)),
                        )
                    for pid, pmid, psid, created, updated, data in parts:
                        if psid != old_sid:
                            continue
                        doc = json.loads(data)
                        if doc.get("type") == "text" and not doc.get("synthetic"):
                            doc["text"] = _next(text, roles.get(pmid, "assistant"))
                        db.execute(
                            "INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                            (
                                f"{pid}x{round_}",
                                f"{pmid}x{round_}",
                                sid,
                                created,
                                updated,
                                json.dumps(doc),
                            ),
                        )
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()
    return store
