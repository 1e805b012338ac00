"""The one file a simple shell read command shows: ``cat F``, ``sed -n '1,80p' F``, ``nl -ba F``.

Codex has no read tool: its model reads a file with a shell command, and its
``PostToolUse`` hook reports tool ``Bash`` with the command's text only. Which file
was opened has to be read out of that text, and wrongly naming a file would put an
unrelated file's memories into the session, so :func:`read_target` answers only for
a command that is clearly one read of one file, and None for anything else:

* one command (``cat``, ``head``, ``tail``, ``nl``, ``sed -n`` with a print-only
  script, ``bat``/``batcat``), its options, and exactly one file operand;
* or such a command piped into filters that name no file (``nl -ba F | sed -n
  '1,80p'``, ``cat F | head -n 40``: Codex's own habits);
* nothing else: ``;``, ``&&``, ``||``, ``&``, redirections, ``$(…)``, backquotes,
  ``$VAR``, globs, braces, ``~``, assignments, subshells, a second file, an unknown
  option, ``sed -i`` or a sed script that does more than print.

The command is never run and no file is touched here: the words are split the way a
POSIX shell splits them (quotes and backslashes), and an unquoted character that
would make the shell do more than run the words (an expansion, a redirection, a
list) refuses the whole command. Where the file lies is for the caller to check
(:mod:`memloom.capture.reads` resolves it under the project root, through the fence).

Standard library only: the read hook loads this module.
"""

from __future__ import annotations

import re

__all__ = ["read_target", "split_pipeline"]

#: Unquoted, each makes the shell do more than run one pipeline of plain words.
_REFUSED = frozenset(";&<>()`$*?[]{}~#!\n\r")
#: Quoted with "…", these still expand.
_EXPANDS_IN_DOUBLE = frozenset("$`\\!")
#: Longest command accepted (a read command is short).
MAX_COMMAND = 4096


def split_pipeline(command: str) -> list[list[str]] | None:
    """``command`` as the words of each stage of one pipeline, or None when the shell
    would do anything more than run those words (see the module doc)."""
    if not isinstance(command, str) or not command.strip() or len(command) > MAX_COMMAND:
        return None
    stages: list[list[str]] = [[]]
    word: list[str] | None = None  # None: between words
    i, n = 0, len(command)
    while i < n:
        c = command[i]
        if c in " \t":
            if word is not None:
                stages[-1].append("".join(word))
                word = None
            i += 1
        elif c == "|":
            if i + 1 < n and command[i + 1] in "|&":
                return None  # || is a list; |& redirects stderr
            if word is not None:
                stages[-1].append("".join(word))
                word = None
            if not stages[-1]:
                return None
            stages.append([])
            i += 1
        elif c == "'":
            end = command.find("'", i + 1)
            if end < 0:
                return None
            word = (word or []) + [command[i + 1 : end]]
            i = end + 1
        elif c == '"':
            j, part = i + 1, []
            while j < n and command[j] != '"':
                if command[j] in _EXPANDS_IN_DOUBLE:
                    return None
                part.append(command[j])
                j += 1
            if j >= n:
                return None
            word = (word or []) + part
            i = j + 1
        elif c == "\\":
            if i + 1 >= n or command[i + 1] in "\n\r":
                return None
            word = (word or []) + [command[i + 1]]
            i += 2
        elif c in _REFUSED:
            return None
        else:
            word = (word or []) + [c]
            i += 1
    if word is not None:
        stages[-1].append("".join(word))
    if not stages[-1]:
        return None
    for stage in stages:
        if "=" in stage[0]:
            return None  # NAME=value cmd: an assignment, not a plain command
    return stages


# --------------------------------------------------------------------------- commands

_NUMBER = re.compile(r"^[+-]?\d+[kKmMbB]?$")
#: A print-only sed script: addresses (line numbers, ``$``, ``/regex/``, ``N,+M``,
#: ``N~M``) and ``p``, several joined by ``;``.
_ONE = r"(?:\d+|\$|/(?:[^/\\\n]|\\.)*/)"
_ADDRESS = rf"{_ONE}(?:\s*,\s*(?:{_ONE}|\+\d+|~\d+))?|\d+~\d+"
_SED_PRINT = re.compile(rf"^\s*(?:{_ADDRESS})?\s*p\s*(?:;\s*(?:{_ADDRESS})?\s*p\s*)*;?\s*$")


