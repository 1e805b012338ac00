"""The memory model and the JSON documents of the library, HTTP API and CLI.

One set of pydantic models serves every shell, so the library, ``memloom serve``
and ``memloom --json`` cannot drift apart.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from enum import IntEnum, StrEnum
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from memloom.project import project_key

MAX_TEXT_CHARS = 100_000
MAX_ENTRIES = 1_000
MAX_TAGS = 64
#: Longest tag, and longest project, source or session id (a project is often a path).
MAX_TAG_CHARS = 256
MAX_NAME_CHARS = 4096
#: pgvector's limit for a ``vector`` column; no embedding model comes near it.
MAX_DIMENSIONS = 16_000
#: How deep a request document (``metadata`` above all) may nest. The JSON encoder
#: of the responses gives up far deeper, but one stored memory it cannot encode
#: would break every listing that includes it.
MAX_NESTING = 32
#: "Not blank" as a JSON-schema pattern: one character that ``str.strip`` keeps.
_NOT_BLANK = r"[^\s\u001c-\u001f\u0085]"


class MemoryType(StrEnum):
    fact = "fact"
    preference = "preference"
    episode = "episode"
    procedure = "procedure"


class Status(StrEnum):
    active = "active"
    stale = "stale"  # an older version, replaced by ``update`` or the belief pipeline
    expired = "expired"  # expired explicitly, by TTL, or superseded


class Sensitivity(IntEnum):
    NONE = 0
    PII = 1
    INTERNAL = 2
    CREDENTIALS = 3


def _utc(value: datetime | None) -> datetime | None:
    """Naive timestamps are taken as UTC, so every stored time is comparable."""
    if value is None:
        return None
    try:
        value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        value.timestamp()  # stored as seconds since the epoch
    except (OverflowError, OSError, ValueError):
        raise ValueError("date is out of range (years 1 to 9999 in UTC)") from None
    return value


UTCDateTime = Annotated[datetime, AfterValidator(_utc)]
SensitivityLevel = Annotated[int, Field(ge=0, le=3)]


def _clean_text(value: str) -> str:
    if not value or not value.strip():
        raise ValueError("text must not be empty")
    if len(value) > MAX_TEXT_CHARS:
        raise ValueError(f"text is longer than {MAX_TEXT_CHARS} characters")
    return value


def _clean_tags(values: list[str]) -> list[str]:
    out: list[str] = []
    for tag in values:
        tag = tag.strip()
        if not tag:
            raise ValueError("tags must not be empty strings")
        if tag not in out:
            out.append(tag)
    if len(out) > MAX_TAGS:
        raise ValueError(f"at most {MAX_TAGS} tags")
    return out


def _finite_numbers(values: list[Any] | tuple[Any, ...]) -> bool:
    """True when every item is a finite number, decided in C (one ``sum``): no Python
    loop over a 384-float embedding. False means "look item by item": a non-number,
    NaN, an infinity, or a sum that overflows."""
    try:
        return math.isfinite(sum(values))
    except (TypeError, OverflowError):
        return False


def _clean_embedding(values: list[float] | None) -> list[float] | None:
    if values is None:
        return None
    if not values:
        raise ValueError("embedding must not be empty")
    if not _finite_numbers(values):
        arr = np.asarray(values, dtype=np.float64)
        if not np.isfinite(arr).all():
            raise ValueError("embedding must contain finite numbers only")
    if not any(values):
        raise ValueError("embedding must not be all zeros")
    return values


# The limits are declared in the JSON schema (and so in the HTTP API's OpenAPI
# document); the validators enforce them with messages of their own.
MemoryText = Annotated[
    str,
    Field(json_schema_extra={"minLength": 1, "maxLength": MAX_TEXT_CHARS, "pattern": _NOT_BLANK}),
    AfterValidator(_clean_text),
]
Tag = Annotated[
    str,
    Field(json_schema_extra={"minLength": 1, "maxLength": MAX_TAG_CHARS, "pattern": _NOT_BLANK}),
]
Tags = Annotated[
    list[Tag], Field(json_schema_extra={"maxItems": MAX_TAGS}), AfterValidator(_clean_tags)
]
Embedding = Annotated[
    Annotated[list[float], Field(min_length=1, max_length=MAX_DIMENSIONS)] | None,
    AfterValidator(_clean_embedding),
]
Name = Annotated[str, Field(max_length=MAX_NAME_CHARS)]
#: A request's project: a label as given, or a folder, which names the project of the
#: repository it lies in (``memloom.project``: worktrees and clones are one project).
ProjectName = Annotated[str, Field(max_length=MAX_NAME_CHARS), AfterValidator(project_key)]


def _text_problem(value: str) -> str | None:
    if "\x00" in value:
        return "must not contain NUL (\\u0000) characters"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "must be valid Unicode (it contains an unpaired surrogate)"
    return None


def _shown(key: Any) -> str:
    text = str(key)
    return text[:64] if text.isprintable() and _text_problem(text) is None else "(a key)"


def _unstorable(value: Any, depth: int = 0) -> tuple[list[str], str] | None:
    """Where and why ``value`` holds what no store can keep, or None."""
    if isinstance(value, str):
        problem = _text_problem(value)
        return ([], problem) if problem else None
    if isinstance(value, float):
        return None if math.isfinite(value) else ([], "must be a finite number")
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list | tuple):
        if _finite_numbers(value):
            return None  # an embedding: numbers only, all finite
        items = enumerate(value)
    else:
        return None
    if depth >= MAX_NESTING:
        return [], f"is nested more than {MAX_NESTING} levels deep"
    for key, item in items:
        if isinstance(key, str) and (problem := _text_problem(key)):
            return [_shown(key)], f"has a key that {problem}"
        if type(item) is int or type(item) is bool or item is None:
            continue
        if type(item) is float:
            if not math.isfinite(item):
                return [_shown(key)], "must be a finite number"
            continue
        found = _unstorable(item, depth + 1)
        if found is not None:
            found[0].insert(0, _shown(key))
            return found
    return None


def check_storable(value: Any) -> None:
    """ValueError for what a store cannot keep or give back: NUL characters (PostgreSQL
    refuses them), unpaired surrogates (not UTF-8), NaN and infinities (not JSON)
    and documents nested more than ``MAX_NESTING`` levels."""
    found = _unstorable(value)
    if found is not None:
        where, problem = found
        raise ValueError(f"{'.'.join(where) or 'value'} {problem}")


class _Request(BaseModel):
    # A misspelt field would otherwise be dropped without a word.
    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _storable(cls, data: Any) -> Any:
        check_storable(data)
        return data


# ---------------------------------------------------------------- anchors

#: Anchors a memory carries (``memloom.anchors`` finds at most as many), identifiers
#: per anchor, and the longest anchored path.
MAX_ANCHORS = 32
MAX_ANCHOR_NAMES = 32
MAX_ANCHOR_PATH = 1024


def _anchor_path(value: str) -> str:
    """A path inside the project: relative, ``/``-separated, never ``..``."""
    path = value.strip().replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    parts = path.split("/")
    if not path or path.startswith(("/", "~")) or ".." in parts or "" in parts[:-1]:
        raise ValueError(
            f"anchor path {value[:200]!r} must be a relative path inside the project "
            "(no leading /, ~ or ..)"
        )
    return path.rstrip("/")


def _anchor_names(values: list[str]) -> list[str]:
    out = list(dict.fromkeys(v.strip() for v in values if v.strip()))
    if len(out) > MAX_ANCHOR_NAMES:
        raise ValueError(f"at most {MAX_ANCHOR_NAMES} names per anchor")
    return out


AnchorPath = Annotated[
    str, Field(min_length=1, max_length=MAX_ANCHOR_PATH), AfterValidator(_anchor_path)
]
AnchorNames = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=MAX_TAG_CHARS, pattern=r"^[\w.$:-]+$")]],
    Field(json_schema_extra={"maxItems": MAX_ANCHOR_NAMES}),
    AfterValidator(_anchor_names),
]


class AnchorRequest(_Request):
    """A file a memory is about, named by the caller (``save``/``update``'s ``anchors``,
    the CLI's ``--file``): relative to the project folder; ``symbols`` are identifiers
    in it the memory relies on."""

    path: AnchorPath
    symbols: AnchorNames = Field(default_factory=list)
    commit: str | None = Field(default=None, pattern=r"^[0-9a-f]{7,64}$")


class Anchor(BaseModel):
    """What a memory is about: a file (``path``, relative to the repository's top
    folder ``root``), the identifiers it names that occur there (``symbols``), and the
    commit it was written at (``commit``; None: no git, a bare repository or no
    commit yet). ``via``: ``text`` (named by the memory), ``given`` (the caller's),
    ``tool`` (read or edited by the agent's tool calls in the lines it was imported from)."""

    path: str
    symbols: list[str] = Field(default_factory=list)
    commit: str | None = None
    root: str | None = None
    via: Literal["text", "given", "tool"] = "text"


class CheckedAnchor(Anchor):
    """An anchor as a recall checked it in the caller's folder: ``path`` is where the
    file is now (``moved_from``: where it was, when git saw it renamed); ``note`` says
    why it was not checked, or that only the default branch has the file."""

    moved_from: str | None = None
    note: str | None = None


Anchors = Annotated[list[AnchorRequest], Field(max_length=MAX_ANCHORS)]


# ---------------------------------------------------------------- store


class StoreEntry(_Request):
    text: MemoryText
    embedding: Embedding = None
    source: Name | None = None
    tags: Tags = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    sensitivity: SensitivityLevel | None = None
    auto_classify: bool = False
    expires_at: UTCDateTime | None = None
    type: MemoryType | None = None
    project: ProjectName | None = None

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "text": "The API server listens on port 8080 in development.",
                    "source": "docs/dev.md",
                    "tags": ["config"],
                    "type": "fact",
                    "project": "acme-api",
                }
            ]
        },
    )


