"""Text that must survive redaction untouched (real transcript excerpts + hand-made)."""

from __future__ import annotations

import pathlib

import pytest

from memloom.detect import Detector


def _benign_lines(fixtures_dir: pathlib.Path) -> list[str]:
    text = (fixtures_dir / "benign_transcript_lines.txt").read_text(encoding="utf-8")
    return [ln for ln in text.splitlines() if ln and not ln.startswith("# ")]


def test_transcript_excerpts_survive(det: Detector, fixtures_dir: pathlib.Path) -> None:
    lines = _benign_lines(fixtures_dir)
    assert len(lines) > 150
    assert (fixtures_dir / "LICENSE-claude-code-log").exists()
    for line in lines:
        assert det.redact(line) == (line, []), line
        assert det.classify(line)[0] == 0, line


def test_transcript_excerpts_as_one_block(det: Detector, fixtures_dir: pathlib.Path) -> None:
    block = "\n".join(_benign_lines(fixtures_dir))
    assert det.redact(block)[0] == block


HAND_MADE = [
    "commit 3f2a9c1e8b7d6f5a4c3b2a19f8e7d6c5b4a39281",
    "Merge: 1a2b3c4 5d6e7f8",
    "abc1234 Fix tokenizer bug in parse_tokens()",
    "index ecd1cfd5e3274aad51afbcc43ec7d6cf350b8fa8..d6e32051544c86a0523cb7959f7847174499f5ec"
    " 100644",
    "session id 2c5941bd-b9de-41d6-9414-221d175776f7 resumed",
    "/Users/dain/workspace/claude-code-log/claude_code_log/converter.py:402",
    "Upgraded pydantic from 2.6.4 to 2.11.7 and numpy 1.26.4",
    "The API key is stored in the keychain; rotate the token monthly.",
    "Use `max_tokens=4096` and `temperature=0`.",
    "sorted(items, key=lambda x: x.created_at)",
    "const token = await getToken();",
    'api_key = os.environ["OPENAI_API_KEY"]',
    "password = getpass.getpass()",
    "token_count: 15234",
    '"input_tokens": 1843, "cache_read_input_tokens": 20144',
    "key={item.id}",
    '"integrity": "sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+5bXDu4a9lzXrRh6ksWrQl5VP'
    '+u5wJNjmi1NJaVA=="',
    "docker pull python@sha256:eaaa7b11777babe28e6133a8b19ff71cea687e0d7f05158dee95a71f76ce3d00",
    'SECRET_KEY = os.getenv("SECRET_KEY")',
    "DATABASE_URL=postgres://app:${DB_PASSWORD}@db:5432/app",
    "export GITHUB_TOKEN=$(gh auth token)",
    "git clone git@github.com:daaain/claude-code-log.git",
    "Version 1.0.24 released on 2025-06-15 at 10:30:45",
    "Test run: 1234 passed, 5 failed in 12.34s",
    "hash: 5d41402abc4b2a76b9719d911017c592",
    "I'll fix the KeyError in `cache.get(key)` now.",
    "password_hash = bcrypt.hashpw(password, salt)",
    'if (token == null) throw new Error("missing token")',
    "$ npm install @anthropic-ai/claude-code@1.0.24",
    "The secret sauce is caching.",
    "Listening on http://localhost:8080 and http://127.0.0.1:5173",
    "run id 9876543210, pid 48213, port 5432, started 1718000000000",
    "cat .env.local && open settings.local.json and CLAUDE.local.md",
    "The CSRF token field name is csrf_token.",
    "Bearer authentication uses tokens.",
    "Authorization header missing",
    '"apiKeyHelper": "~/.claude/anthropic_key_helper.sh"',
    "SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8",
    "Co-Authored-By: Claude <noreply@anthropic.com>",
    "Jane Doe <jane@example.com> wrote the docs",
    "logo@2x.png and icon@3x.webp",
    "uvx ruff@0.6.0 --version",
    "password: ${{ secrets.DB_PASSWORD }}",
    "token: <your-token-here>",
    "api_key: YOUR_API_KEY",
    "client_secret=xxxxxxxxxxxxxxxxxxxx",
    "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "public_key = 9Cnzj4p4WGeKLs1Pt8QuKUpRKfFLfRYC9AIKjbJTWit",
    "token_file = /run/secrets/token",
    "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE",
    "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo\n"
    "-----END PUBLIC KEY-----",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl me@laptop",
]


@pytest.mark.parametrize("line", HAND_MADE)
def test_hand_made_benign_lines_survive(det: Detector, line: str) -> None:
    assert det.redact(line) == (line, [])
    assert det.classify(line)[0] == 0
