"""The files a transcript's tool calls read or edited, out of the calls' arguments.

Each agent's parser reports, besides its units, ``ParseResult.touched``: (line, path
as the tool gave it, ``"read"``/``"edit"``). The importer anchors a memory to the files
touched in the lines it was distilled from (:func:`memloom.anchors.from_tools`, which
is where a path is fenced: nothing here opens a file or trusts a path).

Agents with a file tool name the file in an argument (:func:`from_args`). Codex has
none for reading: its model runs ``cat``/``sed -n``/``head``/``nl`` through a shell, so
the file is read out of the command (:func:`shell_reads`, conservative: one simple
command or a pipeline whose first command reads one plain file; anything with a
redirection, a variable, a glob or a substitution gives nothing), and its edits are
``apply_patch`` envelopes (:func:`patch_files`).

Standard library only, like the parsers that import it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "EDIT",
    "MAX_PATH",
    "READ",
    "from_args",
    "gemini_call",
    "joined",
    "patch_files",
    "shell_reads",
]

READ = "read"
EDIT = "edit"
#: A longer "path" is not one (pasted text in a mistyped argument).
MAX_PATH = 4096
#: How much of a shell command is parsed (a heredoc can be long).
MAX_COMMAND = 8192

_SHELLS = frozenset(
    {"bash", "sh", "zsh", "dash", "/bin/bash", "/bin/sh", "/bin/zsh", "/usr/bin/bash"}
)
_OPERATORS = frozenset({"|", "&&", "||", ";", "&"})
# Readers whose file operands are what they print; the options that take a value.
_READERS: dict[str, frozenset[str]] = {
    "cat": frozenset(),
    "nl": frozenset({"-b", "-d", "-f", "-h", "-i", "-l", "-n", "-s", "-v", "-w"}),
    "head": frozenset({"-n", "-c"}),
    "tail": frozenset({"-n", "-c"}),
    "sed": frozenset({"-e"}),
}
_SED_PRINT = re.compile(r"^\$?\d*(?:,\s*(?:\d+|\$))?p$")
_PLAIN = re.compile(r"^[\w@+~./,:=-]+$", re.UNICODE)
_PATCH_LINE = re.compile(r"^\*\*\* (?:Update File|Add File|Move to): (.+?)\s*$", re.MULTILINE)


def _path(value: Any) -> str | None:
    """A tool argument as a path, or None (not a string, empty, NUL, too long)."""
    if not isinstance(value, str):
        return None
    value = value.strip()
    if not value or "\x00" in value or len(value) > MAX_PATH or "\n" in value:
        return None
    return value


def from_args(
    args: Any, keys: Sequence[str], kind: str, *, lists: Sequence[str] = ()
) -> list[tuple[str, str]]:
    """The paths in a tool call's arguments (a mapping): the first of ``keys`` that is
    a string, and every string of the ``lists`` keys (``read_many_files``'s ``paths``)."""
    if not isinstance(args, Mapping):
        return []
    out: list[tuple[str, str]] = []
    for key in keys:
        path = _path(args.get(key))
        if path is not None:
            out.append((path, kind))
            break
    for key in lists:
        values = args.get(key)
        if isinstance(values, list):
            out.extend((p, kind) for p in map(_path, values[:64]) if p is not None)
    return out


#: Gemini CLI's and Qwen Code's file tools (Qwen's ``edit`` is Gemini's ``replace``).
_GEMINI_TOOLS = {
    "read_file": READ,
    "read_many_files": READ,
    "write_file": EDIT,
    "replace": EDIT,
    "edit": EDIT,
}
_GEMINI_KEYS = ("file_path", "absolute_path", "path")


def gemini_call(name: Any, args: Any) -> list[tuple[str, str]]:
    """The files a Gemini CLI or Qwen Code ``functionCall`` (or Gemini's recorded
    ``toolCalls`` entry) reads or edits: ``file_path``/``absolute_path``, and
    ``read_many_files``'s ``paths`` (a glob among them names no file: the fence
    anchors regular files only)."""
    kind = _GEMINI_TOOLS.get(name) if isinstance(name, str) else None
    if kind is None:
        return []
    lists = ("paths",) if name == "read_many_files" else ()
    return from_args(args, _GEMINI_KEYS, kind, lists=lists)


def patch_files(patch: Any) -> list[tuple[str, str]]:
    """The files an ``apply_patch`` envelope adds or updates (and moves to); a deleted
    file is gone and not reported."""
    if not isinstance(patch, str):
        return []
    found = (_path(m) for m in _PATCH_LINE.findall(patch[: 1 << 20]))
    return [(p, EDIT) for p in dict.fromkeys(found) if p is not None]


def _words(command: str) -> list[str] | None:
    import shlex  # only a Codex transcript's shell calls need it (the hooks never do)

    try:
        lexer = shlex.shlex(command[:MAX_COMMAND], posix=True, punctuation_chars=";&|<>()")
        lexer.whitespace_split = True
        return list(lexer)
    except ValueError:  # an unclosed quote
        return None


def _script(command: Any) -> str | None:
    """The shell text of a command given as a string or as an argv list
    (``["bash", "-lc", "sed -n 1,80p x.py"]``)."""
    if isinstance(command, str):
        return command
    if isinstance(command, list) and all(isinstance(w, str) for w in command):
        if len(command) == 3 and command[0] in _SHELLS and command[1] in ("-c", "-lc"):
            return command[2]
        import shlex

        return shlex.join(command)
    return None


def _one_file(argv: Sequence[str]) -> str | None:
    """The one file operand of a reader command, or None (not a reader, none, several,
    or anything a shell would expand)."""
    name, rest = argv[0], list(argv[1:])
    takes = _READERS.get(name)
    if takes is None:
        return None
    if name == "sed":
        # ``sed -n 'A,Bp' FILE`` only: printing lines, never ``-i`` (an edit).
        if len(rest) != 3 or rest[0] != "-n" or not _SED_PRINT.match(rest[1].replace(" ", "")):
            return None
        operands = rest[2:]
    else:
        operands, skip = [], False
        for word in rest:
            if skip:
                skip = False
            elif word in takes:
                skip = True
            elif word.startswith("-") and word != "-":
                continue
            else:
                operands.append(word)
    if len(operands) != 1 or not _PLAIN.match(operands[0]) or operands[0] == "-":
        return None
    return operands[0]


def shell_reads(command: Any) -> list[tuple[str, str]]:
    """The file a shell command reads, when it is plainly one: ``cat F``, ``nl -ba F``,
    ``head -n 40 F``, ``tail F``, ``sed -n 'A,Bp' F``, each possibly piped into another
    command, or several such joined by ``&&``/``;``. Anything else gives nothing: a
    redirection, a subshell, a glob, a variable, a substitution."""
    script = _script(command)
    if script is None or any(c in script for c in "$`*?[{\n") or "<<" in script:
        return []
    words = _words(script)
    if not words or any(w in ("<", ">", ">>", "(", ")") or w.startswith((">", "<")) for w in words):
        return []
    out: list[tuple[str, str]] = []
    piped = False  # the segment reads the previous one's output, not a file
    segment: list[str] = []
    for word in [*words, ";"]:
        if word not in _OPERATORS:
            segment.append(word)
            continue
        if segment and not piped:
            path = _one_file(segment)
            if path is not None:
                out.append((path, READ))
        piped, segment = word == "|", []
    return list(dict.fromkeys(out))


def joined(cwd: str | None, found: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """Relative paths read from the folder a command ran in (``workdir``), when that
    folder is absolute; absolute paths and a missing folder leave them as they are."""
    if not cwd or not cwd.startswith("/"):
        return list(found)
    base = cwd.rstrip("/")
    return [(p if p.startswith(("/", "~")) else f"{base}/{p}", k) for p, k in found]
