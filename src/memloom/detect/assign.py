"""`NAME = value` secrets: one rule for every syntax that binds a value to a secret-like name.

Env files, shell exports, YAML, JSON, TOML, INI, Go/Java/PHP/Python/JS assignments,
`System.setProperty("TOKEN", "…")`, `<password>…</password>`, `--token=…` flags and
`password is …` prose all reduce to: an identifier, an operator, a value. The name
decides whether the value is a secret (its words, read camelCase/snake_case-aware);
the value decides whether it is a real one (not a placeholder, reference or word).
Only the value is masked, so `DB_PASSWORD=[redacted:generic-password]` stays readable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .validators import (
    has_long_sequence,
    is_placeholder,
    looks_like_code,
    looks_masked,
    looks_random,
    looks_wordy,
    mostly_sequence,
    passphrase_ok,
    random_base64,
    shannon_entropy,
    weak_password,
    words,
)

# Literals (lower-case) that start the search; each occurs inside a secret-like name.
ANCHORS: tuple[str, ...] = ("token", "secret", "pass", "pwd", "key", "auth", "cred")

# What follows the anchor: rest of the name, a closing quote, an operator, the value.
_TAIL = re.compile(
    r"""
    (?P<rest>[A-Za-z0-9_.\-]{0,64})
    (?P<close>["'`]?\]?["']?)
    (?P<type>[ \t]*:[ \t]*&?[A-Za-z_][A-Za-z_.<>\[\]]{0,30}[ \t]*(?==)   # `token: string = …`
            |[ \t]+(?:string|String|str|\[\]byte)\b)?                    # Go `var token string = …`
    [ \t]{0,4}
    (?P<op>:{1,3}=|\?=|\.=|\+=|=>|===?|!==?|=(?![~>])|:(?![:/\\])|,|>)
    [ \t]{0,8}
    (?:
        (?P<pfx>@|[rRbBuUfF]{1,2}|u8|L)?                       # @"…" (Objective-C), r"…", b"…"
        (?P<q>["'`])(?P<qv>[^\r\n]{1,1000}?)(?:(?P=q)|(?=\r?\n|\Z))
      | (?P<uv>(?:[^\s"'`,;<>(){}\[\]\\&|]|&(?![A-Za-z_][\w.\-]*=)|\\(?![nrt"'\\])){1,512})
    )
    """,
    re.X,
)
_COMPARE_OPS = frozenset({"==", "===", "!=", "!=="})
# `password.equals("…")` (Java, Kotlin, C#): the compared literal.
_EQUALS_TAIL = re.compile(
    r"(?P<rest>[A-Za-z0-9_]{0,64})(?:\(\))?\.(?:equals|equalsIgnoreCase|Equals)\([ \t]*"
    r"(?P<q>[\"'])(?P<v>[^\r\n]{1,500}?)(?P=q)[ \t]*[,)]"
)
# `--token abc` / `--password=abc` on a command line.
_FLAG_TAIL = re.compile(
    r"(?P<rest>[A-Za-z0-9_\-]{0,64})[ =](?P<q>[\"']?)(?P<v>[^\s\"'`;|&]{1,500})(?P=q)"
)
# `the password is hunter2`.
_PROSE_TAIL = re.compile(
    r"(?P<rest>[A-Za-z0-9_]{0,64})\s+(?:is|was|:)\s+(?P<q>[\"'`]?)(?P<v>[^\s\"'`]{6,128})(?P=q)"
)

_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-$")
_WORD_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")

PASSWORD, TOKEN, SECRET, API_KEY, KEY, CREDENTIAL, AUTH = (
    "generic-password",
    "generic-token",
    "generic-secret",
    "generic-api-key",
    "generic-key",
    "generic-credential",
    "generic-auth",
)
NPMRC = "npmrc-auth"
RULE_IDS = (PASSWORD, TOKEN, SECRET, API_KEY, KEY, CREDENTIAL, AUTH, NPMRC)
# `.npmrc` credentials: `//registry.example.com/:_authToken=…`, `…/:_auth=<base64>`,
# `…/:_password=<base64>`. Behind a registry URL any value but a placeholder is one.
_NPMRC_KEYS = frozenset({"_authToken", "_auth", "_password"})
_STRONG = {PASSWORD, TOKEN, SECRET, API_KEY, CREDENTIAL}

_NOUNS = {
    "password": PASSWORD,
    "passwd": PASSWORD,
    "pwd": PASSWORD,
    "passphrase": PASSWORD,
    "pass": PASSWORD,
    "passcode": PASSWORD,
    "token": TOKEN,
    "secret": SECRET,
    "apikey": API_KEY,
    "credential": CREDENTIAL,
    "credentials": CREDENTIAL,
    "creds": CREDENTIAL,
    "cred": CREDENTIAL,
    "key": KEY,
    "auth": AUTH,
}
# One-word compounds (`APIKEY`, `accesstoken`, `dbpassword`) end with one of these.
_COMPOUND_ENDS = (
    ("password", PASSWORD),
    ("passwd", PASSWORD),
    ("passphrase", PASSWORD),
    ("sshpass", PASSWORD),  # `SSHPASS=…` is what `sshpass -e` reads
    ("token", TOKEN),
    ("secret", SECRET),
    ("apikey", API_KEY),
    ("secretkey", SECRET),
    ("accesskey", SECRET),
    ("privatekey", SECRET),
    ("authkey", SECRET),
    ("signingkey", SECRET),
    ("masterkey", SECRET),
    ("encryptionkey", SECRET),
)
# `<word> key` is a secret key; a bare `key` is usually a dict key or an id.
_KEY_QUALIFIERS = words(
    """
    api access secret private client signing master encryption auth license app service
    account admin sas storage shared session hmac webhook deploy consumer subscription
    write read management root user bot integration ingest ingestion crypto cipher aes
    jwt encrypt decrypt token
    """
)
# A secret noun after these is not a secret: publicKey, primaryKey, csrf_token, max_tokens.
_DENY_BEFORE = words(
    """
    public pub primary foreign sort partition range cache lookup i18n translation
    idempotency unique composite next page pagination cursor continuation csrf xsrf
    authenticity max min num total count is has use enable enabled show hide toggle
    forgot display mock fake dummy example sample placeholder foreign hotkey
    """
)
_DENY_ANYWHERE = frozenset({"public", "publishable", "example", "sample"})
# Words that may follow the secret noun: `API_KEY_PROD`, `SECRET_KEY_BASE`, `token_b64`.
_ALLOWED_AFTER = words(
    """
    value val str string b64 base64 hex raw enc encoded plain plaintext data prod
    production live test dev development staging stage stg qa uat local old new current
    main primary secondary backup default base bytes text bearer v override env secret
    token key password passwd pwd passphrase pass apikey credential credentials creds
    cred auth access private
    """
)
_PASSWORD_AFTER = frozenset({"hash", "digest", "hashed"})

_VERSION_RE = re.compile(r"(?:^|[\-_@:v])\d+\.\d+(?:\.\d+)*(?:[\-.+][\w.]+)?$")
_BASE64_BLOB = re.compile(
    r"(?=[A-Za-z0-9+/]*[+=])(?:[A-Za-z0-9+/]{4}){5,}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?"
)
_UUID_RE = re.compile(
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
)


@dataclass(frozen=True, slots=True)
class NameInfo:
    kind: str  # rule id, e.g. generic-token
    strong: bool
    aws_secret: bool = False  # `aws_secret_access_key`, `SecretAccessKey`, `aws.secretKey`
    tool_env: bool = False  # `SSHPASS`, `PGPASSWORD`: a tool reads this name as its password


# Environment variables tools read their password from: any value but a placeholder is
# the password, however word-like it reads (`SSHPASS=bObMLRebRS`).
_TOOL_PASSWORD_ENV = frozenset(
    {"sshpass", "pgpassword", "mysqlpwd", "rediscliauth", "rsyncpassword", "lftppassword"}
)


# An AWS secret access key: 40 characters of base64 (`/` and `+` included).
_AWS_SECRET_VALUE = re.compile(r"[A-Za-z0-9/+]{40}")


def classify_name(name: str) -> NameInfo | None:
    """Is this identifier a secret's name? Reads its words; the last secret noun decides."""
    parts = [w.lower() for part in re.split(r"[_.\-$]+", name) for w in _WORD_RE.findall(part)]
    if not parts or _DENY_ANYWHERE.intersection(parts):
        return None
    if "".join(parts) in _TOOL_PASSWORD_ENV:
        return NameInfo(kind=PASSWORD, strong=True, tool_env=True)
    found: tuple[int, str] | None = None
    for i, w in enumerate(parts):
        kind = _NOUNS.get(w)
        if kind is None:
            for end, k in _COMPOUND_ENDS:
                if w.endswith(end):
                    kind = k
                    break
        if kind is not None:
            found = (i, kind)
    if found is None:
        return None
    i, kind = found
    prev = parts[i - 1] if i > 0 else ""
    if kind == KEY:
        if prev == "api":
            kind = API_KEY
        elif prev in _KEY_QUALIFIERS:
            kind = SECRET
    if prev in _DENY_BEFORE:
        return None
    for w in parts[i + 1 :]:
        if w.isdigit() or w in _ALLOWED_AFTER:
            continue
        if kind == PASSWORD and w in _PASSWORD_AFTER:
            continue
        return None
    joined = "".join(parts)
    aws = joined.endswith("secretaccesskey") or ("aws" in parts and joined.endswith("secretkey"))
    return NameInfo(kind=kind, strong=kind in _STRONG, aws_secret=aws)


def value_ok(value: str, info: NameInfo, quote: str = "") -> bool:
    """Is `value` a real secret for a name of this kind (not `${X}`, `getToken()`, `true`)?

    `quote` is the quote the value stood in. A value in `"…"`/`'…'` may hold spaces when
    the name is a password or secret: a passphrase (`"correct horse battery staple"`),
    but not a message or a label (backticks are shell command substitution).
    """
    n = len(value)
    if n > 1000:
        return False
    if any(ch.isspace() for ch in value):
        return quote in ("'", '"') and info.kind in (PASSWORD, SECRET) and passphrase_ok(value)
    if is_placeholder(value) or value.startswith("[redacted:"):
        return False
    if info.tool_env:
        # even `ab/cd.ef` (no path); in '…' a leading `$` is literal
        return 4 <= n <= 200 and not weak_password(value, literal=quote == "'")
    if (
        info.aws_secret
        and _AWS_SECRET_VALUE.fullmatch(value)
        and shannon_entropy(value) >= 3.5
        and not looks_masked(value)
        and not has_long_sequence(value, 8)
    ):
        # the key's exact shape under its own name: a key, even when it reads like a
        # path (`…/…`) or happens to be made of word-like pieces; other values go on
        # to the usual checks
        return True
    if looks_like_code(value) and not random_base64(value):
        return False  # a path, unless random base64 (`aws_secret_access_key = …/…`)
    if _VERSION_RE.search(value) and n < 40:
        return False
    has_digit = any(ch.isdigit() for ch in value)
    if info.kind == PASSWORD:
        if n < 6 or n > 200:
            return False
        symbol = any(not ch.isalnum() and ch not in "_-." for ch in value)
        if not (has_digit or symbol) and looks_wordy(value):
            return False
        return not has_long_sequence(value, 8)
    if info.strong:
        if n < 10:
            return False
        if value.isdigit():
            return n >= 10 and not has_long_sequence(value, 5)
        if looks_masked(value) or mostly_sequence(value):
            return False
        if looks_wordy(value) and not (quote and _symbol_count(value) >= 3):
            return False  # a name, unless punctuation says it was typed as a secret
        return shannon_entropy(value) >= 2.5
    # weak names (`key`, `auth`): only values that could not be anything but a token;
    # slugs such as cache keys (`setup-uv-1-x86_64-linux-0.7.13-f6c6…`) are not, but a
    # padded base64 blob may hold several `/` (`key = "q3/Wm+8K…/Yz7R…="`)
    if _UUID_RE.match(value):
        return False
    slashes = sum(value.count(c) for c in "-.:/")
    if slashes >= 3 and not (_BASE64_BLOB.fullmatch(value) or random_base64(value)):
        return False
    return looks_random(value, min_len=16, min_entropy=3.0) and not looks_wordy(value)


def _symbol_count(value: str) -> int:
    return sum(1 for ch in value if not ch.isalnum() and ch not in "_-. ")


def name_start(text: str, pos: int, limit: int = 80) -> int:
    """Index where the identifier containing `pos` begins (scans back over name chars)."""
    i = pos
    stop = max(0, pos - limit)
    while i > stop and text[i - 1] in _NAME_CHARS:
        i -= 1
    while i < pos and text[i] in ".-$":
        i += 1
    return i


Found = tuple[int, int, str]  # (start, end, rule)


_KEY_PREFIX_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_ .-$")


def _opened_by(text: str, ns: int, quote: str) -> bool:
    """Is the name inside a quoted key such as `"facebook access_token"`?"""
    i = ns - 1
    stop = max(0, ns - 40)
    while i >= stop and text[i] in _KEY_PREFIX_CHARS:
        i -= 1
    return i >= 0 and text[i] == quote


def scan_assignment(
    text: str, pos: int, anchor_len: int, seen: set[int], examined: bytearray
) -> Found | None:
    """Examine the name around an anchor at `pos`; return the value span to mask, if any.

    The cheap forward match runs first, so the usual anchor in prose ("tokens are")
    costs one failed regex match. `examined` marks values already looked at, so an
    anchor inside one (`key=key=key=…`) is skipped and the scan stays linear.
    """
    if examined[pos]:
        return None
    end_limit = min(len(text), pos + 2048)
    after = pos + anchor_len
    m = _TAIL.match(text, after, end_limit)
    if m is None:
        found = _compared_before(text, pos, after, seen)  # `"…" === secretKey`
        return found or _scan_other(text, pos, after, seen, end_limit)
    vs, ve = m.span("qv") if m.group("q") else m.span("uv")
    long_end = ve
    if not m.group("q") and ve - vs == 512:  # an AWS session token runs to ~1,000
        long_end = _LONG_VALUE.match(text, ve, min(len(text), ve + 16384)).end()
    examined[vs:long_end] = b"\x01" * (long_end - vs)
    ns = name_start(text, pos)
    if ns in seen or text.endswith("[redacted:", 0, ns):
        return None  # `[redacted:generic-password],x=1`: a marker's rule is no name
    seen.add(ns)
    name = text[ns : m.start("rest")] + m.group("rest")
    op, close = m.group("op"), m.group("close")
    before = text[ns - 1] if ns > 0 else ""
    quote = next((ch for ch in close if ch in "\"'`"), "")
    if quote and before != quote and not _opened_by(text, ns, quote):
        return None  # `pass", "new_string"`: the quote closes something else
    if op == "," and not close:
        return None
    if op == ">" and (before != "<" or close):
        return None
    quoted = bool(m.group("q"))
    if op in _COMPARE_OPS and not quoted:
        return None  # `if token == expected_token:` compares two variables
    if name in _NPMRC_KEYS and op == "=" and text.endswith("/:", 0, ns):
        vs, ve = m.span("qv") if quoted else m.span("uv")
        value = text[vs:ve]
        if len(value) < 6 or is_placeholder(value) or value[0] == "$":
            return None
        return vs, ve, NPMRC
    info = classify_name(name)
    if info is None:
        return None
    if quoted:
        vs, ve = m.span("qv")
    else:
        vs, ve = m.span("uv")
        ve = long_end
        if op == "=" and text.startswith(",", ve) and _shell_statement(text, ns):
            ve = _SHELL_WORD.match(text, ve).end()  # `export SSHPASS=a,b`: one word
        while ve > vs and text[ve - 1] in ".:":
            ve -= 1
    if ve <= vs:
        return None
    value = text[vs:ve]
    if not value_ok(value, info, quote=m.group("q") or ""):
        return None
    return vs, ve, info.kind


# The rest of an unquoted value longer than `_TAIL` reads (same characters).
_LONG_VALUE = re.compile(r"(?:[^\s\"'`,;<>(){}\[\]\\&|]|&(?![A-Za-z_][\w.\-]*=)|\\(?![nrt\"'\\]))*")
# The rest of an unquoted shell word, commas included.
_SHELL_WORD = re.compile(r"[^\s\"'`;<>(){}\[\]\\&|]*")


def _shell_statement(text: str, ns: int) -> bool:
    """Does the name start a shell or `.env` line (`NAME=…`, `export NAME=…`)? There a
    comma belongs to the value; in code (`f(token=abc,user=x)`) it separates arguments."""
    line_start = text.rfind("\n", max(0, ns - 80), ns) + 1
    prefix = text[line_start:ns].strip()
    return prefix in ("", "$") or prefix.endswith("export")


def _compared_before(text: str, pos: int, after: int, seen: set[int]) -> Found | None:
    """`"…" == password`, `"…" !== secretKey`, `"…".equals(apiToken)`: a literal compared
    with the name from its left. Linear: one backwards walk over the current line."""
    lo = max(0, pos - 84)
    if text.find("=", lo, pos) < 0 and text.find("(", lo, pos) < 0:
        return None  # the usual anchor in prose: nothing to compare with
    ns = name_start(text, pos)
    if ns < 2 or ns in seen:
        return None
    i = ns - 1
    while i > 0 and text[i] in " \t":
        i -= 1
    if text[i] == "(":  # `"…".equals(name`
        if not text.endswith(".equals", 0, i) and not text.endswith(".Equals", 0, i):
            return None
        i -= 7
    elif text[i] == "=" and text[i - 1] in "=!":
        i -= 1
        while i > 0 and text[i - 1] in "=!":
            i -= 1
    else:
        return None
    j = i - 1
    while j > 0 and text[j] in " \t":
        j -= 1
    quote = text[j] if j >= 0 else ""
    if quote not in "\"'`" or not quote:
        return None
    k = text.rfind(quote, max(0, j - 1000), j)
    if k < 0 or "\n" in text[k:j]:
        return None
    end = after
    while end < len(text) and (text[end].isalnum() or text[end] == "_"):
        end += 1
    info = classify_name(text[ns:end])
    if info is None or not value_ok(text[k + 1 : j], info, quote=quote):
        return None
    seen.add(ns)
    return k + 1, j, info.kind


# `aws configure set`, `git config --global`, `yarn config set`, `poetry config`: a
# secret's name then its value, after a config command on the same line.
_CONFIG_CMD = re.compile(r"(?<![\w-])config(?:ure)?(?::set)?[ \t]")


def _config_set(text: str, pos: int, after: int, seen: set[int], end_limit: int) -> Found | None:
    """`aws configure set aws_secret_access_key wJal…/…`: no operator between name and value."""
    ns = name_start(text, pos)
    if ns < 1 or text[ns - 1] not in " \t" or ns in seen:
        return None
    line_start = text.rfind("\n", max(0, ns - 120), ns) + 1
    if _CONFIG_CMD.search(text, max(line_start, ns - 120), ns) is None:
        return None
    m = _FLAG_TAIL.match(text, after, end_limit)
    if m is None or text[m.start("rest") + len(m.group("rest"))] != " ":
        return None
    info = classify_name(text[ns : m.start("rest")] + m.group("rest"))
    if info is None or not info.strong or not value_ok(m.group("v"), info):
        return None
    seen.add(ns)
    return m.start("v"), m.end("v"), info.kind


def _scan_other(text: str, pos: int, after: int, seen: set[int], end_limit: int) -> Found | None:
    """`password.equals("…")`, command-line flags (`--token abc`) and prose
    (`the password is hunter2`)."""
    m = None
    if text.find("quals(", after, after + 90) >= 0:  # `.equals(` / `.Equals(`
        m = _EQUALS_TAIL.match(text, after, end_limit)
    if m is not None:
        ns = name_start(text, pos)
        info = classify_name(text[ns:pos] + text[pos:after] + m.group("rest"))
        if info is None or ns in seen or not value_ok(m.group("v"), info, quote=m.group("q")):
            return None
        seen.add(ns)
        return m.start("v"), m.end("v"), info.kind
    if text.find("config", max(0, pos - 120), pos) >= 0:  # `aws configure set NAME value`
        found = _config_set(text, pos, after, seen, end_limit)
        if found is not None:
            return found
    if text.rfind("--", max(0, pos - 40), pos) >= 0:
        m = _FLAG_TAIL.match(text, after, end_limit)
        ns = name_start(text, pos)
        if m is None or ns < 2 or text[ns - 2 : ns] != "--" or ns in seen:
            return None
        name = text[ns : m.start("rest")] + m.group("rest")
        info = classify_name(name)
        if info is None or not info.strong or not value_ok(m.group("v"), info):
            return None
        seen.add(ns)
        return m.start("v"), m.end("v"), info.kind
    m = _PROSE_TAIL.match(text, after, end_limit)
    if m is None:
        return None
    ns = name_start(text, pos)
    name = text[ns : m.start("rest")] + m.group("rest")
    if ns > 0 and text[ns - 1] == " ":  # prose spells names as words: "the API key is …"
        before = text[max(0, ns - 24) : ns - 1].split()
        if before:
            name = before[-1] + "_" + name
    info = classify_name(name)
    if info is None or not info.strong or ns in seen:
        return None
    value = m.group("v").rstrip(".,;:?)")
    if info.kind == PASSWORD:  # "my password is hunter2!" — needs a digit to be believable
        ok = value_ok(value, info) and any(ch.isdigit() for ch in value)
    else:  # "the token is …" only when the value could not be a word
        ok = value_ok(value, info) and looks_random(value, min_len=20, min_entropy=3.5)
    if not ok:
        return None
    seen.add(ns)
    return m.start("v"), m.start("v") + len(value), info.kind
