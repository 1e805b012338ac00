"""Validation errors as one line of text, for the CLI, the HTTP API and the MCP tools.

A stdlib-only leaf: it reads the error dicts pydantic's ``errors()`` returns
(``loc``, ``msg``), so nothing here imports pydantic.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

__all__ = ["describe_validation"]


def describe_validation(
    errors: Iterable[Mapping[str, Any]],
    *,
    hide: Collection[str] = (),
    limit: int | None = None,
    empty: str = "",
) -> str:
    """``"field.sub: message; other: message"``: one part per error.

    ``hide`` drops location parts that name where a value came from rather than
    which field it is (the HTTP API hides ``body``, ``query``, ``path``);
    ``limit`` keeps the first so many parts; ``empty`` is said when none remain.
    """
    parts = []
    for err in errors:
        where = ".".join(str(x) for x in err.get("loc", ()) if x not in hide)
        msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        parts.append(f"{where}: {msg}" if where else msg)
    return "; ".join(parts[:limit]) or empty
