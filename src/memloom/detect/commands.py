"""Passwords that tools take in their own syntax, with no `NAME=` before them.

`mysql -pS3cret`, `sshpass -p S3cret ssh …`, `redis-cli -a S3cret`, `htpasswd -b file
user S3cret` and `.netrc` entries (`machine h login u password S3cret`) bind a password
by position or by a one-letter flag, so neither the vendor formats nor the assignment
rule see them. Each scanner is anchored on the command (or on `machine`/`default`),
reads the words that follow on the same line (the netrc entry may span lines) and masks
the password only: `mysql -u root -p[redacted:mysql-password] app`.
"""

from __future__ import annotations

import re

from .validators import weak_password

Found = tuple[int, int, str]

# One shell word after blanks: unquoted characters, '…', "…" or JSON-escaped \"…\"
# (a tool call's command inside a transcript line). A JSON-escaped line break (`\n`) or
# an operator (`;`, `|`, `&`, `>`, `<`) ends the command line.
_WORD = re.compile(
    r"""[ \t]+(?P<w>(?:[^\s'"`;|&<>()\\]|\\(?![nrt])[^\s]|'[^'\r\n]*'|"(?:[^"\\\r\n]|\\.)*")+)"""
)
_MAX_WORDS = 40
_QUOTES = (("\\'", "\\'"), ('\\"', '\\"'), ("'", "'"), ('"', '"'))


def _words(text: str, pos: int) -> list[tuple[int, int]]:
    """Spans of the shell words from `pos` to the end of the command (bounded)."""
    out: list[tuple[int, int]] = []
    end = min(len(text), pos + 1200)
    while len(out) < _MAX_WORDS:
        m = _WORD.match(text, pos, end)
        if m is None:
            break
        out.append(m.span("w"))
        pos = m.end()
    return out


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
    (`$PW`, `"$PW"`; in single quotes or a netrc file `$x9…` is taken as it is)."""
    s, e, quote = _unquote(text, s, e)
    literal = literal or quote in ("'", "\\'")
    if e <= s or weak_password(text[s:e], literal) or text.startswith("[redacted:", s):
        return None
    return s, e, rule


# ----------------------------------------------------------------------------- mysql

_MYSQL = re.compile(
    r"(?:mysql(?:dump|admin|import|check|show|pump|slap|binlog|sh)?"
    r"|mariadb(?:-(?:dump|admin|import|check|show|slap|binlog|backup))?|mariabackup)"
    r"(?:\.exe)?(?=[ \t])"
)


def scan_mysql(text: str, pos: int) -> Found | None:
    """`mysql -u root -pS3cret`, `mysqldump -p'S3cret'`, `mariadb --password=S3cret`.

    MySQL reads the password only when it is glued to `-p` (`-p S3cret` prompts and
    takes `S3cret` as the database), so a bare `-p` masks nothing. `-P` is the port.
    """
    m = _MYSQL.match(text, pos)
    if m is None:
        return None
    for s, e in _words(text, m.end()):
        if text.startswith("-p", s) and e - s > 2:
            return _secret(text, s + 2, e, "mysql-password")
        if text.startswith("--password=", s) or text.startswith("--pass=", s):
            return _secret(text, text.index("=", s) + 1, e, "mysql-password")
    return None


# ----------------------------------------------------------------------------- sshpass

_SSHPASS_VALUE_OPTS = ("-f", "-d", "-P")  # file, descriptor, prompt: not the password


def scan_sshpass(text: str, pos: int) -> Found | None:
    """`sshpass -p S3cret ssh u@h` / `sshpass -pS3cret …`; its options end at the command."""
    if not text.startswith("sshpass", pos):
        return None
    words = _words(text, pos + 7)
    skip = False
    for i, (s, e) in enumerate(words):
        if skip:
            skip = False
            continue
        if not text.startswith("-", s):
            return None  # the command sshpass runs: no -p before it
        if text.startswith("-p", s):
            if e - s > 2:
                return _secret(text, s + 2, e, "sshpass-password")
            if i + 1 < len(words):
                return _secret(text, *words[i + 1], "sshpass-password")
            return None
        skip = text[s:e] in _SSHPASS_VALUE_OPTS
    return None


# ----------------------------------------------------------------------------- redis-cli


def scan_redis_cli(text: str, pos: int) -> Found | None:
    """`redis-cli -h host -a S3cret ping`, `redis-cli --pass S3cret`."""
    if not text.startswith("redis-cli", pos):
        return None
    words = _words(text, pos + 9)
    for i, (s, e) in enumerate(words[:-1]):
        if text[s:e] in ("-a", "--pass"):
            return _secret(text, *words[i + 1], "redis-cli-password")  # even `-x…`
    return None


# ----------------------------------------------------------------------------- htpasswd


def scan_htpasswd(text: str, pos: int) -> Found | None:
    """`htpasswd -b[c] file user S3cret`, `htpasswd -nb user S3cret`: with `-b` the
    password is the last argument (`-n` prints instead of writing a file)."""
    if not text.startswith("htpasswd", pos):
        return None
    flags = ""
    positional: list[tuple[int, int]] = []
    words = _words(text, pos + 8)
    i = 0
    while i < len(words):
        s, e = words[i]
        if not positional and text.startswith("-", s) and e - s > 1:
            cluster = text[s + 1 : e]
            flags += cluster
            if cluster[-1] in "Cr":  # bcrypt cost / SHA rounds take the next word
                i += 1
        else:
            positional.append((s, e))
        i += 1
    if "b" not in flags:
        return None
    need = 2 if "n" in flags else 3
    if len(positional) < need:
        return None
    return _secret(text, *positional[need - 1], "htpasswd-password")


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
