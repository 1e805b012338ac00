"""Qwen Code 0.24.4 chat records, shaped as the real CLI writes them (tests/e2e), for the
tests/agents/test_qwen_*.py files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SID = "5f13269e-2718-449c-9961-7d1da78804a4"
CWD = "/home/dev/shop"
CONTEXT = (
    "<qwen:user-prompt-submit-context>\n&lt;memloom-context&gt;staging is on port 5433"
    "&lt;/memloom-context&gt;\n</qwen:user-prompt-submit-context>"
)


def base(kind: str, uuid: str, **extra: Any) -> dict[str, Any]:
    return {
        "uuid": uuid,
        "parentUuid": None,
        "sessionId": SID,
        "timestamp": "2026-12-04T13:40:43.327Z",
        "type": kind,
        "cwd": CWD,
        "version": "0.24.4",
        **extra,
    }


def user(text: str, uuid: str, *, injected: bool = True, **extra: Any) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"text": text}]
    rec = base("user", uuid, provenance="real_user", **extra)
    if injected:
        parts.append({"text": CONTEXT})
        rec["systemPayload"] = {"displayText": text, "hookContext": CONTEXT[35:-37]}
    rec["message"] = {"role": "user", "parts": parts}
    return rec


def reply(text: str, uuid: str, **extra: Any) -> dict[str, Any]:
    msg = {"role": "model", "parts": [{"text": text}]}
    return base("assistant", uuid, provenance="assistant_output", model="m", message=msg, **extra)


def tool_call(uuid: str) -> dict[str, Any]:
    call = {
        "functionCall": {"id": "call_1", "name": "run_shell_command", "args": {"command": "ls"}}
    }
    msg = {"role": "model", "parts": [call]}
    return base("assistant", uuid, provenance="assistant_output", message=msg)


def tool_result(uuid: str) -> dict[str, Any]:
    resp = {
        "functionResponse": {
            "id": "call_1",
            "name": "run_shell_command",
            "response": {"output": "Makefile"},
        }
    }
    return base(
        "tool_result", uuid, provenance="tool_result", message={"role": "user", "parts": [resp]}
    )


def telemetry(uuid: str) -> dict[str, Any]:
    payload = {"uiEvent": {"event.name": "qwen-code.api_response", "response_text": "SECRET-ECHO"}}
    return base("system", uuid, provenance="system", subtype="ui_telemetry", systemPayload=payload)


def lines(records: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def session(
    root: Path, records: list[dict[str, Any]], *, slug: str = "-home-dev-shop", sid: str = SID
) -> Path:
    """``records`` as ``<root>/projects/<slug>/chats/<sid>.jsonl``."""
    path = root / "projects" / slug / "chats" / f"{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(lines(records))
    return path


def conversation() -> list[dict[str, Any]]:
    return [
        user("which port does staging use?", "u1"),
        telemetry("s1"),
        reply("Port 5433.", "a1"),
        user("please list the files", "u2"),
        tool_call("a2"),
        tool_result("t1"),
        reply("There is a Makefile.", "a3"),
    ]
