"""Installing memloom's hooks into Copilot CLI's user-level hook file, and taking them out.

The file is ``<copilot home>/hooks/hooks.json`` (:func:`memloom.agents.copilot.home.hooks_path`):
Copilot loads every ``*.json`` in that folder, in the documented shape
``{"version": 1, "hooks": {"<event>": [{"type": "command", "bash": …, "timeoutSec": …}]}}``.
The file name is memloom's choice (other tools share it); an existing file is merged into.

Installed (``command`` starts memloom):

* ``sessionEnd`` -> ``<command> hook notify --agent copilot`` (10 s): queue the session.
* with ``recall``: ``sessionStart`` -> ``<command> hook session-start --agent copilot`` and
  ``userPromptSubmitted`` -> ``<command> hook prompt-recall --agent copilot`` (5 s each).
  Copilot CLI 1.0.102 (tests/e2e) takes only a top-level ``{"additionalContext": "…"}``
  on a hook's stdout (plain text and ``hookSpecificOutput`` are ignored): sessionStart's
  becomes a user message of its own, userPromptSubmitted's is appended to the typed
  prompt inside ``<system_reminder>…</system_reminder>``. (GitHub's hooks reference says
  config-file userPromptSubmitted hooks have their output dropped: that concerns
  ``modifiedPrompt``; ``additionalContext`` reaches the model.) Of several
  userPromptSubmitted hooks that print a context, only the last one's is kept.
* with ``recall``: ``postToolUse`` -> ``<command> hook read --agent copilot`` (5 s),
  ``matcher: "^view$"`` (Copilot 1.0.102 honours an entry's matcher against the tool's
  own name, tests/e2e): after the ``view`` tool opened a file, the memories anchored
  to it, as ``{"additionalContext": …}``, which Copilot adds to the tool's result.

Copilot also reads user-level hooks from ``~/.copilot/settings.json`` (``hooks``);
memloom leaves that file, which is the user's settings, alone.

The edit is textual, so everything that is not memloom's stays byte for byte:
comments, key order, indentation, line endings. Copilot CLI 1.0.102 reads a hook
file only when it is strict JSON: one with comments, trailing commas or a byte-order
mark is ignored whole, silently, memloom's hooks and the user's alike. memloom still
merges into such a file (the user may mean to fix it) and says so in the result's
``notes`` (``memloom connect`` prints them). Entries
are appended after the last existing element (or just inside an empty ``[]``/``{}``),
and removal deletes exactly that span again; an event member or ``hooks`` object
memloom created is removed whole, and a file memloom created (no backup exists)
that holds nothing else afterwards is deleted. A one-time backup
(``hooks.json.memloom-backup``) is written before the first change to an existing
file; installing twice changes nothing; a file that does not parse, or whose
``hooks`` / event lists have the wrong type, is refused with ``SettingsError`` and
left untouched. Writes are atomic (temp file + ``os.replace``), keeping the mode.

Standard library only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memloom.agents import hookfile
from memloom.agents.base import HooksChange
from memloom.agents.copilot.home import hooks_path
from memloom.errors import SettingsError

__all__ = [
    "AGENT_FLAG",
    "NOTIFY_EVENT",
    "NOTIFY_TIMEOUT",
    "NOT_STRICT_NOTE",
    "READ_EVENT",
    "READ_MATCHER",
    "RECALL_EVENTS",
    "RECALL_TIMEOUT",
    "CopilotHooksChange",
    "install",
    "installed",
    "is_memloom_hook",
    "parse_jsonc",
    "remove",
    "strict_json_problem",
]

AGENT_FLAG = "--agent copilot"
NOTIFY_EVENT = "sessionEnd"
NOTIFY_TIMEOUT = 10
#: event -> memloom hook sub-command, for ``recall=True``.
RECALL_EVENTS: dict[str, str] = {
    "sessionStart": "session-start",
    "userPromptSubmitted": "prompt-recall",
}
RECALL_TIMEOUT = 5
#: The read hook: after Copilot's ``view`` tool (its matcher), the file's memories.
READ_EVENT = "postToolUse"
READ_MATCHER = "^view$"
#: What ``connect`` says when Copilot would not read the hook file.
NOT_STRICT_NOTE = (
    "{path} is not strict JSON ({why}): Copilot CLI ignores such a hook file, so none of "
    "its hooks run, memloom's included. Take out the comments and trailing commas."
)


@dataclass
class CopilotHooksChange(HooksChange):
    """A :class:`HooksChange` plus what the user must know (``memloom connect`` prints it)."""

    notes: list[str] = field(default_factory=list)


def strict_json_problem(text: str) -> str | None:
    """Why Copilot would not read ``text`` as a hook file (None: it would)."""
    if text.startswith("\ufeff"):
        return "it starts with a byte-order mark"
    try:
        json.loads(text)
    except ValueError as exc:
        return str(exc).split(":", 1)[0]
    return None


def _notes(path: Path, text: str) -> list[str]:
    why = strict_json_problem(text)
    return [NOT_STRICT_NOTE.format(path=path, why=why)] if why else []


_HOOK_RE = re.compile(r"\shook\s+(notify|session-start|prompt-recall|read)(?:\s|$)")


def is_memloom_hook(entry: Any) -> bool:
    """A hook entry memloom installed: a command running ``… hook <name> --agent copilot``."""
    if not isinstance(entry, dict):
        return False
    for key in ("bash", "command", "powershell"):
        cmd = entry.get(key)
        if isinstance(cmd, str) and "memloom" in cmd and AGENT_FLAG in cmd and _HOOK_RE.search(cmd):
            return True
    return False


def _hook_name(entry: dict[str, Any]) -> str:
    for key in ("bash", "command", "powershell"):
        cmd = entry.get(key)
        if isinstance(cmd, str):
            m = _HOOK_RE.search(cmd)
            if m:
                return m.group(1)
    return ""


# --------------------------------------------------------------------------- JSONC with spans


@dataclass
class Node:
    """A JSON value and where it is in the text (``end`` exclusive)."""

    kind: str  # "object" | "array" | "scalar"
    start: int
    end: int
    value: Any = None  # scalars
    items: list[Node] = field(default_factory=list)  # array elements
    members: list[Member] = field(default_factory=list)  # object members

    def get(self, key: str) -> Member | None:
        for m in self.members:
            if m.key == key:
                return m
        return None

    def children(self) -> list[Any]:
        return self.members if self.kind == "object" else self.items

    def to_py(self) -> Any:
        if self.kind == "object":
            return {m.key: m.value.to_py() for m in self.members}
        if self.kind == "array":
            return [n.to_py() for n in self.items]
        return self.value


@dataclass
class Member:
    key: str
    start: int  # the key's opening quote
    value: Node

    @property
    def end(self) -> int:
        return self.value.end


_decoder = json.JSONDecoder()
_SCALAR_RE = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null")


class _Parser:
    """JSON with ``//`` and ``/* */`` comments and trailing commas, keeping spans."""

    def __init__(self, text: str) -> None:
        self.s = text
        self.n = len(text)

    def fail(self, i: int, what: str) -> SettingsError:
        line = self.s.count("\n", 0, i) + 1
        return SettingsError(f"{what} at line {line}")

    def ws(self, i: int) -> int:
        try:
            return hookfile.skip_blank(self.s, i)
        except hookfile.UnterminatedComment as exc:
            raise self.fail(exc.pos, "unterminated comment") from None

    def value(self, i: int, depth: int = 0) -> Node:
        if depth > 200:
            raise self.fail(i, "nesting too deep")
        s = self.s
        if i >= self.n:
            raise self.fail(i, "unexpected end of file")
        c = s[i]
        if c == "{":
            node = Node("object", i, i)
            i = self.ws(i + 1)
            while not s.startswith("}", i):
                if not s.startswith('"', i):
                    raise self.fail(i, "expected a key")
                key, j = _decoder.raw_decode(s, i)
                k = self.ws(j)
                if not s.startswith(":", k):
                    raise self.fail(k, "expected ':'")
                val = self.value(self.ws(k + 1), depth + 1)
                node.members.append(Member(key, i, val))
                i = self.ws(val.end)
                if s.startswith(",", i):
                    i = self.ws(i + 1)
                elif not s.startswith("}", i):
                    raise self.fail(i, "expected ',' or '}'")
            node.end = i + 1
            return node
        if c == "[":
            node = Node("array", i, i)
            i = self.ws(i + 1)
            while not s.startswith("]", i):
                item = self.value(i, depth + 1)
                node.items.append(item)
                i = self.ws(item.end)
                if s.startswith(",", i):
                    i = self.ws(i + 1)
                elif not s.startswith("]", i):
                    raise self.fail(i, "expected ',' or ']'")
            node.end = i + 1
            return node
        if c == '"':
            try:
                val, j = _decoder.raw_decode(s, i)
            except ValueError:
                raise self.fail(i, "bad string") from None
            return Node("scalar", i, j, val)
        m = _SCALAR_RE.match(s, i)
        if not m:
            raise self.fail(i, "unexpected character")
        return Node("scalar", i, m.end(), json.loads(m.group()))

    def document(self) -> Node:
        i = self.ws(0)
        node = self.value(i)
        if self.ws(node.end) != self.n:
            raise self.fail(node.end, "extra text after the document")
        return node


