"""Find Qwen Code sessions to import.

Layout (Qwen Code 0.24.4, tests/e2e; reference ``agents-new.md`` §8.1)::

    $QWEN_RUNTIME_DIR or $QWEN_HOME or ~/.qwen/
      projects/<cwd slug>/chats/<session id>.jsonl     a session (append-only records)
      projects/<cwd slug>/chats/*.runtime.json         sidecars (not sessions)

The slug is the working directory with every non-alphanumeric character made
``-`` (not reversible): a session's project is the ``cwd`` of its first records.
Rules, each file counted under the first that skips it: ``sidecars`` /
``not_transcripts`` (by name and place) -> ``project_filter`` (reads the head) ->
``active`` -> ``outside_window`` -> ``over_cap`` (newest first). Qwen writes no end
marker (no SessionEnd headless): a session is importable once quiet.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Unpack

from memloom.agents import discovery
from memloom.agents.base import SNIFF_BYTES, Discovery, SessionFile
from memloom.agents.files import head_records, read_head
from memloom.agents.qwen.home import projects_dir

__all__ = ["CHATS", "discover", "discover_paths", "looks_like_session", "session_project"]

CHATS = "chats"


def _is_sidecar(name: str) -> bool:
    return name.endswith(".runtime.json") or name.endswith(".jsonl")


def looks_like_session(head: bytes) -> bool:
    """Whether a file's first bytes are Qwen chat records: typed JSON lines carrying a
    ``sessionId`` and a ``uuid``, at least one a conversation record whose ``message``
    is a Gemini ``Content`` (``parts``, not Claude Code's ``content``)."""
    records = [
        r
        for r in head_records(head)
        if isinstance(r.get("type"), str) and "sessionId" in r and "uuid" in r
    ]
    return any(
        r["type"] in ("user", "assistant", "tool_result")
        and isinstance(r.get("message"), dict)
        and isinstance(r["message"].get("parts"), list)
        for r in records
    )


def session_project(path: Path) -> str | None:
    """The session's project: the first ``cwd`` among its first records; None when
    none says (or the file cannot be read)."""
    for r in head_records(read_head(path, SNIFF_BYTES), limit=200):
        cwd = r.get("cwd")
        if isinstance(cwd, str) and cwd:
            return cwd
    return None


def _projects(root: Path) -> Path:
    """``root``'s ``projects`` folder (``root`` may be that folder itself)."""
    if root.name == "projects" and not (root / "projects").is_dir():
        return root
    return root / "projects"


def _keep(
    path: Path, st: os.stat_result, slug: str, needle: str | None, out: Discovery
) -> SessionFile | None:
    if needle is not None and needle not in (session_project(path) or slug).casefold():
        out.skip("project_filter", path)
        return None
    return SessionFile(path, path.stem, slug, st.st_size, st.st_mtime)


def discover(root: Path | None = None, **rules: Unpack[discovery.Rules]) -> Discovery:
    """Sessions under ``<root>/projects/*/chats/`` (``root``: the runtime folder, default
    from the environment), newest first."""
    out = Discovery()
    pick = discovery.Selection(**rules)
    candidates: list[SessionFile] = []
    projects = _projects(projects_dir().parent if root is None else root)
    fence = discovery.Fence(projects, out)
    if fence.refused():
        return out
    for pd in discovery.scan_sorted(projects):
        if not pd.is_dir():
            out.skip("not_transcripts", pd.path)
            continue
        for e in discovery.scan_sorted(os.path.join(pd.path, CHATS)):
            try:
                if e.is_dir(follow_symlinks=False):
                    discovery.count_sidecars(e.path, out, _is_sidecar)
                    continue
            except OSError:
                continue
            if not e.name.endswith(".jsonl"):
                out.skip("sidecars" if _is_sidecar(e.name) else "not_transcripts", e.path)
                continue
            st = fence.regular_stat(e)
            if st is None:
                continue
            sf = _keep(Path(e.path), st, pd.name, pick.needle, out)
            if sf is not None and pick.keeps(out, sf.path, sf.mtime):
                candidates.append(sf)
    out.files = pick.newest_first(out, candidates)
    return out


def discover_paths(paths: Sequence[Path], *, project: str | None = None) -> Discovery:
    """Sessions named with ``--path`` (files, or folders walked recursively): every
    ``.jsonl`` whose content is Qwen chat records; no time rule or cap applies. A file
    reached twice is listed once; newest first."""
    out = Discovery()
    needle = project.casefold() if project else None
    seen: set[str] = set()
    found: list[SessionFile] = []

    def consider(path: Path, named: bool) -> None:
        if not path.name.endswith(".jsonl"):
            out.skip("sidecars" if _is_sidecar(path.name) else "not_transcripts", path)
            return
        st = discovery.regular_stat(path, out)  # FIFOs, devices: never opened
        if st is None or not discovery.first_visit(seen, path):
            return
        if not looks_like_session(read_head(path, SNIFF_BYTES)):
            out.skip("not_transcripts", path)
            return
        slug = path.parent.parent.name if path.parent.name == CHATS else path.parent.name
        sf = _keep(path, st, slug, needle, out)
        if sf is not None:
            found.append(sf)

    discovery.walk_named(paths, out, consider)
    out.files = discovery.newest_first(out, found)
    return out
