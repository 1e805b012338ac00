"""The CPU cores this process may run on (its affinity mask, not the machine's count):
what the local embedder and a batch's graph search size their threads to. Standard
library only."""

from __future__ import annotations

import os


def usable_cores() -> int:
    """Cores this process may run on: a container or ``taskset`` limit is honoured."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)
