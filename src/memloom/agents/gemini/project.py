"""Which project a Gemini CLI session belongs to: its files carry no working directory.

A session lives in ``<home>/tmp/<project-id>/chats/``. ``<project-id>`` is a slug
registered in ``<home>/projects.json`` (``{"projects": {"<abs root>": "<slug>"}}``,
>= v0.29, with a ``.project_root`` marker file holding the root in the folder) or,
before v0.29, ``sha256(root)`` in hex. Every session file also records
``projectHash`` = ``sha256(root)`` (reference §2.1, §2.2).

:func:`resolve` tries, in order:

1. ``projectHash`` of the file matched against ``sha256`` of every root it knows
   (the registry's roots, the marker's root, the caller's candidate roots -- e.g.
   the working directories other agents reported): the strongest evidence;
2. the registry entry whose slug is the folder's name;
3. the folder's ``.project_root`` marker;
4. a 64-hex folder name matched against the same hashes.

Otherwise the session has no project (memloom keeps its memories global) and
:attr:`ProjectMatch.detail` says why. Standard library only.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ProjectMatch", "marker_root", "project_hash_of", "registry_roots", "resolve"]

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
MARKER = ".project_root"
_MAX_REGISTRY_BYTES = 8 << 20

_registry_cache: dict[str, tuple[tuple[int, int], dict[str, str]]] = {}


@dataclass(frozen=True)
class ProjectMatch:
    """A session's project root (None: global) and how it was found, or why not."""

    root: str | None
    how: str  # "hash" | "projects.json" | ".project_root" | "unresolved"
    detail: str = ""


def project_hash_of(root: str) -> str:
    """Gemini's ``getProjectHash``: sha256 of the root path string, hex."""
    return hashlib.sha256(root.encode("utf-8", "surrogateescape")).hexdigest()


def _variants(root: str) -> set[str]:
    out = {root}
    norm = os.path.normpath(root)
    out.add(norm)
    if len(norm) > 1:
        out.add(norm.rstrip("/\\"))
    return out


def registry_roots(path: Path) -> dict[str, str]:
    """``projects.json`` as slug -> root ({} if absent or unusable). Cached by mtime and size."""
    key = os.fspath(path)
    try:
        st = os.stat(path)
    except OSError:
        _registry_cache.pop(key, None)
        return {}
    stamp = (st.st_mtime_ns, st.st_size)
    cached = _registry_cache.get(key)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    slugs: dict[str, str] = {}
    if st.st_size <= _MAX_REGISTRY_BYTES:
        try:
            with open(path, "rb") as fh:
                data = json.loads(fh.read().decode("utf-8", "replace"))
        except (OSError, ValueError, RecursionError):
            data = None
        projects = data.get("projects") if isinstance(data, dict) else None
        if isinstance(projects, dict):
            for root, slug in projects.items():
                if isinstance(slug, str) and slug and isinstance(root, str) and root:
                    slugs.setdefault(slug, root)
    if len(_registry_cache) > 64:
        _registry_cache.clear()
    _registry_cache[key] = (stamp, slugs)
    return slugs


def marker_root(project_dir: Path) -> str | None:
    """The root a project folder's ``.project_root`` marker names (None: none, or not absolute)."""
    try:
        with open(project_dir / MARKER, "rb") as fh:
            text = fh.read(8192).decode("utf-8", "replace").strip()
    except OSError:
        return None
    return text if text and os.path.isabs(text) else None


def resolve(
    project_dir: Path,
    *,
    project_hash: str | None = None,
    candidates: Iterable[str] = (),
    home: Path | None = None,
) -> ProjectMatch:
    """The project of sessions in ``project_dir`` (``<home>/tmp/<id>``); see the module doc.

    ``home`` defaults to the folder two levels up when ``project_dir`` sits in a
    ``tmp`` folder (else no registry is read).
    """
    name = project_dir.name
    if home is None and project_dir.parent.name == "tmp":
        home = project_dir.parent.parent
    slugs = registry_roots(home / "projects.json") if home is not None else {}
    marker = marker_root(project_dir) if name else None
    known: dict[str, tuple[str, str]] = {}  # hash -> (root, where from)
    for source, roots in (
        ("projects.json", slugs.values()),
        (MARKER, [marker] if marker else []),
        ("candidate roots", candidates),
    ):
        for root in roots:
            if not isinstance(root, str) or not root:
                continue
            for variant in _variants(root):
                known.setdefault(project_hash_of(variant), (variant, source))
    wanted = project_hash.lower() if isinstance(project_hash, str) else None
    if wanted and wanted in known:
        root, source = known[wanted]
        return ProjectMatch(root, "hash", f"projectHash matches {source}")
    if name in slugs:
        return ProjectMatch(slugs[name], "projects.json", f"slug {name!r}")
    if marker:
        return ProjectMatch(marker, MARKER, f"marker in {name!r}")
    if _HEX64.match(name) and name in known:
        root, source = known[name]
        return ProjectMatch(root, "hash", f"folder name matches {source}")
    why = [f"folder {name!r} is not in projects.json" if slugs else "no projects.json"]
    why.append(f"no {MARKER} marker")
    if wanted or _HEX64.match(name):
        why.append(f"none of {len(known)} known roots hashes to it")
    return ProjectMatch(None, "unresolved", "; ".join(why))
