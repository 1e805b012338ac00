"""What the adapters share to read an agent's own memory files ("native" memories).

Claude Code, Qwen Code, Gemini CLI and Codex keep memories of their own in Markdown
files (``../shared/reference/agents-native-memory.md``; docs/agents.md). An adapter
says where its folders are (:class:`NativeFolder`, with the project each belongs to)
and reads one file into :class:`NativeNote` s; the rest -- listing a folder's files
safely, the frontmatter, Markdown items, the type mapping -- is here, once.
:mod:`memloom.sessions.native` turns the notes into memories and follows the files.

No adapter is imported here (architecture rule 5).
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from memloom.agents.base import Discovery
from memloom.agents.discovery import Fence, scan_sorted

__all__ = [
    "MAX_NATIVE_BYTES",
    "MAX_NOTE_CHARS",
    "NativeFolder",
    "NativeNote",
    "agent_type",
    "frontmatter",
    "guess_type",
    "key_names",
    "list_files",
    "markdown_items",
    "note_items",
    "note_text",
    "read_index",
    "read_text",
    "read_topic",
    "recent_files",
    "sanitized_key",
    "subfolders",
]

#: A memory file larger than this is not an agent's memory (each agent keeps them
#: small: Claude Code cuts a file at 4 KiB when it recalls it, Codex its summary at 10 KB).
MAX_NATIVE_BYTES = 256 * 1024
#: A note's text as stored (the agents keep notes short; the rest of a longer one is cut).
MAX_NOTE_CHARS = 4000
#: Files one folder may hold before the rest are left unread (the agents keep dozens).
MAX_FILES = 5000

MemoryKind = Literal["fact", "preference", "episode", "procedure"]


@dataclass(frozen=True)
class NativeFolder:
    """One folder of an agent's own memory, and whose memory it is.

    ``project``: the project folder (an absolute path) the memories belong to; None
    for a folder the agent shows in every project (Qwen Code's user folder, Codex).
    ``why``: how the project was found, or why the folder is not read
    (``skip``), for ``memloom status``.
    """

    agent: str
    path: Path
    project: str | None
    scope: Literal["project", "user"] = "project"
    #: Set when the folder is not read: the reason (``project_unknown``, ``unsafe``).
    skip: str | None = None
    why: str = ""


@dataclass
class NativeNote:
    """One memory as the agent wrote it, ready to store (not yet redacted).

    ``key``: the note's name within its file when the file holds one memory (``""``
    for a note of a list, whose name the sync gives it); ``kind``: memloom's type;
    ``native_type``: the agent's own (``feedback``, ``user``…); lines are 1-based."""

    text: str
    kind: MemoryKind
    start_line: int
    end_line: int
    key: str = ""
    native_type: str | None = None
    title: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------- files


def list_files(
    folder: Path,
    *,
    pattern: str = "*.md",
    skip_dirs: tuple[str, ...] = (),
    recursive: bool = True,
) -> tuple[list[tuple[Path, os.stat_result]], Discovery]:
    """The files matching ``pattern`` below ``folder`` that may be read, with their
    stat, and what was left out (``unsafe``: a symlink out of the folder, another
    user's file or folder, one others may write -- :class:`~memloom.agents.discovery.Fence`;
    ``over_cap``: larger than :data:`MAX_NATIVE_BYTES`, or past :data:`MAX_FILES`).
    Hidden folders (``.git``, Gemini's ``.inbox``) and ``skip_dirs`` (names relative to
    ``folder``) are not entered, nor any folder unless ``recursive``. Sorted by path."""
    out = Discovery()
    found: list[tuple[Path, os.stat_result]] = []
    fence = Fence(folder, out)
    if fence.refused() or not folder.is_dir():
        return found, out
    for root, dirs, files in os.walk(folder):
        here = Path(root)
        rel = here.relative_to(folder)
        dirs[:] = sorted(
            d
            for d in dirs
            if recursive
            and not d.startswith(".")
            and (rel / d).as_posix() not in skip_dirs
            and fence.enters(here / d)
        )
        for name in sorted(files):
            path = here / name
            if name.startswith(".") or not fnmatch.fnmatch(name, pattern):
                continue
            st = fence.regular_stat(path)
            if st is None:
                continue
            if st.st_size > MAX_NATIVE_BYTES or len(found) >= MAX_FILES:
                out.skip("over_cap", path)
                continue
            found.append((path, st))
    return found, out