class StoreRequest(_Request):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "session_id": "sess-42",
                    "entries": [
                        {
                            "text": "Auth uses JWT with RS256 keys",
                            "source": "docs/auth.md",
                            "tags": ["auth"],
                        }
                    ],
                }
            ]
        },
    )

    session_id: Name | None = None
    entries: list[StoreEntry] = Field(min_length=1, max_length=MAX_ENTRIES)


class ConflictInfo(BaseModel):
    conflict_id: str
    new_id: str
    new_text: str
    existing_id: str
    existing_text: str
    distance: float


class VersionedInfo(BaseModel):
    """An entry ``store`` made the next version of an existing memory: ``id`` is the new
    version (in ``ids``, counted in ``stored``), ``old_id`` the memory it replaced, now
    stale (``supersede(old_id, id)`` after it is a no-op)."""

    id: str
    old_id: str


class StoreResponse(BaseModel):
    stored: int = 0
    merged: int = 0
    deduplicated: int = 0
    total_memories: int = 0
    ids: list[str] = Field(default_factory=list)
    conflicts: list[ConflictInfo] = Field(default_factory=list)
    versioned: list[VersionedInfo] = Field(default_factory=list)


# ---------------------------------------------------------------- recall


class RecallRequest(_Request):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "query": "how do I run the tests?",
                    "max_results": 5,
                    "project": "acme-api",
                    "boost_tags": ["testing"],
                    "recency_weight": 0.1,
                }
            ]
        },
    )

    query: str | None = Field(default=None, max_length=MAX_TEXT_CHARS)
    query_embedding: Embedding = None
    #: hybrid (default) fuses meaning and keywords; vector or keyword use one arm only.
    mode: Literal["hybrid", "vector", "keyword"] = "hybrid"
    max_results: int = Field(default=10, ge=1, le=1000)
    max_tokens: int | None = Field(default=None, ge=1)
    tags: Tags = Field(default_factory=list)
    #: Leave out memories carrying any of these tags (an agent's prompt hook leaves out
    #: ``native:<agent>``: what that agent's own memory already shows it).
    exclude_tags: Tags = Field(default_factory=list)
    boost_tags: Tags = Field(default_factory=list)
    task_context: str | None = Field(default=None, max_length=MAX_TEXT_CHARS)
    #: A number in [0, 1], or ``"auto"``: the calibrated threshold (``ranking.
    #: AUTO_MIN_RELEVANCE``) below which nothing is relevant, so a recall can be empty.
    min_relevance: Annotated[float, Field(ge=0.0, le=1.0)] | Literal["auto"] | None = None
    recency_weight: float = Field(default=0.0, ge=0.0, le=1.0)
    include_expired: bool = False
    project: ProjectName | None = None
    types: list[MemoryType] = Field(default_factory=list)
    max_sensitivity: SensitivityLevel | None = None
    #: Count this recall as use (last_referenced, access_count). Browsing tools pass false.
    touch: bool = True
    #: The folder the caller works in (absolute, an existing directory of the owner):
    #: each memory's anchors are checked against its working tree (``stale``). None, or
    #: a folder that is not usable: nothing is checked and ``stale`` is null.
    folder: str | None = Field(default=None, max_length=4096)

    @model_validator(mode="after")
    def _needs_query(self) -> RecallRequest:
        if not (self.query and self.query.strip()) and self.query_embedding is None:
            raise ValueError("recall needs a query or a query_embedding")
        return self


