"""``memloom mcp`` on stdio: the client's handshake answered at once.

MCP clients start each configured server with the agent and wait for its answers
to ``initialize`` and ``tools/list`` before the first prompt; ``opencode run`` does
so on every run. The MCP SDK alone takes ~0.9 s to import and the engine ~0.4 s
to open, so a plain start added ~2 s to every headless OpenCode prompt.

Those answers depend only on the code of memloom and of the SDK, never on the
store or the data folder. So they are kept in the user's cache folder
(``$XDG_CACHE_HOME/memloom/mcp-handshake.json``, by default under ``~/.cache``),
learnt from the SDK server's own answers the first time and keyed by the files they
came from; a data folder that cannot be written does not slow the start. While
the cache holds them, this process answers the handshake and the list requests
from the file, and loads the SDK only when the client asks something else (a
tool call). The SDK server is then given the client's ``initialize`` again, and
its answer to it is dropped, so from there on it serves the session as if it had
from the start. A missing, stale or unreadable cache only means a slow start.

Standard library only until the hand-over (``tests/test_mcp_stdio.py``).
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import suppress
from pathlib import Path
from typing import Any, BinaryIO

CACHE_FILE = "mcp-handshake.json"


def cache_path() -> Path:
    """Where the handshake's answers are kept: ``$XDG_CACHE_HOME/memloom`` (an absolute
    path, as the XDG spec requires) else ``~/.cache/memloom``."""
    root = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(root) if os.path.isabs(root) else Path("~/.cache").expanduser()
    return base / "memloom" / CACHE_FILE


#: Requests whose answers depend only on the server's code and the protocol version.
STATIC_METHODS = frozenset(
    {"ping", "tools/list", "prompts/list", "resources/list", "resources/templates/list"}
)


def fingerprint() -> str:
    """What the cached answers depend on: memloom's version, and the files of
    memloom's MCP server, of the models its tools' output schemas come from, of the
    SDK and of pydantic, which writes the schemas (paths, sizes and times)."""
    from importlib.util import find_spec

    import memloom

    parts = [memloom.__version__]
    for name in ("memloom.mcp", "memloom.models", "mcp", "mcp_types", "pydantic"):
        spec = find_spec(name)
        origin = spec.origin if spec is not None else None
        if origin is None:
            parts.append(f"{name}:-")
            continue
        st = os.stat(origin)
        parts.append(f"{name}:{origin}:{st.st_size}:{st.st_mtime_ns}")
    return "|".join(parts)


#: The handshake's answers as the SDK gave them when the package was built
#: (``python scripts/mcp_handshake.py`` writes it; ``tests/test_mcp_stdio.py`` fails
#: when it no longer matches what the SDK answers). A first start in an empty cache
#: folder (a plugin install runs no memloom code beforehand) answers from it.
SHIPPED = Path(__file__).with_name("mcp_handshake.json")
#: Modules whose code the answers come from: memloom's tools and the models their
#: output schemas are made of (their bytes are hashed into the shipped key).
ANSWER_SOURCES = ("memloom.mcp", "memloom.models")
#: Distributions that write the answers, each importable by its own name (their
#: versions are read off the dist-info folder names: ``importlib.metadata`` would cost
#: a start ~45 ms).
ANSWER_DISTRIBUTIONS = ("mcp", "mcp_types", "pydantic", "pydantic_core")


def _dist_version(dist: str, listings: dict[str, list[str]]) -> str:
    """The installed version of ``dist`` (a distribution importable as ``dist``), "-" if
    unknown. ``listings``: site folders already listed (they all sit in one)."""
    from importlib.util import find_spec

    spec = find_spec(dist)
    origin = spec.origin if spec is not None else None
    if origin is None:
        return "-"
    site = os.path.dirname(os.path.dirname(origin))
    if site not in listings:
        try:
            listings[site] = os.listdir(site)
        except OSError:
            listings[site] = []
    prefix = f"{dist}-"
    for entry in listings[site]:
        if entry.startswith(prefix) and entry.endswith(".dist-info"):
            return entry[len(prefix) : -len(".dist-info")]
    return "-"


def shipped_key() -> dict[str, str]:
    """What the shipped answers were made from: memloom's version, a hash of the code of
    its MCP tools, and the versions of the SDK and pydantic. Equal keys, equal answers."""
    import hashlib
    from importlib.util import find_spec

    import memloom

    code = hashlib.sha256()
    for name in ANSWER_SOURCES:
        spec = find_spec(name)
        if spec is None or spec.origin is None:
            return {}
        code.update(Path(spec.origin).read_bytes())
    key = {"memloom": memloom.__version__, "code": code.hexdigest()[:32]}
    listings: dict[str, list[str]] = {}
    key.update({dist: _dist_version(dist, listings) for dist in ANSWER_DISTRIBUTIONS})
    return key


def shipped_path() -> Path | None:
    """The shipped answers' file: ``$MEMLOOM_MCP_SHIPPED`` when set (empty: none, every
    first start learns from the SDK), else the package's own."""
    named = os.environ.get("MEMLOOM_MCP_SHIPPED")
    if named is None:
        return SHIPPED
    return Path(named) if named else None


