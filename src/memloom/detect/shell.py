"""A command line read as a shell reads it, keeping where every character came from.

`shlex` splits words but forgets their offsets, and redaction must mask a span of the
original text. `command_at(text, pos)` returns the words of the simple command around
`pos`: quotes removed (`-p'S3 cret'` is `-pS3 cret`), escapes resolved, each character
mapped back to its place in `text`, so a value can be masked without its quotes.

What it reads:

* words, with `'…'`, `"…"` (and `\\"`, `\\\\`, `\\$` inside), backslash escapes;
* the operators that end a command (`;`, `|`, `||`, `&&`, `&`, `(`, `)`, backticks, a
  line break) and a `#` comment;
* a `\\` at the end of a line, which joins the next line to the command;
* redirections, whose target is no argument (`< in`, `> out`, `2>&1`, a heredoc's
  `<<EOF` delimiter, a here-string's `<<< word`); a heredoc's body is the lines after
  it, read as commands of their own (`ssh host <<EOF` runs them);
* a command inside a JSON string (a tool call: `{"command": "mysql -p\\"S3cret\\""}`,
  a transcript line holding one, even twice escaped): the string is decoded first;
* a command inside a quoted word (`sh -c '…'`, `ssh host "…"`, `VAR="…"`): when the
  position is inside the quotes, the word is read again as a command line.

Work is bounded: at most `_BACK` characters before the position and `_WINDOW` after
it are read, and at most `BEFORE` + `AFTER` words returned.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

_BACK, _WINDOW = 600, 1200  # characters read before and after the position
_MAX_DEPTH = 3  # JSON strings and quoted words read again, nested
BEFORE, AFTER = 16, 48  # words returned around the position's word


@dataclass(slots=True)
class Word:
    """One shell word: its text as the shell reads it, and for every character its
    span in the original text and its quoting (`' '` none, `"'"`, `'"'`)."""

    text: str
    offs: list[int]
    ends: list[int]
    quotes: str

    @property
    def start(self) -> int:
        return self.offs[0] if self.offs else -1

    def span(self, i: int = 0, j: int | None = None) -> tuple[int, int]:
        """The span in the original text of `text[i:j]` (quotes around it excluded)."""
        j = len(self.text) if j is None else j
        return self.offs[i], self.ends[j - 1]


@dataclass(slots=True)
class _Source:
    """Text the tokenizer reads, and where each of its characters lies in the original
    (`offs is None`: it is the original)."""

    text: str
    lo: int
    hi: int
    offs: list[int] | None = None
    ends: list[int] | None = None

    def raw(self, i: int) -> tuple[int, int]:
        if self.offs is None or self.ends is None:
            return i, i + 1
        return self.offs[i], self.ends[i]

    def index(self, pos: int) -> int:
        """The index of the character at original offset `pos` (-1 if none starts there)."""
        if self.offs is None:
            return pos if self.lo <= pos < self.hi else -1
        i = bisect.bisect_left(self.offs, pos)
        return i if i < len(self.offs) and self.offs[i] == pos else -1


# ----------------------------------------------------------------------------- JSON strings

_JSON_ESCAPE = re.compile(r'\\(?:u[0-9a-fA-F]{4}|[^u])|"')
_JSON_CHARS = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}


def _json_open(text: str, lo: int, i: int) -> int:
    """The index of the `"` opening the JSON string that holds index `i`, or -1.

    The nearest unescaped `"` before `i` on its line opens a JSON string when a `:`,
    `[`, `,` or `{` stands before it: `{"command": "…`, `["sh", "-c", "…`. In shell text
    the nearest quote is usually a closing one (`echo "a" | mysql …`) or follows a
    blank or `=` (`ssh host "…"`, `X="…"`), which the shell reading handles instead.
    """
    j = i - 1
    while j >= lo:
        j = text.rfind('"', lo, j + 1)
        if j < 0:
            return -1
        if "\n" in text[j:i]:
            return -1
        k = j
        while k > lo and text[k - 1] == "\\":
            k -= 1
        if (j - k) % 2 == 0:  # not escaped
            b = j - 1
            while b >= lo and text[b] in " \t":
                b -= 1
            return j if b >= lo and text[b] in ":[,{" else -1
        j -= 1
    return -1


# One element of a JSON (or Python) list of strings: a command in exec form,
# `["docker", "login", "-p", "…"]`, `subprocess.run(["mysql", "-u", user, …])`.
_ELEMENT = re.compile(
    r"""[ \t]*(?:"(?P<d>(?:[^"\\\n]|\\.)*)"|(?P<v>[A-Za-z_][\w.]*))[ \t]*(?P<end>,|\])"""
)