class ProvenanceInfo(BaseModel):
    session_id: str | None
    path: str | None
    project: str | None
    start_line: int | None
    end_line: int | None
    excerpt: str | None
    #: The coding agent the session belongs to (claude-code, codex, gemini-cli,
    #: copilot-cli, aider); None for memories imported before agents were recorded.
    agent: str | None = None


class RecalledMemory(BaseModel):
    id: str
    text: str
    type: MemoryType
    source: str | None
    tags: list[str]
    relevance: float
    similarity: float
    decay_level: int
    sensitivity: int
    last_referenced: datetime
    created_at: datetime
    project: str | None
    #: Where the memory came from (session file and lines), when it was imported.
    provenance: list[ProvenanceInfo] = Field(default_factory=list)
    #: The code it is about (files, identifiers, commit), as checked in ``folder``.
    anchors: list[CheckedAnchor] = Field(default_factory=list)
    #: Why the code it is about changed (``file gone: PATH``, ``NAME no longer in
    #: PATH``); null when it did not, or when nothing was checked.
    stale: str | None = None


class RecallStats(BaseModel):
    candidates: int = 0
    returned: int = 0
    token_count: int = 0


class SensitiveChunk(BaseModel):
    chunk_id: str
    sensitivity: int


class RecallResponse(BaseModel):
    memories: list[RecalledMemory] = Field(default_factory=list)
    stats: RecallStats = Field(default_factory=RecallStats)
    max_sensitivity: int = 0
    sensitive_chunks: list[SensitiveChunk] = Field(default_factory=list)