def _operands(
    words: list[str], flags: frozenset[str], with_value: frozenset[str]
) -> list[str] | None:
    """The operands of ``words`` (the command's arguments), or None when an option is
    not one of ``flags`` (no value) or ``with_value`` (a value after it, or glued)."""
    out: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w == "--":
            out.extend(words[i + 1 :])
            break
        if w.startswith("--") and w != "--":
            name, eq, _ = w.partition("=")
            if name in with_value:
                i += 1 if eq else 2
                continue
            if name in flags and not eq:
                i += 1
                continue
            return None
        if w.startswith("-") and w != "-":
            if w[1:].isdigit():  # head -20
                i += 1
                continue
            j = 1
            while j < len(w):
                opt = "-" + w[j]
                if opt in with_value:
                    i += 1 if j + 1 < len(w) else 2  # glued (-n20) or the next word
                    break
                if opt not in flags:
                    return None
                j += 1
            else:
                i += 1
            continue
        out.append(w)
        i += 1
    return out


def _values_ok(words: list[str], numeric: frozenset[str]) -> bool:
    """Every value of an option in ``numeric`` is a count (``head -n 40``, ``-n +3``)."""
    for i, w in enumerate(words):
        for opt in numeric:
            if w == opt:
                if i + 1 >= len(words) or not _NUMBER.match(words[i + 1]):
                    return False
            elif opt.startswith("--") and w.startswith(opt + "="):
                if not _NUMBER.match(w[len(opt) + 1 :]):
                    return False
            elif (
                not opt.startswith("--")
                and w.startswith(opt)
                and len(w) > len(opt)
                and not _NUMBER.match(w[len(opt) :])
            ):
                return False
    return True


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_CAT_FLAGS = _words(
    "-A -b -e -E -n -s -t -T -u -v --number --number-nonblank --show-all --squeeze-blank "
    "--show-ends --show-tabs --show-nonprinting"
)
_HEAD_VALUE = _words("-n -c --lines --bytes")
_HEAD_FLAGS = _words("-q -v --quiet --silent --verbose")
_NL_VALUE = _words(
    "-b -d -f -h -i -l -n -s -v -w --body-numbering --section-delimiter "
    "--footer-numbering --header-numbering --line-increment --join-blank-lines "
    "--number-format --number-separator --starting-line-number --number-width"
)
_NL_FLAGS = _words("-p --no-renumber")
_BAT_VALUE = _words(
    "-r -l -H --line-range --language --highlight-line --style --paging --color --theme "
    "--wrap --tabs --terminal-width"
)
_BAT_FLAGS = _words("-n -p -P -A --number --plain --show-all")


def _sed_operands(words: list[str]) -> list[str] | None:
    """``sed -n SCRIPT [FILE]`` whose script only prints: its operands after the script;
    None for any other sed (``-i`` edits, ``w``/``e`` commands write or run)."""
    quiet, scripts, rest, i = False, [], [], 0
    while i < len(words):
        w = words[i]
        if w in ("-n", "--quiet", "--silent"):
            quiet = True
        elif w in ("-e", "--expression"):
            if i + 1 >= len(words):
                return None
            scripts.append(words[i + 1])
            i += 1
        elif w.startswith("--expression="):
            scripts.append(w.partition("=")[2])
        elif w == "--":
            rest.extend(words[i + 1 :])
            break
        elif w.startswith("-") and w != "-":
            if w == "-ne" and i + 1 < len(words):  # sed -ne '1,5p'
                quiet = True
                scripts.append(words[i + 1])
                i += 1
            else:
                return None
        else:
            rest.append(w)
        i += 1
    if not scripts and rest:
        scripts, rest = [rest[0]], rest[1:]
    if not quiet or not scripts or not all(_SED_PRINT.match(s) for s in scripts):
        return None
    return rest


def _stage_operands(words: list[str]) -> list[str] | None:
    """The file operands of one read command (``words[0]`` the command), or None when
    it is not one of the read commands with options this module knows."""
    name, args = words[0], words[1:]
    if name == "cat":
        return _operands(args, _CAT_FLAGS, frozenset())
    if name in ("head", "tail"):
        if not _values_ok(args, _HEAD_VALUE):
            return None
        extra = frozenset(["-f", "-F", "--follow"]) if name == "tail" else frozenset()
        if any(a in extra or a.startswith("--follow") for a in args):
            return None  # tail -f never ends: not a read
        return _operands(args, _HEAD_FLAGS, _HEAD_VALUE)
    if name == "nl":
        return _operands(args, _NL_FLAGS, _NL_VALUE)
    if name == "sed":
        return _sed_operands(args)
    if name in ("bat", "batcat"):
        return _operands(args, _BAT_FLAGS, _BAT_VALUE)
    return None


def read_target(command: str) -> str | None:
    """The one file ``command`` reads, as written in it (relative to the directory the
    command ran in, or absolute); None unless the command is clearly one read of one
    file (module doc)."""
    stages = split_pipeline(command)
    if not stages:
        return None
    first = _stage_operands(stages[0])
    if first is None or len(first) != 1 or first[0] == "-":
        return None
    for stage in stages[1:]:
        if _stage_operands(stage) != []:  # a filter of the first stage's output only
            return None
    return first[0]
