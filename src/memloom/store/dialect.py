"""The little that differs between SQLite's and PostgreSQL's SQL, in one object.

The shared SQL layer (:mod:`memloom.store.sql`) and the filter builder
(:mod:`memloom.store.filters`) write each statement once and ask a dialect for
the parts that differ: placeholders, IN-lists, the NULL-equal test, the any-tag
test, insert-ignore and upserts, index hints, and the codecs for JSON and
vectors. Standard library only: the hook fast path builds its SQL with it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any


def _identity(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class Dialect:
    """SQL text rules plus value codecs; subclasses fill in the rules."""

    #: Python JSON value -> bound parameter, and column value -> Python value.
    encode_json: Callable[[Any], Any] = json.dumps
    decode_json: Callable[[Any], Any] = json.loads
    #: A row's tag list -> bound parameter, and back.
    encode_tags: Callable[[list[str]], Any] = json.dumps
    decode_tags: Callable[[Any], list[str]] = json.loads
    #: An embedding -> bound parameter, and a column value -> an embedding.
    encode_vector: Callable[[Any], Any] = _identity
    decode_vector: Callable[[Any], Any] = _identity
    #: How many values one IN-list may bind (None: any number).
    chunk: int | None = None
    #: Cursor keys are parsed as (float, int) before use (PostgreSQL binds typed values).
    typed_cursor: bool = False
    name: str = field(default="", init=False)
    ph: str = field(default="?", init=False)

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


@dataclass(frozen=True)
class SQLiteDialect(Dialect):
    chunk: int | None = 500  # SQLite binds at most 32,766 values: stay well under it.
    name: str = field(default="sqlite", init=False)
    ph: str = field(default="?", init=False)

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


@dataclass(frozen=True)
class PostgresDialect(Dialect):
    encode_json: Callable[[Any], Any] = _identity
    decode_json: Callable[[Any], Any] = dict
    encode_tags: Callable[[list[str]], Any] = list
    decode_tags: Callable[[Any], list[str]] = list
    typed_cursor: bool = True
    name: str = field(default="postgres", init=False)
    ph: str = field(default="%s", init=False)

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
