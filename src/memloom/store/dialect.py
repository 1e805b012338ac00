"""The little that differs between SQLite's and PostgreSQL's SQL, in one object.

The shared SQL layer (:mod:`memloom.store.sql`) and the filter builder
(:mod:`memloom.store.filters`) write each statement once and ask a dialect for
the parts that differ: placeholders, IN-lists, the NULL-equal test, the any-tag
test, insert-ignore and upserts, index hints, and the codecs for JSON and
vectors. Standard library only: the hook fast path builds its SQL with it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence

from memloom.values import FrozenValue

TYPE_CHECKING = False  # typing's, without loading typing (~3 ms): the hooks load this module
if TYPE_CHECKING:
    from typing import Any


def _identity(value: Any) -> Any:
    return value


class Dialect(FrozenValue):
    """SQL text rules plus value codecs; subclasses fill in the rules.

    A plain class (the hooks load this module, see :mod:`memloom.values`): the codecs
    and limits are fields, given as keywords or taken from :attr:`DEFAULTS`."""

    FIELDS = (
        "encode_json",
        "decode_json",
        "encode_tags",
        "decode_tags",
        "decode_list",
        "encode_vector",
        "decode_vector",
        "chunk",
        "typed_cursor",
    )
    #: Python JSON value -> bound parameter, and column value -> Python value.
    encode_json: Callable[[Any], Any]
    decode_json: Callable[[Any], Any]
    #: A row's tag list -> bound parameter, and back.
    encode_tags: Callable[[list[str]], Any]
    decode_tags: Callable[[Any], list[str]]
    #: A JSON list column (a row's anchors) -> a list.
    decode_list: Callable[[Any], list[Any]]
    #: An embedding -> bound parameter, and a column value -> an embedding.
    encode_vector: Callable[[Any], Any]
    decode_vector: Callable[[Any], Any]
    #: How many values one IN-list may bind (None: any number).
    chunk: int | None
    #: Cursor keys are parsed as (float, int) before use (PostgreSQL binds typed values).
    typed_cursor: bool
    DEFAULTS: Mapping[str, Any] = {
        "encode_json": json.dumps,
        "decode_json": json.loads,
        "encode_tags": json.dumps,
        "decode_tags": json.loads,
        "decode_list": json.loads,
        "encode_vector": _identity,
        "decode_vector": _identity,
        "chunk": None,
        "typed_cursor": False,
    }
    name = ""
    ph = "?"

    def __init__(self, **given: Any) -> None:
        unknown = sorted(set(given) - set(self.FIELDS))
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {unknown[0]!r}")
        for name in self.FIELDS:
            setattr(self, name, given[name] if name in given else self.DEFAULTS[name])

    # -------------------------------------------------------- the rules
    def marks(self, n: int) -> str:
        """``n`` placeholders, comma-separated."""
        return ", ".join([self.ph] * n)

    def in_list(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """``column`` is one of ``values``."""
        raise NotImplementedError

    def null_equal(self, column: str, value: Any) -> tuple[str, list[Any]]:
        """``column = value`` where NULL equals NULL."""
        raise NotImplementedError

    def any_tag(self, alias: str, tags: Sequence[str]) -> tuple[str, list[Any]]:
        """The row (``alias``) carries at least one of ``tags``."""
        raise NotImplementedError

    def is_false(self, column: str) -> str:
        raise NotImplementedError

    def anchored_to(self, alias: str, path: str) -> tuple[str, list[Any]]:
        """The row (``alias``) has an anchor whose ``path`` is ``path`` (relative to its
        repository's top folder, :mod:`memloom.anchors`)."""
        raise NotImplementedError

    def indexed(self, index: str) -> str:
        """An index hint after a table name (nothing where the planner needs none)."""
        return ""

    def insert(self, table: str, columns: Sequence[str], verb: str = "INSERT") -> str:
        """One row's INSERT statement (``verb`` may carry SQLite's conflict clause)."""
        return f"{verb} INTO {table} ({', '.join(columns)}) VALUES ({self.marks(len(columns))})"

    def insert_ignore(self, table: str, columns: Sequence[str]) -> str:
        """Insert one row unless it would break a unique constraint."""
        raise NotImplementedError

    def upsert(self, table: str, columns: Sequence[str], key: Sequence[str]) -> str:
        """Insert one row, replacing the one with the same ``key``."""
        raise NotImplementedError

    def like_prefix(self, column: str) -> str:
        """``column LIKE <placeholder>`` with backslash escapes."""
        raise NotImplementedError

    def local_day(self, column: str, utc_offset: int) -> tuple[str, list[Any]]:
        """The local calendar day (YYYY-MM-DD) of a Unix time column."""
        raise NotImplementedError

    def chunks(self, items: Sequence[Any]) -> list[Sequence[Any]]:
        """``items`` split so that no statement binds more than :attr:`chunk` values."""
        if self.chunk is None:
            return [items] if items else []
        return [items[i : i + self.chunk] for i in range(0, len(items), self.chunk)]


class SQLiteDialect(Dialect):
    # SQLite binds at most 32,766 values: stay well under it.
    DEFAULTS: Mapping[str, Any] = {**Dialect.DEFAULTS, "chunk": 500}
    name = "sqlite"
    ph = "?"

    def in_list(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        return f"{column} IN ({','.join('?' * len(values))})", list(values)

    def null_equal(self, column: str, value: Any) -> tuple[str, list[Any]]:
        return f"{column} IS ?", [value]

    def any_tag(self, alias: str, tags: Sequence[str]) -> tuple[str, list[Any]]:
        return (
            f"{alias}.rowid IN (SELECT memory_rowid FROM memory_tags WHERE tag IN "
            f"({','.join('?' * len(tags))}))",
            list(tags),
        )

    def is_false(self, column: str) -> str:
        return f"{column} = 0"

    def anchored_to(self, alias: str, path: str) -> tuple[str, list[Any]]:
        # The anchors' paths, kept by triggers (SQLite migration 11), indexed by path.
        return (
            f"{alias}.rowid IN (SELECT memory_rowid FROM memory_anchor_paths WHERE path = ?)",
            [path],
        )

    def indexed(self, index: str) -> str:
        return f" INDEXED BY {index}"

    def insert_ignore(self, table: str, columns: Sequence[str]) -> str:
        return self.insert(table, columns, "INSERT OR IGNORE")

    def upsert(self, table: str, columns: Sequence[str], key: Sequence[str]) -> str:
        return self.insert(table, columns, "INSERT OR REPLACE")

    def like_prefix(self, column: str) -> str:
        return f"{column} LIKE ? ESCAPE '\\'"

    def local_day(self, column: str, utc_offset: int) -> tuple[str, list[Any]]:
        return f"date({column}, 'unixepoch', 'localtime')", []


class PostgresDialect(Dialect):
    DEFAULTS: Mapping[str, Any] = {
        **Dialect.DEFAULTS,
        "encode_json": _identity,
        "decode_json": dict,
        "encode_tags": list,
        "decode_tags": list,
        "decode_list": list,
        "typed_cursor": True,
    }
    name = "postgres"
    ph = "%s"

    def in_list(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        return f"{column} = ANY(%s)", [list(values)]

    def null_equal(self, column: str, value: Any) -> tuple[str, list[Any]]:
        # Not IS NOT DISTINCT FROM: PostgreSQL cannot use an index for that.
        if value is None:
            return f"{column} IS NULL", []
        return f"{column} = %s", [value]

    def any_tag(self, alias: str, tags: Sequence[str]) -> tuple[str, list[Any]]:
        return f"{alias}.tags && %s::text[]", [list(tags)]

    def is_false(self, column: str) -> str:
        return f"NOT {column}"

    def anchored_to(self, alias: str, path: str) -> tuple[str, list[Any]]:
        # Containment: the GIN index on anchors (jsonb_path_ops) answers it.
        return f"{alias}.anchors @> jsonb_build_array(jsonb_build_object('path', %s::text))", [path]

    def insert_ignore(self, table: str, columns: Sequence[str]) -> str:
        return f"{self.insert(table, columns)} ON CONFLICT DO NOTHING"

    def upsert(self, table: str, columns: Sequence[str], key: Sequence[str]) -> str:
        rest = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in key)
        return f"{self.insert(table, columns)} ON CONFLICT ({', '.join(key)}) DO UPDATE SET {rest}"

    def like_prefix(self, column: str) -> str:
        return f"{column} LIKE %s"

    def local_day(self, column: str, utc_offset: int) -> tuple[str, list[Any]]:
        return (
            f"to_char(to_timestamp({column} + %s) AT TIME ZONE 'UTC', 'YYYY-MM-DD')",
            [utc_offset],
        )


#: The SQLite dialect with its default codecs (enough for read-only SQL such as the hooks').
SQLITE = SQLiteDialect()
