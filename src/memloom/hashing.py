"""Identifiers and content hashes."""

from __future__ import annotations

import hashlib
import re
import secrets
import unicodedata

_SPACE = re.compile(r"\s+")


def new_id() -> str:
    """16 hex characters: short enough to type, random enough never to collide."""
    return secrets.token_hex(8)


def normalize_text(text: str) -> str:
    """The form two texts share when they say exactly the same thing."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text)).strip().casefold()


def content_hash(text: str) -> str:
    return hashlib.sha256(normalize_text(text).encode("utf-8")).hexdigest()
