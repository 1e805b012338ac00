"""One positive and one negative case (at least) for every rule family.

Fake credentials are assembled at run time (prefix + seeded random body) so that this
file holds no literal token a secret scanner would trip over.
"""

from __future__ import annotations

import random
import string

import pytest

from memloom.detect import Detector

ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"


def rnd(n: int, alphabet: str = ALNUM, seed: int = 7) -> str:
    r = random.Random(f"{seed}-{n}-{alphabet}")
    return "".join(r.choice(alphabet) for _ in range(n))


def masked(det: Detector, text: str, secret: str, rule: str | None = None) -> str:
    """Assert `secret` is gone and (optionally) the marker names `rule`; return output."""
    out, hits = det.redact(text)
    assert secret not in out, (text, out)
    assert hits, text
    if rule is not None:
        assert f"[redacted:{rule}]" in out, out
    return out


def kept(det: Detector, text: str) -> None:
    assert det.redact(text) == (text, []), det.redact(text)


# ----------------------------------------------------------------------------- vendors

AWS = "AKIA" + rnd(16, string.ascii_uppercase + "234567")
GITHUB = "ghp_" + rnd(36)
ANTHROPIC = "sk-ant-api03-" + rnd(93, ALNUM + "-_") + "AA"
OPENAI = "sk-proj-" + rnd(74, ALNUM + "-_") + "T3BlbkFJ" + rnd(74, ALNUM + "-_")
SLACK = "xoxb-" + rnd(12, string.digits) + "-" + rnd(13, string.digits) + "-" + rnd(24)
STRIPE = "sk_" + "live_" + rnd(24)
NPM = "npm_" + rnd(36)
PYPI = "pypi-" + "AgEIcHlwaS5vcmc" + rnd(60, ALNUM + "-_")
GITLAB = "glpat-" + rnd(20, ALNUM + "-_")
GCP = "AIza" + rnd(35, ALNUM + "-_")
HF = "hf_" + rnd(34, string.ascii_letters)


@pytest.mark.parametrize(
    ("text", "secret", "rule"),
    [
        (f"aws_access_key_id = {AWS}", AWS, "aws-access-key"),
        (f"export GITHUB_TOKEN={GITHUB}", GITHUB, "github-token"),
        (f"use {GITHUB} for the API", GITHUB, "github-token"),
        (f"here is my key {ANTHROPIC} thanks", ANTHROPIC, "anthropic-api-key"),
        (f'OPENAI_API_KEY="{OPENAI}"', OPENAI, "openai-api-key"),
        (f"slack bot: {SLACK}", SLACK, "slack-token"),
        (f'stripe.api_key = "{STRIPE}"', STRIPE, "stripe-key"),
        (f"//registry.npmjs.org/:_authToken={NPM}", NPM, "npm-access-token"),
        (f"password = {PYPI}", PYPI, "pypi-upload-token"),
        (f"git remote set-url origin https://oauth2:{GITLAB}@gitlab.com/x/y", GITLAB, None),
        (f"key={GCP}&q=maps", GCP, "gcp-api-key"),
        (f"HF_TOKEN: {HF}", HF, "huggingface-access-token"),
    ],
)
def test_vendor_tokens_are_masked(det: Detector, text: str, secret: str, rule: str | None) -> None:
    masked(det, text, secret, rule)
    assert det.classify(text)[0] == 3


@pytest.mark.parametrize(
    "text",
    [
        "AKIAIOSFODNN7EXAMPLE is the AWS documentation example key",
        "ghp_" + "x" * 36,
        "ghp_ tokens are GitHub personal access tokens",
        "sk-ant-api03-... goes in ANTHROPIC_API_KEY",
        "pip install scikit-learn sk-learn-compat",
        "xoxb-" + "x" * 9 + "-" + "x" * 10,
        "the slack-token rule and the npm_modules folder",
        "sk_test_ prefix means test mode",
        "video_box.ico-7a388b69018576d24b59331fd60aab0c.png",
    ],
)
def test_vendor_negatives(det: Detector, text: str) -> None:
    kept(det, text)


# ----------------------------------------------------------------------------- structure

HEADER_JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
PAYLOAD_JWT = "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFsaWNlIn0"
JWT = f"{HEADER_JWT}.{PAYLOAD_JWT}.{rnd(43, ALNUM + '-_')}"


