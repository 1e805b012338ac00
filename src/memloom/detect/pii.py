"""Personal data (level 1) and internal infrastructure (level 2).

Every number-shaped finding is confirmed by a checksum or a range check (Luhn, IBAN
mod-97, SSA area/group/serial rules, RFC 1918), because code and logs are full of digit
runs that are not personal data.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata

from .validators import IBAN_LENGTHS, card_ok, iban_ok, ssn_ok, words

Found = tuple[int, int, str]

# ----------------------------------------------------------------------------- email

_LOCAL_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._%+-")
# Labels may be IDNs, either as punycode (`xn--bcher-kva`) or in Unicode (`bücher`);
# the TLD is ASCII letters, a punycode TLD (`xn--p1ai`) or non-ASCII letters (`рф`). An
# ASCII TLD ends at the first non-ASCII-word character, so CJK text written right after
# an address (`…@mail.com获取`) is not taken into it.
_EMAIL_DOMAIN = re.compile(
    r"@(?P<d>(?:[^\W_](?:(?:[^\W_]|-){0,61}[^\W_])?\.)+"
    r"(?P<tld>(?:[A-Za-z]{2,24}|xn--[A-Za-z0-9\-]{2,59})(?![A-Za-z0-9_\-])"
    r"|[^\W\d_A-Za-z]{2,24}(?![\w\-])))"
)
_ROLE_LOCALS = frozenset(
    {"git", "noreply", "no-reply", "donotreply", "do-not-reply", "mailer-daemon", "postmaster"}
)
_EXAMPLE_DOMAINS = ("example.com", "example.org", "example.net")
_RESERVED_TLDS = frozenset({"example", "test", "invalid", "localhost", "local"})
_FILE_TLDS = words(
    """
    png jpg jpeg gif svg webp ico bmp js mjs cjs ts tsx jsx css scss less json md mdx py
    rb go rs java kt swift html htm xml yml yaml toml lock txt map wasm zip gz tgz tar
    pdf sh vue svelte php cs cpp hpp dart lua sql csv log
    """
)


def scan_email(text: str, at: int) -> Found | None:
    """An e-mail address around the '@' at `at`; role addresses and example domains pass."""
    start = at
    # EAI local parts (`josé@…`, `用户@…`): non-ASCII letters count, but a run of wide
    # (CJK) characters only when the whole local part is one: `请联系ana@…` is `ana@…`.
    wide = at > 0 and _wide(text[at - 1])
    while start > 0 and at - start < 64:
        ch = text[start - 1]
        if ch in _LOCAL_CHARS:
            if wide:
                break
        elif not (ch > "\x7f" and ch.isalnum()) or _wide(ch) != wide:
            break
        start -= 1
    while start < at and text[start] in ".-+":
        start += 1
    if start == at:
        return None
    m = _EMAIL_DOMAIN.match(text, at)
    if m is None:
        return None
    local = text[start:at].lower()
    domain = m.group("d").lower()
    tld = m.group("tld").lower()
    if local in _ROLE_LOCALS or tld in _RESERVED_TLDS or tld in _FILE_TLDS:
        return None
    if domain.endswith(_EXAMPLE_DOMAINS):
        return None
    if start > 0 and text[start - 1] in "/:" and _in_url_userinfo(text, start):
        return None  # `scheme://user:pass@host` is a URL (handled there), not an address
    return start, m.end(), "email"


def _wide(ch: str) -> bool:
    return ch > "\u10ff" and unicodedata.east_asian_width(ch) in ("W", "F")


def _in_url_userinfo(text: str, start: int) -> bool:
    i = text.rfind("://", max(0, start - 300), start)
    return i >= 0 and not any(ch.isspace() or ch in "/@" for ch in text[i + 3 : start - 1])


# ----------------------------------------------------------------------------- numbers

# Cheap candidate finder: a run of digits and phone/card/IP separators. Starts with a
# character class so the regex engine can skip everything else quickly.
# A two-digit match preceded by two capitals (`DE89…`) is an IBAN candidate instead.
NUMBER_RUN = re.compile(rb"[\d+(](?:[\d .\-()/]{6,}|(?<=[A-Z]{2}\d)\d)")  # on ASCII bytes
_NUMERIC = re.compile(
    r"""(?:
        (?<![\w.\-])(?P<ipv4>(?:\d{1,3}\.){3}\d{1,3})(?![\w.]|-\w)
      | (?<![\w.+\-/:#=@$])
        (?P<ssn>(?P<area>\d{3})(?P<ssep>[\-. ])(?P<group>\d{2})(?P=ssep)(?P<serial>\d{4}))
        (?![\w\-])
      | (?<![\w.+\-/@$])
        (?P<card>\d{4}(?P<sep>[ \-.])\d{4}(?P=sep)\d{4}(?P=sep)(?:\d{4}(?P=sep)\d{1,3}|\d{1,7})
                |\d{4}[ \-]\d{6}[ \-]\d{4,5}|\d{13,19})
        (?![\w\-]|\.\d)
      | (?<![\w.+\-/#=@$])
        (?:
            (?P<phone>\+\d{1,3}[ .\-]?(?:\(\d{1,4}\)|\d{1,4})(?:[ .\-]?\d{2,4}){1,4}
                     |\(\d{3}\)[ ]?\d{3}[ .\-]\d{4}
                     |\d{3}[.\-]\d{3}[.\-]\d{4})
            (?![\w\-]|\.\d)
          | (?P<nat>\(\d{1,5}\)[ .\-]?\d{2,5}(?:[ .\-]?\d{2,5}){0,3}  # (02) 9876 5432
                   |0\d{1,4}(?:[ .\-/]\d{2,8}){1,4}                     # 0172 1234567
                   |0\d{8,13}                                           # 01721234567
                   |1[3-9]\d(?:[ \-]?\d{4}){2}                          # 138 1234 5678
                   |[6-9]\d{4}[ \-]\d{5}                                # 98765 43210
                   |[2-9]\d{2}[ ][2-9]\d{2}[ ]\d{4}                      # 415 555 2671
                   |[18][ .\-]?\(?\d{3}\)?[ .\-]?\d{3}[ .\-]?\d{2}[ .\-]?\d{2})
            (?![\w\-]|[./]\d)
        )
    )""",
    re.X,
)
_PRIVATE_V4 = tuple(
    ipaddress.ip_network(n)
    for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16")
)
# A national number (no `+`) is a phone only next to a word that says so.
_PHONE_CONTEXT = re.compile(
    r"""(?ix)(?<![^\W\d_])(?:
        phone|phones|telephone|tel|tél|mobile|mobil|mob|cell|cellphone|call|calls|fax|
        number|numbers|whatsapp|sms|text|contact|ph|handy|telefon|telefone|telefono|
        teléfono|téléphone|celular|móvil|dial|ring|reach|hotline
    )(?![^\W\d_])"""
)
_DATE_START = re.compile(r"\d{1,2}([./\-])\d{1,2}\1\d{2,4}(?!\d)")


def _phone_context(text: str, s: int) -> bool:
    lo = max(0, s - 40)
    nl = text.rfind("\n", lo, s)
    return _PHONE_CONTEXT.search(text, nl + 1 if nl >= 0 else lo, s) is not None


def _national_phone_ok(cand: str, digits: str) -> bool:
    """Digit counts of national numbering plans, one separator style, not a date."""
    n = len(digits)
    if len(set(digits)) <= 2:
        return False
    body = cand
    if cand.startswith("("):
        close = cand.index(")")
        if not 8 <= n <= 12:
            return False
        body = cand[close + 1 :].lstrip(" .-")
    elif digits.startswith("00"):
        if not 11 <= n <= 15:
            return False
    elif digits[0] == "0":
        if not 9 <= n <= 12 or _DATE_START.match(cand):
            return False
    elif digits[0] == "1" and digits[1] in "3456789" and "(" not in cand:
        if n != 11:  # mainland-China mobile numbers: 1[3-9] + 9 digits
            return False
    elif not 10 <= n <= 11:
        return False
    seps = {ch for ch in body if not ch.isdigit() and ch not in "()"}
    return len(seps) <= 1 or (seps <= {" ", "-"} and "(" in cand)


def scan_numbers(text: str, start: int, end: int, out: list[tuple[int, int, str, int]]) -> None:
    """Classify one digit run: card (Luhn), SSN (ranges), phone (shape), private IPv4."""
    for m in _NUMERIC.finditer(text, start, end):
        if m.group("ipv4"):
            try:
                addr = ipaddress.IPv4Address(m.group("ipv4"))
            except ValueError:
                continue
            if any(addr in net for net in _PRIVATE_V4):
                out.append((m.start("ipv4"), m.end("ipv4"), "private-ip", 2))
        elif m.group("ssn"):
            s, e = m.span("ssn")
            if m.group("ssep") != "-" and (
                (e + 1 < len(text) and text[e] in ". " and text[e + 1].isdigit())
                or (s >= 2 and text[s - 1] == " " and text[s - 2].isdigit())
            ):
                continue  # one group of a longer spaced or dotted number
            if ssn_ok(m.group("area"), m.group("group"), m.group("serial")):
                out.append((s, e, "us-ssn", 1))
        elif m.group("card"):
            s, e = m.span("card")
            digits = re.sub(r"\D", "", m.group("card"))
            if not card_ok(digits) and m.group("sep") and len(digits) > 16:
                e = s + 19  # 4-4-4-4 followed by another short group (a CVV, an expiry)
                digits = digits[:16]
            if card_ok(digits):
                out.append((s, e, "credit-card", 1))
        elif m.group("phone"):
            s = m.group("phone")
            digits = re.sub(r"\D", "", s)
            if s.startswith("+"):
                ok = 10 <= len(digits) <= 15
            else:
                ok = len(digits) == 10 and digits[0] in "23456789" and digits[3] in "23456789"
            if ok and len(set(digits)) > 2:
                out.append((m.start("phone"), m.end("phone"), "phone-number", 1))
        elif m.group("nat"):
            cand = m.group("nat")
            digits = re.sub(r"\D", "", cand)
            if _national_phone_ok(cand, digits) and _phone_context(text, m.start("nat")):
                out.append((m.start("nat"), m.end("nat"), "phone-number", 1))


_IBAN = re.compile(r"[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]{4}){2,7}(?:[ ]?[A-Z0-9]{1,4})?(?![A-Za-z0-9])")


def scan_iban(text: str, s: int, out: list[tuple[int, int, str, int]]) -> bool:
    """An IBAN starting at `s`, compact or in groups of four: exact length and mod-97."""
    if s > 0 and text[s - 1].isalnum():
        return False
    want = IBAN_LENGTHS.get(text[s : s + 2])
    m = _IBAN.match(text, s) if want else None
    if m is None:
        return False
    count, i = 0, s  # walk until `want` non-space characters are consumed
    while i < m.end() and count < want:
        if text[i] != " ":
            count += 1
        i += 1
    if count != want or (i < len(text) and text[i].isalnum()):
        return False
    if not iban_ok(text[s:i].replace(" ", "")):
        return False
    out.append((s, i, "iban", 1))
    return True


# ----------------------------------------------------------------------------- internal

_IPV6_CAND = re.compile(r"[fF][cdeCDE][0-9a-fA-F]{1,2}:[0-9a-fA-F:]{2,40}(?:%[\w.]+)?")


def scan_ipv6(text: str, out: list[tuple[int, int, str, int]]) -> None:
    """Unique-local (fc00::/7) and link-local (fe80::/10) IPv6 addresses.

    Only texts with a `::` or at least seven colons can hold one, which skips the scan
    for most prose.
    """
    if "::" not in text and text.count(":") < 7:
        return
    for m in _IPV6_CAND.finditer(text):
        s, e = m.span()
        if s > 0 and (text[s - 1].isalnum() or text[s - 1] in ":._"):
            continue
        raw = m.group().split("%", 1)[0].rstrip(":") if not m.group().endswith("::") else m.group()
        try:
            addr = ipaddress.IPv6Address(raw)
        except ValueError:
            continue
        if addr.is_link_local or addr in _ULA:
            out.append((s, e, "private-ipv6", 2))


_ULA = ipaddress.ip_network("fc00::/7")

INTERNAL_SUFFIXES = (
    ".internal",
    ".corp",
    ".local",
    ".lan",
    ".intranet",
    ".home.arpa",
    ".localdomain",
)
_HOST_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-.")
_LABEL_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?")


def scan_internal_host(text: str, s: int, e: int, domain: str, bare_ok: bool) -> Found | None:
    """A hostname ending at [s, e), an occurrence of an internal suffix or domain.

    `domain` is the suffix without its dot (`corp`, or a configured `acme.com`); `bare_ok`
    accepts the domain itself (configured domains) besides its sub-domains.
    File names such as `settings.local.json` or `.env.local` are not hosts.
    """
    if e < len(text):
        nxt = text[e]
        if nxt.isalnum() or nxt in "_-":
            return None
        if nxt == "." and e + 1 < len(text) and text[e + 1].isalnum():
            return None
    start = s
    while start > 0 and s - start < 253 and text[start - 1] in _HOST_CHARS:
        start -= 1
    host = text[start:e].lower()
    if host == domain:
        if not bare_ok:
            return None
    elif not host.endswith("." + domain):
        return None
    labels = host.split(".")
    if len(labels) < 2 or not all(_LABEL_RE.fullmatch(x) for x in labels):
        return None
    if start > 0:
        prev = text[start - 1]
        if prev == "_" or (prev in "/\\" and text[max(0, start - 2) : start] not in ("//", "\\\\")):
            return None
    return start, e, "internal-host"
