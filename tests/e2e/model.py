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

A test can also script the model's tool calls (:meth:`AgentModel.script`): a
prompt holding the script's ``when`` text is answered with the first planned
:class:`ToolCall`, the request that brings its result back with the next one, and
so on, one call per turn, then the script's answer. That is how the agents are
made to write their own native memories (the file a ``Write``/``write_file`` call
creates, a Codex ``add_ad_hoc_note``), read them, edit them and delete them.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterable
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
    """The tools offered, as ``{"name", "schema"}``, whatever the protocol. A tool in
    a Responses ``namespace`` (Codex's ``memories``) also has ``"namespace"``, a
    freeform one (Codex's code-mode ``exec``) ``"custom": True``; a Responses request
    may offer tools in ``additional_tools`` input items too (Codex's sub-agents)."""
    out: list[dict[str, Any]] = []

    def responses(tools: list[Any], namespace: str | None) -> None:
        for tool in tools:
            if not isinstance(tool, dict):
                continue
            if tool.get("type") == "namespace":
                responses(tool.get("tools") or [], tool.get("name"))
                continue
            entry = {"name": tool.get("name"), "schema": tool.get("parameters") or {}}
            if namespace:
                entry["namespace"] = namespace
            if tool.get("type") == "custom":
                entry["custom"] = True
            out.append(entry)

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
        elif "input_schema" in tool:  # Anthropic
            out.append({"name": tool.get("name"), "schema": tool.get("input_schema") or {}})
        else:  # Responses
            responses([tool], None)
    if isinstance(body.get("input"), list):
        for item in body["input"]:
            if isinstance(item, dict) and item.get("type") == "additional_tools":
                responses(item.get("tools") or [], None)
    return [t for t in out if isinstance(t["name"], str)]


#: The names an agent gives a tool's parameters, by what the value is (a planned
#: call's ``values`` may use either the role or the parameter's own name).
ROLES: dict[str, tuple[str, ...]] = {
    "path": ("file_path", "path", "absolute_path", "filePath", "file"),
    "content": ("content", "contents", "file_text", "text"),
    "command": ("command", "cmd"),
}


def _value(name: str, values: dict[str, Any]) -> tuple[bool, Any]:
    """The value ``values`` gives the parameter ``name``, directly or by its role."""
    if name in values:
        return True, values[name]
    for role, names in ROLES.items():
        if role in values and name in names:
            return True, values[role]
    return False, None


def _arguments(schema: dict[str, Any], values: dict[str, Any] | None = None) -> dict[str, Any]:
    """Arguments for a tool: ``values`` put onto its parameters (by name or role, see
    :data:`ROLES`), every other required one a harmless default (``ls`` in the working
    directory: what a shell or listing tool is called with when nothing is planned)."""
    props = schema.get("properties") or {}
    values = values or {}
    args: dict[str, Any] = {}
    for name, prop in props.items():  # planned values, optional parameters included
        found, value = _value(name, values)
        if found:
            kind = (prop or {}).get("type")
            if kind == "array" and isinstance(value, str):  # a shell taking argv
                value = ["bash", "-lc", value]
            args[name] = value
    for name in schema.get("required") or list(props)[:1]:
        if name in args:
            continue
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