def shipped_answers() -> dict[str, Any]:
    """The shipped answers, when they were made from this very code and SDK; else {}."""
    path = shipped_path()
    if path is None:
        return {}
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(doc, dict) or doc.get("key") != shipped_key():
        return {}
    answers = doc.get("answers")
    return answers if isinstance(answers, dict) else {}


class AnswerCache:
    """The SDK server's answers to the handshake and the list requests: the user's
    cache folder, else those shipped with the package (made from the same code)."""

    def __init__(self, path: Path, stamp: str, *, shipped: bool = True) -> None:
        self.path = path
        self.stamp = stamp
        self.answers: dict[str, Any] = {}
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            doc = None  # none yet, or unreadable: the shipped answers, else the SDK's
        if isinstance(doc, dict) and doc.get("fingerprint") == stamp:
            answers = doc.get("answers")
            self.answers = answers if isinstance(answers, dict) else {}
        if shipped and not self.answers:
            self.answers = dict(shipped_answers())

    def get(self, key: str) -> Any:
        return self.answers.get(key)

    def learn(self, key: str, result: Any) -> None:
        """Keep ``result``; written at once (atomically) when it is new."""
        if self.answers.get(key) == result:
            return
        self.answers[key] = result
        doc = {"fingerprint": self.stamp, "answers": self.answers}
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(doc), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError as exc:  # an unwritable cache folder: every start is a slow one
            sys.stderr.write(f"memloom mcp: cannot keep the handshake cache: {exc}\n")
            with suppress(OSError):
                tmp.unlink(missing_ok=True)


def initialize_key(message: dict[str, Any]) -> str:
    """The cache key of an ``initialize`` request: the protocol version it asks for."""
    params = message.get("params")
    asked = params.get("protocolVersion") if isinstance(params, dict) else None
    return f"initialize {asked}"


def static_key(message: dict[str, Any], version: str) -> str | None:
    """The cache key of a request answerable from the cache, else None (a page
    after the first, or another method)."""
    params = message.get("params")
    if message.get("method") not in STATIC_METHODS or "id" not in message:
        return None
    if isinstance(params, dict) and set(params) - {"_meta"}:
        return None  # a cursor, or anything else that could change the answer
    return f"{version} {message['method']}"


def id_key(request_id: Any) -> str:
    """JSON-RPC ids are numbers or strings; 1 and "1" are different requests."""
    return json.dumps(request_id)


class Wire:
    """The client's stream, on private descriptors. The process's fd 0 then reads
    /dev/null and fd 1 writes to stderr, so nothing the engine or a library prints
    can corrupt the protocol (as the SDK's own stdio transport does)."""

    def __init__(self) -> None:
        self.reader: BinaryIO = os.fdopen(os.dup(0), "rb")
        self.writer: BinaryIO = os.fdopen(os.dup(1), "wb")
        try:
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.close(null)
            os.dup2(2, 1)
        except OSError:  # no stderr to divert to: stray output is the risk left
            pass

    def readline(self) -> bytes:
        return self.reader.readline()

    def send(self, data: bytes) -> None:
        self.writer.write(data)
        self.writer.flush()

    def answer(self, request_id: Any, result: Any) -> None:
        message = {"jsonrpc": "2.0", "id": request_id, "result": result}
        self.send(json.dumps(message, separators=(",", ":")).encode() + b"\n")


class Session:
    """What the cache answered, for the hand-over: the lines the SDK server must
    see again (the client's ``initialize`` and its notifications), the ids whose
    answers the client already has, and the negotiated protocol version."""

    def __init__(self, wire: Wire, cache: AnswerCache) -> None:
        self.wire = wire
        self.cache = cache
        self.replay: list[bytes] = []
        self.answered: set[str] = set()
        self.version: str | None = None
        self.pending: dict[str, str] = {}  # id -> what the SDK's answer will teach the cache

    def take(self, line: bytes) -> bool:
        """Answer ``line`` from the cache if it can be; False when the SDK must."""
        try:
            message = json.loads(line)
        except ValueError:
            return False  # the SDK answers a parse error
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            return False  # a batch, a response: the SDK's
        method = message["method"]
        if self.version is None:
            if method != "initialize" or "id" not in message:
                return False
            result = self.cache.get(initialize_key(message))
            if not isinstance(result, dict) or not isinstance(result.get("protocolVersion"), str):
                return False
            self.wire.answer(message["id"], result)
            self.version = result["protocolVersion"]
            self.replay.append(line)
            self.answered.add(id_key(message["id"]))
            return True
        if "id" not in message:  # a notification: ``initialized`` and the like
            if method != "notifications/cancelled":  # nothing of the cache's to cancel
                self.replay.append(line)
            return True
        key = static_key(message, self.version)
        result = self.cache.get(key) if key is not None else None
        if result is None:
            return False
        self.wire.answer(message["id"], result)
        return True

    def asking(self, line: bytes) -> None:
        """A line on its way to the SDK server: note a request whose answer the cache keeps."""
        try:
            message = json.loads(line)
        except ValueError:
            return
        if not isinstance(message, dict) or "id" not in message:
            return
        if message.get("method") == "initialize":
            self.pending[id_key(message["id"])] = initialize_key(message)
        elif static_key(message, "") is not None:
            self.pending[id_key(message["id"])] = str(message["method"])

    def passes(self, line: bytes) -> bool:
        """A line the SDK server wrote: False for its answer to a replayed request (the
        client has it from the cache); an answer the cache keeps is learnt."""
        try:
            message = json.loads(line)
        except ValueError:
            return True
        if not isinstance(message, dict) or "method" in message or "id" not in message:
            return True  # a request or notification of the server's
        key = id_key(message["id"])
        learn = self.pending.pop(key, None)
        if key in self.answered:
            self.answered.discard(key)
            return False
        result = message.get("result")
        if learn is None or not isinstance(result, dict):
            return True
        if learn.startswith("initialize "):
            version = result.get("protocolVersion")
            self.version = version if isinstance(version, str) else None
            if self.version is not None:
                self.cache.learn(learn, result)
        elif self.version is not None:
            self.cache.learn(f"{self.version} {learn}", result)
        return True


