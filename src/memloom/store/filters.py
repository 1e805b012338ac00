"""Which rows a search may return: :class:`SearchFilter`, defined once.

A filter is a list of :class:`Clause` objects (:meth:`SearchFilter.clauses`);
every consumer interprets that one list: :meth:`SearchFilter.matches` in Python,
:func:`where` as SQL for either dialect, and the vector index's mask
(:meth:`memloom.store.vectors.VectorIndex.mask`) over its arrays. A property test
(tests/store/test_filters.py) checks the three agree. Standard library only:
the hook fast path builds its SQL from it.
"""

from __future__ import annotations

from functools import cached_property

from memloom.values import FrozenValue, Value

TYPE_CHECKING = False  # typing's, without loading typing (~3 ms): the hooks load this module
if TYPE_CHECKING:
    from typing import Any, Literal

    from memloom.store.dialect import Dialect

    ProjectMode = Literal["any", "exact", "scoped"]

    #: What a clause tests (on ``column`` against ``value``):
    #: ``in``: column is one of value (a sorted tuple); ``null_eq``: column == value,
    #: NULL matching NULL; ``null_eq_or_null``: that, or column is NULL (global rows);
    #: ``any_tag``: the row's tags meet value; ``no_tag``: they do not; ``at_most``:
    #: column <= value; ``unset_or_after``: column is NULL or > value (a TTL not yet passed).
    ClauseKind = Literal[
        "in", "null_eq", "null_eq_or_null", "any_tag", "no_tag", "at_most", "unset_or_after"
    ]


class Clause(FrozenValue):
    """One condition on one column (the hooks load this module: a plain class, see
    :mod:`memloom.values`)."""

    FIELDS = ("kind", "column", "value")

    def __init__(self, kind: ClauseKind, column: str, value: Any) -> None:
        self.kind = kind
        self.column = column
        self.value = value


class SearchFilter(Value):
    """Which rows a search may return.

    ``project_mode``: any: ignore project; exact: project == value (NULL matches
    NULL); scoped: project == value or global (NULL). ``tags``: any of these.
    ``exclude_tags``: none of these (what an agent's own memory already shows it).
    ``alive_at``: exclude rows whose TTL has passed at this time (None: keep them).
    ``own_only``: only rows the caller may change (the write path's dedup and
    conflict search); a store without owners ignores it. Not a clause: rows carry
    no owner."""

    FIELDS = (
        "statuses",
        "project",
        "project_mode",
        "types",
        "tags",
        "max_sensitivity",
        "alive_at",
        "own_only",
        "exclude_tags",
    )

    def __init__(
        self,
        statuses: frozenset[str] = frozenset({"active"}),
        project: str | None = None,
        project_mode: ProjectMode = "any",
        types: frozenset[str] | None = None,
        tags: frozenset[str] | None = None,
        max_sensitivity: int | None = None,
        alive_at: float | None = None,
        own_only: bool = False,
        exclude_tags: frozenset[str] | None = None,
    ) -> None:
        self.statuses = statuses
        self.project = project
        self.project_mode = project_mode
        self.types = types
        self.tags = tags
        self.max_sensitivity = max_sensitivity
        self.alive_at = alive_at
        self.own_only = own_only
        self.exclude_tags = exclude_tags or None

    def clauses(self) -> list[Clause]:
        """The filter as a conjunction of clauses, in a fixed order."""
        out = [Clause("in", "status", tuple(sorted(self.statuses)))]
        if self.project_mode == "exact":
            out.append(Clause("null_eq", "project", self.project))
        elif self.project_mode == "scoped":
            out.append(Clause("null_eq_or_null", "project", self.project))
        if self.types is not None:
            out.append(Clause("in", "type", tuple(sorted(self.types))))
        if self.tags is not None:
            out.append(Clause("any_tag", "tags", tuple(sorted(self.tags))))
        if self.exclude_tags is not None:
            out.append(Clause("no_tag", "tags", tuple(sorted(self.exclude_tags))))
        if self.max_sensitivity is not None:
            out.append(Clause("at_most", "sensitivity", self.max_sensitivity))
        if self.alive_at is not None:
            out.append(Clause("unset_or_after", "expires_at", self.alive_at))
        return out

    def matches(self, row: Any, now: float) -> bool:
        """This filter applied in Python to one row (a ``MemoryRow``: any object with
        the clauses' columns as attributes); the TTL is judged at ``now``."""
        return all(holds(c, getattr(row, c.column), now) for c in self._compiled)

    @cached_property
    def _compiled(self) -> list[Clause]:
        """:meth:`clauses`, built once: recall matches every candidate row against it."""
        return self.clauses()


def holds(c: Clause, value: Any, now: float | None = None) -> bool:
    """One clause on one value; ``now``, when given, is the TTL clause's threshold."""
    if c.kind == "in":
        return value in c.value
    if c.kind == "null_eq":
        return bool(value == c.value)
    if c.kind == "null_eq_or_null":
        return value is None or value == c.value
    if c.kind == "any_tag":
        return not set(c.value).isdisjoint(value)
    if c.kind == "no_tag":
        return set(c.value).isdisjoint(value)
    if c.kind == "at_most":
        return bool(value <= c.value)
    return value is None or value > (c.value if now is None else now)


def where(flt: SearchFilter, dialect: Dialect, alias: str = "m") -> tuple[list[str], list[Any]]:
    """The filter's clauses as SQL conditions (to be joined with AND) and their
    parameters. Owner conditions (``own_only``) are the store's to add."""
    conditions: list[str] = []
    params: list[Any] = []
    for c in flt.clauses():
        column = f"{alias}.{c.column}"
        if c.kind == "in":
            sql, values = dialect.in_list(column, c.value)
        elif c.kind == "null_eq":
            sql, values = dialect.null_equal(column, c.value)
        elif c.kind == "null_eq_or_null":
            sql, values = dialect.null_equal(column, c.value)
            if c.value is not None:  # with None, both halves are the same test
                sql = f"({sql} OR {column} IS NULL)"
        elif c.kind == "any_tag":
            sql, values = dialect.any_tag(alias, c.value)
        elif c.kind == "no_tag":
            sql, values = dialect.any_tag(alias, c.value)
            sql = f"NOT ({sql})"
        elif c.kind == "at_most":
            sql, values = f"{column} <= {dialect.ph}", [c.value]
        else:
            sql, values = f"({column} IS NULL OR {column} > {dialect.ph})", [c.value]
        conditions.append(sql)
        params.extend(values)
    return conditions, params