@dataclass(frozen=True)
class ToolCall:
    """One tool call a test plans for the model: the first of ``tools`` the agent
    offers, called with ``values`` put onto that tool's parameters (by parameter name,
    or by role: ``path``, ``content``, ``command``, see :data:`ROLES`). ``insist``: called
    even when the agent offers none of ``tools`` (the first name, ``values`` as they are):
    what a model tricked by a transcript may do, for an agent that offers no tools."""

    tools: tuple[str, ...]
    values: dict[str, Any]
    #: Called even when the agent offers no such tool (a model that insists): the
    #: first of ``tools``, with ``values`` as its arguments.
    insist: bool = False

    def insisting(self) -> ToolCall:
        """This call, made even where the agent offers the model no such tool."""
        return ToolCall(self.tools, self.values, insist=True)

    @classmethod
    def write(cls, path: str | Any, content: str) -> ToolCall:
        """Create or overwrite a file (Claude Code ``Write``, Qwen/Gemini ``write_file``)."""
        return cls(
            ("Write", "write_file", "write", "create_file"), {"path": str(path), "content": content}
        )

    @classmethod
    def read(cls, path: str | Any) -> ToolCall:
        """Read a file (Claude Code ``Read``, Qwen/Gemini ``read_file``)."""
        return cls(("Read", "read_file", "read"), {"path": str(path)})

    @classmethod
    def shell(cls, command: str) -> ToolCall:
        """Run a shell command (Claude Code ``Bash``, Qwen/Gemini ``run_shell_command``,
        Codex ``exec_command``/``shell``)."""
        names = ("Bash", "run_shell_command", "exec_command", "shell", "bash")
        return cls(names, {"command": command})

    @classmethod
    def ad_hoc_note(cls, filename: str, note: str) -> ToolCall:
        """Codex's memories tool (``[memories] dedicated_tools = true``): a note kept as
        ``extensions/ad_hoc/notes/<filename>``, ``YYYY-MM-DDTHH-MM-SS-<slug>.md``."""
        return cls(("add_ad_hoc_note",), {"filename": filename, "note": note})

    @classmethod
    def code(cls, source: str) -> ToolCall:
        """Codex's code-mode ``exec`` (freeform JavaScript calling ``tools.*``), the only
        tool its memory-consolidation sub-agent is offered directly."""
        return cls(("exec",), {"input": source})

    @classmethod
    def named(cls, name: str, **arguments: Any) -> ToolCall:
        """Any tool, by its exact name, with these arguments."""
        return cls((name,), arguments)


@dataclass
class Script:
    """What :meth:`AgentModel.script` planned: the calls, in order, then the answer."""

    when: str
    calls: tuple[ToolCall, ...]
    answer: str
    hold: float = 0.0
    #: Leave out the planned calls of tools the request does not offer (an agent
    #: that offers none of them gets the answer at once).
    skip_missing: bool = False
    #: Hold each answer until this holds (``hold`` seconds at most), not ``hold`` seconds.
    until: Callable[[], bool] | None = None


def _turns(body: dict[str, Any]) -> list[str | None]:
    """The conversation of a request as the user's texts (``str``) and tool results
    (``None``), in order, whatever the protocol (the system prompt and the assistant's
    turns left out)."""
    out: list[str | None] = []

    def texts(content: Any) -> Iterable[str]:
        if isinstance(content, str):
            yield content
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    yield part["text"]

    if isinstance(body.get("contents"), list):  # Gemini
        for msg in body["contents"]:
            if not isinstance(msg, dict) or msg.get("role") != "user":
                continue
            for part in msg.get("parts") or []:
                if isinstance(part, dict) and "functionResponse" in part:
                    out.append(None)
                elif isinstance(part, dict) and isinstance(part.get("text"), str):
                    out.append(part["text"])
    elif isinstance(body.get("input"), list):  # Responses
        for item in body["input"]:
            if not isinstance(item, dict):
                continue
            if item.get("type") in ("function_call_output", "custom_tool_call_output"):
                out.append(None)
            elif item.get("role") == "user":
                out.extend(texts(item.get("content")))
    elif isinstance(body.get("input"), str):
        out.append(body["input"])
    for msg in body.get("messages") or []:  # Anthropic, Chat Completions
        if not isinstance(msg, dict):
            continue
        if msg.get("role") == "tool":
            out.append(None)
        elif msg.get("role") == "user":
            content = msg.get("content")
            if isinstance(content, list):
                for part in content:
                    if isinstance(part, dict) and part.get("type") == "tool_result":
                        out.append(None)
                    elif isinstance(part, dict) and isinstance(part.get("text"), str):
                        out.append(part["text"])
            else:
                out.extend(texts(content))
    return out


