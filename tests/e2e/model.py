"""A scripted model for the real agents: one loopback server, four provider protocols.

The agents under test (tests/e2e) are pointed at this server instead of their
vendor's, and it answers each in the protocol that agent speaks, streamed the
way the agent asks:

* Anthropic Messages, ``POST /v1/messages`` (Claude Code), SSE or JSON;
* OpenAI Responses, ``POST /v1/responses`` (Codex), SSE;
* OpenAI Chat Completions, ``POST /v1/chat/completions`` (Copilot CLI, Aider,
  Qwen Code, OpenCode), SSE or JSON;
* Gemini, ``POST /v1beta/models/<model>:streamGenerateContent`` (SSE),
  ``:generateContent`` and ``:countTokens`` (Gemini CLI).

Every request is recorded (path, headers, JSON body) so a test can look for what
memloom injected in what the model was sent: the proof that matters. Answers are
deterministic: :data:`ANSWER`; a prompt holding :data:`TOOL_TRIGGER` first gets a
call of one of the tools the agent offered (a shell or a file listing), so the
agent's session file holds tool records too, then the answer once the tool's
result comes back.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ANSWER = "The tests run with make check."
TOOL_TRIGGER = "list the files"
#: Tools the model may call, most preferred first (each agent names its own).
TOOL_NAMES = (
    "run_shell_command",
    "shell",
    "exec_command",
    "Bash",
    "bash",
    "list_directory",
    "LS",
    "ls",
)


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    body: Any
    at: float = field(default_factory=time.time)

    @property
    def text(self) -> str:
        """The whole body as JSON text: what to search for injected context."""
        return json.dumps(self.body, ensure_ascii=False)


def _tools(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tools offered, as ``{"name", "schema"}``, whatever the protocol."""
    out = []
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        if "functionDeclarations" in tool:  # Gemini
            for decl in tool["functionDeclarations"] or []:
                schema = decl.get("parametersJsonSchema") or decl.get("parameters") or {}
                out.append({"name": decl.get("name"), "schema": schema})
        elif isinstance(tool.get("function"), dict):  # Chat Completions
            fn = tool["function"]
            out.append({"name": fn.get("name"), "schema": fn.get("parameters") or {}})
        else:  # Anthropic (input_schema), Responses (parameters)
            schema = tool.get("input_schema") or tool.get("parameters") or {}
            out.append({"name": tool.get("name"), "schema": schema})
    return [t for t in out if isinstance(t["name"], str)]