class StaleMemory(BaseModel):
    """A memory whose code changed (``memloom stale``): why, and its anchors as now."""

    id: str
    text: str
    type: MemoryType
    project: str | None
    stale: str
    anchors: list[CheckedAnchor] = Field(default_factory=list)


class StaleResponse(BaseModel):
    """The stale memories of a project, checked in ``folder``'s working tree; nothing is
    expired or deleted. ``checked``: the active memories with anchors that were looked
    at; ``note``: why nothing was checked (an unusable folder)."""

    folder: str | None
    project: str | None
    checked: int = 0
    memories: list[StaleMemory] = Field(default_factory=list)
    note: str | None = None


# ---------------------------------------------------------------- lifecycle


class ExpireRequest(_Request):
    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"examples": [{"ids": ["3f9c2a1b9e0d4c57"]}]}
    )

    ids: list[str] = Field(min_length=1, max_length=MAX_ENTRIES)


class ExpireResponse(BaseModel):
    expired: int


class SupersedeRequest(_Request):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [{"old_id": "3f9c2a1b9e0d4c57", "new_id": "a81c0e22d4b94f10"}]
        },
    )

    old_id: str = Field(min_length=1)
    new_id: str | None = None


class SupersedeResponse(BaseModel):
    superseded: bool = True