class AgentModel:
    """The scripted model server (see the module docstring); a context manager."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        #: Seconds to hold the answer that calls a tool: an agent whose MCP servers
        #: start after its first request (codex exec) offers them from the next one.
        self.tool_turn_delay = 0.0
        #: What :meth:`script` planned, newest last.
        self.scripts: list[Script] = []
        #: Set by :meth:`fail`: every POST is answered with this status and body.
        self.failure: tuple[int, dict[str, Any]] | None = None
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

    def script(
        self,
        *calls: ToolCall,
        when: str,
        answer: str = ANSWER,
        hold: float = 0.0,
        skip_missing: bool = False,
        until: Callable[[], bool] | None = None,
    ) -> str:
        """Plan the model's next tool calls: a request whose latest user text holding
        ``when`` is followed by N tool results is answered with ``calls[N]`` (when the
        agent offers one of its tools; a side request offering none gets the plain
        answer), and once every call's result is back, with ``answer``. Stateless
        past the plan (a retried request gets the same answer); the newest script
        whose ``when`` a request holds wins. ``hold``: seconds to wait before each of
        the script's answers (Codex runs its memory consolidation beside the turn and
        drops it when the turn ends). ``skip_missing``: a planned call of a tool the
        request does not offer is left out (a distiller's CLI offering no tool gets the
        answer at once). ``until``: hold each answer until it returns true, for ``hold``
        seconds at most (Gemini CLI answers a headless ``/compress`` as a prompt too,
        beside the compression it starts and does not wait for). ``when``, to put in
        the prompt."""
        with self._lock:
            self.scripts.append(Script(when, tuple(calls), answer, hold, skip_missing, until))
        return when

    def fail(self, status: int, message: str, kind: str = "", doc: Any = None) -> None:
        """Answer every model request with HTTP ``status`` (a 401, a plan's usage limit)
        until :meth:`recover`: ``doc``, else one error body every protocol reads
        (OpenAI's and Anthropic's ``error.type``/``message``, Gemini's ``code``/``status``)."""
        body = doc or {
            "type": "error",
            "error": {
                "type": kind or ("authentication_error" if status == 401 else "error"),
                "code": kind or status,
                "message": message,
                "status": kind.upper() or ("UNAUTHENTICATED" if status == 401 else "ERROR"),
            },
        }
        with self._lock:
            self.failure = (status, body)

    def recover(self) -> None:
        with self._lock:
            self.failure = None

    def clear_scripts(self) -> None:
        with self._lock:
            self.scripts.clear()

    def _plan(self, body: dict[str, Any]) -> tuple[dict[str, Any] | None, str] | None:
        """The planned call (``{"name", "arguments"}``, or None) and the answer text
        for this request, by the newest script it holds the ``when`` of; None: none."""
        with self._lock:
            scripts = list(self.scripts)
        turns = _turns(body) if scripts else []
        for script in reversed(scripts):
            at = [i for i, t in enumerate(turns) if t is not None and script.when in t]
            if not at:
                continue
            done = sum(1 for t in turns[at[-1] + 1 :] if t is None)
            if script.until is not None:
                deadline = time.monotonic() + script.hold
                while not script.until() and time.monotonic() < deadline:
                    time.sleep(0.05)
            elif script.hold:
                time.sleep(script.hold)
            tools = {t["name"]: t for t in _tools(body)}
            calls = script.calls
            if script.skip_missing:
                calls = tuple(c for c in calls if any(name in tools for name in c.tools))
            if done >= len(calls):
                return None, script.answer
            call = calls[done]
            for name in call.tools:
                if name in tools:
                    args = _arguments(tools[name]["schema"], call.values)
                    picked = {"name": name, "arguments": args}
                    if tools[name].get("namespace"):
                        picked["namespace"] = tools[name]["namespace"]
                    if tools[name].get("custom"):  # freeform: the input is the text itself
                        picked["input"] = call.values.get("input", "")
                    return picked, script.answer
            if call.insist:
                return {"name": call.tools[0], "arguments": dict(call.values)}, script.answer
            return None, ANSWER  # a side request (a title, a summary): no such tool offered
        return None

    def _decide(self, body: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
        """The tool call (or None) and the text this request is answered with."""
        planned = self._plan(body)
        if planned is not None:
            return planned
        return (_pick_tool(body) if _wants_tool(body) else None), ANSWER

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
        with self._lock:
            failure = self.failure
        if failure is not None:
            h._json(*failure)
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

    def _anthropic(self, h: Any, body: dict[str, Any]) -> None:
        model = body.get("model", "claude-fake")
        tool, answer = self._decide(body)
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
            block = {"type": "text", "text": answer}
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
            delta = {"type": "text_delta", "text": answer}
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

    def _responses(self, h: Any, body: dict[str, Any]) -> None:
        model = body.get("model", "gpt-fake")
        rid = f"resp_{uuid.uuid4().hex[:20]}"
        tool, answer = self._decide(body)
        if tool and "input" in tool:  # a freeform (custom) tool
            item = {
                "type": "custom_tool_call",
                "id": f"ctc_{uuid.uuid4().hex[:16]}",
                "call_id": f"call_{uuid.uuid4().hex[:16]}",
                "name": tool["name"],
                "input": tool["input"],
                "status": "completed",
            }
            if tool.get("namespace"):
                item["namespace"] = tool["namespace"]
        elif tool:
            item = {
                "type": "function_call",
                "id": f"fc_{uuid.uuid4().hex[:16]}",
                "call_id": f"call_{uuid.uuid4().hex[:16]}",
                "name": tool["name"],
                "arguments": json.dumps(tool["arguments"]),
                "status": "completed",
            }
            if tool.get("namespace"):
                item["namespace"] = tool["namespace"]
        else:
            item = {
                "type": "message",
                "id": f"msg_{uuid.uuid4().hex[:16]}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": answer, "annotations": []}],
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
        if tool and item["type"] == "custom_tool_call":
            events += [
                (
                    "response.output_item.added",
                    {
                        "type": "response.output_item.added",
                        "output_index": 0,
                        "item": {**item, "input": "", "status": "in_progress"},
                    },
                ),
                (
                    "response.custom_tool_call_input.delta",
                    {
                        "type": "response.custom_tool_call_input.delta",
                        "output_index": 0,
                        "item_id": item["id"],
                        "delta": item["input"],
                    },
                ),
                (
                    "response.custom_tool_call_input.done",
                    {
                        "type": "response.custom_tool_call_input.done",
                        "output_index": 0,
                        "item_id": item["id"],
                        "input": item["input"],
                    },
                ),
            ]
        elif tool:
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
                        "delta": answer,
                    },
                ),
                (
                    "response.output_text.done",
                    {
                        "type": "response.output_text.done",
                        "item_id": item["id"],
                        "output_index": 0,
                        "content_index": 0,
                        "text": answer,
                    },
                ),
                (
                    "response.content_part.done",
                    {
                        "type": "response.content_part.done",
                        "item_id": item["id"],
                        "output_index": 0,
                        "content_index": 0,
                        "part": {**part, "text": answer},
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

    def _chat(self, h: Any, body: dict[str, Any]) -> None:
        model = body.get("model", "fake-model")
        cid = f"chatcmpl-{uuid.uuid4().hex[:20]}"
        created = int(time.time())
        tool, answer = self._decide(body)
        # The prompt's size as a model would count it (about 4 characters a token): an
        # agent that weighs its history by the usage reported (Qwen Code's /compress
        # refuses to compress a history it is told is smaller than the summary) sees
        # the request's real size.
        prompt_tokens = max(100, len(json.dumps(body.get("messages", []))) // 4)
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": 10,
            "total_tokens": prompt_tokens + 10,
        }
        if tool:
            call = {
                "id": f"call_{uuid.uuid4().hex[:16]}",
                "type": "function",
                "function": {"name": tool["name"], "arguments": json.dumps(tool["arguments"])},
            }
            message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
            finish = "tool_calls"
        else:
            message = {"role": "assistant", "content": answer}
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
                chunk({"content": answer}, None),
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

    def _gemini(self, h: Any, body: dict[str, Any], *, stream: bool) -> None:
        config = body.get("generationConfig") or {}
        tool, answer = self._decide(body)
        if config.get("responseMimeType") == "application/json":
            parts: list[dict[str, Any]] = [{"text": "{}"}]  # a helper call (routing, next speaker)
        elif tool:
            parts = [{"functionCall": {"name": tool["name"], "args": tool["arguments"]}}]
        else:
            parts = [{"text": answer}]
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
