"""git for tests and benchmarks that build real repositories: one clean environment.

The caller's ``GIT_*`` variables (a hook's ``GIT_DIR``, an outer rebase) would point
git at another repository, and the user's own configuration (a default branch, a
signing key, a template) would change what gets built, so both are left out.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

#: The identity every test commit is made with.
IDENTITY = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def git_env() -> dict[str, str]:
    """This process's environment without ``GIT_*``, with no user or system config."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(IDENTITY, GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    return env


def git(folder: str | Path, *args: str | Path) -> str:
    """Run ``git -C folder args`` (the folder is made first, for ``init``); its
    stdout, stripped. A failing command raises ``CalledProcessError`` (its ``stderr``
    is git's message)."""
    Path(folder).mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["git", "-C", str(folder), *map(str, args)],
        capture_output=True,
        text=True,
        env=git_env(),
        check=True,
    )
    return done.stdout.strip()