def test_jwt(det: Detector) -> None:
    masked(det, f"id_token={JWT}", JWT)
    masked(det, f"the cookie is {JWT} ok", JWT, "jwt")
    kept(det, "a JWT looks like eyJ... with three dot-separated parts")


PEM_BODY = [rnd(64, ALNUM + "+/", seed=i) for i in range(5)]


@pytest.mark.parametrize("kind", ["RSA ", "EC ", "OPENSSH ", "", "ENCRYPTED "])
def test_private_key_block_keeps_line_count(det: Detector, kind: str) -> None:
    text = "\n".join(
        [
            "key follows:",
            f"-----BEGIN {kind}PRIVATE KEY-----",
            *PEM_BODY,
            f"-----END {kind}PRIVATE KEY-----",
            "done",
        ]
    )
    out, hits = det.redact(text)
    assert len(hits) == 1 and hits[0].rule == "private-key"
    assert out.count("\n") == text.count("\n")
    assert f"-----BEGIN {kind}PRIVATE KEY-----" in out and "done" in out
    assert not any(line in out for line in PEM_BODY)
    assert text[hits[0].start : hits[0].end].startswith(PEM_BODY[0])


def test_private_key_in_json_and_truncated(det: Detector) -> None:
    body = "\\n".join(PEM_BODY)
    js = (
        '{"private_key": "-----BEGIN PRIVATE KEY-----\\n'
        + body
        + '\\n-----END PRIVATE KEY-----\\n"}'
    )
    out = masked(det, js, PEM_BODY[2], "private-key")
    assert out.startswith('{"private_key": "-----BEGIN PRIVATE KEY-----\\n[redacted:private-key]')
    cut = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(PEM_BODY[:3]) + "\n... (truncated)"
    out = masked(det, cut, PEM_BODY[1])
    assert out.endswith("\n... (truncated)") and out.count("\n") == cut.count("\n")
    kept(det, "-----BEGIN OPENSSH PRIVATE KEY----------END OPENSSH PRIVATE KEY-----")


def test_authorization_headers(det: Detector) -> None:
    bearer = rnd(40, LOWER_ALNUM)
    out = masked(det, f'curl -H "Authorization: Bearer {bearer}" https://api.x.io', bearer)
    assert "Authorization: Bearer [redacted:" in out
    basic = "dXNlcjpodW50ZXIyMDI0IQ=="
    out = masked(det, f"Authorization: Basic {basic}", basic)
    assert out == "Authorization: Basic [redacted:authorization-header]"
    masked(det, f'headers["Authorization"] = "token {GITHUB}"', GITHUB)
    kept(det, 'headers = {"Authorization": f"Bearer {token}"}')
    kept(det, "Authorization: Bearer <token>")
    kept(det, "the Authorization: Bearer token is required")


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("DB_PASSWORD=Tr0ub4dor&3", "Tr0ub4dor&3"),
        ('{"apiToken": "a8f5f167f44f4964e6c998dee827110c"}', "a8f5f167f44f4964e6c998dee827110c"),
        ("  client_secret: 9hW3kL0pQ7zX2cV5bN8mA1sD4fG6jH", "9hW3kL0pQ7zX2cV5bN8mA1sD4fG6jH"),
        (
            "secret_key_base = 'f0e1d2c3b4a5968778695a4b3c2d1e0f'",
            "f0e1d2c3b4a5968778695a4b3c2d1e0f",
        ),
        ('System.setProperty("APP_SECRET", "Zf3D0LXCM3EIMbgJpUNnkR")', "Zf3D0LXCM3EIMbgJpUNnkR"),
        ('var etsyToken string = "fmawrj6chxjwj63atxyhtsuc"', "fmawrj6chxjwj63atxyhtsuc"),
        ("<password>s3cr3t-Pa55</password>", "s3cr3t-Pa55"),
        ("mytool --api-key 4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c", "4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"),
        ("my password is Summer2024!", "Summer2024!"),
        ("API key: q8Zr2Lw9Xv4Nb6Tm1Kp3Jh7Gd5Fs0Ay", "q8Zr2Lw9Xv4Nb6Tm1Kp3Jh7Gd5Fs0Ay"),
    ],
)
def test_assignments_mask_value_keep_name(det: Detector, text: str, secret: str) -> None:
    out = masked(det, text, secret)
    start = text.index(secret)
    assert out.startswith(text[:start]), "the name and operator stay"


