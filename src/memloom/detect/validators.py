"""Checks that turn a regex candidate into a finding: checksums, entropy, placeholders.

Regexes alone over-match (any 16 digits look like a card, any 40 hex chars look like a
token); these small pure functions are what keep the false-positive rate low.
"""

from __future__ import annotations

import math
import re
from collections import Counter


def words(text: str) -> frozenset[str]:
    """A frozenset from a whitespace-separated word list (keeps long lists compact)."""
    return frozenset(text.split())


# ----------------------------------------------------------------------------- entropy


def shannon_entropy(value: str) -> float:
    """Bits per character; random base62 tokens score ~5, English words ~3, 'aaaa' 0."""
    if not value:
        return 0.0
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


_SEQUENCES = (
    "abcdefghijklmnopqrstuvwxyz",
    "zyxwvutsrqponmlkjihgfedcba",
    "0123456789",
    "9876543210",
    "qwertyuiop",
    "asdfghjkl",
)


def has_long_sequence(value: str, run: int = 6) -> bool:
    """True for alphabets and keyboard walks ('abcdefgh', '0123456789', 'qwerty')."""
    low = value.lower()
    for seq in _SEQUENCES:
        for i in range(len(seq) - run + 1):
            if seq[i : i + run] in low:
                return True
    return False


def mostly_sequence(value: str) -> bool:
    """'abcdefgh', '12345678', 'qwertyuiop': the value is (nearly) all one keyboard run."""
    low = value.lower()
    for seq in _SEQUENCES:
        for size in range(len(seq), 3, -1):
            for i in range(len(seq) - size + 1):
                if seq[i : i + size] in low:
                    if size >= 0.8 * len(low):
                        return True
                    break
            else:
                continue
            break
    return False


_REPEAT_RE = re.compile(r"(.)\1{5,}")
_MASKED_RE = re.compile(r"(?i)(?:x{4,}|\*{3,}|#{3,}|\.{3,}|_{4,}|0{8,}|…)")


def looks_masked(value: str) -> bool:
    """Values someone already blanked out: 'xxxx', '****', '####', '...'."""
    return bool(_MASKED_RE.search(value))


def char_classes(value: str) -> int:
    """How many of lower / upper / digit / other the value mixes."""
    lower = upper = digit = other = 0
    for ch in value:
        if "a" <= ch <= "z":
            lower = 1
        elif "A" <= ch <= "Z":
            upper = 1
        elif "0" <= ch <= "9":
            digit = 1
        else:
            other = 1
    return lower + upper + digit + other


def looks_random(value: str, min_len: int = 16, min_entropy: float = 3.0) -> bool:
    """A token-like value: long enough, mixed characters, high entropy, no alphabet runs."""
    if len(value) < min_len:
        return False
    if _REPEAT_RE.search(value) or looks_masked(value) or has_long_sequence(value):
        return False
    has_digit = any(ch.isdigit() for ch in value)
    has_alpha = any(ch.isalpha() for ch in value)
    if not (has_digit and has_alpha) and char_classes(value) < 3:
        return False
    return shannon_entropy(value) >= min_entropy


# ------------------------------------------------------------------------- placeholders

_PLACEHOLDER_RE = re.compile(
    r"""(?ix)
    ^(?:
        \$\{[^}]*\}.* | \$\{\{.*\}\} | \$\(.*\) | \$[A-Za-z_][\w.]* (?:[:\-=][^\s]*)?   # shell / CI
      | \{\{.*\}\} | \{%.*%\} | \{[A-Za-z_][\w.\-]*\} | %[A-Za-z_]\w*%   # templates
      | <[^<>]*> | \[[^\[\]]*\]                                         # <your-token>, [PASSWORD]
      | @[A-Za-z_]\w*@ | %\(\w+\)s | %s | \?
      | (?:process\.env|os\.environ|os\.getenv|env|getenv|environ|config|settings|secrets?|vars|
          self|this|params|args|options|opts|props|ctx|context|request|req|window|document|
          credentials|creds|auth|cfg|conf)\b[.\[(].*
    )$
    """
)

