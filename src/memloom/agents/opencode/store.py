"""OpenCode's sessions as memloom reads them: the SQLite store, opened read-only, and the
JSON files of OpenCode before 1.2, both rendered as one JSON Lines text per session.

One store holds every session, and OpenCode updates ``part`` rows in place while it
streams, so a byte offset into the database means nothing. memloom reads a session as
its **rendering** (:func:`render`): a header line, then one line per *complete* message
in the order (``time_created``, message id), each with its text parts in part-id order,
stopping at the first message that is not complete (an assistant message without
``time.completed`` or ``error`` and no message after it; a user message without parts
or, for ten minutes, without a message after it). Complete messages do not change, and
new ones come after them, so the rendering only grows: the importer's byte watermark
and its SHA-256 of the bytes read are exact over it (no loss, nothing distilled twice),
and each line -- a provenance line number -- is one message. If OpenCode ever changes a
message already read (a revert, a compaction), the hash differs, the session is read
again from its start and the message ids already distilled (the units' ``uuid``) are
left out. docs/agents.md, *OpenCode*, has the design. A message whose ``read``,
``edit``, ``write`` or ``patch`` tool parts name a file (``state.input.filePath``) carries
them as ``tools: [[kind, path], …]`` (only the name and the path of a tool part are read,
never its output); a rendering made before that changes for those messages, so their
session is read once more from its start, as above, and nothing is distilled twice.

A session's path is ``<store file>#<session id>`` (:func:`session_path`); a legacy
session is its own ``storage/session/<project>/<id>.json``.

Opening never blocks OpenCode: ``mode=ro`` (a WAL reader takes no lock a writer waits
on). Where the ``-shm`` file cannot be made or written (a read-only folder), the store
is copied with its ``-wal`` and the copy is read. A locked, corrupt or foreign file
raises :class:`StoreUnreadable` (an ``OSError``): discovery and the importer count it
and retry on the next run; nothing is marked read.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from memloom.agents.files import UnsafeFile, file_problem, open_regular

__all__ = [
    "SEP",
    "Message",
    "SessionInfo",
    "StoreUnreadable",
    "connect",
    "is_legacy_session",
    "is_store",
    "legacy_info",
    "legacy_sessions",
    "list_sessions",
    "read_messages",
    "render",
    "render_session",
    "session_path",
    "split_path",
]

#: Between the store's path and the session id in a session's path.
SEP = "#"
SQLITE_MAGIC = b"SQLite format 3\x00"
#: How long a read waits on a lock (a rollback-journal writer) before it is a skip.
BUSY_TIMEOUT_S = 1.0
#: A user message with no message after it counts as complete after this long (a
#: session whose answer never came still gets its prompt read).
USER_SETTLE_MS = 600_000
_TABLES = frozenset({"session", "message", "part"})


class StoreUnreadable(OSError):
    """The store cannot be read now (``reason``: locked, corrupt, not_a_store, unreadable)."""

    def __init__(self, path: Path, reason: str, detail: str) -> None:
        self.reason = reason
        super().__init__(f"{path}: OpenCode store {reason} ({detail})")


@dataclass(frozen=True)
class SessionInfo:
    """One session as discovery sees it; ``updated`` is the latest change in seconds."""

    id: str
    directory: str
    parent_id: str | None
    updated: float
    source: Path  # the store file, or the legacy session file


@dataclass
class Message:
    id: str
    created: int
    data: dict[str, Any]
    parts: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


# --------------------------------------------------------------------------- paths


def session_path(store: Path, session_id: str) -> Path:
    """``<store>#<session id>``: one session of a store file."""
    return Path(f"{os.fspath(store)}{SEP}{session_id}")


def split_path(path: Path) -> tuple[Path, str | None]:
    """(store file, session id) of a session path; (path, None) for a plain file."""
    from memloom.agents import session_container

    text = os.fspath(path)
    container = session_container(text)
    if container == text:
        return Path(text), None
    return Path(container), text[len(container) + len(SEP) :]


# --------------------------------------------------------------------------- SQLite


