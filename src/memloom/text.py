"""Text made safe to store and send: a stdlib-only leaf every layer may use.

Session files and model replies can hold what no store, embedder or client takes:
lone surrogates (not UTF-8) and NUL characters (PostgreSQL refuses them).
``memloom.models.check_storable`` refuses such text at the API; this repairs it where
memloom reads it itself.
"""

from __future__ import annotations

import re

__all__ = ["safe_text"]

_UNSAFE_RE = re.compile("[\ud800-\udfff\x00]")


def safe_text(text: str) -> str:
    """``text`` without lone surrogates (-> U+FFFD) and NULs: storable and sendable."""
    if _UNSAFE_RE.search(text) is None:
        return text
    return _UNSAFE_RE.sub(lambda m: "" if m.group() == "\x00" else "\ufffd", text)