def read_text(path: Path) -> str:
    """A memory file's text (never blocking on a FIFO swapped in; checked again on the
    descriptor); undecodable bytes replaced, lone surrogates and NULs repaired."""
    from memloom.agents.files import open_regular
    from memloom.text import safe_text

    with open_regular(path) as fh:
        data = fh.read(MAX_NATIVE_BYTES + 1)
    return safe_text(data[:MAX_NATIVE_BYTES].decode("utf-8", errors="replace"))


def sanitized_key(path: str) -> str:
    """The folder name Claude Code and Qwen Code give a project: every character of its
    path that is not a letter or a digit becomes ``-`` (``/home/me/shop`` ->
    ``-home-me-shop``)."""
    return re.sub(r"[^A-Za-z0-9]", "-", path)


#: Claude Code cuts a project key longer than this and appends ``-<hash>`` (its own).
MAX_KEY = 200


def key_names(key: str, path: str) -> bool:
    """Whether the folder name ``key`` is ``path``'s: its :func:`sanitized_key`, or
    for a long path (Claude Code) that key's first :data:`MAX_KEY` characters and a
    ``-``-suffix (the hash Claude Code appends, which memloom does not recompute)."""
    full = sanitized_key(path)
    if full == key:
        return True
    return len(full) > MAX_KEY and key.startswith(full[:MAX_KEY] + "-")


# ---------------------------------------------------------------- frontmatter

_FRONT_RE = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.S)
#: Frontmatter larger than this is not read as YAML (a note's is a few lines).
_MAX_FRONT = 8 * 1024


