"""The HTTP API: every route is one engine call, returning the engine's JSON.

Distill's memory routes (``/v1/memory/*``) are served unchanged, so a Distill
client works against memloom; memloom's own routes add listing, documents,
versions, conflicts, session import and capture.
"""

from __future__ import annotations

import stat
import threading
import time
from pathlib import Path as FilePath
from typing import Annotated, Any, Literal, Protocol

from fastapi import Body, Depends, FastAPI, HTTPException, Path, Query, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, model_validator

import memloom
from memloom.access import CHALLENGE_HEADER, PROOF_HEADER, proof
from memloom.config import redact_url
from memloom.engine import Memloom
from memloom.guard import (
    DEFAULT_MAX_BODY,
    BearerAuth,
    BodyLimit,
    HostPolicy,
    OwnerOnly,
)
from memloom.models import (
    MAX_NAME_CHARS,
    MAX_TAG_CHARS,
    MAX_TAGS,
    ConflictDocument,
    ConflictList,
    ErrorResponse,
    ExpireRequest,
    ExpireResponse,
    ForgetRequest,
    ForgetResponse,
    HistoryResponse,
    ListResponse,
    MemoryDocument,
    MemoryType,
    RecallRequest,
    RecallResponse,
    ResolveRequest,
    SaveRequest,
    SaveResponse,
    StaleResponse,
    StatsResponse,
    Status,
    StoreRequest,
    StoreResponse,
    SupersedeRequest,
    SupersedeResponse,
    UpdateRequest,
    UpdateResponse,
    check_storable,
)
from memloom.server import errors
from memloom.server.ndjson import Emit, ndjson_stream
from memloom.store.base import Principal

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse, "description": text}
    for code, text in {
        400: "Malformed request (plain text when the HTTP server itself cannot parse it, "
        "e.g. a request line over 64 KiB)",
        401: "Missing or wrong bearer token",
        403: "From another origin or site, shared with this token for reading only, or a "
        "route for the server's own token",
        404: "Not found",
        409: "Not valid in the current state",
        413: "Body too large",
        415: "A body that is not Content-Type: application/json, sent without a valid bearer token",
        421: "A Host this server does not answer to (DNS rebinding)",
        422: "Invalid field values",
        503: "The database or embedder is unavailable",
    }.items()
}
ERRORS[400]["content"] = {"application/json": {}, "text/plain": {"schema": {"type": "string"}}}

MemoryId = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]
TagFilter = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=MAX_TAG_CHARS)]], Query(max_length=MAX_TAGS)
]
#: Far past any real queue; larger numbers overflow the databases' 64-bit integers.
MAX_OFFSET = 1_000_000_000
#: Paths named in one import request, and the longest path (Linux PATH_MAX).
MAX_IMPORT_PATHS = 1000
MAX_PATH_CHARS = 4096


class Services(Protocol):
    """What the daemon runs beside the API (decay schedule, capture worker)."""

    def start(self) -> None: ...
    def stop(self) -> None: ...
    def status(self) -> dict[str, Any]: ...
    def notify(self, payload: dict[str, Any]) -> dict[str, Any]: ...


class ImportRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"days": 7, "sessions": 10, "dry_run": True}]},
    )

    paths: list[Annotated[str, Field(min_length=1, max_length=MAX_PATH_CHARS)]] | None = Field(
        default=None,
        max_length=MAX_IMPORT_PATHS,
        description="Absolute paths of transcripts or folders inside the Claude Code projects "
        "folder (skips discovery); anything else is refused with 400",
    )
    days: float | None = Field(default=14, gt=0, le=36_500)
    sessions: int | None = Field(default=20, ge=1, le=100_000)
    project: str | None = Field(default=None, max_length=MAX_NAME_CHARS)
    dry_run: bool = False
    force: bool = False

    @model_validator(mode="before")
    @classmethod
    def _storable(cls, data: Any) -> Any:
        check_storable(data)
        return data