#: Why a forget by tags or ``before`` alone is refused over MCP (its caller is a model).
UNSCOPED_FORGET = (
    "a forget by tags or before alone would delete across every project: name its scope, "
    "project (one project's memories) or all=true (every project and the global ones)"
)


class ForgetRequest(_Request):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"tags": ["scratch"], "before": "2026-01-01T00:00:00Z"}]},
    )

    ids: list[str] = Field(default_factory=list, max_length=MAX_ENTRIES)
    tags: Tags = Field(default_factory=list)
    before: UTCDateTime | None = None
    older_than: UTCDateTime | None = Field(default=None, description="Distill's name for before")
    project: Annotated[str | None, AfterValidator(project_key)] = Field(
        default=None,
        min_length=1,
        max_length=MAX_NAME_CHARS,
        description="Only this project's memories. Without ids, a forget over MCP names "
        "its scope: a project, or all",
    )
    all: bool = Field(
        default=False,
        description="Every project's memories and the global ones: the explicit scope of a "
        "forget by tags or before alone (what such a forget does over HTTP anyway)",
    )

    @model_validator(mode="after")
    def _alias(self) -> ForgetRequest:
        if (
            self.before is not None
            and self.older_than is not None
            and (self.before != self.older_than)
        ):
            raise ValueError("before and older_than disagree; send one of them")
        if self.before is None:
            self.before = self.older_than
        self.older_than = None
        if self.all and self.project is not None:
            raise ValueError("send project or all, not both")
        return self

    @property
    def is_empty(self) -> bool:
        return not self.ids and not self.tags and self.before is None

    @property
    def unscoped(self) -> bool:
        """A forget by ``tags`` and/or ``before`` alone, naming no project nor ``all``:
        MCP refuses it (a model calls it) rather than guess that everything is meant; the
        owner's own HTTP call and the CLI take it as every project (Distill's meaning)."""
        return not self.is_empty and not self.ids and self.project is None and not self.all


class ForgetResponse(BaseModel):
    removed: int
    total_memories: int


class StatsResponse(BaseModel):
    total_memories: int
    active_count: int
    expired_count: int
    stale_count: int
    by_decay_level: dict[str, int]
    by_source: dict[str, int]
    by_type: dict[str, int]
    by_project: dict[str, int]
    conflicts_pending: int
    oldest_memory: datetime | None = None
    newest_memory: datetime | None = None
    embedder: str | None = None
    dimension: int | None = None


# ---------------------------------------------------------------- memloom's own


class SaveRequest(_Request):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "text": "Run the tests with: make check",
                    "type": "procedure",
                    "tags": ["testing"],
                    "project": "acme-api",
                }
            ]
        },
    )

    text: MemoryText
    type: MemoryType = MemoryType.fact
    tags: Tags = Field(default_factory=list)
    source: Name | None = None
    project: ProjectName | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    sensitivity: SensitivityLevel | None = None
    auto_classify: bool = True
    expires_at: UTCDateTime | None = None
    #: Files the memory is about, beside those its text names (found when the writer
    #: knows the project folder: the CLI, ``memloom mcp`` on stdio, session import).
    anchors: Anchors = Field(default_factory=list)


SaveOutcome = Literal["added", "merged", "versioned", "conflict"]


class SaveResponse(BaseModel):
    id: str
    outcome: SaveOutcome
    conflicts: list[ConflictInfo] = Field(default_factory=list)


class UpdateRequest(_Request):
    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"examples": [{"text": "Run the tests with: make test"}]}
    )

    text: MemoryText
    tags: Tags | None = None
    type: MemoryType | None = None
    metadata: dict[str, Any] | None = None
    sensitivity: SensitivityLevel | None = None
    #: The new version's files (None: found again from the new text where the project
    #: folder is known, else the old version's kept; ``[]``: none but the text's).
    anchors: Anchors | None = None


