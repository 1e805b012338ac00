"""memloom: local-first long-term memory for AI coding agents.

>>> import memloom
>>> with memloom.open("~/.memloom") as m:
...     m.save({"text": "The test command is `make check`", "type": "procedure"})
...     m.recall({"query": "how do I run the tests?"})

Names are imported on first use, so the Claude Code hooks, which import only
``memloom.capture``, start in milliseconds. ``__version__`` is pyproject.toml's
``[project] version``, read from the installed package's metadata on first use
(:mod:`memloom.version`).
"""

from __future__ import annotations

_LAZY = {
    "Memloom": "memloom.engine",
    "open": "memloom.engine",
    "MemoryType": "memloom.models",
    "RecallRequest": "memloom.models",
    "RecallResponse": "memloom.models",
    "SaveRequest": "memloom.models",
    "SaveResponse": "memloom.models",
    "Status": "memloom.models",
    "StoreRequest": "memloom.models",
    "StoreResponse": "memloom.models",
}

TYPE_CHECKING = False  # typing's, without loading typing (~3 ms): the hooks load this module
if TYPE_CHECKING:
    from typing import Any

    from memloom.engine import Memloom, open
    from memloom.models import (
        MemoryType,
        RecallRequest,
        RecallResponse,
        SaveRequest,
        SaveResponse,
        Status,
        StoreRequest,
        StoreResponse,
    )

    __version__: str


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from memloom.version import version

        globals()[name] = version()
        return globals()[name]
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'memloom' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "Memloom",
    "MemoryType",
    "RecallRequest",
    "RecallResponse",
    "SaveRequest",
    "SaveResponse",
    "Status",
    "StoreRequest",
    "StoreResponse",
    "__version__",
    "open",
]