def _classify(exc: sqlite3.Error) -> str:
    text = str(exc).lower()
    if "locked" in text or "busy" in text:
        return "locked"
    if isinstance(exc, sqlite3.DatabaseError) and ("not a database" in text or "malformed" in text):
        return "corrupt"
    return "unreadable"


def _open(db: Path) -> sqlite3.Connection:
    uri = f"file:{quote(os.fspath(db))}?mode=ro"
    con = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, check_same_thread=False)
    try:
        con.execute("PRAGMA query_only = 1")
        con.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except BaseException:
        con.close()
        raise
    return con


@contextlib.contextmanager
def connect(db: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection to the store ``db``; :class:`StoreUnreadable` if there is none,
    :class:`~memloom.agents.files.UnsafeFile` if it (or its WAL) belongs to another user
    or others can write it (SQLite opens the path itself: checked just before)."""
    if not os.path.isfile(db):
        raise StoreUnreadable(db, "unreadable", "no such file")
    for part in (os.fspath(db), f"{db}-wal"):
        try:
            problem = file_problem(os.stat(part))
        except FileNotFoundError:
            continue  # no WAL
        if problem is not None:
            raise UnsafeFile(part, problem)
    snapshot: str | None = None
    try:
        try:
            con = _open(db)
        except sqlite3.Error as exc:
            if _classify(exc) != "unreadable":
                raise
            # -shm not creatable or writable: read a copy (with its WAL) instead.
            snapshot = tempfile.mkdtemp(prefix="memloom-opencode-")
            copy = Path(snapshot) / db.name
            shutil.copyfile(db, copy)
            if os.path.exists(f"{db}-wal"):
                shutil.copyfile(f"{db}-wal", f"{copy}-wal")
            con = _open(copy)
        try:
            tables = {
                r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")
            }
            if not tables >= _TABLES:
                raise StoreUnreadable(db, "not_a_store", "no session, message and part tables")
            yield con
        finally:
            con.close()
    except sqlite3.Error as exc:
        raise StoreUnreadable(db, _classify(exc), str(exc)) from exc
    finally:
        if snapshot is not None:
            shutil.rmtree(snapshot, ignore_errors=True)


def is_store(path: Path) -> bool:
    """Whether ``path`` is an OpenCode (or Kilo Code) store: SQLite, with its tables."""
    try:
        with open_regular(path) as fh:
            if fh.read(len(SQLITE_MAGIC)) != SQLITE_MAGIC:
                return False
        with connect(path):
            return True
    except OSError:
        return False


def list_sessions(db: Path) -> list[SessionInfo]:
    """Every session in the store, with its latest change (session, message or part row)."""
    with connect(db) as con:
        rows = con.execute(
            "SELECT s.id, s.directory, s.parent_id, s.time_updated,"
            " (SELECT MAX(m.time_updated) FROM message m WHERE m.session_id = s.id),"
            " (SELECT MAX(p.time_updated) FROM part p WHERE p.session_id = s.id)"
            " FROM session s ORDER BY s.id"
        ).fetchall()
    out = []
    for sid, directory, parent, *stamps in rows:
        latest = max((int(t) for t in stamps if isinstance(t, int | float)), default=0)
        out.append(SessionInfo(str(sid), str(directory or ""), parent, latest / 1000.0, db))
    return out


def _json(text: Any) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _db_messages(db: Path, sid: str) -> tuple[str, list[Message]]:
    with connect(db) as con:
        row = con.execute("SELECT directory FROM session WHERE id = ?", (sid,)).fetchone()
        if row is None:
            raise StoreUnreadable(db, "unreadable", f"no session {sid}")
        msgs = [
            Message(str(mid), int(created or 0), _json(data))
            for mid, created, data in con.execute(
                "SELECT id, time_created, data FROM message WHERE session_id = ?"
                " ORDER BY time_created, id",
                (sid,),
            )
        ]
        by_id = {m.id: m for m in msgs}
        # Only text parts are read whole: a tool part's output can be megabytes (of a
        # tool part, its tool's name and the file it names).
        for pid, mid, kind, data, tool, file in con.execute(
            "SELECT id, message_id, kind, CASE WHEN kind = 'text' THEN data END,"
            " CASE WHEN kind = 'tool' THEN json_extract(data, '$.tool') END,"
            " CASE WHEN kind = 'tool' THEN json_extract(data, '$.state.input.filePath') END"
            " FROM (SELECT id, message_id, data,"
            "  CASE WHEN json_valid(data) THEN json_extract(data, '$.type') END AS kind"
            "  FROM part WHERE session_id = ?) ORDER BY id",
            (sid,),
        ):
            if mid in by_id:
                part = _json(data) if data is not None else {"type": kind}
                if kind == "tool":
                    part = {"type": kind, "tool": tool, "state": {"input": {"filePath": file}}}
                by_id[mid].parts.append((str(pid), part))
    return str(row[0] or ""), msgs


# --------------------------------------------------------------------------- JSON files


def is_legacy_session(path: Path) -> bool:
    """Whether ``path`` is ``storage/session/<project>/<id>.json`` of the JSON layout."""
    if path.suffix != ".json" or len(path.parts) < 4 or path.parent.parent.name != "session":
        return False
    doc = _read_json(path)
    return isinstance(doc.get("id"), str) and "directory" in doc and path.stem == doc["id"]


def _read_json(path: Path) -> dict[str, Any]:
    try:
        with open_regular(path) as fh:  # never another user's file, never a FIFO
            return _json(fh.read())
    except OSError:
        return {}


def legacy_info(path: Path) -> SessionInfo | None:
    """A legacy session file as discovery sees it; None when it is not one."""
    doc = _read_json(path)
    if not isinstance(doc.get("id"), str) or path.stem != doc["id"]:
        return None
    stamp = doc.get("time", {}).get("updated") if isinstance(doc.get("time"), dict) else None
    try:
        latest = max(path.stat().st_mtime, float(stamp or 0) / 1000.0)
        msgs = path.parent.parent.parent / "message" / doc["id"]
        if msgs.is_dir():
            latest = max(latest, msgs.stat().st_mtime)
    except (OSError, TypeError, ValueError):
        return None
    parent = doc.get("parentID") if isinstance(doc.get("parentID"), str) else None
    return SessionInfo(doc["id"], str(doc.get("directory") or ""), parent, latest, path)


def legacy_sessions(
    storage: Path, admits: Callable[[Path], bool] = lambda _: True
) -> list[SessionInfo]:
    """The sessions of a ``storage/`` folder (none when it does not exist); a file
    ``admits`` refuses is never opened."""
    files = sorted((storage / "session").glob("*/*.json"))
    found = (legacy_info(p) for p in files if admits(p))
    return [info for info in found if info is not None]


def _within(storage: Path) -> Callable[[Path], bool]:
    """Whether a file's real path stays in ``storage`` (a symlink out is never read)."""
    from memloom.agents.discovery import inside

    real = os.path.realpath(storage)
    return lambda p: inside(os.path.realpath(p), real)


def _legacy_messages(path: Path) -> tuple[str, list[Message]]:
    doc = _read_json(path)
    if not doc:
        raise StoreUnreadable(path, "unreadable", "not a session file")
    storage = path.parent.parent.parent
    stays = _within(storage)
    msgs = []
    for mpath in sorted((storage / "message" / path.stem).glob("*.json")):
        if not stays(mpath):
            continue
        data = _read_json(mpath)
        mid = data.get("id") if isinstance(data.get("id"), str) else mpath.stem
        created = data.get("time", {}).get("created") if isinstance(data.get("time"), dict) else 0
        msg = Message(mid, int(created or 0), data)
        for ppath in sorted((storage / "part" / mid).glob("*.json")):
            if not stays(ppath):
                continue
            part = _read_json(ppath)
            msg.parts.append(
                (part.get("id") if isinstance(part.get("id"), str) else ppath.stem, part)
            )
        msgs.append(msg)
    msgs.sort(key=lambda m: (m.created, m.id))
    return str(doc.get("directory") or ""), msgs


def read_messages(path: Path) -> tuple[str, str, list[Message]]:
    """(session id, directory, messages in order) of a session path (store or legacy)."""
    store, sid = split_path(path)
    if sid is not None:
        directory, msgs = _db_messages(store, sid)
        return sid, directory, msgs
    directory, msgs = _legacy_messages(path)
    return path.stem, directory, msgs


# --------------------------------------------------------------------------- rendering


def _complete(msg: Message, followed: bool, now_ms: float) -> bool:
    if msg.data.get("role") == "assistant":
        times = msg.data.get("time")
        done = isinstance(times, dict) and times.get("completed") is not None
        return done or msg.data.get("error") is not None or followed
    if not msg.parts:
        return False  # the row is written before its parts
    return followed or now_ms - msg.created >= USER_SETTLE_MS


#: OpenCode's file tools: the ``filePath`` of their input is read or edited.
_FILE_TOOLS = {"read": "read", "edit": "edit", "write": "edit", "patch": "edit"}


def _tool_file(part: dict[str, Any]) -> list[str] | None:
    """``[kind, path]`` of a ``read``/``edit``/``write`` tool part, or None."""
    kind = _FILE_TOOLS.get(part.get("tool")) if isinstance(part.get("tool"), str) else None
    state = part.get("state")
    given = state.get("input") if isinstance(state, dict) else None
    path = given.get("filePath") if isinstance(given, dict) else None
    if kind is None or not isinstance(path, str) or not path or len(path) > 4096:
        return None
    return [kind, path]


def _line(msg: Message) -> dict[str, Any]:
    texts = []
    tools = []
    left_out: dict[str, int] = {}
    for pid, part in msg.parts:
        kind = part.get("type")
        text = part.get("text")
        if kind == "tool":
            touched = _tool_file(part)
            if touched is not None:
                tools.append(touched)
        if (
            kind == "text"
            and isinstance(text, str)
            and not part.get("synthetic")
            and not part.get("ignored")
        ):
            texts.append({"id": pid, "text": text})
        else:
            name = kind if isinstance(kind, str) else "untyped"
            name = "synthetic" if kind == "text" else name
            left_out[name] = left_out.get(name, 0) + 1
    role = msg.data.get("role")
    line = {
        "id": msg.id,
        "role": role,
        "created": msg.created,
        "parts": texts,
        "left_out": left_out,
    }
    if tools:  # only then: a rendering without file tools is unchanged (its watermark holds)
        line["tools"] = tools
    return line


def render(
    session_id: str, directory: str, messages: list[Message], *, now: float | None = None
) -> bytes:
    """The session's JSON Lines text: a header, then each complete message up to the
    first incomplete one (module doc)."""
    now_ms = (time.time() if now is None else now) * 1000.0
    dumps = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode
    lines = [dumps({"opencode_session": session_id, "directory": directory})]
    for i, msg in enumerate(messages):
        if not _complete(msg, i + 1 < len(messages), now_ms):
            break
        lines.append(dumps(_line(msg)))
    return ("\n".join(lines) + "\n").encode("utf-8")


_cache: dict[str, tuple[tuple[Any, ...], bytes]] = {}
_CACHE_SIZE = 8


def _stamp(store: Path) -> tuple[Any, ...]:
    out: list[Any] = []
    for suffix in ("", "-wal"):
        try:
            st = os.stat(f"{store}{suffix}")
            # owner and mode too: a store given away or opened to others is read (refused) again
            out += [st.st_size, st.st_mtime_ns, st.st_ino, st.st_uid, st.st_mode]
        except OSError:
            out += [None]
    return tuple(out)


def render_session(path: Path) -> bytes:
    """The rendering of the session at ``path`` (:func:`render`), as of now. The importer
    reads a session several times in one run (plan, read, hash): an unchanged store file
    and WAL give the same bytes from a small cache."""
    store, sid = split_path(path)
    key = os.fspath(path)
    stamp = _stamp(store) if sid is not None else None
    hit = _cache.get(key)
    if stamp is not None and hit is not None and hit[0] == stamp:
        return hit[1]
    data = render(*read_messages(path))
    if stamp is not None:
        if len(_cache) >= _CACHE_SIZE:
            _cache.pop(next(iter(_cache)))
        _cache[key] = (stamp, data)
    return data
