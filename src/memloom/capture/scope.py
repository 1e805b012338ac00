"""What the user chose to capture: nothing until ``memloom connect`` names projects or --all."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from memloom.values import Value

SCOPE_FILE = "capture.json"


class Scope(Value):
    """Which projects are captured (``all`` or those whose path holds a name in
    ``projects``), whether prompts are given memories (``recall``), since when, and
    ``roots``: the project folders named by ``memloom connect aider`` (Aider has no
    hooks and no home, so these are where the sweep looks for its chat histories)."""

    FIELDS = ("all", "projects", "recall", "connected_at", "roots")

    def __init__(
        self,
        all: bool = False,
        projects: list[str] | None = None,
        recall: bool = True,
        connected_at: float | None = None,
        roots: list[str] | None = None,
    ) -> None:
        self.all = all
        self.projects = [] if projects is None else projects
        self.recall = recall
        self.connected_at = connected_at
        self.roots = [] if roots is None else roots

    @property
    def enabled(self) -> bool:
        return self.all or bool(self.projects)

    def covers(self, project: str | None) -> bool:
        """A project is in scope when --all, or a chosen name is a substring of its path."""
        if self.all:
            return True
        if not project:
            return False
        low = project.lower()
        return any(p.lower() in low for p in self.projects)


def load_scope(home: Path) -> Scope:
    try:
        data = json.loads((home / SCOPE_FILE).read_text())
    except (OSError, ValueError):
        return Scope()
    return Scope(
        all=bool(data.get("all")),
        projects=[str(p) for p in data.get("projects", [])],
        recall=bool(data.get("recall", True)),
        connected_at=data.get("connected_at"),
        roots=[str(p) for p in data.get("roots", []) if isinstance(p, str)],
    )


def save_scope(home: Path, scope: Scope | None) -> None:
    path = home / SCOPE_FILE
    if scope is None:
        path.unlink(missing_ok=True)
        return
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    if scope.connected_at is None:
        scope.connected_at = time.time()
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump(scope.as_dict(), fh, indent=2)
    os.replace(tmp, path)
