"""The CPU cores this process may run on (its affinity mask, not the machine's count),
and how many of them are idle right now: what the local embedder and a write batch's
graph search size their threads to. Standard library only."""

from __future__ import annotations

import os

LOADAVG = "/proc/loadavg"


def usable_cores() -> int:
    """Cores this process may run on: a container or ``taskset`` limit is honoured."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def idle_cores() -> int:
    """Usable cores no other task is running on at this moment, at least 1.

    A split search waits for its slowest thread, so on a busy machine one thread is
    steadier than two that each get half a core. Linux tells how many tasks are
    runnable now (``/proc/loadavg``, the caller included); elsewhere the 1-minute
    load average stands in.
    """
    usable = usable_cores()
    try:
        with open(LOADAVG, encoding="ascii") as f:
            others = running_tasks(f.read()) - 1
    except (OSError, ValueError):
        try:
            others = round(os.getloadavg()[0]) - 1
        except (OSError, AttributeError):
            return usable
    return max(1, usable - max(0, others))


def running_tasks(loadavg: str) -> int:
    """The runnable-task count of a ``/proc/loadavg`` line ("0.52 0.58 0.59 3/467 1234")."""
    fields = loadavg.split()
    if len(fields) < 4 or "/" not in fields[3]:
        raise ValueError(f"not a loadavg line: {loadavg!r}")
    return int(fields[3].split("/", 1)[0])