def _array(src: _Source, q: int, i: int) -> tuple[list[Word], int] | None:
    """The elements of the list whose string opens at `q`, as words, and the index of
    the one holding `i`; None if the string is no element of a flat list. A variable
    in a Python list reads as a `$reference` word, so positions still count."""
    t = src.text
    b = q - 1
    while b >= src.lo and t[b] in " \t":
        b -= 1
    if b < src.lo or t[b] not in "[,":
        return None
    p = t.rfind("[", max(src.lo, q - _BACK), q)
    if p < 0:
        return None
    p += 1
    words: list[Word] = []
    k = -1
    while len(words) < BEFORE + AFTER:
        m = _ELEMENT.match(t, p, src.hi)
        if m is None:
            return None
        if m.group("v") is not None:
            s, e = m.span("v")
            offs = [src.raw(s)[0]] + [src.raw(x)[0] for x in range(s, e)]
            ends = [src.raw(s)[1]] + [src.raw(x)[1] for x in range(s, e)]
            words.append(Word("$" + m.group("v"), offs, ends, " " * (e - s + 1)))
        else:
            s, e = m.span("d")
            if s <= i < max(e, s + 1):
                k = len(words)
            sub = _decode_json(_Source(t, s, e, src.offs, src.ends), s)
            words.append(Word(sub.text, sub.offs or [], sub.ends or [], '"' * len(sub.text)))
        p = m.end()
        if m.group("end") == "]":
            break
    return (words, k) if k >= 0 else None


def _decode_json(src: _Source, start: int) -> _Source:
    """The JSON string whose text starts at `start`, decoded, up to its closing quote
    or the end of the window."""
    t = src.text
    hi = min(src.hi, start + 2 * _WINDOW)
    out: list[str] = []
    offs: list[int] = []
    ends: list[int] = []
    i = start
    for m in _JSON_ESCAPE.finditer(t, start, hi):
        for k in range(i, m.start()):
            out.append(t[k])
            a, b = src.raw(k)
            offs.append(a)
            ends.append(b)
        if m.group() == '"':
            j = m.end()
            while j < hi and t[j] in " \t":
                j += 1
            if j >= hi or t[j] in ",}]\r\n":
                i = hi
                break
            # a quote no JSON would leave unescaped here (`{"command": "mysql -p"X" db"}`,
            # written by hand): part of the command
            out.append('"')
            offs.append(src.raw(m.start())[0])
            ends.append(src.raw(m.start())[1])
            i = m.end()
            continue
        esc = m.group()
        ch = chr(int(esc[2:], 16)) if esc[1] == "u" else _JSON_CHARS.get(esc[1], esc[1])
        out.append(ch)
        offs.append(src.raw(m.start())[0])
        ends.append(src.raw(m.end() - 1)[1])
        i = m.end()
    else:
        for k in range(i, hi):
            out.append(t[k])
            a, b = src.raw(k)
            offs.append(a)
            ends.append(b)
    return _Source("".join(out), 0, len(out), offs, ends)


# ----------------------------------------------------------------------------- tokens

_TOKEN = re.compile(
    r"""
    (?P<w>(?:[^\s'"`\\;|&<>()]|\\(?![nrt\r\n])(?:.|\Z)|'[^']*'|"(?:[^"\\]|\\.)*"
            |<[^\s<>'"]+>(?![^\s;|&)]))+)  # `<password>`: a placeholder, not two redirections
  | (?P<sp>(?:[ \t\r\f\v]|\\[tr]|\\\r?\n)+)  # `\` at a line's end joins the next
  | (?P<op>\n|\\n|;;?|\|[|&]?|&&|&>>?|>&|<&|<<<|<<-?|>>|>\||<>|[<>&()`])
  | (?P<bad>['"\\])
    """,
    re.X | re.S,
)
_ENDS = frozenset({"\n", "\\n", ";", ";;", "|", "||", "|&", "&&", "&", "(", ")", "`"})
_FD = re.compile(r"\d{1,2}")
_PLAIN = re.compile(r"[^'\"\\]*")

Span = tuple[int, int]


def _command(src: _Source, i: int) -> tuple[list[Span], int] | None:
    """The spans of the words of the simple command holding index `i` (at most `BEFORE`
    words before its word and `AFTER` from it), and its word's place among them."""
    t = src.text
    cur: list[Span] = []
    k = -1
    skip_target = comment = False
    for m in _TOKEN.finditer(t, src.lo, src.hi):
        kind = m.lastgroup
        if kind == "sp" or kind == "bad":
            continue
        if kind == "op":
            op = m.group()
            if op in _ENDS:
                if k >= 0:
                    break
                comment = skip_target = False
                cur = []
            elif not comment:
                if cur and _FD.fullmatch(t, *cur[-1]) and cur[-1][1] == m.start():
                    cur.pop()  # `2>` : the descriptor is no argument
                skip_target = True
            continue
        if comment:
            continue
        if skip_target:
            skip_target = False
            continue
        s, e = m.span()
        if t[s] == "#":
            comment = True
            continue
        if k < 0:
            if s > i:
                return None  # `i` is in no word
            if e > i:
                k = len(cur)
            elif len(cur) > 2 * BEFORE:
                del cur[:BEFORE]
        elif len(cur) - k >= AFTER:
            break
        cur.append((s, e))
    if k < 0:
        return None
    a = max(0, k - BEFORE)
    return cur[a:], k - a