def test_yaml_block(det: Detector) -> None:
    text = "db:\n  user: app\n  password: hX9#kq2!Lm\n  host: db.internal\n"
    out = masked(det, text, "hX9#kq2!Lm")
    assert out == "db:\n  user: app\n  password: [redacted:generic-password]\n  host: db.internal\n"
    assert det.classify(text)[0] == 3


@pytest.mark.parametrize(
    "text",
    [
        "password = getpass.getpass()",
        'api_key = os.environ["OPENAI_API_KEY"]',
        "token = request.headers.get('X-Token')",
        "PASSWORD=${DB_PASSWORD}",
        "password: changeme",
        "primaryKey=GxHOOUsT3r2haOGmyrh3e2R8scK",
        "token_url = https://oauth2.googleapis.com/token",
        "max_tokens = 1024",
        "key = value",
        "cache with key: setup-uv-1-x86_64-unknown-linux-gnu-0.7.13-f6c65b29c82e498115b3dc436b",
        "if token == expected_token:",
        "keyword: Befaehigung_P2",
        '"kms_key_id": "555ea4a3-d53a-4412-9c66-3a7cb667b0d6"',
        '    except OSError:\\n        pass", "new_string": "x"',
        "the password is required",
    ],
)
def test_assignment_negatives(det: Detector, text: str) -> None:
    kept(det, text)


def test_high_entropy_only_in_secret_context(det: Detector) -> None:
    value = rnd(32)
    masked(det, f"SESSION_SECRET={value}", value, "generic-secret")
    masked(det, f"signing_key: {value}", value, "generic-secret")
    kept(det, f"request id {value} logged")
    kept(det, f"sha: {rnd(40, HEX)}")


def test_url_credentials(det: Detector) -> None:
    out = masked(det, "postgres://admin:s3cr3tPa55@db.prod.internal:5432/app", "s3cr3tPa55")
    assert out == "postgres://admin:[redacted:url-password]@db.prod.internal:5432/app"
    masked(det, "redis://:Xk2jW9qLp0@cache:6379/0", "Xk2jW9qLp0")
    kept(det, "postgres://app:${DB_PASSWORD}@db:5432/app")
    kept(det, "https://user:password@example.com/ (placeholder in docs)")
    kept(det, "https://github.com/daaain/claude-code-log")


def test_curl_user(det: Detector) -> None:
    out = masked(det, "curl -u admin:Sup3rS3cret! https://jenkins.x.io", "Sup3rS3cret!")
    assert "curl -u admin:[redacted:curl-auth-user]" in out
    masked(det, f"curl -u {STRIPE}: https://api.stripe.com/v1/charges", STRIPE)
    kept(det, 'curl -u "$USER:$PASS" https://x.io')
    kept(det, "curl --user username:password https://x.io")


# ----------------------------------------------------------------------------- PII


def test_email(det: Detector) -> None:
    out = masked(
        det, "Author: Jane Roe <jane.roe@acme-mail.com>", "jane.roe@acme-mail.com", "email"
    )
    assert out == "Author: Jane Roe <[redacted:email]>"
    assert det.classify("mail bob@corp-mail.org")[0] == 1
    kept(det, "git@github.com:org/repo.git and noreply@anthropic.com and a@example.com")


@pytest.mark.parametrize(
    "phone",
    ["+1 (415) 555-2671", "+44 20 7946 0958", "415-555-2671", "(415) 555-2671", "+49 30 901820"],
)
def test_phone_numbers(det: Detector, phone: str) -> None:
    masked(det, f"call me at {phone} tomorrow", phone, "phone-number")


@pytest.mark.parametrize(
    "text",
    [
        "2024-01-15 10:30:45",
        "version 1.2.3.4",
        "415-055-2671",
        "order 1234567890",
        "+12345",
        "port 5432-5433",
        "pid 48213 48214 48215",
    ],
)
def test_phone_negatives(det: Detector, text: str) -> None:
    kept(det, text)


