"""memloom run as a process of its own, the way an agent runs a hook."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def run_python(
    argv: list[str],
    payload: object,
    *,
    cwd: str | os.PathLike[str] | None = None,
    timeout: float = 60,
    **env: str,
) -> subprocess.CompletedProcess:
    """This Python with ``argv``, ``payload`` on stdin (JSON unless a string), and the
    caller's environment without its ``MEMLOOM_*`` and ``CLAUDE_*`` variables, plus
    ``env``, in ``cwd``. It must exit 0."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("MEMLOOM_", "CLAUDE_"))}
    clean.update(env)
    res = subprocess.run(
        [sys.executable, *argv],
        input=payload if isinstance(payload, str) else json.dumps(payload),
        env=clean,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert res.returncode == 0, res.stderr
    return res