class NativeImportRequest(BaseModel):
    """``POST /v1/import/native``: which agents' own memory files to follow."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"dry_run": True}]})

    agents: list[Annotated[str, Field(min_length=1, max_length=40)]] | None = Field(
        default=None,
        max_length=20,
        description="Registry names (claude-code, qwen, gemini, codex); default: those "
        "config.toml's [native] names",
    )
    dry_run: bool = False
    force: bool = False


def _refused_import_path(text: str) -> str | None:
    """Why the server will not read ``text``, or None: an HTTP client names transcripts
    in the Claude Code projects folder only, never any file the server can read -- nor
    one another user owns or can write. The walk of a named folder
    (:func:`memloom.agents.discovery.walk_named`) never follows a symlink out of it."""
    from memloom.agents.files import UNSAFE_RULES, file_problem, folder_problem
    from memloom.capture.notify import claude_projects

    try:
        given = FilePath(text).expanduser()
        if not given.is_absolute():
            return f"import paths must be absolute: {text!r}"
        resolved = given.resolve()
        base = claude_projects().resolve()
    except (OSError, RuntimeError, ValueError) as exc:  # a NUL byte, a symlink loop
        return f"import path does not resolve: {text!r} ({exc})"
    if not resolved.is_relative_to(base):
        return f"import path is outside the Claude Code projects folder {base}: {text!r}"
    try:
        st = resolved.stat()
    except OSError:
        return None  # missing: the import's report says so
    mode = st.st_mode
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):  # a FIFO would block the import
        return f"import path is neither a file nor a folder: {text!r}"
    rule = file_problem(st) if stat.S_ISREG(mode) else folder_problem(st)
    if rule is not None:
        return f"import path is not read, {UNSAFE_RULES[rule]}: {text!r}"
    return None


class NotifyRequest(BaseModel):
    """A finished session: Claude Code's SessionEnd payload (extra fields are ignored: it
    grows over time), or another agent's, named by ``agent`` (what ``hook notify
    --agent A`` sends with the path it resolved)."""

    model_config = ConfigDict(extra="ignore")

    transcript_path: str = Field(min_length=1, max_length=MAX_PATH_CHARS)
    session_id: str | None = Field(default=None, max_length=MAX_NAME_CHARS)
    cwd: str | None = Field(default=None, max_length=MAX_PATH_CHARS)
    reason: str | None = Field(default=None, max_length=MAX_NAME_CHARS)
    hook_event_name: str | None = Field(default=None, max_length=MAX_NAME_CHARS)
    #: The coding agent (a name in ``memloom.agents.agent_names()``); default claude-code.
    agent: str | None = Field(default=None, max_length=MAX_NAME_CHARS)

    @model_validator(mode="before")
    @classmethod
    def _storable(cls, data: Any) -> Any:
        if isinstance(data, dict):  # the fields kept; the ignored ones are never stored
            check_storable({k: v for k, v in data.items() if k in cls.model_fields})
        return data


class NotifyResponse(BaseModel):
    queued: bool
    job: int
    transcript_path: str


class StatusResponse(BaseModel):
    version: str
    store: dict[str, Any]
    imports: dict[str, Any]
    llm: str | None
    daemon: dict[str, Any] | None
    time: float


class EmptyRequest(BaseModel):
    """The body of a POST that needs no fields: ``{}``. Every POST is sent as JSON
    (a page of another origin cannot send JSON without asking first: docs/security.md)."""

    model_config = ConfigDict(extra="forbid")


NoFields = Annotated[EmptyRequest | None, Body()]


class PinRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    pinned: bool = True


class Health(BaseModel):
    status: Literal["ok"] = "ok"
    version: str


class EngineScopes:
    """One engine view per principal (cheap: they share the store's pool and models)."""

    def __init__(self, engine: Memloom) -> None:
        self.engine = engine
        self._views: dict[Principal, Memloom] = {}
        self._lock = threading.Lock()

    def __call__(self, principal: Principal | None) -> Memloom:
        if principal is None:
            return self.engine
        with self._lock:
            view = self._views.get(principal)
            if view is None:
                if len(self._views) > 1024:
                    self._views.clear()
                view = self._views[principal] = self.engine.scoped(principal)
            return view


def _current_engine(request: Request) -> Memloom:
    """The engine acting for the request's token (see ``BearerAuth``)."""
    return request.app.state.engines(request.scope.get("memloom.principal"))


Current = Annotated[Memloom, Depends(_current_engine)]


#: Pages and files without data: a browser may open them without the token (the
#: viewer's page then sends the token it was given in the link's #fragment).
OPEN_PATHS = ("/health", "/", "/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc")
OPEN_PREFIXES = ("/viewer/", "/docs-static/")
DOCS_PATHS = ("/docs", "/redoc", "/docs/oauth2-redirect")


def _principal(request: Request) -> Principal | None:
    """Whom the request's token acts for: an API token's owner, or None for the
    server's own token: the whole store and host."""
    return request.scope.get("memloom.principal")


def _server_token_only(request: Request) -> None:
    """403 for an API token: the route reads this server's own agent sessions or
    spends its LLM budget, which are the server's user's, not a token owner's."""
    principal = _principal(request)
    if principal is not None:
        raise HTTPException(
            403,
            f"{request.url.path} is for the server's own token only: it reads this "
            "server's agent sessions or spends its LLM budget, and this token acts for "
            f"owner {principal.owner!r}",
        )


#: A route only the server's own token may call (see ``_server_token_only``).
SERVER_ONLY = [Depends(_server_token_only)]


def _context_withheld(doc: MemoryDocument) -> dict[str, Any]:
    """``/context`` for an API token: where the memory came from (what its document
    shows already), never lines read from this server's disk. A transcript path names
    a file of the machine that imported it; on the server it is the server user's
    file whoever owns the memory, so an owner token is never served its lines."""
    reason = "transcript lines are served to the server's own token only"
    return {
        "id": doc.id,
        "provenance": [
            {
                "path": p.path,
                "start_line": p.start_line,
                "end_line": p.end_line,
                "exists": False,
                "lines": [],
                "withheld": reason,
            }
            for p in doc.provenance
        ],
    }


def create_app(
    engine: Memloom,
    *,
    token: str,
    host: str = "127.0.0.1",
    allowed_hosts: tuple[str, ...] = (),
    max_body: int = DEFAULT_MAX_BODY,
    services: Services | None = None,
) -> Any:
    """The ASGI app around one engine, serving its owner only: every ``/v1`` route needs
    ``token`` (or, on a shared store, an API token), and :class:`OwnerOnly` checks the
    Host (``host``: the address it is bound to; ``allowed_hosts``: other names it
    answers to), the Origin and the Content-Type first."""
    from contextlib import asynccontextmanager

    from fastapi_offline import FastAPIOffline

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> Any:
        if services is not None:
            services.start()
        try:
            yield
        finally:
            if services is not None:
                services.stop()

    app: FastAPI = FastAPIOffline(  # Swagger UI and ReDoc from the package, never a CDN
        static_url="/docs-static",
        title="memloom",
        version=memloom.__version__,
        summary="Long-term memory for AI coding agents",
        description=(
            "Distill-compatible memory routes (`/v1/memory/*`) plus memloom's own: "
            "listing, versions, provenance, conflicts, session import and capture. "
            'Errors are `{"error": message}`. Every `/v1` route needs '
            "`Authorization: Bearer <token>` (the token is in `api-token` in the data folder, "
            "see `memloom status`). A body is JSON: with a valid token it is read as JSON "
            "whatever its `Content-Type` (`curl -d` works as written); without one, anything "
            "but `Content-Type: application/json` is refused (415)."
        ),
        responses=ERRORS,
        lifespan=lifespan,
    )
    errors.install(app)
    import_lock = threading.Lock()

    # ------------------------------------------------------------ Distill API

    @app.post("/v1/memory/store", tags=["memory"])
    def store(m: Current, req: StoreRequest) -> StoreResponse:
        """Store entries with write-time dedup and conflict detection."""
        return m.store(req)

    @app.post("/v1/memory/recall", tags=["memory"])
    def recall(m: Current, req: RecallRequest) -> RecallResponse:
        """Memories ranked by hybrid similarity, recency, tags and task context."""
        return m.recall(req)

    @app.post("/v1/memory/expire", tags=["memory"])
    def expire(m: Current, req: ExpireRequest) -> ExpireResponse:
        return m.expire(req)

    @app.post("/v1/memory/supersede", tags=["memory"])
    def supersede(m: Current, req: SupersedeRequest) -> SupersedeResponse:
        return m.supersede(req)

    @app.post("/v1/memory/forget", tags=["memory"])
    def forget(m: Current, req: ForgetRequest) -> ForgetResponse:
        """Delete by ids, tags and/or `before` (`older_than`); criteria combine with AND,
        over the caller's own memories (an API token: its owner's). `project` narrows a
        forget to one project; `tags` or `before` alone reach every project, as in
        Distill (MCP, whose caller is a model, asks for `project` or `"all": true`)."""
        return m.forget(req)

    @app.get("/v1/memory/stats", tags=["memory"])
    def stats(m: Current) -> StatsResponse:
        return m.stats()

    # ------------------------------------------------------------ memloom's routes

    @app.post("/v1/memories", tags=["memories"], status_code=201)
    def save(m: Current, req: SaveRequest) -> SaveResponse:
        """Save one memory (deduplicated; conflicts reported)."""
        return m.save(req)

    @app.get("/v1/memories", tags=["memories"])
    def list_memories(
        m: Current,
        project: Annotated[str | None, Query(max_length=MAX_NAME_CHARS)] = None,
        type: Annotated[list[MemoryType], Query()] = [],  # noqa: B006
        tag: TagFilter = [],  # noqa: B006
        source: Annotated[str | None, Query(max_length=MAX_NAME_CHARS)] = None,
        status: Annotated[list[Status], Query()] = [Status.active],  # noqa: B006
        max_sensitivity: Annotated[int | None, Query(ge=0, le=3)] = None,
        min_sensitivity: Annotated[int | None, Query(ge=0, le=3)] = None,
        order: Literal["recent", "accessed", "created"] = "recent",
        limit: Annotated[int, Query(ge=1, le=1000)] = 50,
        cursor: Annotated[str | None, Query(max_length=200)] = None,
    ) -> ListResponse:
        """Filter and page through memories (keyset pagination: pass `next_cursor` back)."""
        return m.list(
            {
                "project": project,
                "types": type,
                "tags": tag,
                "source": source,
                "statuses": status,
                "max_sensitivity": max_sensitivity,
                "min_sensitivity": min_sensitivity,
                "order": order,
                "limit": limit,
                "cursor": cursor,
            }
        )

    @app.get("/v1/stale", tags=["memories"])
    def stale(
        m: Current,
        folder: Annotated[str, Query(max_length=4096)],
        project: Annotated[str | None, Query(max_length=MAX_NAME_CHARS)] = None,
    ) -> StaleResponse:
        """The memories of `project` (default: the folder's) whose code changed in
        `folder`'s working tree, with why, for review: nothing is expired or deleted.
        `folder` must be an absolute directory of the owner (not `/`, the home folder
        or a system folder); any other checks nothing and says so in `note`."""
        return m.stale(folder, project)

    @app.get("/v1/memories/{memory_id}", tags=["memories"])
    def get_memory(
        m: Current,
        memory_id: MemoryId,
        folder: Annotated[str | None, Query(max_length=4096)] = None,
    ) -> MemoryDocument:
        """One memory with its versions and provenance. With `folder` (an absolute
        directory of the owner, as `/v1/stale`'s), its anchors are checked in that
        working tree and `stale` says why the code under it changed."""
        return m.get(memory_id, folder)

    @app.post("/v1/memories/{memory_id}/update", tags=["memories"])
    def update(m: Current, memory_id: MemoryId, req: UpdateRequest) -> UpdateResponse:
        """Write a new version; the old one becomes stale and points forward."""
        return m.update(memory_id, req)

    @app.get("/v1/memories/{memory_id}/history", tags=["memories"])
    def history(m: Current, memory_id: MemoryId) -> HistoryResponse:
        return m.history(memory_id)

    @app.post("/v1/memories/{memory_id}/pin", tags=["memories"])
    def pin(m: Current, memory_id: MemoryId, req: Annotated[PinRequest, Body()]) -> MemoryDocument:
        return m.pin(memory_id, req.pinned)

    @app.post("/v1/memories/{memory_id}/restore", tags=["memories"])
    def restore(m: Current, memory_id: MemoryId, _: NoFields = None) -> MemoryDocument:
        """Undo decay: the original text comes back."""
        return m.restore(memory_id)

    @app.get("/v1/conflicts", tags=["conflicts"])
    def conflicts(
        m: Current,
        status: Literal["pending", "resolved", "all"] = "pending",
        limit: Annotated[int, Query(ge=1, le=500)] = 50,
        offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    ) -> ConflictList:
        return m.conflicts(None if status == "all" else status, limit, offset)

    @app.get("/v1/conflicts/{conflict_id}", tags=["conflicts"])
    def conflict(m: Current, conflict_id: MemoryId) -> ConflictDocument:
        return m.conflict(conflict_id)

    @app.post("/v1/conflicts/{conflict_id}/resolve", tags=["conflicts"])
    def resolve(m: Current, conflict_id: MemoryId, req: ResolveRequest) -> ConflictDocument:
        """keep_new | keep_existing | keep_both | merge (with `text`); revertable."""
        return m.resolve(conflict_id, req)

    @app.post("/v1/conflicts/{conflict_id}/revert", tags=["conflicts"])
    def revert(m: Current, conflict_id: MemoryId, _: NoFields = None) -> ConflictDocument:
        return m.revert(conflict_id)

    @app.get("/v1/memories/{memory_id}/context", tags=["memories"])
    def memory_context(
        request: Request,
        m: Current,
        memory_id: MemoryId,
        around: Annotated[int, Query(ge=0, le=50)] = 5,
    ) -> dict[str, Any]:
        """The transcript lines a memory came from, with neighbours, if the file still
        exists (for the server's own token; an API token gets the provenance only)."""
        if _principal(request) is not None:
            return _context_withheld(m.get(memory_id))
        return m.memory_context(memory_id, around)

    @app.post(
        "/v1/conflicts/auto",
        tags=["conflicts"],
        response_class=StreamingResponse,
        responses={200: {"content": {"application/x-ndjson": {}}, "description": "Progress"}},
        dependencies=SERVER_ONLY,
    )
    def conflicts_auto(m: Current, _: NoFields = None) -> Any:
        """Run the judge over the pending queue; progress as NDJSON, the summary last.
        Each judge call counts against the daily budget (``MEMLOOM_DAILY_CAP``)."""
        from memloom.capture.budget import server_budget

        def work(emit: Emit) -> dict[str, Any]:
            with server_budget(m.settings.home, m.settings) as budget:
                summary = m.auto_resolve(emit, allow_call=budget.take)
                if summary.get("stopped"):
                    budget.note_spent("conflicts auto")
                summary["budget"] = {"used": budget.used(), "cap": budget.cap}
            return {"event": "done", "summary": summary}

        return ndjson_stream(work)

    @app.get("/v1/activity", tags=["status"])
    def activity(
        request: Request, m: Current, days: Annotated[int, Query(ge=1, le=365)] = 30
    ) -> dict[str, Any]:
        """Imports, capture, budget and memories saved per day: the viewer's Activity page.
        An API token sees its memories and its own imports only: not this host's capture
        setup, hooks, agents' paths, budget or LLM."""
        from memloom.status import capture_summary

        doc = m.activity(days)
        doc["embedder"] = m.embedder.fingerprint
        if _principal(request) is not None:
            return doc
        doc.update(capture_summary(m.settings.home, m.settings.raw, native=m.native_summary()))
        doc["llm"] = getattr(m.llm, "description", None)
        return doc

    @app.post(
        "/v1/import/sessions",
        tags=["import"],
        response_class=StreamingResponse,
        responses={200: {"content": {"application/x-ndjson": {}}, "description": "Progress"}},
        dependencies=SERVER_ONLY,
    )
    def import_sessions(m: Current, req: ImportRequest | None = None) -> Any:
        """Import Claude Code sessions; progress streams as NDJSON, the report last.
        Each extraction call counts against the daily budget (``MEMLOOM_DAILY_CAP``):
        at the cap the run stops, keeping its progress (the report's ``stopped``)."""
        from memloom.capture.budget import server_budget

        req = req or ImportRequest()
        for text in req.paths or ():
            if (refused := _refused_import_path(text)) is not None:
                return errors.error(400, refused)
        if not import_lock.acquire(blocking=False):
            return errors.error(409, "an import is already running")

        def work(emit: Emit) -> None:
            with server_budget(m.settings.home, m.settings) as budget:
                report = m.import_sessions(
                    req.paths,
                    days=req.days,
                    sessions=req.sessions,
                    project=req.project,
                    dry_run=req.dry_run,
                    force=req.force,
                    progress=emit,
                    allow_call=budget.take,
                )
                if report.stopped and budget.paused:
                    budget.note_spent("HTTP import")

        return ndjson_stream(work, thread_name="memloom-import", finally_=import_lock.release)

    @app.post("/v1/import/native", tags=["import"], dependencies=SERVER_ONLY)
    def import_native(m: Current, req: NativeImportRequest | None = None) -> dict[str, Any]:
        """Follow the coding agents' own memory files on this host (Claude Code's auto
        memory, Qwen Code's, Gemini CLI's and Codex's memories): no LLM call. The server
        token only: the files are this host's. 409 while another import runs."""
        from memloom.agents import ALIASES, agent_names

        req = req or NativeImportRequest()
        names = [ALIASES.get(a, a) for a in req.agents] if req.agents is not None else None
        unknown = [a for a in names or () if a not in agent_names()]
        if unknown:
            return errors.error(400, f"unknown agent {unknown[0]!r}")  # type: ignore[return-value]
        if not import_lock.acquire(blocking=False):
            return errors.error(409, "an import is already running")  # type: ignore[return-value]
        try:
            report = m.import_native(names, force=req.force, dry_run=req.dry_run)
        finally:
            import_lock.release()
        return report.model_dump()

    @app.post("/v1/capture/notify", tags=["capture"], status_code=202, dependencies=SERVER_ONLY)
    def capture_notify(m: Current, req: NotifyRequest) -> NotifyResponse:
        """Queue a finished session for import (what the SessionEnd hook sends)."""
        from memloom.capture.notify import NotificationRefused

        if services is None:
            return errors.error(503, "capture is not running in this server")  # type: ignore[return-value]
        try:
            return NotifyResponse.model_validate(services.notify(req.model_dump()))
        except NotificationRefused as exc:
            return errors.error(400, str(exc))  # type: ignore[return-value]

    @app.get("/v1/status", tags=["status"])
    def status(request: Request, m: Current) -> StatusResponse:
        """Counts, imports, LLM and daemon. An API token gets its own counts and imports
        and the version: no database address, LLM or daemon internals (null)."""
        s = m.stats()
        host = _principal(request) is None
        store = {
            "total_memories": s.total_memories,
            "active_count": s.active_count,
            "conflicts_pending": s.conflicts_pending,
            "embedder": m.embedder.fingerprint,
        }
        if host:
            store["database"] = redact_url(m.settings.database_url)
        return StatusResponse.model_validate(
            {
                "version": memloom.__version__,
                "store": store,
                "imports": m.ledger_stats(),
                "llm": getattr(m.llm, "description", None) if host else None,
                "daemon": services.status() if services is not None and host else None,
                "time": time.time(),
            }
        )

    @app.get("/health", tags=["status"])
    def health(request: Request, response: Response) -> Health:
        """Up? With an ``X-Memloom-Challenge`` header, the answer carries
        ``X-Memloom-Proof``: what only the holder of the server's token can compute, so
        a hook checks the daemon is its own before it sends a prompt."""
        challenge = request.headers.get(CHALLENGE_HEADER)
        if challenge is not None and 0 < len(challenge) <= 128:
            response.headers[PROOF_HEADER] = proof(token, challenge)
        return Health(version=memloom.__version__)

    from fastapi.responses import FileResponse
    from fastapi.staticfiles import StaticFiles

    from memloom.viewer import STATIC

    class ViewerFiles(StaticFiles):
        """The viewer's files, revalidated on every load so an upgrade shows at once."""

        def file_response(self, *args: Any, **kwargs: Any) -> Any:
            response = super().file_response(*args, **kwargs)
            response.headers["Cache-Control"] = "no-cache"
            return response

    app.mount("/viewer", ViewerFiles(directory=STATIC), name="viewer")

    @app.get("/", include_in_schema=False)
    def root() -> FileResponse:
        """The viewer (a static page; all its data comes from this API)."""
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    app.state.engines = EngineScopes(engine)
    bearer = BearerAuth(
        app,
        token,
        lookup=engine.token_principal if engine.supports_tokens else None,
        open_paths=OPEN_PATHS,
        open_prefixes=OPEN_PREFIXES,
    )
    wrapped: Any = OwnerOnly(
        BodyLimit(bearer, max_body),
        HostPolicy(host, allowed_hosts),
        open_paths=OPEN_PATHS,
        open_prefixes=OPEN_PREFIXES,
        docs_paths=DOCS_PATHS,
        bearer=bearer,  # a token holder's body is read as JSON whatever its type
    )
    wrapped.fastapi = app  # the FastAPI app itself, for its OpenAPI document
    return wrapped
