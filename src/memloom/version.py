"""memloom's version: ``[project] version`` in pyproject.toml, read at run time from
the installed package's metadata (it is written nowhere else).

``importlib.metadata`` costs a process 20-45 ms to import (its e-mail parser), more
than a hook's whole start-up: the hooks of memloom's agent plugin compare versions
on every prompt (``memloom hook … --plugin V``), and ``memloom mcp`` keys its
handshake answers by it. So :func:`version` first reads the ``Version:`` line of the
metadata file where ``importlib.metadata`` finds it (the first ``sys.path`` folder
holding a ``memloom-*.dist-info`` or ``.egg-info``), and asks ``importlib.metadata``
only when there is none (a zip, a custom finder). ``tests/test_release.py`` holds the
two to the same answer.

Standard library only: the hook fast path imports it (docs/architecture.md, rule 8).
"""

from __future__ import annotations

import os
import sys

DIST = "memloom"
#: What a source tree that was never installed reports (``PYTHONPATH=src`` alone).
UNKNOWN = "0+unknown"
#: The metadata file of each kind of install folder.
METADATA = {".dist-info": "METADATA", ".egg-info": "PKG-INFO"}

_found: list[str] = []


def version() -> str:
    """The installed memloom's version (read once a process)."""
    if not _found:
        found = metadata_file_version()
        _found.append(found if found is not None else importlib_version())
    return _found[0]


def banner() -> str:
    """What ``memloom --version`` prints."""
    return f"{DIST} {version()}"


def metadata_file_version() -> str | None:
    """The ``Version:`` field of the first memloom metadata folder on ``sys.path``, as
    ``importlib.metadata``'s path finder would find it; None when there is none."""
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue  # a missing folder, a zip file
        for name in names:
            stem, suffix = os.path.splitext(name.lower())
            # importlib.metadata's reading of a folder name: the part before the first
            # "-" (memloom-0.1.0.dist-info, and setuptools' memloom.egg-info).
            if suffix not in METADATA or stem.partition("-")[0] != DIST:
                continue
            found = _version_field(os.path.join(entry or ".", name, METADATA[suffix]))
            if found is not None:
                return found
    return None


def _version_field(path: str) -> str | None:
    """The ``Version:`` header of a core-metadata file (its headers end at the first
    blank line); None when the file cannot be read or has none."""
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    return None
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip() or None
    except OSError:
        return None
    return None


def importlib_version() -> str:
    """``importlib.metadata.version("memloom")``, or :data:`UNKNOWN` when memloom is not
    installed."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed(DIST)
    except PackageNotFoundError:
        return UNKNOWN
