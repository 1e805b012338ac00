"""Builders for synthetic, valid-shaped samples of the formats memloom.detect checks.

Everything here is made at run time from a seeded random generator, following the
issuers' published layouts, with checksums computed here (Luhn, Base58Check, bech32 /
bech32m, Discord's base64 snowflake, JWT JSON segments). None of it is a real
credential, card, phone number or wallet; no literal token sits in the test files.
The encoders are written independently of the validators in memloom.detect.validators,
so a test fails if either side gets a format wrong.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string

ALNUM = string.ascii_letters + string.digits
B64URL = ALNUM + "-_"
HEX = "0123456789abcdef"


def rng(seed: object) -> random.Random:
    return random.Random(f"memloom-detect-samples-{seed}")


def rnd(n: int, alphabet: str = ALNUM, seed: object = 0) -> str:
    r = rng(f"{seed}-{n}-{alphabet}")
    return "".join(r.choice(alphabet) for _ in range(n))


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


# ----------------------------------------------------------------------------- vendors


def discord_bot_token(seed: int, mac_len: int = 27) -> str:
    """Discord's documented layout: base64(user id) . base64(timestamp) . HMAC.

    The user id is a snowflake: milliseconds since the Discord epoch (2015-01-01) shifted
    left 22 bits, plus worker/process/increment bits; as a decimal string, 17-19 digits.
    The middle part is a 4-byte timestamp (6 base64url characters); the HMAC is 27
    (20-byte, older tokens) or 38 (28-byte) characters.
    """
    r = rng(f"discord-{seed}")
    ms = r.randrange(10**10, 3 * 10**11)  # 2015 .. ~2024
    snowflake = (ms << 22) | (r.randrange(32) << 17) | (r.randrange(32) << 12) | r.randrange(4096)
    ident = b64url(str(snowflake).encode())
    stamp = b64url(r.randrange(2**24, 2**32).to_bytes(4, "big"))
    mac = b64url(bytes(r.randrange(256) for _ in range(20 if mac_len == 27 else 28)))
    assert len(stamp) == 6 and len(mac) == mac_len
    return f"{ident}.{stamp}.{mac}"


def mailchimp_key(seed: int, dc: int = 6) -> str:
    """32 lower-case hex characters, `-us`, the data-centre number."""
    return rnd(32, HEX, f"mc-{seed}") + f"-us{dc}"


def twilio_sid(prefix: str, seed: int) -> str:
    """Twilio SIDs: two-letter type (`SK` API key, `AC` account) + 32 lower-case hex."""
    return prefix + rnd(32, HEX, f"tw-{prefix}-{seed}")


def gitlab_runner_token(seed: int) -> str:
    """A runner registration token: the fixed `GR1348941` prefix + 20 URL-safe characters."""
    return "GR1348941" + rnd(20, B64URL, f"gr-{seed}")


def slack_legacy(kind: str, seed: int) -> str:
    """Older Slack layouts: `xoxs-` workspace tokens with three numeric ids and a 64-hex
    tail, `xoxa-2-` workspace-app tokens and `xoxr-` refresh tokens with one
    random tail, `xoxb-` bot tokens with one numeric id."""
    r = rng(f"slack-{kind}-{seed}")

    def ident(n: int) -> str:
        return str(r.randrange(10 ** (n - 1), 10**n))

    if kind == "xoxs":
        return f"xoxs-{ident(10)}-{ident(11)}-{ident(12)}-{rnd(64, HEX, seed)}"
    if kind == "xoxa":
        return f"xoxa-2-{rnd(34, ALNUM, f'a{seed}')}"
    if kind == "xoxr":
        return f"xoxr-{rnd(40, ALNUM, f'r{seed}')}"
    if kind == "xoxb":
        return f"xoxb-{ident(11)}-{rnd(24, ALNUM, f'b{seed}')}"
    if kind == "xoxp":
        return f"xoxp-{ident(10)}-{ident(10)}-{ident(12)}-{rnd(32, HEX, f'p{seed}')}"
    raise ValueError(kind)


def jwt(header: dict, payload: dict, signed: bool = True, seed: int = 0) -> str:
    """`b64url(header).b64url(payload)[.signature]` with the JSON as issuers write it."""
    parts = [
        b64url(json.dumps(header, separators=(",", ":")).encode()),
        b64url(json.dumps(payload, separators=(",", ":")).encode()),
    ]
    if signed:
        parts.append(b64url(bytes(rng(f"sig-{seed}").randrange(256) for _ in range(32))))
    return ".".join(parts)


# ----------------------------------------------------------------------------- wallets

_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def base58check(version: int, payload: bytes) -> str:
    raw = bytes([version]) + payload
    raw += hashlib.sha256(hashlib.sha256(raw).digest()).digest()[:4]
    n = int.from_bytes(raw, "big")
    out = ""
    while n:
        n, d = divmod(n, 58)
        out = _B58[d] + out
    return "1" * (len(raw) - len(raw.lstrip(b"\0"))) + out


def bitcoin_p2pkh(seed: int) -> str:
    """Legacy address: version 0x00 + a 20-byte key hash, Base58Check (starts with 1)."""
    return base58check(0x00, hashlib.new("sha256", f"key-{seed}".encode()).digest()[:20])


def bitcoin_p2sh(seed: int) -> str:
    """Script-hash address: version 0x05 + a 20-byte script hash (starts with 3)."""
    return base58check(0x05, hashlib.sha256(f"script-{seed}".encode()).digest()[:20])


_BECH = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def _polymod(values: list[int]) -> int:
    gen = [0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3]
    chk = 1
    for v in values:
        b = chk >> 25
        chk = ((chk & 0x1FFFFFF) << 5) ^ v
        for i in range(5):
            chk ^= gen[i] if (b >> i) & 1 else 0
    return chk


def segwit(version: int, program: bytes, hrp: str = "bc", const: int | None = None) -> str:
    """BIP-173/350: hrp `1` data checksum; bech32 for v0, bech32m for v1+ (or `const`)."""
    acc = bits = 0
    data = [version]
    for byte in program:
        acc = (acc << 8) | byte
        bits += 8
        while bits >= 5:
            bits -= 5
            data.append((acc >> bits) & 31)
    if bits:
        data.append((acc << (5 - bits)) & 31)
    if const is None:
        const = 1 if version == 0 else 0x2BC830A3
    expand = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]
    pm = _polymod(expand + data + [0] * 6) ^ const
    data += [(pm >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(_BECH[d] for d in data)


def bitcoin_bech32(seed: int, size: int = 20) -> str:
    """Native SegWit v0 (`bc1q…`): a 20-byte key hash (42 chars) or 32-byte script hash."""
    return segwit(0, hashlib.sha256(f"wpkh-{seed}".encode()).digest()[:size])


def bitcoin_taproot(seed: int) -> str:
    """Taproot (`bc1p…`): witness v1, a 32-byte key, bech32m checksum (62 chars)."""
    return segwit(1, hashlib.sha256(f"tr-{seed}".encode()).digest())


# ----------------------------------------------------------------------------- cards


def luhn_complete(partial: str) -> str:
    """Append the Luhn check digit."""
    total = 0
    for i, ch in enumerate(reversed(partial)):
        d = int(ch)
        if i % 2 == 0:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return partial + str((10 - total % 10) % 10)


def card(prefix: str, length: int, seed: int) -> str:
    body = prefix + rnd(length - len(prefix) - 1, string.digits, f"card-{prefix}-{seed}")
    return luhn_complete(body)


def grouped(number: str, sizes: tuple[int, ...], sep: str = " ") -> str:
    out, i = [], 0
    for n in sizes:
        out.append(number[i : i + n])
        i += n
    return sep.join(out)


# ----------------------------------------------------------------------------- probes

Probe = tuple[str, str, "str | None"]  # (family, text, value that must go | None = keep)


def family_probes() -> list[Probe]:
    """A compact labelled set per family of issue 18 for bench/redact.py: positives
    (the value must be gone after redaction) and near-miss negatives (the line must
    come back unchanged). The tests in test_families.py cover each family more widely."""
    p: list[Probe] = []

    def pos(family: str, template: str, value: str) -> None:
        p.append((family, template.format(value), value))

    def neg(family: str, text: str) -> None:
        p.append((family, text, None))

    f = "Discord bot token"
    for i in range(3):
        pos(f, "client.run('{}')", discord_bot_token(i))
    pos(f, "bot {} online", discord_bot_token(8, mac_len=38))
    neg(f, "NotificationServiceImplA.reload.handleIncomingMessagesFromQueueX")
    ident, stamp, mac = discord_bot_token(1).split(".")
    neg(f, f"{ident}.{stamp[:5]}.{mac}")

    f = "Mailchimp key"
    for dc in (2, 6, 13, 21):
        pos(f, "api {}", mailchimp_key(dc, dc))
    neg(f, mailchimp_key(4)[:32].upper() + "-us2")
    neg(f, "locale en-us, region us-east-1")

    f = "Slack, older layouts"
    for kind in ("xoxs", "xoxa", "xoxr", "xoxb"):
        pos(f, "slack {} (old app)", slack_legacy(kind, 1))
    neg(f, "xoxa-2-" + "x" * 30)
    neg(f, "xoxb-Slack_BOT_TOKEN")

    f = "GitLab runner registration token"
    for i in range(3):
        pos(f, "runner {} registered", gitlab_runner_token(i))
    neg(f, "GR1348941" + "x" * 20)

    f = "JWT, header.payload"
    pos(f, "{}", jwt({"alg": "HS256", "typ": "JWT"}, {"sub": "u-1", "iat": 1716239022}, False))
    pos(
        f,
        "id_token={}",
        jwt({"alg": "RS256", "kid": "k1"}, {"aud": "api", "exp": 1893456000}, False),
    )
    pos(f, "cookie {};", jwt({"typ": "JWT"}, {"user_id": 42, "roles": ["ops"]}, False))
    neg(f, b64url(b'{"foo":"bar","baz":1}') + "." + b64url(b'{"sub":"1"}'))
    neg(f, "eyJAAAAAAAAAAAAA.eyJBBBBBBBBBBBBBB")

    f = "Twilio SK/AC"
    for i in range(2):
        pos(f, "Client('{}', auth)", twilio_sid("SK", i))
        pos(f, "account {}", twilio_sid("AC", i))
    neg(f, "SK" + "x" * 32)
    neg(f, "SKIP_DOWNLOAD=1 ACCOUNT_SID_PLACEHOLDER")

    f = "npm .npmrc auth"
    pos(
        f, "//registry.npmjs.org/:_authToken={}", "-".join(rnd(n, HEX, n) for n in (8, 4, 4, 4, 12))
    )
    pos(f, "//npm.pkg.github.com/:_authToken={}", rnd(40, ALNUM, "gh"))
    pos(f, "//registry.acme-corp.io/npm/:_auth={}", b64url(b"ci-bot:" + rnd(14).encode()))
    neg(f, "//registry.npmjs.org/:_authToken=${NPM_TOKEN}")

    secret, password = rnd(28, ALNUM, "code"), "Vq7!mR2#zK9p"
    f = "comparisons"
    pos(f, 'if token == "{}":', secret)
    pos(f, '"{}" === secretKey', secret)
    pos(f, "if (password.equals('{}')) {{", password)
    pos(f, 'if api_key != "{}" {{', secret)
    neg(f, "if token == expected_token:")
    neg(f, '"Bearer" === tokenType')

    f = 'Go :=, Objective-C @"", backticks, YAML'
    pos(f, 'apiKey := "{}"', secret)
    pos(f, 'NSString *apiKey = @"{}";', secret)
    pos(f, "const secret = `{}`;", secret)
    pos(f, "  password: {}", password)
    neg(f, 'NSString *key = @"CFBundleVersion";')

    f = "passphrases, punctuation in quotes"
    pos(f, 'passphrase = "{}"', "correct horse battery staple")
    pos(f, "DB_PASSWORD='{}'", "P@ss w0rd! 2024")
    pos(f, 'password = "{}"', "p4ss(word)!")
    neg(f, 'password = "Enter password"')
    neg(f, '"password": "Mot de passe",')

    b64 = b64url(bytes(range(7, 39))).replace("-", "+").replace("_", "/") + "="
    hexv = rnd(40, HEX, "hexsecret")
    f = "quoted base64/hex under secret names"
    pos(f, 'private_key = "{}"', b64)
    pos(f, 'key = "{}"', b64)
    pos(f, '"signing_key": "{}"', hexv)
    pos(f, 'auth: "{}"', hexv)
    neg(f, f'checksum: "{hexv}"')
    neg(f, f'public_key = "{b64}"')

    f = "cards without keyword (incl. 15-digit, Dankort, UATP)"
    for prefix, length in (("1", 15), ("5019", 16), ("37", 15), ("2201", 16), ("9792", 16)):
        pos(f, "paid with {} yesterday", card(prefix, length, 1))
    number = card("4", 16, 3)
    neg(f, "paid with " + number[:-1] + str((int(number[-1]) + 1) % 10))
    neg(f, "ts 1718000000000 and 1718000000000000")

    f = "national phone numbers near a phone word"
    for phone in (
        "(02) 9876 5432",
        "0172 1234567",
        "13812345678",
        "07700 900123",
        "06 12 34 56 78",
    ):
        pos(f, "call me on {}", phone)
    neg(f, "build 0172 1234567 finished")
    neg(f, "call me on 05.12.2024")

    f = "SSN with spaces or dots"
    for ssn in ("536 22 1234", "078.05.1123", "412 71 8806"):
        pos(f, "SSN {}", ssn)
    neg(f, "693-09.4444")
    neg(f, "12 536 22 1234")

    f = "e-mail with IDN domains"
    for address in ("anna@xn--bcher-kva.ch", "j.doe@xn--80ak6aa92e.xn--p1ai", "josé@bücher.ch"):
        pos(f, "contact {} today", address)
    neg(f, "see xn--bcher-kva.ch for details")

    f = "Bitcoin addresses"
    for address in (bitcoin_p2pkh(1), bitcoin_p2sh(1), bitcoin_bech32(1), bitcoin_taproot(1)):
        pos(f, "send to {}", address)
    legacy = bitcoin_p2pkh(2)
    neg(f, legacy[:-1] + ("2" if legacy[-1] != "2" else "3"))
    neg(f, "commit 3a8f92b1c4d5e6f71829a3b4c5d6e7f8")
    return p
