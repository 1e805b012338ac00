"""A session-end hook that returns at once: the queueing finishes in the background.

Agents wait for their hooks. At a session's end that wait is the user's: Claude
Code even cancels a SessionEnd hook that takes too long as it exits, which would
lose the notification on a busy machine. So ``memloom hook notify`` reads the
hook's stdin, forks, and the parent exits 0 as soon as the child holds a shared
lock on ``<home>/notify.lock``; the child queues the session and exits.

Whoever reads the queue right after an agent exited (``memloom capture run-once``,
``memloom status``) first calls :func:`wait_settled`, which takes the lock
exclusively and so waits for queueing still in flight (bounded).

Standard library only: the hook fast path imports it.
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False  # typing's, without loading typing (the hook forks first)
if TYPE_CHECKING:
    from pathlib import Path

LOCK_NAME = "notify.lock"
#: How long a reader waits for background queueing (each takes ~0.1 s).
SETTLE_TIMEOUT_S = 10.0


def detach(home: str | os.PathLike[str]) -> bool:
    """Fork. True in the parent, once the child holds its shared lock: the parent
    should exit. False in the child (its stdio now /dev/null, in a session of its
    own, so the agent's pipes close when the parent exits), and False without forking
    where there is no ``fork`` or the lock cannot be made: the caller then does the
    work itself, in the foreground. ``os.path`` only: the hook forks before it loads
    anything else (``memloom._entry``)."""
    if not hasattr(os, "fork"):
        return False
    try:
        import fcntl

        os.makedirs(home, exist_ok=True)
        lock = os.open(os.path.join(home, LOCK_NAME), os.O_RDWR | os.O_CREAT, 0o600)
    except (ImportError, OSError):
        return False
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid:  # the parent: wait only until the child holds the lock
        os.close(ready_w)
        os.close(lock)
        try:
            os.read(ready_r, 1)
        finally:
            os.close(ready_r)
        return True
    os.close(ready_r)
    try:
        os.setsid()
        fcntl.flock(lock, fcntl.LOCK_SH)  # held until this process exits
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.close(null)
    finally:
        os.write(ready_w, b"1")
        os.close(ready_w)
    return False


def wait_settled(home: Path, timeout: float = SETTLE_TIMEOUT_S) -> bool:
    """Wait until no session-end hook is still queueing in the background; False if
    one still was after ``timeout`` seconds (the reader then goes on without it)."""
    try:
        import fcntl

        lock = os.open(home / LOCK_NAME, os.O_RDWR)
    except (ImportError, OSError):
        return True  # no hook ever detached here (or no locks on this system)
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(0.01)
                continue
            fcntl.flock(lock, fcntl.LOCK_UN)
            return True
    finally:
        os.close(lock)