_PLACEHOLDER_WORDS = words(
    """
    password passwd pass pwd secret secrets token tokens key apikey api_key api-key
    value changeme change_me changeit placeholder example examples sample dummy fake
    test testing none null nil undefined true false yes no on off empty default required
    optional redacted hidden masked removed omitted string str text your_token
    your-token yourtoken your_key your-key yourkey your_secret your_password
    your-password mypassword mysecret secretkey secret_key secret-key password123 admin
    root user username guest todo tbd foo bar baz foobar qux hunter2 letmein abc123
    123456 12345678 xxx xxxx
    """
)

_PLACEHOLDER_PARTS_RE = re.compile(
    r"(?i)(?:^|[_\-.\s])(?:your|my|insert|enter|put|replace|add|fill|paste|some)[_\-.\s]"
    r"|(?:here|goes[_\-]?here|placeholder|example|redacted|changeme)(?:$|[_\-.\s])"
    r"|^(?:sample|dummy|fake|example)[_\-]"
)


def is_placeholder(value: str) -> bool:
    """Template variables, env references, doc placeholders and obvious dummies."""
    v = value.strip()
    if not v:
        return True
    if v.lower() in _PLACEHOLDER_WORDS:
        return True
    if _PLACEHOLDER_RE.match(v):
        return True
    if _PLACEHOLDER_PARTS_RE.search(v):
        return True
    if looks_masked(v) or _REPEAT_RE.fullmatch(v):
        return True
    return len(set(v.lower())) <= 2


_DOTTED_IDENT_RE = re.compile(r"^[A-Za-z_$][\w$]*(?:(?:\.|::|->)[A-Za-z_$][\w$]*)+(?:\(\))?$")
_IDENT_PART_RE = re.compile(r"[A-Za-z_$][\w$]*")
_CALL_RE = re.compile(r"^[A-Za-z_$][\w$.]*\(.*\)?$")
_PATH_RE = re.compile(r"^(?:[~.]{0,2}/|[A-Za-z]:\\|\\\\)[^\s]*$|^[\w.\-]+/[\w.\-/]+$")
_FILE_RE = re.compile(
    r"^[\w\-]+\.(?:pem|key|crt|cer|p12|pfx|jks|json|ya?ml|txt|env|cfg|conf|ini|"
    r"toml|xml|js|ts|py|sh|keytab|keystore|der|pub|asc|gpg)$",
    re.I,
)


def looks_like_code(value: str) -> bool:
    """Values that reference something instead of holding a secret.

    `X25519.key_length`, `getToken()`, `/etc/app.key`, `cert.p12`, `SalesResults`.
    """
    return bool(
        (_DOTTED_IDENT_RE.match(value) and _ident_parts(value))
        or _CALL_RE.match(value)
        or _PATH_RE.match(value)
        or _FILE_RE.match(value)
    )


def _ident_parts(value: str) -> bool:
    """Every part of `a.b.c` reads like a programmer's name (short or word-like)."""
    for part in _IDENT_PART_RE.findall(value):
        digits = sum(ch.isdigit() for ch in part)
        if len(part) > 30 or digits > 6 or not (len(part) <= 6 or looks_wordy(part)):
            return False
    return True


_SEGMENT_RE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_VOWELS = frozenset("aeiouAEIOU")
_TRANSITION_RE = re.compile(r"(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])")
_CONSONANT_RUN_RE = re.compile(r"[b-df-hj-np-tv-zB-DF-HJ-NP-TV-Z]{5,}")


def looks_wordy(value: str) -> bool:
    """Mostly pronounceable word pieces (`SalesResults-1.2`, `DOC_Vector_5`): a name, not a key.

    Random tokens fail because their letter runs lack vowels or stack consonants.
    """
    if len(_TRANSITION_RE.findall(value)) >= 3:
        return False  # letters and digits interleave: r3r17x5e…
    total = wordy = 0
    for seg in _SEGMENT_RE.findall(value):
        if len(seg) <= 2 and not seg.isdigit():
            continue  # too short to judge either way
        total += len(seg)
        if not seg.isdigit() and _VOWELS.intersection(seg) and not _CONSONANT_RUN_RE.search(seg):
            wordy += len(seg)
    return total > 0 and wordy >= 0.75 * total