def parse_jsonc(text: str) -> Node:
    """The document's tree with spans; ``SettingsError`` (saying where) if it does not parse."""
    try:
        return _Parser(text).document()
    except RecursionError:
        raise SettingsError("nesting too deep") from None
    except ValueError as exc:
        if isinstance(exc, SettingsError):
            raise
        raise SettingsError(str(exc)) from None


# --------------------------------------------------------------------------- text edits


@dataclass
class _Style:
    nl: str
    unit: str


def _style(text: str) -> _Style:
    nl = "\r\n" if "\r\n" in text else "\n"
    m = re.search(r"\n([ \t]+)[\"{\[]", text)
    return _Style(nl, m.group(1) if m else "  ")


def _line_indent(text: str, pos: int) -> str | None:
    """The whitespace before ``pos`` on its line, or None if other text precedes it."""
    start = text.rfind("\n", 0, pos) + 1
    prefix = text[start:pos]
    return prefix if not prefix.strip() else None


def _leading(text: str, pos: int) -> str:
    """The indentation of the line ``pos`` is on."""
    start = text.rfind("\n", 0, pos) + 1
    line = text[start:pos]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _render(value: Any, indent: str, style: _Style) -> str:
    """``value`` as indented JSON whose continuation lines start with ``indent``."""
    tabs = "\t" in style.unit
    body = json.dumps(value, indent=1 if tabs else len(style.unit), ensure_ascii=False)
    if tabs:
        body = re.sub(r"(?m)^( +)", lambda m: "\t" * len(m.group(1)), body)
    return body.replace("\n", style.nl + indent)


