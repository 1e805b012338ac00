"""memloom: local-first long-term memory for AI coding agents.

>>> import memloom
>>> with memloom.open("~/.memloom") as m:
...     m.save({"text": "The test command is `make check`", "type": "procedure"})
...     m.recall({"query": "how do I run the tests?"})
"""

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

__version__ = "0.1.0"

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
