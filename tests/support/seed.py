"""Memories put in a memloom home before a test runs its hooks against it."""

from __future__ import annotations

from pathlib import Path

import memloom


def remember(home: Path, *entries: dict) -> list[str]:
    """Store ``entries`` in the memloom at ``home``: their ids."""
    m = memloom.open(home=str(home))
    try:
        return m.store({"entries": list(entries)}).ids
    finally:
        m.close()
