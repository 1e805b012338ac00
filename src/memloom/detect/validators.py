"""Checks that turn a regex candidate into a finding: checksums, entropy, placeholders.

Regexes alone over-match (any 16 digits look like a card, any 40 hex chars look like a
token); these small pure functions are what keep the false-positive rate low.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
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
      | \{\{.*\}\} | \{%.*%\} | \{[A-Za-z_][\w.\-]*\} | %[A-Za-z_]\w*% | \#\{.*\}  # templates
      | <[^<>]*> | \[[^\[\]]*\]                                         # <your-token>, [PASSWORD]
      | @[A-Za-z_]\w*@ | %\(\w+\)s | %s | \?
      | (?:env|file|fd):[\w./~\-]+                  # OpenSSL, apksigner: `env:KS_PASS`
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


_VAR_REF = re.compile(r"\$(?:\{[^}]*\}|\([^)]*\)|[A-Za-z_]\w*)")


def weak_password(pw: str, literal: bool = False) -> bool:
    """A password too short, templated or generic to be a real one (`$PW`, `<pass>`, `test`).

    A leading `%` is not enough: `%s` and `%PASSWORD%` are placeholders, `%dl.yXk0bQR`
    is a generated password. `literal` says nothing expands the value (single quotes in
    a shell, a `.netrc` file): there `$x9…` is a password, only a whole `$NAME`,
    `${…}` or `$(…)` or a name-like `$NAME` is a reference."""
    if literal and pw[:1] == "$" and len(pw) >= 3:
        name = pw[1:]
        named = name.isupper() or name.islower() or looks_wordy(name)
        if _VAR_REF.fullmatch(pw) and (pw[1] in "{(_" or named):
            return True  # `${X}`, `$(cmd)`, `$GITHUB_TOKEN`, `$db_pass`, `$dbPassword`
        return weak_password(name)
    return (
        len(pw) < 3
        or is_placeholder(pw)
        or pw[0] in "$<{["
        or pw[-1] in ">}]"
        or pw.lower() in ("pass", "password", "passwd", "pwd", "secret", "token", "test")
    )


_BASE64_CHARS = re.compile(r"[A-Za-z0-9+/]{24,}={0,2}")


def random_base64(value: str) -> bool:
    """A random base64 string (an AWS secret access key, an HMAC key): it may hold `/`
    and still be no path. Random: mixed case and digits, entropy >= 4, not word pieces
    (`src/Components/Header/Index2024` is a path)."""
    return (
        _BASE64_CHARS.fullmatch(value) is not None
        and any(c.islower() for c in value)
        and any(c.isupper() for c in value)
        and any(c.isdigit() for c in value)
        and shannon_entropy(value) >= 4.0
        and not looks_wordy(value)
    )


# Words that make a quoted phrase a message, label or prompt rather than a passphrase.
_MESSAGE_WORDS = words(
    """
    password passwords passphrase passwd pwd token tokens secret secrets key keys
    credential credentials enter please invalid required incorrect wrong must should
    cannot can't don't characters character least match matches confirm forgot reset
    change changed new current old your you the is are was were not no field error
    failed failure missing empty set show hide type input login log sign user username
    account email here example sample dummy test placeholder default value none null
    true false todo fixme see use using from for with this that will has have been
    expired expires valid too short long weak strong
    passwort kennwort contraseña contrasena mot passe senha wachtwoord hasło haslo
    parola lösenord losenord salasana heslo jelszó пароль 密码 パスワード 비밀번호
    """
)


def passphrase_ok(value: str) -> bool:
    """A quoted value with spaces under a password/secret name: a passphrase
    (`"correct horse battery staple"`, `"P@ss w0rd! 2024"`) rather than a message
    (`"Password is required"`), a label, a template or a placeholder."""
    if not 8 <= len(value) <= 128 or "\t" in value or "\n" in value or "\r" in value:
        return False
    parts = value.split(" ")
    if not 2 <= len(parts) <= 10 or "" in parts:
        return False  # single spaces between words
    if is_placeholder(value) or any(ch in value for ch in "{}<>%$\\/`") or "..." in value:
        return False
    for part in parts:
        w = part.strip(".,;:!?\"'()[]").lower()
        if w in _MESSAGE_WORDS or w in _PLACEHOLDER_WORDS:
            return False
    if all(p.isalpha() for p in parts) and parts[0][0].isupper() and value[1:].islower():
        return False  # "Sentence case words": a UI label, not a typed passphrase
    letters = sum(ch.isalpha() for ch in value)
    return letters >= 4 and len(set(value.lower())) >= 6


_DOTTED_IDENT_RE = re.compile(r"^[A-Za-z_$][\w$]*(?:(?:\.|::|->)[A-Za-z_$][\w$]*)+(?:\(\))?$")
_IDENT_PART_RE = re.compile(r"[A-Za-z_$][\w$]*")
_CALL_RE = re.compile(r"^[A-Za-z_$][\w$.]*\((?:.*\))?$")  # `getToken()`, `f(x)`, `getpass(`
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


# Issuer prefixes (IIN ranges) and the lengths each issuer uses, after ISO/IEC 7812 and
# the networks' published ranges: (first prefix, last prefix, lengths). A number must
# fall in one of them AND pass Luhn; 13-19 digit runs that don't are ids, not cards.
_ANY = tuple(range(12, 20))
_CARD_RANGES: tuple[tuple[int, int, tuple[int, ...]], ...] = (
    (4, 4, (13, 16, 19)),  # Visa (and Visa Electron, Visa/Dankort 4571)
    (51, 55, (16,)),  # Mastercard
    (2221, 2720, (16,)),  # Mastercard 2-series
    (34, 34, (15,)),  # American Express
    (37, 37, (15,)),
    (1, 1, (15,)),  # UATP (AirPlus and other airline cards): 15 digits starting with 1
    (2014, 2014, (15,)),  # Diners Club enRoute
    (2149, 2149, (15,)),
    (2131, 2131, (15,)),  # JCB, 15-digit series
    (1800, 1800, (15,)),
    (6011, 6011, (16, 17, 18, 19)),  # Discover
    (644, 649, (16, 17, 18, 19)),
    (65, 65, (16, 17, 18, 19)),  # Discover, RuPay, Troy
    (3528, 3589, (16, 17, 18, 19)),  # JCB
    (300, 305, (14, 15, 16, 17, 18, 19)),  # Diners Club
    (3095, 3095, (14, 15, 16, 17, 18, 19)),
    (36, 36, (14, 15, 16, 17, 18, 19)),
    (38, 39, (14, 15, 16, 17, 18, 19)),
    (62, 62, (16, 17, 18, 19)),  # UnionPay
    (81, 81, (16, 17, 18, 19)),  # UnionPay 81-series
    (5019, 5019, (16,)),  # Dankort
    (2200, 2204, (16, 17, 18, 19)),  # Mir
    (2205, 2205, (16,)),  # BORICA
    (60, 60, (16,)),  # RuPay
    (508, 508, (16,)),
    (82, 82, (16,)),
    (9792, 9792, (16,)),  # Troy
    (636, 636, (16, 17, 18, 19)),  # InterPayment
    (637, 639, (16,)),  # InstaPayment
    (357111, 357111, (16,)),  # LankaPay
    (9860, 9860, (16,)),  # Humo
    (8600, 8600, (16,)),  # UzCard
    (506099, 506198, (16, 18, 19)),  # Verve
    (507865, 507964, (16, 18, 19)),
    (650002, 650027, (16, 18, 19)),
    (606282, 606282, (16, 19)),  # Hipercard
    (31, 31, (19,)),  # China T-Union
    (5018, 5018, _ANY),  # Maestro
    (5020, 5020, _ANY),
    (5038, 5038, _ANY),
    (5893, 5893, _ANY),
    (6304, 6304, _ANY),
    (6759, 6759, _ANY),
    (6761, 6763, _ANY),
    (6706, 6706, _ANY),  # Laser
    (6709, 6709, _ANY),
    (6771, 6771, _ANY),
)


def card_issuer_ok(digits: str) -> bool:
    """Does the number start with a known issuer prefix, at a length that issuer uses?"""
    n = len(digits)
    for low, high, lengths in _CARD_RANGES:
        if n in lengths:
            k = len(str(low))
            if low <= int(digits[:k]) <= high:
                return True
    return False


def card_ok(digits: str) -> bool:
    """A plausible payment card: known issuer prefix, issuer length, Luhn, not constant."""
    n = len(digits)
    if n < 13 or n > 19 or len(set(digits)) < 3:
        return False
    return card_issuer_ok(digits) and luhn_ok(digits)


def ssn_ok(area: str, group: str, serial: str) -> bool:
    """US SSN ranges the SSA never issues: area 000/666/9xx, group 00, serial 0000."""
    if area in ("000", "666") or area[0] == "9":
        return False
    if group == "00" or serial == "0000":
        return False
    # Publicly burned numbers (Woolworth wallet card, 1941 ad) appear in docs, not people.
    return area + group + serial not in ("078051120", "219099999", "123456789")


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


# ----------------------------------------------------------------------------- encodings

_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_B58_INDEX = {ch: i for i, ch in enumerate(_B58)}


def base58check_decode(value: str) -> bytes | None:
    """The payload of a Base58Check string (Bitcoin): None unless its 4-byte
    double-SHA-256 checksum matches."""
    n = 0
    for ch in value:
        d = _B58_INDEX.get(ch)
        if d is None:
            return None
        n = n * 58 + d
    zeros = len(value) - len(value.lstrip("1"))
    raw = b"\x00" * zeros + (n.to_bytes((n.bit_length() + 7) // 8, "big") if n else b"")
    if len(raw) < 5:
        return None
    payload, check = raw[:-4], raw[-4:]
    if hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4] != check:
        return None
    return payload


def bitcoin_base58_ok(value: str) -> bool:
    """A mainnet P2PKH (`1…`, version 0x00) or P2SH (`3…`, version 0x05) address:
    25 bytes with a valid Base58Check checksum."""
    if not 25 <= len(value) <= 35 or value[0] not in "13":
        return False
    payload = base58check_decode(value)
    return (
        payload is not None and len(payload) == 21 and payload[0] == (0 if value[0] == "1" else 5)
    )


_BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
_BECH32_INDEX = {ch: i for i, ch in enumerate(_BECH32)}
_BECH32_GEN = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)
BECH32_CONST, BECH32M_CONST = 1, 0x2BC830A3


def bech32_polymod(values: list[int]) -> int:
    """BIP-173 checksum polynomial over 5-bit values."""
    chk = 1
    for v in values:
        top = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ v
        for i in range(5):
            if (top >> i) & 1:
                chk ^= _BECH32_GEN[i]
    return chk


def bech32_hrp_expand(hrp: str) -> list[int]:
    return [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]


def _regroup(data: list[int], frm: int, to: int) -> bytes | None:
    """5-bit groups back to bytes (BIP-173 convertbits without padding)."""
    acc = bits = 0
    out = bytearray()
    maxv = (1 << to) - 1
    for v in data:
        acc = (acc << frm) | v
        bits += frm
        while bits >= to:
            bits -= to
            out.append((acc >> bits) & maxv)
    if bits >= frm or (acc << (to - bits)) & maxv:
        return None
    return bytes(out)


def segwit_address_ok(value: str, hrp: str = "bc") -> bool:
    """A SegWit address (`bc1q…` bech32, BIP-173; `bc1p…` taproot bech32m, BIP-350):
    one case, the right checksum constant for its witness version, and a witness
    program of a valid length."""
    if value.lower() != value and value.upper() != value:
        return False
    low = value.lower()
    sep = low.rfind("1")
    if low[:sep] != hrp or len(low) > 90 or len(low) - sep < 8:
        return False
    data = [_BECH32_INDEX.get(c, -1) for c in low[sep + 1 :]]
    if -1 in data or data[0] > 16:
        return False
    want = BECH32_CONST if data[0] == 0 else BECH32M_CONST
    if bech32_polymod(bech32_hrp_expand(hrp) + data) != want:
        return False
    program = _regroup(data[1:-6], 5, 8)
    if program is None or not 2 <= len(program) <= 40:
        return False
    return data[0] != 0 or len(program) in (20, 32)


def b64url_decode(part: str) -> bytes | None:
    """Base64url without padding (as in JWTs and Discord tokens); None if malformed."""
    try:
        return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
    except (binascii.Error, ValueError):
        return None


def b64url_json_object(part: str) -> dict | None:
    """The JSON object a JWT segment encodes, or None."""
    raw = b64url_decode(part)
    if raw is None:
        return None
    try:
        obj = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    return obj if isinstance(obj, dict) else None


def jwt_header_ok(header: str, payload: str) -> bool:
    """Header and payload decode to JSON objects, the header naming `alg`/`typ`/`enc`/`kid`."""
    head = b64url_json_object(header)
    if not head or not {"alg", "typ", "enc", "kid", "cty"}.intersection(head):
        return False
    return b64url_json_object(payload) is not None


def discord_token_ok(token: str) -> bool:
    """`<base64 user id>.<6-char timestamp>.<HMAC>`: the first part decodes to a Discord
    snowflake (17-20 decimal digits), or (for made-up ids) all parts look random."""
    parts = token.split(".")
    if len(parts) != 3:
        return False
    ident, stamp, mac = parts
    if len(stamp) != 6 or len(mac) < 27 or shannon_entropy(mac) < 3.5:
        return False
    raw = b64url_decode(ident)
    if raw is not None and raw.isdigit() and 17 <= len(raw) <= 20:
        return True
    # not a decodable id: accept only clearly random parts (mixed case and digits)
    return char_classes(ident) >= 3 and char_classes(mac) >= 3 and shannon_entropy(ident) >= 3.5