def frontmatter(text: str) -> tuple[dict[str, Any], str, int]:
    """A file's YAML frontmatter (``{}`` if none or unreadable), its body, and the line
    the body starts on (1-based). Only plain YAML is read (``yaml.safe_load``)."""
    m = _FRONT_RE.match(text)
    if not m:
        return {}, text, 1
    body = text[m.end() :]
    first = text.count("\n", 0, m.end()) + 1
    raw = m.group(1)
    if len(raw) > _MAX_FRONT:
        return {}, body, first
    import yaml

    try:
        data = yaml.load(raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return {}, body, first
    return (data if isinstance(data, dict) else {}), body, first


# ---------------------------------------------------------------- text

#: The agents' own types (Claude Code, Qwen Code) -> memloom's: the user's ways and
#: the feedback they gave are preferences; the project and its references are facts.
AGENT_TYPES: dict[str, MemoryKind] = {
    "user": "preference",
    "feedback": "preference",
    "project": "fact",
    "reference": "fact",
}
_PREFERENCE_RE = re.compile(
    r"\b(prefers?|preferred|always|never|don'?t|do not|instead of|rather than|avoid)\b", re.I
)
_PROCEDURE_RE = re.compile(r"^(to [a-z]+\b|run\b|steps?\b|first\b)|\b(then run|step \d)\b", re.I)


def agent_type(value: Any) -> MemoryKind | None:
    """memloom's type for an agent's own type name (None: not one the agents use)."""
    return AGENT_TYPES.get(value.strip().lower()) if isinstance(value, str) else None


def guess_type(text: str, section: str = "") -> MemoryKind:
    """memloom's type for a note with none (Gemini's and Codex's free Markdown): from
    its section heading first, then its words."""
    head = section.lower()
    if "prefer" in head or "profile" in head or "feedback" in head:
        return "preference"
    if "tip" in head or "procedure" in head or "how to" in head or "workflow" in head:
        return "procedure"
    if _PREFERENCE_RE.search(text):
        return "preference"
    if _PROCEDURE_RE.search(text.strip()):
        return "procedure"
    return "fact"


_BOLD_RE = re.compile(r"\*\*([^*\n]+?)\*\*|__([^_\n]+?)__")
_WIKI_RE = re.compile(r"\[\[([^\]\n|]+)(?:\|([^\]\n]+))?\]\]")


def note_text(body: str) -> str:
    """A note's Markdown as a memory's text: bold markers and ``[[links]]`` become their
    words, blank runs one blank line, trailing space gone; at most
    :data:`MAX_NOTE_CHARS` (cut at a line end where one is near)."""
    text = _BOLD_RE.sub(lambda m: m.group(1) or m.group(2), body)
    text = _WIKI_RE.sub(lambda m: m.group(2) or m.group(1), text)
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    out: list[str] = []
    for line in lines:
        if not line and (not out or not out[-1]):
            continue
        out.append(line)
    text = "\n".join(out).strip()
    if len(text) > MAX_NOTE_CHARS:
        cut = text.rfind("\n", 0, MAX_NOTE_CHARS - 1)
        text = text[: cut if cut > MAX_NOTE_CHARS // 2 else MAX_NOTE_CHARS - 1].rstrip() + "…"
    return text


_HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET_RE = re.compile(r"^(\s*)(?:[-*+]|\d{1,3}[.)])\s+(.*)$")
_FENCE_RE = re.compile(r"^\s*(```|~~~)")


def markdown_items(
    text: str, first_line: int = 1
) -> Iterator[tuple[tuple[str, ...], str, int, int]]:
    """A Markdown list's items: each bullet with its continuation lines, or each
    paragraph outside a list, as ``(sections, text, start_line, end_line)``; the
    sections are the headings above it, outermost first (``## Tips`` then ``### CI``).
    Headings, rules and blank lines are not items; a fenced block stays with the item
    it follows."""
    headings: list[tuple[int, str]] = []
    item: list[str] = []
    start = end = 0
    fenced = False

    def flush() -> Iterator[tuple[tuple[str, ...], str, int, int]]:
        if item:
            body = "\n".join(item).strip()
            if body:
                yield tuple(h for _, h in headings), body, start, end
        item.clear()

    for offset, line in enumerate(text.splitlines()):
        number = first_line + offset
        if fenced or _FENCE_RE.match(line):
            if _FENCE_RE.match(line):
                fenced = not fenced
            if not item:
                start = number
            item.append(line)
            end = number
            continue
        heading = _HEADING_RE.match(line)
        if heading:
            yield from flush()
            level = len(heading.group(1))
            headings = [h for h in headings if h[0] < level] + [(level, heading.group(2))]
            continue
        if not line.strip() or re.fullmatch(r"\s*([-*_])(\s*\1){2,}\s*", line):
            yield from flush()
            continue
        bullet = _BULLET_RE.match(line)
        if bullet and len(bullet.group(1)) < 2:
            yield from flush()
            start = number
            item.append(bullet.group(2))
        else:
            if not item:
                start = number
            item.append(line.strip())
        end = number
    yield from flush()


# ---------------------------------------------------------------- projects

#: Folders looked at while :func:`decode_key` matches a key to the file system.
_MAX_VISITS = 20000


def project_for_key(key: str, cwds: Iterable[str | None]) -> tuple[str | None, str]:
    """The project folder whose :func:`sanitized_key` is ``key`` (Claude Code's and Qwen
    Code's folder names), and how it was found: the working directory of a session in
    that folder, or one of its parents (``"session"``); else the file system, matched
    name by name from ``/`` (``"folders"``). ``(None, "project_unknown")`` when neither
    finds it (a project deleted, or from another machine): its memories are not read,
    for they would otherwise be shown in every project."""
    for cwd in cwds:
        if not isinstance(cwd, str) or not os.path.isabs(cwd):
            continue
        here = os.path.normpath(cwd)
        cut: list[str] = []  # a long key names every folder its first 200 characters do
        while True:
            if sanitized_key(here) == key:
                return here, "session"
            if key_names(key, here):
                cut.append(here)
            parent = os.path.dirname(here)
            if parent == here:
                break
            here = parent
        if cut:  # the git root among them (what Claude Code keys by), else the outermost
            return next(
                (c for c in cut if os.path.exists(os.path.join(c, ".git"))), cut[-1]
            ), "session"
    found = decode_key(key)
    return (found, "folders") if found else (None, "project_unknown")


def decode_key(key: str) -> str | None:
    """The existing folder whose :func:`sanitized_key` is ``key``, found by walking
    down from ``/`` through the names that fit (a ``-`` may be a ``/`` or any other
    character that is not a letter or digit); None if there is none."""
    if not key.startswith("-"):
        return None
    visits = 0

    def walk(folder: str, rest: str) -> str | None:
        nonlocal visits
        if not rest:
            return folder
        if not rest.startswith("-"):
            return None
        for entry in scan_sorted(folder):
            visits += 1
            if visits > _MAX_VISITS:
                return None
            name = sanitized_key(entry.name)
            tail = rest[1 + len(name) :]
            if not rest.startswith(name, 1) or (tail and not tail.startswith("-")):
                continue
            try:
                if not entry.is_dir(follow_symlinks=False):
                    continue
            except OSError:
                continue
            found = walk(entry.path, tail)
            if found:
                return found
        return None

    return walk("/", key)


def subfolders(folder: Path) -> list[Path]:
    """The folders directly in ``folder`` (no symlinks), in name order; none if it
    cannot be listed (the agents' per-project folders)."""
    out = []
    for entry in scan_sorted(folder):
        try:
            if entry.is_dir(follow_symlinks=False):
                out.append(Path(entry.path))
        except OSError:
            continue
    return out


def recent_files(folder: Path, pattern: str, most: int) -> list[Path]:
    """The ``most`` newest regular files (no symlinks) in ``folder`` matching ``pattern``."""
    found = []
    try:
        for path in folder.glob(pattern):
            try:
                st = path.lstat()
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                found.append((st.st_mtime, path))
    except OSError:
        return []
    return [p for _, p in sorted(found, reverse=True)[:most]]


# ---------------------------------------------------------------- one note per file


def read_topic(text: str, path: Path) -> list[NativeNote]:
    """A file holding one memory with frontmatter (Claude Code, Qwen Code): its body
    (with its **Why:** and **How to apply:** lines) as the text, else its description;
    its type from the frontmatter (``type``, or Claude Code's ``metadata.type``), else
    the folder it is in (Qwen's ``feedback/``), else its words."""
    meta, body, first = frontmatter(text)
    nested = meta.get("metadata")
    native_type = meta.get("type")
    if native_type is None and isinstance(nested, dict):
        native_type = nested.get("type")
    name, description = meta.get("name"), meta.get("description")
    name = name.strip() if isinstance(name, str) else None
    description = description.strip() if isinstance(description, str) else None
    content = note_text(body)
    lines = body.splitlines()
    lead = next((i for i, line in enumerate(lines) if line.strip()), None)
    if content and lead is not None:
        start = first + lead
        end = first + max(i for i, line in enumerate(lines) if line.strip())
    else:
        content = note_text(description or name or "")
        start = end = 1
    if not content:
        return []
    kind = agent_type(native_type) or agent_type(path.parent.name) or guess_type(content)
    return [
        NativeNote(
            text=content,
            kind=kind,
            start_line=start,
            end_line=end,
            key="note",
            native_type=native_type if isinstance(native_type, str) else None,
            title=name or description,
            extra={k: v for k, v in (("name", name), ("description", description)) if v},
        )
    ]


_LINK_RE = re.compile(r"\]\(\s*<?([^)>\s]+)>?[^)]*\)")


def _pointer(item: str) -> bool:
    """Whether a list item points at a memory file (``[Title](file.md)``)."""
    return any(t.endswith(".md") and "://" not in t for t in _LINK_RE.findall(item))


def read_index(text: str) -> list[NativeNote]:
    """An index (``MEMORY.md`` of Claude Code and Qwen Code): its pointer lines
    (``- [Title](file.md) — hook``) are the files' own, read there; any other line is
    a note the model wrote into the index itself."""
    return note_items(text, skip_items=_pointer)


def note_items(
    text: str,
    *,
    skip_sections: tuple[str, ...] = (),
    skip_items: Callable[[str], bool] | None = None,
) -> list[NativeNote]:
    """Free Markdown (Gemini CLI's memory, Codex's summary): each list item or
    paragraph one note, typed by its sections and words; a section whose heading starts
    with one of ``skip_sections`` (case-insensitive) is not read, nor any below it, nor
    an item ``skip_items`` says no to. A file that is one paragraph is one note."""
    _, body, first = frontmatter(text)
    notes = []
    skips = tuple(s.lower() for s in skip_sections)
    for sections, item, start, end in markdown_items(body, first):
        if skips and any(h.lower().startswith(skips) for h in sections):
            continue
        if skip_items is not None and skip_items(item):
            continue
        content = note_text(item)
        if content:
            kind = guess_type(content, " ".join(sections))
            notes.append(NativeNote(content, kind, start, end))
    return notes
