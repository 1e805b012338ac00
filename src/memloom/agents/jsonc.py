"""Edit a JSON settings file as text, so that everything memloom does not touch keeps its bytes.

Gemini CLI and Qwen Code (``settings.json``) and OpenCode (``opencode.json``) read
their settings after stripping ``//`` and ``/* */`` comments, so users keep comments in
them. A load-and-dump round trip would lose them and reformat the file. :func:`parse`
reads JSON-with-comments into nodes that know their character spans; the edit functions
insert or delete exactly one member
or array item, in the indentation style of the surrounding text, and removing
what was inserted gives back the original text.

Standard library only (``memloom connect`` and the hook fast path share the package).
Shared by the adapters' hook installers (:mod:`memloom.agents.grouphooks`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memloom.agents.hookfile import UnterminatedComment, skip_blank
from memloom.errors import SettingsError

__all__ = [
    "JsoncError",
    "Member",
    "Node",
    "append_item",
    "indent_unit",
    "insert_member",
    "parse",
    "remove_item",
    "remove_member",
]

_STRING_RE = re.compile(r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"')
_NUMBER_RE = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_LITERALS = {"true": True, "false": False, "null": None}


class JsoncError(ValueError):
    """The text is not JSON (comments allowed); ``line`` is 1-based."""

    def __init__(self, msg: str, text: str, pos: int) -> None:
        self.line = text.count("\n", 0, pos) + 1
        super().__init__(f"{msg} at line {self.line}")


@dataclass
class Member:
    key: str
    start: int  # the key's opening quote
    value: Node


@dataclass
class Node:
    kind: str  # "object" | "array" | "scalar"
    start: int
    end: int  # just past the value
    value: Any = None
    members: list[Member] = field(default_factory=list)
    items: list[Node] = field(default_factory=list)

    def member(self, key: str) -> tuple[int, Member] | None:
        """The last member named ``key`` (JSON.parse keeps the last of duplicates)."""
        for i in range(len(self.members) - 1, -1, -1):
            if self.members[i].key == key:
                return i, self.members[i]
        return None


class _Parser:
    def __init__(self, text: str) -> None:
        self.s = text
        self.n = len(text)

    def fail(self, msg: str, pos: int) -> JsoncError:
        return JsoncError(msg, self.s, pos)

    def skip(self, i: int) -> int:
        try:
            return skip_blank(self.s, i)
        except UnterminatedComment as exc:
            raise self.fail("unterminated comment", exc.pos) from None

    def value(self, i: int, depth: int) -> Node:
        if depth > 200:
            raise self.fail("nested too deeply", i)
        s = self.s
        if i >= self.n:
            raise self.fail("unexpected end", i)
        c = s[i]
        if c == "{":
            node = Node("object", i, i, {})
            i = self.skip(i + 1)
            if i < self.n and s[i] == "}":
                node.end = i + 1
                return node
            while True:
                m = _STRING_RE.match(s, i)
                if m is None:
                    raise self.fail("expected a property name", i)
                key = json.loads(m.group())
                i = self.skip(m.end())
                if i >= self.n or s[i] != ":":
                    raise self.fail("expected ':'", i)
                child = self.value(self.skip(i + 1), depth + 1)
                node.members.append(Member(key, m.start(), child))
                node.value[key] = child.value
                i = self.skip(child.end)
                if i < self.n and s[i] == ",":
                    i = self.skip(i + 1)
                    continue
                if i < self.n and s[i] == "}":
                    node.end = i + 1
                    return node
                raise self.fail("expected ',' or '}'", i)
        if c == "[":
            node = Node("array", i, i, [])
            i = self.skip(i + 1)
            if i < self.n and s[i] == "]":
                node.end = i + 1
                return node
            while True:
                child = self.value(i, depth + 1)
                node.items.append(child)
                node.value.append(child.value)
                i = self.skip(child.end)
                if i < self.n and s[i] == ",":
                    i = self.skip(i + 1)
                    continue
                if i < self.n and s[i] == "]":
                    node.end = i + 1
                    return node
                raise self.fail("expected ',' or ']'", i)
        if c == '"':
            m = _STRING_RE.match(s, i)
            if m is None:
                raise self.fail("bad string", i)
            return Node("scalar", i, m.end(), json.loads(m.group()))
        for word, val in _LITERALS.items():
            if s.startswith(word, i):
                return Node("scalar", i, i + len(word), val)
        m = _NUMBER_RE.match(s, i)
        if m is None or m.end() == i:
            raise self.fail("unexpected character", i)
        return Node("scalar", i, m.end(), json.loads(m.group()))


def parse(text: str) -> Node:
    """The top-level value of ``text`` (JSON with comments); :class:`JsoncError` if it is not."""
    p = _Parser(text)
    try:
        node = p.value(p.skip(0), 0)
    except RecursionError:
        raise JsoncError("nested too deeply", text, 0) from None
    if p.skip(node.end) != len(text):
        raise p.fail("unexpected text after the value", p.skip(node.end))
    return node


# --------------------------------------------------------------------------- layout


def parse_settings(path: Path, text: str, member: str) -> Node:
    """``text`` of the settings file ``path`` as a JSON object whose ``member`` (the part
    memloom edits), if present, is an object too; a :class:`SettingsError` that says the
    file was left unchanged otherwise."""
    try:
        root = parse(text)
    except JsoncError as exc:
        raise SettingsError(
            f"{path} is not valid JSON ({exc}); fix it and run again - memloom has not changed it"
        ) from exc
    if root.kind != "object":
        raise SettingsError(f"{path} does not hold a JSON object; memloom has not changed it")
    found = root.member(member)
    if found is not None and found[1].value.kind != "object":
        raise SettingsError(f"'{member}' in {path} is not an object; memloom has not changed it")
    return root


def _line_indent(text: str, pos: int) -> str:
    """The leading whitespace of the line that holds ``pos``."""
    start = text.rfind("\n", 0, pos) + 1
    end = start
    while end < len(text) and text[end] in " \t":
        end += 1
    return text[start:end]


def indent_unit(text: str, root: Node) -> str | None:
    """One level of indentation as the file writes it; None for a one-line (compact) file."""
    for node in (root, *(m.value for m in root.members)):
        children = [m.start for m in node.members] or [c.start for c in node.items]
        if not children:
            continue
        first = children[0]
        if "\n" not in text[node.start : first]:
            return None
        outer = _line_indent(text, node.start)
        inner = _line_indent(text, first)
        if inner.startswith(outer) and len(inner) > len(outer):
            return inner[len(outer) :]
    return None if root.members and "\n" not in text[root.start : root.end] else "  "


def _render(value: Any, unit: str | None, base: str, nl: str = "\n") -> str:
    if unit is None:
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", nl + base)


def _newline(text: str) -> str:
    """The file's line break (CRLF files stay CRLF)."""
    return "\r\n" if "\r\n" in text else "\n"


