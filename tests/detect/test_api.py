"""Public API: result types, offsets, idempotence, line structure, configuration."""

from __future__ import annotations

import json
import re

import pytest

import memloom.detect as detect
from memloom.detect import (
    MARKER_RE,
    DetectConfig,
    Detector,
    Hit,
    Match,
    PatternSpec,
    analyze,
    classify,
    max_level,
    redact,
    redact_many,
)

TOKEN = "ghp_" + "Q7wErT9yUi0pAs1dFg2hJk3lZx4cVb5nM6qW"
MIXED = (
    "line one\n"
    f"export GITHUB_TOKEN={TOKEN}\n"
    "mail me: ana.lima@bigmail.com.br, or +1 (415) 555-2671\n"
    "db: postgres://svc:Hx82kLq0zP@10.4.0.7:5432/app on db1.corp\n"
    "last line"
)


def test_module_functions_use_a_cached_default() -> None:
    assert detect.default_detector() is detect.default_detector()
    out, hits = redact(MIXED)
    assert (out, hits) == detect.default_detector().redact(MIXED)
    assert classify(MIXED)[0] == 3 and max_level(MIXED) == 3
    assert redact_many([MIXED, "plain"]) == [redact(MIXED), ("plain", [])]


def test_offsets_index_the_original_text() -> None:
    out, hits = redact(MIXED)
    spans = [MIXED[h.start : h.end] for h in hits]
    assert spans == [TOKEN, "ana.lima@bigmail.com.br", "+1 (415) 555-2671", "Hx82kLq0zP"]
    assert [h.rule for h in hits] == ["github-token", "email", "phone-number", "url-password"]
    assert [h.level for h in hits] == [3, 1, 1, 3]
    # rebuilding from the hits gives the redacted text
    rebuilt, prev = [], 0
    for h in hits:
        rebuilt += [MIXED[prev : h.start], f"[redacted:{h.rule}]"]
        prev = h.end
    assert "".join([*rebuilt, MIXED[prev:]]) == out


def test_line_structure_and_surroundings_preserved() -> None:
    out, _ = redact(MIXED)
    assert out.count("\n") == MIXED.count("\n")
    assert out.splitlines()[0] == "line one" and out.splitlines()[-1] == "last line"
    assert "postgres://svc:[redacted:url-password]@10.4.0.7:5432/app on db1.corp" in out


def test_idempotent_and_markers_never_match() -> None:
    once, _ = redact(MIXED)
    assert redact(once) == (once, [])
    assert classify(once)[0] == 2  # the kept private IP and internal host remain
    for rule in (
        "aws-access-key",
        "generic-api-key",
        "generic-password",
        "private-key",
        "url-password",
        "email",
        "jwt",
        "authorization-header",
    ):
        m = f"[redacted:{rule}]"
        for text in (
            m,
            f"API_KEY={m}",
            f'"token": "{m}"',
            f"https://u:{m}@h.io/x",
            f"password: {m}",
            f"Authorization: Bearer {m}",
            f"{m}@gmail.com",
        ):
            assert redact(text) == (text, []), text
            assert MARKER_RE.search(text)


def test_hit_and_match_shapes() -> None:
    r = analyze(MIXED)
    assert isinstance(r.hits[0], Hit) and isinstance(r.matches[0], Match)
    doc = r.to_json()
    assert set(doc) == {"text", "redactions", "sensitivity"}
    assert doc["redactions"][0] == {
        "rule": "github-token",
        "start": MIXED.index(TOKEN),
        "end": MIXED.index(TOKEN) + len(TOKEN),
    }
    assert doc["sensitivity"] == 3 and doc["text"] == redact(MIXED)[0]
    json.dumps(doc)
    kept = [m for m in r.matches if not m.masked]
    assert {m.rule for m in kept} == {"private-ip", "internal-host"}
    assert all(m.level == 2 for m in kept)
    with pytest.raises(AttributeError):
        r.hits[0].rule = "x"  # type: ignore[misc]


def test_overlapping_findings_merge_into_one_hit() -> None:
    text = f"GITHUB_TOKEN={TOKEN}"  # github-token and generic-token cover the same value
    out, hits = redact(text)
    assert out == "GITHUB_TOKEN=[redacted:github-token]" and len(hits) == 1
    assert {m.rule for m in classify(text)[1]} == {"github-token", "generic-token"}


def test_non_ascii_text_keeps_offsets() -> None:
    text = f"Ünïcödé ✓ — İstanbul 🚀 token: {TOKEN} — fin"
    out, hits = redact(text)
    assert text[hits[0].start : hits[0].end] == TOKEN
    assert out == "Ünïcödé ✓ — İstanbul 🚀 token: [redacted:github-token] — fin"


def test_rejects_non_str() -> None:
    with pytest.raises(TypeError):
        redact(b"bytes")  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- config