class _Script:
    """A client that sends ``lines`` and leaves once each of its requests is answered
    (or after ``timeout`` seconds): the wire :func:`prime` runs the server over."""

    def __init__(self, lines: list[bytes], timeout: float = 30.0) -> None:
        import threading

        self.lines = list(lines)
        self.waiting = {id_key(json.loads(x)["id"]) for x in lines if b'"id"' in x}
        self.done = threading.Event()
        self.timeout = timeout

    def readline(self) -> bytes:
        if self.lines:
            return self.lines.pop(0)
        self.done.wait(self.timeout)
        return b""  # the client closes: the server ends

    def send(self, data: bytes) -> None:
        message = json.loads(data)
        if isinstance(message, dict) and "method" not in message and "id" in message:
            self.waiting.discard(id_key(message["id"]))
        if not self.waiting:
            self.done.set()


def prime(home: str | os.PathLike[str] | None = None) -> list[str]:
    """Teach the cache the handshake of every protocol version the SDK negotiates, so
    that an agent's first start of ``memloom mcp`` is as fast as the later ones
    (``memloom connect`` calls it; once per memloom and SDK version). The versions
    taught; none when the cache held them already."""
    cache = AnswerCache(cache_path(), fingerprint())
    if any(key.startswith("initialize ") for key in cache.answers):
        return []  # taught already (by a start, an earlier connect, or the package)
    return teach(cache, home)


def teach(cache: AnswerCache, home: str | os.PathLike[str] | None = None) -> list[str]:
    """Run the SDK server over a scripted client for every protocol version it
    negotiates, so that ``cache`` learns the answers; the versions taught."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    from memloom.location import resolve_home
    from memloom.mcp import serve_wire

    def request(n: int, method: str, params: dict[str, Any] | None = None) -> bytes:
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": n, "method": method}
        if params is not None:
            body["params"] = params
        return json.dumps(body).encode() + b"\n"

    taught = []
    for version in HANDSHAKE_PROTOCOL_VERSIONS:
        hello = {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "memloom-connect", "version": "0"},
        }
        lines = [
            request(0, "initialize", hello),
            b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n',
            *(request(n, m) for n, m in enumerate(sorted(STATIC_METHODS), start=1)),
        ]
        script = _Script(lines)
        serve_wire(resolve_home(home), script, Session(script, cache), [], log_level=None)
        if cache.get(f"initialize {version}") is not None:
            taught.append(version)
    return taught


def write_shipped(path: Path = SHIPPED) -> dict[str, Any]:
    """Make the shipped answers from the SDK server (``scripts/mcp_handshake.py``): the
    document written, ``{"key", "answers"}``."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="memloom-handshake-") as tmp:
        cache = AnswerCache(Path(tmp) / CACHE_FILE, "build", shipped=False)
        teach(cache, Path(tmp) / "home")
        doc = {"key": shipped_key(), "answers": dict(sorted(cache.answers.items()))}
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return doc


def serve(home: str | None = None, log_level: str = "WARNING") -> int:
    """Serve MCP on stdio until the client closes it; the exit status."""
    from memloom.config import ConfigError, load_settings
    from memloom.location import resolve_home

    try:
        where = resolve_home(home)
        load_settings(where)  # unusable settings fail now, before anything is served
    except ConfigError as exc:
        sys.stderr.write(f"memloom mcp: error: {' '.join(str(exc).split())}\n")
        return 1
    wire = Wire()
    session = Session(wire, AnswerCache(cache_path(), fingerprint()))
    while True:
        line = wire.readline()
        if not line:
            return 0  # the client left without needing the SDK
        if line.strip() and not session.take(line):
            break
    from memloom.mcp import serve_wire

    serve_wire(where, wire, session, [*session.replay, line], log_level=log_level)
    return 0