def _add(text: str, container: Node, last_end: int | None, piece_for: Any, unit: str | None) -> str:
    """Insert a child after the container's last child (or into an empty container)."""
    nl = _newline(text)
    outer = _line_indent(text, container.start)
    inner = outer + (unit or "")
    piece = piece_for(inner, nl)
    if last_end is not None:
        sep = "," + nl + inner if unit is not None else ", "
        return text[:last_end] + sep + piece + text[last_end:]
    open_at = container.start + 1
    if unit is None:
        return text[:open_at] + piece + text[open_at:]
    if text[open_at : container.end - 1].strip():  # comments inside: keep them after the child
        return text[:open_at] + nl + inner + piece + text[open_at:]
    return text[:open_at] + nl + inner + piece + nl + outer + text[container.end - 1 :]


def insert_member(text: str, obj: Node, key: str, value: Any, unit: str | None) -> str:
    """``text`` with ``"key": value`` added as the last member of ``obj``."""
    last = obj.members[-1].value.end if obj.members else None
    key_json = json.dumps(key, ensure_ascii=False)
    return _add(
        text, obj, last, lambda base, nl: f"{key_json}: {_render(value, unit, base, nl)}", unit
    )


def append_item(text: str, arr: Node, value: Any, unit: str | None) -> str:
    """``text`` with ``value`` added as the last item of ``arr``."""
    last = arr.items[-1].end if arr.items else None
    return _add(text, arr, last, lambda base, nl: _render(value, unit, base, nl), unit)


def _remove(text: str, container: Node, starts: list[int], ends: list[int], i: int) -> str:
    if len(starts) == 1:  # the only child: back to an empty container
        inner = text[container.start + 1 : starts[0]] + text[ends[0] : container.end - 1]
        keep = inner if inner.strip() else ""
        return text[: container.start + 1] + keep + text[container.end - 1 :]
    if i > 0:  # from the end of the previous child: takes the comma and the line break
        return text[: ends[i - 1]] + text[ends[i] :]
    return text[: starts[0]] + text[starts[1] :]


def remove_member(text: str, obj: Node, index: int) -> str:
    """``text`` without member ``index`` of ``obj`` (what :func:`insert_member` added)."""
    starts = [m.start for m in obj.members]
    ends = [m.value.end for m in obj.members]
    return _remove(text, obj, starts, ends, index)


def remove_item(text: str, arr: Node, index: int) -> str:
    """``text`` without item ``index`` of ``arr`` (what :func:`append_item` added)."""
    return _remove(text, arr, [c.start for c in arr.items], [c.end for c in arr.items], index)