def test_allow_list_exact_and_regex() -> None:
    token2 = "ghp_" + "Z" * 4 + "a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6"
    cfg = DetectConfig(allow=[TOKEN, "re:[a-z.]+@bigmail\\.com\\.br"])
    det = Detector(cfg)
    text = f"{TOKEN} {token2} ana.lima@bigmail.com.br bo@bigmail.com.br"
    out, hits = det.redact(text)
    assert TOKEN in out and "ana.lima@bigmail.com.br" in out and "bo@bigmail.com.br" in out
    assert token2 not in out and len(hits) == 1
    assert Detector().redact(text)[0].count("[redacted:") == 4


def test_extra_patterns_and_levels() -> None:
    cfg = DetectConfig(
        extra_patterns=[
            PatternSpec("acme-ticket", r"ACME-\d{6}", level=1),
            PatternSpec("acme-key", r"acmekey=(\w{12})"),
            PatternSpec("acme-cluster", r"k8s-[a-z]+-\d+", level=2),
        ]
    )
    det = Detector(cfg)
    out, hits = det.redact("see ACME-123456, acmekey=abcdefghijkl on k8s-prod-3")
    assert out == "see [redacted:acme-ticket], acmekey=[redacted:acme-key] on k8s-prod-3"
    assert [h.level for h in hits] == [1, 3]
    assert det.classify("on k8s-prod-3")[0] == 2


def test_internal_domains() -> None:
    det = Detector(DetectConfig(internal_domains=["acme.io", ".example-corp.net"]))
    for host in ("acme.io", "git.acme.io", "db.eu.example-corp.net"):
        level, matches = det.classify(f"push to {host}/repo")
        assert level == 2 and matches[0].rule == "internal-host", host
    assert det.classify("visit notacme.io")[0] == 0
    assert Detector().classify("push to git.acme.io")[0] == 0


def test_from_toml_section() -> None:
    import tomllib

    doc = tomllib.loads(
        """
[redact]
allow = ["AKIAIOSFODNN7EXAMPLE", "re:test-[0-9]+"]
internal_domains = ["acme.io"]

[[redact.patterns]]
name = "acme-key"
regex = "acme_[a-z0-9]{16}"

[[redact.patterns]]
name = "acme-ticket"
regex = "ACME-[0-9]{6}"
level = 1
"""
    )
    cfg = DetectConfig.from_toml_section(doc["redact"])
    assert cfg.allow == ["AKIAIOSFODNN7EXAMPLE", "re:test-[0-9]+"]
    assert cfg.internal_domains == ["acme.io"]
    assert cfg.extra_patterns == [
        PatternSpec("acme-key", "acme_[a-z0-9]{16}", 3),
        PatternSpec("acme-ticket", "ACME-[0-9]{6}", 1),
    ]
    assert DetectConfig.from_toml_section({}) == DetectConfig()
    assert DetectConfig.from_toml_section(None) == DetectConfig()


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"patterns": [{"name": "broken", "regex": "([a-z"}]}, "redact pattern 'broken'"),
        ({"patterns": [{"name": "x", "regex": "a", "level": 7}]}, "level must be 1, 2 or 3"),
        ({"patterns": [{"regex": "a"}]}, "'name'"),
        ({"patterns": [{"name": "x", "regex": "a", "colour": 1}]}, "unknown keys"),
        ({"allow": "AKIA"}, "allow must be a list"),
        ({"allow": ["re:(unclosed"]}, "allow entry 're:(unclosed'"),
        ({"internal_domain": ["x"]}, "unknown keys"),
        ({"patterns": [{"name": "Bad Name", "regex": "a"}]}, "redact pattern name"),
    ],
)
def test_from_toml_section_errors(section: dict, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        DetectConfig.from_toml_section(section)


@pytest.mark.parametrize(
    "text",
    [
        "key=" * 50_000,
        '"token": "' * 20_000,
        ("x" * 70 + "secret_") * 2_500,
        "curl -u " * 25_000,
        "aaa1Q~" * 30_000,
        "12345:A" * 30_000,
        "-----BEGIN PRIVATE KEY-----\n" * 2_000,
        "a@b." * 50_000,
        "1 " * 100_000,
        "DE89 " * 40_000,
        '"x" == token; ' * 15_000,
        "password.equals(" * 12_000,
        "-us1 " * 40_000,
        ("a" * 32 + "-us") * 5_500,
        ("M" + "a" * 25 + ".abcdef.") * 6_000,
        ("1" + "A" * 30 + " ") * 6_000,
        "call 0" * 33_000,
        "tel 0172 1234567 " * 12_000,
        "请@" * 100_000,
    ],
    ids=lambda t: repr(t[:12]),
)
def test_adversarial_inputs_stay_linear(text: str) -> None:
    """Floods of anchors must not make any rule quadratic (each case ~200 kB).

    Judged by how time grows, not by a wall-clock budget a busy machine can miss:
    the whole text against a tenth of it, best of three each. Linear work grows
    about 10x; a quadratic rule ~100x. The 1.5 s budget is kept as a loose cap.
    """
    import time

    def best(sample: str) -> float:
        runs = []
        for _ in range(3):
            t0 = time.perf_counter()
            redact(sample)
            runs.append(time.perf_counter() - t0)
        return min(runs)

    small, full = best(text[: len(text) // 10]), best(text)
    assert full < 1.5 or full / max(small, 1e-4) < 30, (small, full)