def _render_member(key: str, value: Any, indent: str, style: _Style) -> str:
    return json.dumps(key) + ": " + _render(value, indent, style)


def _append(text: str, container: Node, piece_for: Any, style: _Style) -> str:
    """Insert a new last child into ``container``; ``piece_for(indent)`` renders it."""
    kids = container.children()
    if kids:
        last = kids[-1]
        indent = _line_indent(text, last.start)
        if indent is None:
            piece = ", " + piece_for(_leading(text, container.start))
        else:
            piece = "," + style.nl + indent + piece_for(indent)
        return text[: last.end] + piece + text[last.end :]
    outer = _leading(text, container.start)
    at = container.start + 1  # just inside the bracket: removal restores the interior
    return text[:at] + piece_for(outer + style.unit) + text[at:]


def _delete_child(text: str, container: Node, index: int) -> str:
    """Remove child ``index`` of ``container`` with the separator memloom wrote for it."""
    kids = container.children()
    child = kids[index]
    if index > 0:
        return text[: kids[index - 1].end] + text[child.end :]
    if len(kids) > 1:
        return text[: child.start] + text[kids[1].start :]
    end = child.end
    after = _Parser(text).ws(end)
    if text.startswith(",", after):  # a trailing comma after the only child
        end = after + 1
    return text[: child.start] + text[end:]


# --------------------------------------------------------------------------- load / write


def _read(path: Path) -> str | None:
    """The file's text, None if missing or empty; ``SettingsError`` if unreadable."""
    text = hookfile.read_settings(path)
    return text if text is not None and text.strip() else None


def _tree(path: Path, text: str) -> Node:
    try:
        root = parse_jsonc(text)
    except SettingsError as exc:
        raise SettingsError(
            f"{path} is not valid JSON ({exc}); fix it and run again - memloom has not changed it"
        ) from None
    if root.kind != "object":
        raise SettingsError(f"{path} does not hold a JSON object; memloom has not changed it")
    hooks = root.get("hooks")
    if hooks is not None:
        if hooks.value.kind != "object":
            raise SettingsError(f"'hooks' in {path} is not an object; memloom has not changed it")
        for m in hooks.value.members:
            if m.value.kind != "array":
                raise SettingsError(
                    f"'hooks.{m.key}' in {path} is not a list; memloom has not changed it"
                )
    return root


def _memloom_entries(root: Node) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    hooks = root.get("hooks")
    for m in hooks.value.members if hooks is not None else []:
        for item in m.value.items:
            value = item.to_py()
            if is_memloom_hook(value):
                found.setdefault(m.key, []).append(value)
    return found


def _strip_text(path: Path, text: str) -> str:
    """``text`` without memloom's entries (and the members/objects memloom created)."""
    while True:
        root = _tree(path, text)
        hooks_m = root.get("hooks")
        if hooks_m is None:
            return text
        hooks = hooks_m.value
        target = None
        for mi, m in enumerate(hooks.members):
            for ii, item in enumerate(m.value.items):
                if is_memloom_hook(item.to_py()):
                    target = (mi, m, ii)
                    break
            if target:
                break
        if target is None:
            return text
        mi, m, ii = target
        arr = m.value
        others = [it for it in arr.items if not is_memloom_hook(it.to_py())]
        # memloom writes a new list as "[<newline>…", and into an existing empty one
        # right after "[": a list that opens with whitespace and holds only memloom's
        # entries is memloom's own member.
        if not others and text[arr.start + 1 : arr.items[0].start] != "":
            if len(hooks.members) == 1 and text[hooks.start + 1 : hooks.members[0].start] != "":
                text = _delete_child(text, root, root.members.index(hooks_m))
            else:
                text = _delete_child(text, hooks, mi)
        else:
            text = _delete_child(text, arr, ii)