def _word(src: _Source, s: int, e: int) -> Word:
    """A word as the shell reads it, each character mapped back to the original."""
    t = src.text
    if _PLAIN.fullmatch(t, s, e):  # no quote, no escape: the usual word
        if src.offs is None or src.ends is None:
            return Word(t[s:e], list(range(s, e)), list(range(s + 1, e + 1)), " " * (e - s))
        return Word(t[s:e], src.offs[s:e], src.ends[s:e], " " * (e - s))
    out: list[str] = []
    offs: list[int] = []
    ends: list[int] = []
    quotes: list[str] = []

    def put(k: int, q: str, k0: int | None = None) -> None:
        out.append(t[k])
        offs.append(src.raw(k if k0 is None else k0)[0])
        ends.append(src.raw(k)[1])
        quotes.append(q)

    i = s
    while i < e:
        c = t[i]
        if c == "'":
            j = t.find("'", i + 1, e)
            j = e if j < 0 else j
            for k in range(i + 1, j):
                put(k, "'")
            i = j + 1
        elif c == '"':
            i += 1
            while i < e and t[i] != '"':
                if t[i] == "\\" and i + 1 < e and t[i + 1] in '"\\$`':
                    put(i + 1, '"', i)
                    i += 2
                    continue
                put(i, '"')
                i += 1
            i += 1
        elif c == "\\" and i + 1 < e:
            put(i + 1, " ", i)
            i += 2
        else:
            put(i, " ")
            i += 1
    return Word("".join(out), offs, ends, "".join(quotes))


_COMMAND_CHARS = re.compile(r"[\s;|&()<>`]")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def _source(text: str, pos: int) -> _Source:
    """The line around `pos` (bounded), with the lines a `\\` at a line's end joins to
    it (`docker login \\` then `-u ana -p …` on the next line)."""
    floor, ceil = max(0, pos - _BACK), min(len(text), pos + _WINDOW)
    lo = pos
    while True:
        nl = text.rfind("\n", floor, lo)
        if nl < 0:
            lo = floor
            break
        lo = nl + 1
        if not _continued(text, nl):
            break
        lo = nl
    return _Source(text, lo, line_end(text, pos, ceil))


def line_end(text: str, pos: int, ceil: int) -> int:
    """Where the command line holding `pos` ends: its line break (not one a `\\` joins
    to the next line), or `ceil`."""
    hi = text.find("\n", pos, ceil)
    while hi >= 0 and _continued(text, hi):
        hi = text.find("\n", hi + 1, ceil)
    return ceil if hi < 0 else hi


def _continued(text: str, nl: int) -> bool:
    """Does the line ending at the line break `nl` end with a `\\` (not `\\\\`)?"""
    k = nl - 1 if nl > 0 and text[nl - 1] == "\r" else nl
    j = k
    while j > 0 and text[j - 1] == "\\":
        j -= 1
    return (k - j) % 2 == 1


def command_at(text: str, pos: int) -> tuple[list[Word], int] | None:
    """The words of the simple command around original offset `pos` (at most `BEFORE`
    words before the one holding it and `AFTER` from it), and the index of the word
    holding `pos` among them; None when `pos` is in no word (a quote, an operator)."""
    src = _source(text, pos)
    for _ in range(_MAX_DEPTH + 2):
        i = src.index(pos)
        if i < 0:
            return None
        q = _json_open(src.text, src.lo, i)
        if q >= 0:
            array = _array(src, q, i)
            if array is None:
                src = _decode_json(src, q + 1)
                continue
            words, k = array
            if _COMMAND_CHARS.search(words[k].text):  # `["sh", "-c", "mysql -p…"]`
                w = words[k]
                src = _Source(w.text, 0, len(w.text), w.offs, w.ends)
                continue
            a = max(0, k - BEFORE)
            return words[a : k + AFTER], k - a
        got = _command(src, i)
        if got is None:
            return None
        cmd, k = got
        word = _word(src, *cmd[k])
        j = bisect.bisect_left(word.offs, pos)
        if j < len(word.offs) and word.quotes[j] != " " and _COMMAND_CHARS.search(word.text):
            # inside a quoted command (`sh -c '…'`, `ssh h "…"`, `CMD="…"`): read it
            a = m.end() if (m := _ASSIGNMENT.match(word.text)) and m.end() <= j else 0
            src = _Source(word.text, a, len(word.text), word.offs, word.ends)
            continue
        return [word if n == k else _word(src, s, e) for n, (s, e) in enumerate(cmd)], k
    return None
