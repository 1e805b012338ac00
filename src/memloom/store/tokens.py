"""API token secrets: generated here, stored only as hashes.

A token is 32 random bytes, so a plain SHA-256 is enough to make a leaked
table useless (there is nothing to brute-force); a slow password hash would
only slow every request.
"""

from __future__ import annotations

import hashlib
import secrets

PREFIX = "mlt_"


def new_token() -> str:
    return PREFIX + secrets.token_urlsafe(32)


def hash_token(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()