def _wanted(command: str, recall: bool) -> dict[str, dict[str, Any]]:
    def entry(name: str, timeout: int) -> dict[str, Any]:
        bash = f"{command} hook {name} {AGENT_FLAG}"
        return {"type": "command", "bash": bash, "timeoutSec": timeout}

    wanted = {NOTIFY_EVENT: entry("notify", NOTIFY_TIMEOUT)}
    if recall:
        for event, name in RECALL_EVENTS.items():
            wanted[event] = entry(name, RECALL_TIMEOUT)
        wanted[READ_EVENT] = {**entry("read", RECALL_TIMEOUT), "matcher": READ_MATCHER}
    return wanted


def _insert(path: Path, text: str, wanted: dict[str, dict[str, Any]]) -> str:
    style = _style(text)
    for event, entry in wanted.items():
        root = _tree(path, text)
        hooks_m = root.get("hooks")
        if hooks_m is None:
            value = {event: [entry]}
            text = _append(
                text, root, lambda ind, v=value: _render_member("hooks", v, ind, style), style
            )
            continue
        member = hooks_m.value.get(event)
        if member is None:
            text = _append(
                text,
                hooks_m.value,
                lambda ind, e=event, v=entry: _render_member(e, [v], ind, style),
                style,
            )
        else:
            text = _append(text, member.value, lambda ind, v=entry: _render(v, ind, style), style)
    return text


def _fresh(wanted: dict[str, dict[str, Any]]) -> str:
    doc = {"version": 1, "hooks": {e: [v] for e, v in wanted.items()}}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def install(
    command: str, *, recall: bool = True, env: Mapping[str, str] | None = None
) -> CopilotHooksChange:
    """Add the sessionEnd (notify) and, with ``recall``, the sessionStart and
    userPromptSubmitted hooks; ``notes`` say when Copilot would not read the file."""
    path = hooks_path(env)
    wanted = _wanted(command, recall)
    text = _read(path)
    if text is None:
        new = _fresh(wanted)
    else:
        root = _tree(path, text)
        have = _memloom_entries(root)
        if have == {e: [v] for e, v in wanted.items()}:  # already exactly so
            return CopilotHooksChange(path, None, False, list(wanted), _notes(path, text))
        new = _insert(path, _strip_text(path, text), wanted)
        check = _tree(path, new)  # never write what does not parse
        if _memloom_entries(check) != {e: [v] for e, v in wanted.items()}:
            raise SettingsError(f"could not merge memloom's hooks into {path}; it is unchanged")
    backup = hookfile.backup_once(path)
    hookfile.write_atomic(path, new)
    return CopilotHooksChange(path, backup, True, list(wanted), _notes(path, new))


def remove(env: Mapping[str, str] | None = None) -> HooksChange:
    """Take out exactly memloom's entries; everything else stays byte for byte."""
    path = hooks_path(env)
    text = _read(path)
    if text is None:
        return HooksChange(path, None, False, [])
    root = _tree(path, text)
    if not _memloom_entries(root):
        return HooksChange(path, None, False, [])
    new = _strip_text(path, text)
    backup = path.with_name(path.name + hookfile.BACKUP_SUFFIX)
    leftover = _tree(path, new).to_py()
    if not backup.exists() and leftover in ({"version": 1}, {}):
        path.unlink()  # memloom created the file and nothing else is in it
    else:
        hookfile.write_atomic(path, new)
    return HooksChange(path, None, True, [])


def installed(env: Mapping[str, str] | None = None) -> dict[str, bool]:
    """Which of memloom's hooks the file holds (all False, ``readable`` False, if unreadable).

    ``session_start``: the sessionStart digest; ``prompt_recall``: the userPromptSubmitted
    recall (a file written before memloom installed it has only the first); ``read``: the
    postToolUse hook after a ``view``.
    """
    found = {
        "notify": False,
        "session_start": False,
        "prompt_recall": False,
        "read": False,
        "readable": True,
    }
    path = hooks_path(env)
    try:
        text = _read(path)
        root = _tree(path, text) if text is not None else None
    except SettingsError:
        return {**found, "readable": False}
    if root is None:
        return found
    for entries in _memloom_entries(root).values():
        for entry in entries:
            name = _hook_name(entry)
            if name == "notify":
                found["notify"] = True
            elif name == "session-start":
                found["session_start"] = True
            elif name == "prompt-recall":
                found["prompt_recall"] = True
            elif name == "read":
                found["read"] = True
    return found
