"""What the adapters' hook installers share: the settings file, its backup, memloom's handlers.

Each agent keeps its hooks in a file of its own shape (Claude Code's and Codex's
``{"hooks": {event: [{"hooks": [handler, …]}]}}`` as JSON, Gemini's and Copilot's
edited as text so comments survive). Whatever the shape, a change is written
atomically with the file's mode kept (:func:`write_atomic`) after a one-time
backup (:func:`backup_once`), and a file memloom cannot read is refused with a
``SettingsError`` that says memloom has not changed it.

Standard library only.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from memloom.agents.base import HooksChange
from memloom.errors import SettingsError

__all__ = [
    "BACKUP_SUFFIX",
    "UnterminatedComment",
    "backup_once",
    "json_indent",
    "memloom_handlers",
    "parse_settings",
    "read_settings",
    "restore_backup",
    "skip_blank",
    "strip_handlers",
    "write_atomic",
    "write_installed",
    "write_json",
]

#: The one-time backup of a settings file: ``<file>.memloom-backup``.
BACKUP_SUFFIX = ".memloom-backup"


def read_settings(path: Path) -> str | None:
    """The settings file's text exactly as it is (no newline translation); None when there
    is no file; ``SettingsError`` when it cannot be read or is not UTF-8."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SettingsError(
            f"cannot read {path}: {exc.strerror}; memloom has not changed it"
        ) from exc
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SettingsError(f"{path} is not UTF-8; memloom has not changed it") from exc


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8, newlines as given) through a temporary file,
    keeping the file's mode (a new file is ``0600``); its folder is created if need be."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".memloom-tmp")
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    fd = os.open(tmp, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, mode)
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def backup_once(path: Path) -> Path | None:
    """Copy ``path`` to ``<path>.memloom-backup`` unless that exists already (it is never
    overwritten: it keeps the file as memloom first found it); None if ``path`` does not
    exist."""
    if not path.exists():
        return None
    backup = path.with_name(path.name + BACKUP_SUFFIX)
    if not backup.exists():
        shutil.copy2(path, backup)
    return backup


def json_indent(raw: str | None, default: int = 2) -> int | str:
    """The indentation a JSON file's author used (its first indented line's), so that a
    rewrite keeps their style; ``default`` for a new or flat file."""
    for line in (raw or "").splitlines()[1:]:
        lead = line[: len(line) - len(line.lstrip(" \t"))]
        if lead:
            return len(lead) if lead.strip(" ") == "" else lead
    return default


def write_json(path: Path, data: Any) -> None:
    """``data`` as the JSON text of ``path`` (atomically), indented as the file's author
    indented it (:func:`json_indent`), non-ASCII kept as it is."""
    indent = json_indent(read_settings(path))
    write_atomic(path, json.dumps(data, indent=indent, ensure_ascii=False) + "\n")


def write_installed(path: Path, data: Any, events: Iterable[str]) -> HooksChange:
    """Install by writing ``data`` as JSON to ``path`` after its one-time backup: the
    change, naming ``events``."""
    backup = backup_once(path)
    write_json(path, data)
    return HooksChange(path, backup, True, list(events))


def restore_backup(path: Path, data: Any, parse: Callable[[Path, str], Any]) -> bool:
    """Put the one-time backup's bytes back when they hold exactly ``data`` (what
    removing memloom's part leaves): the file as the user had it, formatting, key order
    and comments included. Whether it did; nothing is written otherwise."""
    backup = path.with_name(path.name + BACKUP_SUFFIX)
    raw = read_settings(backup)
    if raw is None:
        return False
    try:
        same = parse(backup, raw) == data
    except SettingsError:
        return False
    if same:
        write_atomic(path, raw)
    return same


def parse_settings(path: Path, raw: str) -> dict[str, Any]:
    """The JSON object in ``raw`` (the text of ``path``), whose ``hooks`` (if any) is an
    object; ``SettingsError`` saying what is wrong otherwise."""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise SettingsError(
            f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}); fix it and run again "
            "- memloom has not changed it"
        ) from exc
    if not isinstance(data, dict):
        raise SettingsError(f"{path} does not hold a JSON object; memloom has not changed it")
    if "hooks" in data and not isinstance(data["hooks"], dict):
        raise SettingsError(f"'hooks' in {path} is not an object; memloom has not changed it")
    return data


# --------------------------------------------------------------------------- {"hooks": …}

#: Whether a handler is one memloom installed (each agent recognises its own).
IsMemloom = Callable[[Any], bool]


def strip_handlers(hooks: dict[str, Any], is_memloom: IsMemloom) -> dict[str, Any]:
    """A ``{event: [{"hooks": [handler, …]}, …]}`` object without memloom's handlers:
    a group they emptied goes, and an event left without groups; the rest stays."""
    out: dict[str, Any] = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            out[event] = groups
            continue
        kept = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                handlers = [h for h in group["hooks"] if not is_memloom(h)]
                if not handlers and group["hooks"]:
                    continue
                group = {**group, "hooks": handlers}
            kept.append(group)
        if kept:
            out[event] = kept
    return out


def memloom_handlers(hooks: dict[str, Any], is_memloom: IsMemloom) -> dict[str, list[Any]]:
    """memloom's handlers in a ``{event: [{"hooks": [handler, …]}, …]}`` object, by event."""
    found: dict[str, list[Any]] = {}
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else []:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for h in handlers if isinstance(handlers, list) else []:
                if is_memloom(h):
                    found.setdefault(event, []).append(h)
    return found


# --------------------------------------------------------------------------- JSONC text


class UnterminatedComment(ValueError):
    """A ``/*`` comment without its ``*/``; ``pos`` is where it opens."""

    def __init__(self, pos: int) -> None:
        super().__init__("unterminated comment")
        self.pos = pos


def skip_blank(s: str, i: int) -> int:
    """The index of the first character at or after ``i`` that is neither white space
    (a byte order mark included) nor inside a ``//`` or ``/* */`` comment."""
    n = len(s)
    while i < n:
        c = s[i]
        if c in " \t\r\n\ufeff":
            i += 1
        elif s.startswith("//", i):
            j = s.find("\n", i)
            i = n if j < 0 else j + 1
        elif s.startswith("/*", i):
            j = s.find("*/", i + 2)
            if j < 0:
                raise UnterminatedComment(i)
            i = j + 2
        else:
            break
    return i