def test_credit_cards_luhn(det: Detector) -> None:
    for card in (
        "4539 1488 0343 6467",
        "4539-1488-0343-6467",
        "4539148803436467",
        "3714 496353 98431",
        "5425233430109903",
    ):
        masked(det, f"card {card} exp 12/27", card, "credit-card")
    for bad in ("4539 1488 0343 6468", "1234 5678 9012 3456", "4111111111111111", "1700000000000"):
        kept(det, f"card {bad}")


def test_ssn_ranges(det: Detector) -> None:
    masked(det, "SSN 536-22-1234", "536-22-1234", "us-ssn")
    for bad in (
        "000-12-3456",
        "666-12-3456",
        "912-12-3456",
        "536-00-1234",
        "536-22-0000",
        "123-45-6789",
        "078-05-1120",
    ):
        kept(det, f"SSN {bad}")


def test_iban_checksum(det: Detector) -> None:
    masked(det, "IBAN DE89 3704 0044 0532 0130 00 please", "DE89 3704 0044 0532 0130 00", "iban")
    masked(det, "pay to GB82WEST12345698765432.", "GB82WEST12345698765432", "iban")
    kept(det, "IBAN DE89 3704 0044 0532 0130 01")  # checksum fails
    kept(det, "GB82WEST1234569876543")  # wrong length
    kept(det, "ISO code DE12 is not an IBAN")


# ----------------------------------------------------------------------------- internal


def test_private_ips_are_level_2_and_kept(det: Detector) -> None:
    text = "ssh 10.1.2.3, 192.168.1.20, 172.20.0.5 and 100.64.1.1"
    level, matches = det.classify(text)
    assert level == 2
    assert [m.rule for m in matches] == ["private-ip"] * 4
    assert not any(m.masked for m in matches)
    assert det.redact(text) == (text, [])
    for public in ("8.8.8.8", "172.32.0.1", "127.0.0.1", "1.2.3.4.5", "999.1.1.1"):
        assert det.classify(f"host {public}")[0] == 0, public


def test_private_ipv6(det: Detector) -> None:
    for addr in ("fd12:3456:789a::1", "fe80::1ff:fe23:4567:890a", "fc00::42"):
        level, matches = det.classify(f"bind [{addr}]:8080")
        assert level == 2 and matches[0].rule == "private-ipv6", addr
    assert det.classify("bind [::1] and 2001:db8::1 and coffee:beef")[0] == 0


def test_internal_hosts(det: Detector) -> None:
    for host in ("db1.prod.internal", "build.corp", "nas.local", "pi.home.arpa"):
        level, matches = det.classify(f"connect to {host}:5432 now")
        assert level == 2 and matches[0].rule == "internal-host", host
        assert det.redact(f"connect to {host}") == (f"connect to {host}", [])
    for text in (
        "open settings.local.json",
        "cp .env.local .env",
        "the .corp TLD",
        "import com.acme.corp.Billing",
        "CLAUDE.local.md",
    ):
        assert det.classify(text)[0] == 0, text


def test_levels_take_the_maximum(det: Detector) -> None:
    assert det.classify("plain words")[0] == 0
    assert det.classify("mail jo@acme-mail.com")[0] == 1
    assert det.classify("mail jo@acme-mail.com at 10.0.0.1")[0] == 2
    assert det.classify(f"mail jo@acme-mail.com at 10.0.0.1 key {GITHUB}")[0] == 3
    assert det.max_level(f"x {GITHUB}") == 3
    assert det.max_level("10.0.0.1") == 2
    assert det.max_level("") == 0


def test_prose_mentions(det: Detector) -> None:
    masked(
        det, "my token is Zf3D0LXCM3EIMbgJpUNnkRtOfOueHznB ok", "Zf3D0LXCM3EIMbgJpUNnkRtOfOueHznB"
    )
    masked(
        det, "the api key was q8Zr2Lw9Xv4Nb6Tm1Kp3Jh7Gd5Fs0Ay.", "q8Zr2Lw9Xv4Nb6Tm1Kp3Jh7Gd5Fs0Ay"
    )
    for text in (
        "the token is expired",
        "The API key is stored in the keychain",
        "the secret is out",
        "my password is required for sudo",
    ):
        kept(det, text)