def _arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments for a shell or listing tool: ``ls`` in the working directory."""
    props = schema.get("properties") or {}
    args: dict[str, Any] = {}
    for name in schema.get("required") or list(props)[:1]:
        kind = (props.get(name) or {}).get("type")
        if name in ("command", "cmd"):
            args[name] = ["ls"] if kind == "array" else "ls"
        elif "path" in name or "dir" in name:
            args[name] = "."
        elif kind == "array":
            args[name] = []
        elif kind in ("integer", "number"):
            args[name] = 1
        elif kind == "boolean":
            args[name] = False
        else:
            args[name] = "ls"
    return args


def _pick_tool(body: dict[str, Any]) -> dict[str, Any] | None:
    tools = {t["name"]: t for t in _tools(body)}
    for name in TOOL_NAMES:
        if name in tools:
            return {"name": name, "arguments": _arguments(tools[name]["schema"])}
    return None


_RESULT_KEYS = ('"tool_result"', '"function_call_output"', '"functionResponse"', '"role": "tool"')


def _wants_tool(body: dict[str, Any]) -> bool:
    """The prompt asks for the tool turn and no tool result has come back yet."""
    text = json.dumps(body, ensure_ascii=False)
    return TOOL_TRIGGER in text and not any(key in text for key in _RESULT_KEYS)


class AgentModel:
    """The scripted model server (see the module docstring); a context manager."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        #: Seconds to hold the answer that calls a tool: an agent whose MCP servers
        #: start after its first request (codex exec) offers them from the next one.
        self.tool_turn_delay = 0.0
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                owner._record(self, None)
                if self.path.rstrip("/").endswith("/models"):
                    self._json(
                        200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]}
                    )
                else:
                    self._json(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                owner._record(self, body)
                # The agent may go away mid-answer (killed, or done with a side request).
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    owner._answer(self, body)

            def _json(self, status: int, doc: Any) -> None:
                data = json.dumps(doc).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def sse(self, events: list[tuple[str | None, Any]]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for name, data in events:
                    chunk = "" if name is None else f"event: {name}\n"
                    payload = data if isinstance(data, str) else json.dumps(data)
                    chunk += f"data: {payload}\n\n"
                    self.wfile.write(chunk.encode())
                    self.wfile.flush()
                self.close_connection = True

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    # ------------------------------------------------------------ plumbing

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> AgentModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def mark(self) -> int:
        """The number of requests so far: pass it to :meth:`since`."""
        with self._lock:
            return len(self.requests)

    def since(self, mark: int) -> list[Request]:
        with self._lock:
            return list(self.requests[mark:])

    def _record(self, handler: BaseHTTPRequestHandler, body: Any) -> None:
        headers = {k.lower(): v for k, v in handler.headers.items()}
        with self._lock:
            self.requests.append(Request(handler.path, headers, body))

    # ------------------------------------------------------------ answers

    def _answer(self, h: Any, body: Any) -> None:
        path = h.path.split("?", 1)[0]
        if not isinstance(body, dict):
            h._json(400, {"error": {"message": "expected a JSON object"}})
            return
        if self.tool_turn_delay and _wants_tool(body):
            time.sleep(self.tool_turn_delay)
        if path.endswith("/messages/count_tokens"):
            h._json(200, {"input_tokens": 100})
        elif path.endswith("/messages"):
            self._anthropic(h, body)
        elif path.endswith("/responses"):
            self._responses(h, body)
        elif path.endswith("/chat/completions"):
            self._chat(h, body)
        elif ":countTokens" in path:
            h._json(200, {"totalTokens": 100})
        elif ":streamGenerateContent" in path or ":generateContent" in path:
            self._gemini(h, body, stream=":streamGenerateContent" in path)
        else:
            h._json(404, {"error": {"message": f"no route {path}"}})

    @staticmethod
    def _anthropic(h: Any, body: dict[str, Any]) -> None:
        model = body.get("model", "claude-fake")
        tool = _pick_tool(body) if _wants_tool(body) else None
        msg_id = f"msg_{uuid.uuid4().hex[:20]}"
        usage = {"input_tokens": 100, "output_tokens": 10}
        if tool:
            block = {
                "type": "tool_use",
                "id": f"toolu_{uuid.uuid4().hex[:20]}",
                "name": tool["name"],
                "input": tool["arguments"],
            }
            stop = "tool_use"
        else:
            block = {"type": "text", "text": ANSWER}
            stop = "end_turn"
        if not body.get("stream"):
            h._json(
                200,
                {
                    "id": msg_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [block],
                    "stop_reason": stop,
                    "stop_sequence": None,
                    "usage": usage,
                },
            )
            return
        start = {
            "type": "message",
            "id": msg_id,
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": usage,
        }
        if tool:
            first = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(tool["arguments"])}
        else:
            first = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": ANSWER}
        h.sse(
            [
                ("message_start", {"type": "message_start", "message": start}),
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": 0, "content_block": first},
                ),
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": 0, "delta": delta},
                ),
                ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                (
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": stop, "stop_sequence": None},
                        "usage": {"output_tokens": 10},
                    },
                ),
                ("message_stop", {"type": "message_stop"}),
            ]
        )

    @staticmethod
    def _responses(h: Any, body: dict[str, Any]) -> None:
        model = body.get("model", "gpt-fake")
        rid = f"resp_{uuid.uuid4().hex[:20]}"
        tool = _pick_tool(body) if _wants_tool(body) else None
        if tool:
            item = {
                "type": "function_call",
                "id": f"fc_{uuid.uuid4().hex[:16]}",
                "call_id": f"call_{uuid.uuid4().hex[:16]}",
                "name": tool["name"],
                "arguments": json.dumps(tool["arguments"]),
                "status": "completed",
            }
        else:
            item = {
                "type": "message",
                "id": f"msg_{uuid.uuid4().hex[:16]}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": ANSWER, "annotations": []}],
            }
        usage = {
            "input_tokens": 100,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 10,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 110,
        }
        base = {"id": rid, "object": "response", "created_at": int(time.time()), "model": model}
        events: list[tuple[str | None, Any]] = [
            (
                "response.created",
                {
                    "type": "response.created",
                    "response": {**base, "status": "in_progress", "output": []},
                },
            ),
            (
                "response.in_progress",
                {
                    "type": "response.in_progress",
                    "response": {**base, "status": "in_progress", "output": []},
                },
            ),
        ]
        if tool:
            events += [
                (
                    "response.output_item.added",
                    {
                        "type": "response.output_item.added",
                        "output_index": 0,
                        "item": {**item, "arguments": "", "status": "in_progress"},
                    },
                ),
                (
                    "response.function_call_arguments.delta",
                    {
                        "type": "response.function_call_arguments.delta",
                        "output_index": 0,
                        "item_id": item["id"],
                        "delta": item["arguments"],
                    },
                ),
                (
                    "response.function_call_arguments.done",
                    {
                        "type": "response.function_call_arguments.done",
                        "output_index": 0,
                        "item_id": item["id"],
                        "arguments": item["arguments"],
                    },
                ),
            ]
        else:
            part = {"type": "output_text", "text": "", "annotations": []}
            events += [
                (
                    "response.output_item.added",
                    {
                        "type": "response.output_item.added",
                        "output_index": 0,
                        "item": {**item, "content": [], "status": "in_progress"},
                    },
                ),
                (
                    "response.content_part.added",
                    {
                        "type": "response.content_part.added",
                        "item_id": item["id"],
                        "output_index": 0,
                        "content_index": 0,
                        "part": part,
                    },
                ),
                (
                    "response.output_text.delta",
                    {
                        "type": "response.output_text.delta",
                        "item_id": item["id"],
                        "output_index": 0,
                        "content_index": 0,
                        "delta": ANSWER,
                    },
                ),
                (
                    "response.output_text.done",
                    {
                        "type": "response.output_text.done",
                        "item_id": item["id"],
                        "output_index": 0,
                        "content_index": 0,
                        "text": ANSWER,
                    },
                ),
                (
                    "response.content_part.done",
                    {
                        "type": "response.content_part.done",
                        "item_id": item["id"],
                        "output_index": 0,
                        "content_index": 0,
                        "part": {**part, "text": ANSWER},
                    },
                ),
            ]
        events += [
            (
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": 0, "item": item},
            ),
            (
                "response.completed",
                {
                    "type": "response.completed",
                    "response": {**base, "status": "completed", "output": [item], "usage": usage},
                },
            ),
        ]
        h.sse(events)

    @staticmethod
    def _chat(h: Any, body: dict[str, Any]) -> None:
        model = body.get("model", "fake-model")
        cid = f"chatcmpl-{uuid.uuid4().hex[:20]}"
        created = int(time.time())
        tool = _pick_tool(body) if _wants_tool(body) else None
        usage = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
        if tool:
            call = {
                "id": f"call_{uuid.uuid4().hex[:16]}",
                "type": "function",
                "function": {"name": tool["name"], "arguments": json.dumps(tool["arguments"])},
            }
            message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
            finish = "tool_calls"
        else:
            message = {"role": "assistant", "content": ANSWER}
            finish = "stop"
        if not body.get("stream"):
            h._json(
                200,
                {
                    "id": cid,
                    "object": "chat.completion",
                    "created": created,
                    "model": model,
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    "usage": usage,
                },
            )
            return

        def chunk(delta: dict[str, Any], reason: str | None) -> dict[str, Any]:
            return {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": reason}],
            }

        if tool:
            deltas = [
                chunk(
                    {"role": "assistant", "content": None, "tool_calls": [{"index": 0, **call}]},
                    None,
                )
            ]
        else:
            deltas = [
                chunk({"role": "assistant", "content": ""}, None),
                chunk({"content": ANSWER}, None),
            ]
        deltas.append(chunk({}, finish))
        events: list[tuple[str | None, Any]] = [(None, d) for d in deltas]
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append(
                (
                    None,
                    {
                        "id": cid,
                        "object": "chat.completion.chunk",
                        "created": created,
                        "model": model,
                        "choices": [],
                        "usage": usage,
                    },
                )
            )
        events.append((None, "[DONE]"))
        h.sse(events)

    @staticmethod
    def _gemini(h: Any, body: dict[str, Any], *, stream: bool) -> None:
        config = body.get("generationConfig") or {}
        tool = _pick_tool(body) if _wants_tool(body) else None
        if config.get("responseMimeType") == "application/json":
            parts: list[dict[str, Any]] = [{"text": "{}"}]  # a helper call (routing, next speaker)
        elif tool:
            parts = [{"functionCall": {"name": tool["name"], "args": tool["arguments"]}}]
        else:
            parts = [{"text": ANSWER}]
        doc = {
            "candidates": [
                {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {
                "promptTokenCount": 100,
                "candidatesTokenCount": 10,
                "totalTokenCount": 110,
            },
            "modelVersion": "gemini-2.5-pro",
        }
        if stream:
            h.sse([(None, doc)])
        else:
            h._json(200, doc)
