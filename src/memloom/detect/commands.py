"""Passwords that tools take on their command line, and `.netrc` entries.

`keytool -storepass S3cret`, `sqlplus scott/S3cret@db`, `smbclient -U ana%S3cret`,
`docker login -p S3cret`, `7z x -pS3cret a.7z`, `rabbitmqctl add_user ana S3cret`: a
password bound by a tool's own option or position, which neither a vendor format nor a
`NAME=value` sees. The command line is read as a shell reads it (`shell.py`), then
each tool's options are looked up in a table (`tools.py`); options no row lists go to
one general rule: the value of an option whose name says password, secret, token, key
or auth (`-storepass`, `--db-pass`, `--client-secret`), read as `NAME=value` is
(`assign.classify_name`, `assign.value_ok`), and `-p` after the `login` subcommand of a
tool not in the table. Only the secret is masked, without its quotes:
`keytool -storepass [redacted:keystore-password]`.

The scanners run only where the anchor pass found a tool's name, `login`, or a secret
word inside an option (`-…pass…`), and only when the rest of the line holds one of that
tool's options (`_triggers`): the fast path stays one anchor pass.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from . import shell
from .assign import API_KEY, PASSWORD, NameInfo, classify_name, value_ok
from .tools import PLAIN_KEYS, TOOLS, Opt, Tool
from .validators import (
    looks_like_code,
    looks_random,
    random_base64,
    shannon_entropy,
    weak_password,
)
from .validators import words as wordset

Found = tuple[int, int, str]
TOOL_NAMES = tuple(sorted(TOOLS))

# ----------------------------------------------------------------------------- anchors

_SUFFIXES = (".exe", ".py", ".sh", ".cmd", ".bat")
_LINE = 400  # how far the prefilter looks for a tool's options


class Seen:
    """What one scan has read already: the words of the commands read (an anchor in
    one of them is not read again), and where each prefilter's pattern next matches
    (so a flood of one tool's name costs one search, not one per name)."""

    __slots__ = ("next_at", "words")

    def __init__(self) -> None:
        self.words: set[int] = set()
        self.next_at: dict[re.Pattern[str], tuple[int, int, int]] = {}

    def near(self, rx: re.Pattern[str], text: str, start: int, end: int) -> bool:
        """Does `rx` match in `text[start:end]`? What an earlier call searched is not
        searched again: `next_at[rx]` is `(from, to, first match or -1)`."""
        lo, hi, at = self.next_at.get(rx, (-1, -1, -1))
        if lo <= start <= hi:
            if at >= start:
                return at < end
            if end <= hi:
                return False
            start = hi  # [start, hi) holds no match
        m = rx.search(text, start, end)
        at = m.start() if m else -1
        self.next_at[rx] = (start, end, at)
        return at >= 0


def _triggers() -> dict[str, re.Pattern[str] | None]:
    """Per tool, what the rest of its line must hold for the command to be read: one of
    its options or subcommands (None: always read, a positional secret)."""
    out: dict[str, re.Pattern[str] | None] = {}
    for name, rows in TOOLS.items():
        lits: set[str] = set()
        for row in rows:
            if row.sub:  # its options count only after the subcommand
                lits.add(row.sub[0].rstrip("*"))
                continue
            lits.update(row.options)
            if row.position:
                lits.clear()
                break
        out[name] = re.compile("|".join(map(re.escape, sorted(lits)))) if lits else None
    return out


_TRIGGERS = _triggers()


def _line_end(text: str, pos: int) -> int:
    return shell.line_end(text, pos, min(len(text), pos + _LINE))


def _tool_name(word: str) -> str:
    """`/usr/bin/MySQL.exe` -> `mysql`; a relative path (`secret/mysql`) names no tool."""
    if "/" in word or "\\" in word:
        if not word.startswith(("/", "./", "../", "~/")) and "\\" not in word:
            return ""
        word = re.split(r"[/\\]", word)[-1]
    low = word.lower()
    for suffix in _SUFFIXES:
        if low.endswith(suffix):
            return low[: -len(suffix)]
    return low


Scanner = Callable[[str, int, Seen], list[Found]]


def tool_scanner(name: str, length: int) -> Scanner:
    """What to run where the anchor pass found the tool `name` (`length` characters with
    its suffix, `sqlcmd.exe`): read its command if the line holds one of its options."""
    trigger = _TRIGGERS[name]

    def scan(text: str, pos: int, seen: Seen) -> list[Found]:
        if pos in seen.words:
            return []
        if trigger is not None and not seen.near(trigger, text, pos + length, _line_end(text, pos)):
            return []
        return _scan(text, pos, seen)

    return scan


_OPTION_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def scan_option(text: str, pos: int, seen: Seen) -> list[Found]:
    """At a secret word inside an option's name (`-storepass`, `--db-token`)."""
    i, lo = pos, max(0, pos - 48)
    while i > lo and text[i - 1] in _OPTION_CHARS:
        i -= 1
    if text[i] != "-" or (i > 0 and text[i - 1].isalnum()) or i in seen.words:
        return []
    return _scan(text, pos, seen)


_LOGIN_P = re.compile(r"(?<![^ \t])-p[ \t]")


def scan_login(text: str, pos: int, seen: Seen) -> list[Found]:
    """At `login`: `cf login -u u -p S3cret`, for tools the table does not know."""
    if not text.startswith(("login ", "login\t"), pos) or pos in seen.words:
        return []
    if not seen.near(_LOGIN_P, text, pos + 5, _line_end(text, pos)):
        return []
    return _scan(text, pos, seen)


def _scan(text: str, pos: int, seen: Seen) -> list[Found]:
    got = shell.command_at(text, pos)
    if got is None:
        return []
    words = got[0]
    if words[got[1]].start in seen.words:
        return []
    seen.words.update(w.start for w in words)
    return read_command(words)


# ----------------------------------------------------------------------------- one command

# Options whose next word is usually a name, not the command a wrapper runs:
# `docker run --name mongo -p 27017:27017`, `sudo -u mysql …`.
_VALUE_BEFORE = frozenset({"-u", "-n", "-h", "-e", "-w", "-l", "-g", "-o", "-f", "-v"})
_FLAGS = frozenset({"--", "--rm", "--privileged", "--interactive", "--tty", "--init"})


def _is_tool(words: list[shell.Word], i: int) -> str:
    name = _tool_name(words[i].text)
    if name not in TOOLS:
        return ""
    if i > 0:
        prev = words[i - 1].text
        if prev in _VALUE_BEFORE or (
            prev.startswith("--") and "=" not in prev and prev not in _FLAGS
        ):
            return ""
    return name


def read_command(words: list[shell.Word]) -> list[Found]:
    """Every credential of one simple command: each tool's table rows from its name to
    the end of the command (`docker exec db mysql -pX` reads both), then the general
    rule over the options no row took."""
    out: list[Found] = []
    used: set[int] = set()
    names = [(i, name) for i in range(len(words)) if (name := _is_tool(words, i))]
    for n, (i, name) in enumerate(names):
        # to the end of the command, or to the same tool's next name (`xargs -n1 7z …`)
        end = next((j for j, other in names[n + 1 :] if other == name), len(words))
        for row in TOOLS[name]:
            _apply(row, words[:end], i + 1, out, used)
    _general(words, used, names[0][0] if names else len(words), out)
    return out


def _find_sub(words: list[shell.Word], a: int, sub: tuple[str, ...]) -> int:
    """The index after the subcommand words (`login`, `kv put`), or -1."""
    n = len(sub)
    for j in range(a, min(len(words) - n + 1, a + 8)):
        if all(_same(words[j + k].text, sub[k]) for k in range(n)):
            return j + n
    return -1


def _same(word: str, pattern: str) -> bool:
    return word.startswith(pattern[:-1]) if pattern.endswith("*") else word == pattern


def _has(words: list[shell.Word], a: int, need: str) -> bool:
    """Is the flag letter (in a short cluster: `-cb`) or the word given?"""
    for w in words[a:]:
        t = w.text
        if len(need) == 1:
            if len(t) > 1 and t[0] == "-" and t[1] != "-" and need in t[1:]:
                return True
        elif t == need or t.endswith("=" + need):
            return True
    return False


def _takes_value(row: Tool, t: str) -> bool:
    return t in row.values or (len(t) > 1 and t[0] == "-" and t[1] != "-" and t[-1] in row.values)


def _option(row: Tool, words: list[shell.Word], i: int) -> tuple[int, int, Opt, int] | None:
    """`(value word, offset in it, option, words taken)` if word i is one of the row's
    credential options; `None` if not (or if it takes no value here: `mysql -p db`)."""
    t = words[i].text
    opt = row.options.get(t)
    if opt is not None and "n" in opt.bind:
        return (i + 1, 0, opt, 2) if i + 1 < len(words) else (i, len(t), opt, 1)
    for name in sorted(row.options, key=len, reverse=True):
        if len(t) > len(name) and t.startswith(name):
            opt, c = row.options[name], t[len(name)]
            if ("e" in opt.bind and c == "=") or ("c" in opt.bind and c == ":"):
                return i, len(name) + 1, opt, 1
            if "g" in opt.bind:
                return i, len(name), opt, 1
    return None


_WINDOWS_OPTION = re.compile(r"/[A-Za-z]+(?::\S*)?")


def _apply(row: Tool, words: list[shell.Word], a: int, out: list[Found], used: set[int]) -> None:
    i = a
    if row.sub:
        i = _find_sub(words, a, row.sub)
        if i < 0:
            return
    if row.needs:
        if not _has(words, a, row.needs):
            return
        used.update(k for k in range(a, len(words)) if words[k].text == row.needs)
    positionals: list[int] = []
    while i < len(words):
        t = words[i].text
        got = _option(row, words, i)
        if got is not None:
            vi, off, opt, n = got
            used.update(range(i, i + n))
            _value(words[vi], off, opt.form, row.rule, t, out)
            i += n
            continue
        # after a positional secret's first positional, `-x…` is an argument too
        # (`htpasswd -nb admin -RFv…`), as the tools' own parsers read it
        counted = positionals and isinstance(row.position, int)
        if len(t) > 1 and t[0] == "-" and not counted:
            i += 2 if _takes_value(row, t) else 1
            continue
        if row.windows and _WINDOWS_OPTION.fullmatch(t):
            i += 1
            continue
        if row.options_end:
            break
        positionals.append(i)
        i += 1
    if row.position == "*":
        for p in positionals:
            _value(words[p], 0, row.form, row.rule, "", out)
    elif row.position:
        n = int(row.position)
        flag, moved = row.position_with
        if flag and _has(words, a, flag):
            n = moved
        if len(positionals) >= n:
            used.add(positionals[n - 1])
            _value(words[positionals[n - 1]], 0, row.form, row.rule, "", out)


# ----------------------------------------------------------------------------- values

_PORT = re.compile(r"\d{1,5}(?::\d{1,5})*(?:/(?:tcp|udp))?")
# Words that follow an option in prose or that name a protocol, not a password.
_NOT_PASSWORDS = wordset(
    """
    the and with for from that this then when into onto your our their its you
    flag option options argument prompt prompts instead only also here there
    ssh https http tcp udp none
    """
)


def _value(word: shell.Word, off: int, form: str, rule: str, option: str, out: list[Found]) -> None:
    t = word.text
    for i, j, info in _secret_spans(t, off, form, word.quotes):
        v = t[i:j]
        if not v or v.startswith("[redacted:") or weak_password(v, word.quotes[i] == "'"):
            continue
        if v.lower() in _NOT_PASSWORDS or (option in ("-p", "-P") and _PORT.fullmatch(v)):
            continue
        if info is not None and not _value_fits(v, info, word.quotes[i]):
            continue
        out.append((*word.span(i, j), rule))


Spans = list[tuple[int, int, NameInfo | None]]


def _secret_spans(t: str, off: int, form: str, quotes: str) -> Spans:
    """Where the secret sits in a value: `(start, end, what its key says)` in `t`."""
    n = len(t)
    if not form:
        return [(off, n, None)]
    if form == "pass:":
        return [(off + 5, n, None)] if t.startswith("pass:", off) else []
    if form in ("%", ",", ":"):
        k = t.find(form, off)
        if form == ":" and k == n - 1 and k - off >= 8 and t[off] != "$":
            return [(off, k, _KEY_AS_USER)]  # `curl -u sk_live_…:`: an API key as the user
        if k < 0 or t.startswith("$", off):
            return []  # no password, or a templated user (`$USER:…`)
        return [(k + 1, n, None)]
    if form == "token":
        return [] if "=" in t else [(off, n, None)]
    if form == "conn":
        return _conn(t, off, quotes)
    if form == "conn:":
        k, at = t.find(":", off), t.rfind("@")
        if "://" in t or k <= off or at <= k + 1 or "/" in t[k:at]:
            return []
        return [(k + 1, at, None)]
    sep = {"kv": None, "kv*": None, "kvs": ",", "conninfo": " "}[form]
    spans: Spans = []
    i = off
    while i < n:
        j = n if sep is None else t.find(sep, i)
        j = n if j < 0 else j
        key, eq, _ = t[i:j].partition("=")
        info = _key_info(key.strip(), form == "kv*")
        if eq and info is not False:
            spans.append((i + len(key) + 1, j, info or None))
        i = j + 1
    return spans


def _conn(t: str, off: int, quotes: str) -> Spans:
    """`user/pass@db` (Oracle): the password, up to `@` or a blank; `user/"p@ss"@db`."""
    k = t.find("/", off)
    user = t[off:k]
    if k <= off or any(c in user for c in "@:= ") or "://" in t:
        return []
    s = k + 1
    if t.startswith('"', s) and quotes[s] != '"':
        e = t.find('"', s + 1)
        return [(s + 1, e, None)] if e > s + 1 else []
    e = s
    while e < len(t) and t[e] not in "@ ":
        e += 1
    return [(s, e, None)]


def _key_info(key: str, any_key: bool) -> NameInfo | bool | None:
    """Does a `key=` name a secret? `False` if not; `None` (any value) or its reading."""
    if not key or not (key[0].isalpha() or key[0] == "_") or " " in key:
        return False
    if any_key:
        return False if key.lower() in PLAIN_KEYS else None
    info = name_info(key)
    return False if info is None else info


_KEY_AS_USER = NameInfo(kind=API_KEY, strong=False)


def _value_fits(v: str, info: NameInfo, quote: str) -> bool:
    """A value under a key that names a secret: a password may be a word
    (`password=Summer`); a token, secret or key must read as one, as in `NAME=value`
    (`--set auth.existingSecret=db-secret` names a Kubernetes secret)."""
    if info is _KEY_AS_USER:
        return not weak_password(v) and shannon_entropy(v) >= 3.0
    if info.kind == PASSWORD:
        return True
    return value_ok(v, info, quote=quote.strip())


# ----------------------------------------------------------------------------- the general rule

# A first word that makes an option a switch, not a value: `--no-password`, `--ask-pass`.
_SWITCH_WORDS = wordset(
    "no ask with without use show hide skip prompt require allow enable disable print read"
    " save stdin force random generate"
)
# One-word compounds ending in `pass` that are no password.
_NOT_PASS = wordset(
    "bypass compass encompass overpass underpass surpass trespass multipass askpass nopass"
    " onepass firstpass secondpass singlepass twopass"
)


def name_info(name: str) -> NameInfo | None:
    """What an option's or key's name says: `assign.classify_name`, plus the one-word
    `…pass` compounds of tools (`-storepass`, `-keypass`, `--dbpass`)."""
    n = name.lstrip("-/")
    if not n or len(n) > 64:
        return None
    parts = [p for p in re.split(r"[-_.]+", n.lower()) if p]
    if not parts or parts[0] in _SWITCH_WORDS:
        return None
    info = classify_name(n)
    if info is not None:
        return info
    if parts[-1].endswith("pass") and parts[-1] not in _NOT_PASS:
        return NameInfo(kind=PASSWORD, strong=True)
    return None


def _general(words: list[shell.Word], used: set[int], first_tool: int, out: list[Found]) -> None:
    login = False
    prefix = True  # `PGPASSWORD=… pg_dump`: assignments before the command word
    for i in range(len(words)):
        w = words[i]
        t = w.text
        if prefix and _ENV.match(t):
            _environment(w, out)
            continue
        prefix = False
        if i in used:
            continue
        if 0 < i < first_tool and t == "login" and not words[i - 1].text.startswith("-"):
            login = True
            continue
        if login and i < first_tool and t == "-p" and i + 1 < len(words):
            _value(words[i + 1], 0, "", PASSWORD, "-p", out)
            continue
        if len(t) < 3 or t[0] != "-":
            continue
        name, eq, _ = t.partition("=")
        info = name_info(name) if _OPTION.fullmatch(name) else None
        if info is None:
            continue
        if eq:
            vw, off = w, len(name) + 1
        elif i + 1 < len(words) and not _OPTION_OR_ARG.match(words[i + 1].text):
            vw, off = words[i + 1], 0
        else:
            continue
        v = vw.text[off:]
        if not v or v.startswith("[redacted:"):
            continue
        quote = vw.quotes[off].strip()
        if value_ok(v, info, quote=quote) or (
            info.kind == PASSWORD and _typed_password(v, quote == "'")
        ):
            out.append((*vw.span(off), info.kind))


_OPTION = re.compile(r"--?[A-Za-z][A-Za-z0-9_.\-]*")
# What follows an option and is not its value: another option, or `name=…` (the next
# keyword argument in code: `add_argument("--password", type=str)`).
_OPTION_OR_ARG = re.compile(r"-|[A-Za-z_][A-Za-z0-9_]*=")


_ENV = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def _environment(w: shell.Word, out: list[Found]) -> None:
    """`PGPASSWORD=p,%x… pg_dump`: the variable a tool reads its password from, the
    whole shell word its value (commas and all)."""
    name, _, v = w.text.partition("=")
    info = classify_name(name)
    if info is not None and info.tool_env and v and _typed_password(v, w.quotes[-1] == "'"):
        out.append((*w.span(len(name) + 1), PASSWORD))


def _typed_password(v: str, literal: bool) -> bool:
    """A value given to a password option on a command line: any string a person could
    type as one, letters only included (`--os-password YlCmIjghYRKnEg`), but not a
    placeholder, a reference, a path or a word of prose."""
    return (
        6 <= len(v) <= 200
        and not any(c.isspace() for c in v)
        and not weak_password(v, literal)
        and v.lower() not in _NOT_PASSWORDS
        and (not looks_like_code(v) or looks_random(v, min_len=8) or random_base64(v))
        and not v.isdigit()
    )


_QUOTES = (("\\'", "\\'"), ('\\"', '\\"'), ("'", "'"), ('"', '"'))


def _unquote(text: str, s: int, e: int) -> tuple[int, int, str]:
    """The span inside one pair of enclosing quotes (`'…'`, `"…"`, `\\"…\\"`), if any,
    and the quote."""
    for left, right in _QUOTES:
        n = len(left)
        if e - s >= 2 * n and text.startswith(left, s) and text.endswith(right, s, e):
            return s + n, e - n, left
    return s, e, ""


def _secret(text: str, s: int, e: int, rule: str, literal: bool = False) -> Found | None:
    """The password's span without its quotes, unless it is a placeholder or a reference
    (`$PW`, `"$PW"`; in a netrc file `$x9…` is taken as it is)."""
    s, e, quote = _unquote(text, s, e)
    literal = literal or quote in ("'", "\\'")
    if e <= s or weak_password(text[s:e], literal) or text.startswith("[redacted:", s):
        return None
    return s, e, rule


# ----------------------------------------------------------------------------- netrc

# netrc tokens are separated by blanks and line breaks (real, or JSON-escaped `\n`).
_NETRC_SEP = r"(?:[ \t\r\n]|\\{1,2}[nrt])+"
_NETRC_TOKEN = r"(?:\"(?:[^\"\\\r\n]|\\.)*\"|(?:[^\s\"\\]|\\(?!\\?[nrt])[^\s])+)"
_NETRC_HEAD = re.compile(r"(?:machine" + _NETRC_SEP + r"[A-Za-z0-9_.:\[\]\-]{1,253}|default)")
_NETRC_PAIR = re.compile(
    _NETRC_SEP + r"(?P<k>login|password|account|port)" + _NETRC_SEP + r"(?P<v>" + _NETRC_TOKEN + ")"
)


def scan_netrc(text: str, pos: int) -> Found | None:
    """`machine h login u password S3cret` (one line or one token per line) and
    `default login u password S3cret`: the value after `password`.

    The entry must be netrc all the way from `machine`/`default` to the password: only
    keyword-value pairs, so prose ("machine learning login password prompts") is not one.
    A `default` entry must also name a login.
    """
    m = _NETRC_HEAD.match(text, pos)
    if m is None:
        return None
    i, end = m.end(), min(len(text), pos + 2000)
    keys: set[str] = set()
    found: Found | None = None
    for _ in range(6):
        p = _NETRC_PAIR.match(text, i, end)
        if p is None:
            break
        keys.add(p.group("k"))
        if p.group("k") == "password" and found is None:
            found = _secret(text, *p.span("v"), "netrc-password", literal=True)
        i = p.end()
    if found is None or (text.startswith("default", pos) and "login" not in keys):
        return None
    return found
