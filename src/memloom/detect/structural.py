"""Secrets recognised by the syntax around them rather than by their own format.

Authorization headers, bearer tokens, `scheme://user:pass@host`, JWTs and
PEM/OpenSSH private-key blocks (which span lines). (`curl -u user:pass` is read with
the other command lines, in `commands.py`.)
"""

from __future__ import annotations

import re

from .validators import (
    is_placeholder,
    jwt_header_ok,
    looks_masked,
    looks_random,
    looks_wordy,
    shannon_entropy,
    weak_password,
)

Found = tuple[int, int, str]

_AUTH_HEADER = re.compile(
    r"""(?i)authorization["']?\s*[:=]\s*["']?
    (?:(?P<scheme>[A-Za-z][\w\-]{1,24})[ \t]+)?
    (?P<s>[A-Za-z0-9\-._~+/=%]{8,4096})(?![ \t]+[^\s"'`,;)\]}])""",
    re.X,
)
_BEARER = re.compile(r"(?i)bearer\s+(?P<s>[A-Za-z0-9\-._~+/]{16,4096}=*)")
_BASE64 = re.compile(r"[A-Za-z0-9+/]+=*")
_SCHEME_WORDS = frozenset({"bearer", "basic", "token", "digest", "apikey", "api-key"})


def scan_auth_header(text: str, pos: int) -> Found | None:
    """`Authorization: Bearer …` / `Basic …` / a bare token; masks the credential only."""
    m = _AUTH_HEADER.match(text, pos, min(len(text), pos + 4200))
    if m is None:
        return None
    value = m.group("s")
    scheme = (m.group("scheme") or "").lower()
    if value.lower() in _SCHEME_WORDS or is_placeholder(value) or looks_masked(value):
        return None
    if not scheme and looks_wordy(value):
        return None
    if scheme == "basic" and not _BASE64.fullmatch(value):
        return None
    if shannon_entropy(value) < 2.5:
        return None
    return m.start("s"), m.end("s"), "authorization-header"


def scan_bearer(text: str, pos: int) -> Found | None:
    """A bearer token outside an Authorization header (`"Bearer " + …` strings, logs)."""
    m = _BEARER.match(text, pos, min(len(text), pos + 4200))
    if m is None:
        return None
    value = m.group("s")
    if is_placeholder(value) or not looks_random(value, min_len=16, min_entropy=3.0):
        return None
    return m.start("s"), m.end("s"), "bearer-token"


_URL_CRED = re.compile(
    r"""(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]{1,30})://
    (?P<user>[^:@/\s"'<>\[\]{}]{0,128}):(?P<s>[^@/\s"'<>]{1,256})@
    (?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-_]+(?:\.[A-Za-z0-9\-_]+)*)""",
    re.X,
)
_SCHEME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+.-")


def scan_url_credentials(text: str, pos: int) -> Found | None:
    """`scheme://user:password@host` — the password becomes a marker, the URL stays a URL."""
    start = pos
    while start > 0 and pos - start < 31 and text[start - 1] in _SCHEME_CHARS:
        start -= 1
    m = _URL_CRED.match(text, start, min(len(text), pos + 700))
    if m is None:
        return None
    pw = m.group("s")
    if weak_password(pw) or pw.startswith("[redacted:"):
        return None
    return m.start("s"), m.end("s"), "url-password"


_PEM_HEADER = re.compile(r"-----BEGIN ((?:[A-Z0-9]+ ){0,3})PRIVATE KEY( BLOCK)?-----")
_NEWLINE = re.compile(r"\r?\n|(?:\\r)?\\n")  # real, or JSON-escaped inside a string
_PEM_LINE = re.compile(r"[ \t]*(?:[A-Za-z0-9+/=]{8,}|[A-Za-z\-]+:[^\r\n\\]*|)[ \t]*")


def scan_private_key(text: str, pos: int) -> Found | None:
    """A PEM/OpenSSH/PGP private-key block: masks the body between BEGIN and END lines.

    The body's newlines are kept (the engine re-emits them after the marker) so the text
    keeps its line count. A block cut off before its END line is masked up to the last
    line that still looks like key material.
    """
    m = _PEM_HEADER.match(text, pos)
    if m is None:
        return None
    body_start = m.end()
    nl = _NEWLINE.match(text, body_start)
    if nl:
        body_start = nl.end()
    end = text.find("-----END ", body_start, body_start + 64000)
    if end >= 0:
        body_end = end
        # drop the newline that precedes the END line
        for sep in ("\r\n", "\n", "\\r\\n", "\\n"):
            if text.endswith(sep, body_start, body_end):
                body_end -= len(sep)
                break
    else:
        body_end = body_start
        i = body_start
        while i < len(text):
            lm = _PEM_LINE.match(text, i)
            line_end = lm.end() if lm else i
            if line_end == i:
                break
            body_end = line_end
            nm = _NEWLINE.match(text, line_end)
            if nm is None:
                break
            i = nm.end()
    body = text[body_start:body_end]
    material = re.sub(r"\\[rn]|\s", "", body)
    if len(material) < 24 or looks_masked(material) or material.startswith("[redacted:"):
        return None
    return body_start, body_end, "private-key"


_JWT = re.compile(
    r"(?<![A-Za-z0-9_\-])(?P<s>eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}"
    r"(?P<sig>\.[A-Za-z0-9_\-+/]*={0,2})?)(?![A-Za-z0-9_\-])"
)


def scan_jwt(text: str, pos: int) -> Found | None:
    """`eyJ….eyJ….sig` — header and payload are base64url JSON objects.

    With its signature dot the shape alone is enough (plus entropy); a two-part token
    (`header.payload`, signature stripped) must decode: the header to a JSON object
    naming `alg`/`typ`, the payload to a JSON object.
    """
    m = _JWT.match(text, pos, min(len(text), pos + 16000))
    if m is None or shannon_entropy(m.group("s")) < 3.0:
        return None
    if m.group("sig") is None:
        header, _, payload = m.group("s").partition(".")
        if not jwt_header_ok(header, payload):
            return None
    return m.start("s"), m.end("s"), "jwt"