# ----------------------------------------------------------------------------- checksums


def luhn_ok(digits: str) -> bool:
    """Luhn mod-10 over a digit string (separators already removed)."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def card_ok(digits: str) -> bool:
    """A plausible payment card: known issuer prefix, issuer length, Luhn, not constant."""
    n = len(digits)
    if n < 13 or n > 19 or len(set(digits)) < 3:
        return False
    p2 = int(digits[:2])
    p4 = int(digits[:4])
    p3 = int(digits[:3])
    issuer = (
        (digits[0] == "4" and n in (13, 16, 19))  # Visa
        or ((51 <= p2 <= 55 or 2221 <= p4 <= 2720) and n == 16)  # Mastercard
        or (p2 in (34, 37) and n == 15)  # Amex
        or ((p4 == 6011 or p2 == 65 or 644 <= p3 <= 649) and n in (16, 19))  # Discover
        or (3528 <= p4 <= 3589 and 16 <= n <= 19)  # JCB
        or ((300 <= p3 <= 305 or p2 in (36, 38, 39)) and 14 <= n <= 19)  # Diners
        or (p2 == 62 and 16 <= n <= 19)  # UnionPay
        or (p4 in (5018, 5020, 5038, 5893, 6304, 6759, 6761, 6762, 6763) and 12 <= n <= 19)
    )
    return issuer and luhn_ok(digits)


def ssn_ok(area: str, group: str, serial: str) -> bool:
    """US SSN ranges the SSA never issues: area 000/666/9xx, group 00, serial 0000."""
    if area in ("000", "666") or area[0] == "9":
        return False
    if group == "00" or serial == "0000":
        return False
    # Publicly burned numbers (Woolworth wallet card, 1941 ad) appear in docs, not people.
    return f"{area}-{group}-{serial}" not in ("078-05-1120", "219-09-9999", "123-45-6789")


IBAN_LENGTHS = {
    "AD": 24,
    "AE": 23,
    "AL": 28,
    "AT": 20,
    "AZ": 28,
    "BA": 20,
    "BE": 16,
    "BG": 22,
    "BH": 22,
    "BR": 29,
    "BY": 28,
    "CH": 21,
    "CR": 22,
    "CY": 28,
    "CZ": 24,
    "DE": 22,
    "DK": 18,
    "DO": 28,
    "EE": 20,
    "EG": 29,
    "ES": 24,
    "FI": 18,
    "FO": 18,
    "FR": 27,
    "GB": 22,
    "GE": 22,
    "GI": 23,
    "GL": 18,
    "GR": 27,
    "GT": 28,
    "HR": 21,
    "HU": 28,
    "IE": 22,
    "IL": 23,
    "IQ": 23,
    "IS": 26,
    "IT": 27,
    "JO": 30,
    "KW": 30,
    "KZ": 20,
    "LB": 28,
    "LC": 32,
    "LI": 21,
    "LT": 20,
    "LU": 20,
    "LV": 21,
    "MC": 27,
    "MD": 24,
    "ME": 22,
    "MK": 19,
    "MR": 27,
    "MT": 31,
    "MU": 30,
    "NL": 18,
    "NO": 15,
    "PK": 24,
    "PL": 28,
    "PS": 29,
    "PT": 25,
    "QA": 29,
    "RO": 24,
    "RS": 22,
    "SA": 24,
    "SC": 31,
    "SE": 24,
    "SI": 19,
    "SK": 24,
    "SM": 27,
    "ST": 25,
    "SV": 28,
    "TL": 23,
    "TN": 24,
    "TR": 26,
    "UA": 29,
    "VA": 22,
    "VG": 24,
    "XK": 20,
}


def iban_ok(compact: str) -> bool:
    """ISO 13616: known country, its exact length, and mod-97 == 1."""
    compact = compact.upper()
    if IBAN_LENGTHS.get(compact[:2]) != len(compact) or not compact[2:4].isdigit():
        return False
    rearranged = compact[4:] + compact[:4]
    number = "".join(str(int(ch, 36)) for ch in rearranged)
    return int(number) % 97 == 1