class UpdateResponse(BaseModel):
    id: str
    root_id: str
    version: int


class VersionInfo(BaseModel):
    id: str
    version: int
    text: str
    status: Status
    created_at: datetime


class HistoryResponse(BaseModel):
    versions: list[VersionInfo]


class MemoryDocument(BaseModel):
    """``GET /v1/memories/{id}``: one belief version with its history and provenance."""

    id: str
    root_id: str
    version: int
    status: Status
    type: MemoryType
    text: str
    original_text: str | None
    source: str | None
    tags: list[str]
    metadata: dict[str, Any]
    project: str | None
    sensitivity: int
    session_id: str | None
    created_at: datetime
    asserted_at: datetime
    last_referenced: datetime
    access_count: int
    expires_at: datetime | None
    expired_at: datetime | None
    superseded_by: str | None
    decay_level: int
    pinned: bool
    versions: list[VersionInfo] = Field(default_factory=list)
    provenance: list[ProvenanceInfo] = Field(default_factory=list)
    #: The code it is about (files, identifiers, commit).
    anchors: list[Anchor] = Field(default_factory=list)
    #: Read with a folder (``memloom show`` in the repository, ``?folder=``): why the
    #: code under it changed there (as a recall's ``stale``); None: unchanged or unchecked.
    stale: str | None = None


class ListRequest(_Request):
    """Filters and paging for ``GET /v1/memories`` and ``Memloom.list``."""

    project: ProjectName | None = None
    types: list[MemoryType] = Field(default_factory=list)
    tags: Tags = Field(default_factory=list)
    source: Name | None = None
    statuses: list[Status] = Field(default_factory=lambda: [Status.active])
    max_sensitivity: SensitivityLevel | None = None
    min_sensitivity: SensitivityLevel | None = None
    order: Literal["recent", "accessed", "created"] = "recent"
    limit: int = Field(default=50, ge=1, le=1000)
    cursor: str | None = None

    @field_validator("statuses")
    @classmethod
    def _some_status(cls, value: list[Status]) -> list[Status]:
        if not value:
            raise ValueError("statuses must name at least one status")
        return value


class ListResponse(BaseModel):
    memories: list[MemoryDocument]
    next_cursor: str | None = None
    total: int


class DecayResponse(BaseModel):
    summarized: int = 0
    keywords: int = 0
    evicted: int = 0
    examined: int = 0


class ErrorResponse(BaseModel):
    error: str


# ---------------------------------------------------------------- conflicts


class ConflictSide(BaseModel):
    id: str
    text: str
    status: Status
    type: MemoryType
    project: str | None
    created_at: datetime
    excerpt: str | None = None


class ConflictDocument(BaseModel):
    id: str
    status: Literal["pending", "resolved"]
    resolution: str | None
    #: "user" or "judge" (the LLM, during import or `conflicts auto`); None while pending.
    resolved_by: str | None = None
    #: The memory a ``merge`` resolution wrote.
    merged_id: str | None = None
    reason: str | None
    distance: float | None
    created_at: datetime
    resolved_at: datetime | None
    new: ConflictSide
    existing: ConflictSide


class ConflictList(BaseModel):
    conflicts: list[ConflictDocument]
    total: int


ResolveAction = Literal["keep_new", "keep_existing", "keep_both", "merge"]


class ResolveRequest(_Request):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"action": "keep_new"}, {"action": "merge", "text": "…"}]},
    )

    action: ResolveAction
    candidate_id: str | None = Field(default=None, max_length=64)
    text: str | None = Field(default=None, max_length=MAX_TEXT_CHARS)

    @model_validator(mode="after")
    def _merge_needs_text(self) -> ResolveRequest:
        if self.action == "merge" and not (self.text and self.text.strip()):
            raise ValueError("merge needs the merged text")
        if self.text is not None and self.action != "merge":
            raise ValueError("text is only used with action merge")
        return self
