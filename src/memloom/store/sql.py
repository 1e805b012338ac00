"""The SQL both stores share, written once against a :class:`~memloom.store.dialect.Dialect`.

:class:`SQLStore` holds every statement that reads or writes the same way on
SQLite and PostgreSQL: meta, rows by id, versions, listing, stats, decay
candidates, conflicts, provenance, the import ledger, session neighbours and the
export readers. A backend subclasses it, names its dialect and supplies the
plumbing: a connection (:meth:`SQLStore._conn`), the write transaction's
connection (:meth:`SQLStore._require_tx`) and, with owners, the owner conditions.
What differs for real (transactions, vector and keyword search, index
maintenance, migrations, tokens) stays in the backend.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from functools import lru_cache
from typing import Any, ClassVar

from memloom.errors import ValidationError
from memloom.store.base import (
    ConflictRow,
    LedgerRow,
    ListPage,
    MemoryRow,
    NativeRow,
    ProvenanceRow,
    SearchFilter,
    StoreError,
)
from memloom.store.dialect import Dialect
from memloom.store.filters import where as filter_where

#: MemoryRow's fields in the order every row query selects them (after ``rowid``).
_MEMORY_COLUMNS = """id root_id version status type text original_text content_hash embedding
    source tags metadata project sensitivity session_id created_at asserted_at last_referenced
    access_count expires_at expired_at superseded_by decay_level pinned anchors"""
MEMORY_FIELDS = tuple(_MEMORY_COLUMNS.split())
CONFLICT_FIELDS = (
    "id",
    "new_id",
    "existing_id",
    "distance",
    "reason",
    "status",
    "resolution",
    "detail",
    "created_at",
    "resolved_at",
)
PROVENANCE_FIELDS = (
    "memory_id",
    "session_id",
    "path",
    "project",
    "start_line",
    "end_line",
    "excerpt",
    "created_at",
    "agent",
)
LEDGER_FIELDS = (
    "path",
    "session_id",
    "project",
    "size",
    "mtime",
    '"offset"',
    "lines",
    "hash",
    "status",
    "memories",
    "last_error",
    "updated_at",
    "agent",
    "named_root",
)
NATIVE_FIELDS = (
    "path",
    "note_key",
    "agent",
    "folder",
    "project",
    "memory_id",
    "text_hash",
    "start_line",
    "end_line",
    "size",
    "mtime",
    "owned",
    "updated_at",
)
#: Conflict fields :meth:`SQLStore.update_conflict` may change.
CONFLICT_UPDATABLE = frozenset({"status", "resolution", "detail", "resolved_at", "reason"})
#: ``list`` orders: the sort column of each.
LIST_ORDERS = {"recent": "last_referenced", "accessed": "access_count", "created": "created_at"}


def parse_cursor(cursor: str) -> tuple[float | int, int]:
    """A list page's ``next_cursor`` as given back: ``[key, rowid]``, two finite numbers.
    Anything else is the caller's mistake (400), never a database error."""
    import math

    try:
        key, rowid = json.loads(cursor)
    except (ValueError, TypeError, RecursionError):
        key = rowid = None
    numeric = isinstance(key, int | float) and not isinstance(key, bool)
    if (
        not numeric
        or not math.isfinite(key)
        or not isinstance(rowid, int)
        or isinstance(rowid, bool)
        or not -(2**63) <= rowid < 2**63
        or (isinstance(key, int) and not -(2**63) <= key < 2**63)
    ):
        raise ValidationError("invalid cursor: pass back the next_cursor of the previous page")
    return key, rowid


@lru_cache(maxsize=64)
def row_columns(alias: str = "m", *, embedding: bool = False) -> str:
    """The select list of a memory row: ``rowid``, then :data:`MEMORY_FIELDS`
    (vectors stay out of ordinary fetches)."""
    cols = [f"{alias}.rowid"]
    for name in MEMORY_FIELDS:
        if name == "embedding" and not embedding:
            cols.append("NULL AS embedding")
        else:
            cols.append(f"{alias}.{name}")
    return ", ".join(cols)


def columns(fields: Sequence[str], alias: str) -> str:
    return ", ".join(f"{alias}.{f}" for f in fields)


def _native(r: Sequence[Any]) -> NativeRow:
    row = NativeRow(*r)
    row.owned = bool(row.owned)  # SQLite's 0/1
    return row


def conjunction(conditions: Sequence[str]) -> str:
    """``WHERE a AND b``, or nothing for no conditions."""
    return f"WHERE {' AND '.join(conditions)}" if conditions else ""


Conditions = tuple[list[str], list[Any]]


class SQLStore:
    """The shared half of :class:`memloom.store.base.Store` (see the module doc)."""

    dialect: ClassVar[Dialect]
    #: Rows written by this store belong to this owner (stores with owners only).
    owner: str

    # ------------------------------------------------------------ plumbing (backends)

    def _conn(self) -> AbstractContextManager[Any]:
        """A connection for one statement (inside a transaction: the transaction's)."""
        raise NotImplementedError

    def _require_tx(self) -> Any:
        """The write transaction's connection; raises outside one."""
        raise NotImplementedError

    def _readable_sql(self, alias: str) -> Conditions:
        """Conditions limiting reads to the rows this store may see."""
        return [], []

    def _owned_sql(self, alias: str) -> Conditions:
        """Conditions limiting changes to the rows this store may change."""
        return [], []

    def _mine_sql(self, alias: str) -> Conditions:
        """Conditions on per-owner tables (ledger, transcript records) and the write
        path's exact-duplicate check: this owner's rows, principal or not."""
        return [], []

    def _owner_insert(self) -> Conditions:
        """Extra columns and values every inserted conflict, provenance or ledger row
        carries (the owner, where there are owners)."""
        return [], []

    def _fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._conn() as conn:
            return list(conn.execute(sql, params).fetchall())

    def _fetch_one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        with self._conn() as conn:
            return conn.execute(sql, params).fetchone()

    def _fetch_in(
        self,
        select: str,
        column: str,
        values: Sequence[Any],
        where: Conditions = ([], []),
        *,
        lead: Sequence[Any] = (),
        tail: str = "",
    ) -> list[Any]:
        """``select`` over the rows whose ``column`` is one of ``values``, and meeting
        ``where``: one statement per :meth:`Dialect.chunks` of the values. ``lead`` are
        parameters ``select`` itself binds; ``tail`` follows the WHERE clause."""
        d = self.dialect
        conditions, params = where
        out: list[Any] = []
        with self._conn() as conn:
            for chunk in d.chunks(list(values)):
                in_sql, in_params = d.in_list(column, chunk)
                out.extend(
                    conn.execute(
                        f"{select} {conjunction([in_sql, *conditions])}{tail}",
                        [*lead, *in_params, *params],
                    ).fetchall()
                )
        return out

    def decode_row(self, r: Sequence[Any]) -> MemoryRow:
        """A :func:`row_columns` result as a :class:`MemoryRow`."""
        d = self.dialect
        emb = r[9]
        return MemoryRow(  # MEMORY_FIELDS are MemoryRow's fields, in order
            *r[1:9],
            None if emb is None else d.decode_vector(emb),
            r[10],
            d.decode_tags(r[11]),
            d.decode_json(r[12]),
            *r[13:24],
            bool(r[24]),
            d.decode_list(r[25]),
        )

    def _filter_sql(self, flt: SearchFilter, alias: str = "m") -> tuple[str, list[Any]]:
        """The search filter as one SQL condition (owners included) and its parameters."""
        conditions, params = filter_where(flt, self.dialect, alias)
        owners, owner_params = self._mine_sql(alias) if flt.own_only else self._readable_sql(alias)
        return " AND ".join([*conditions, *owners]), [*params, *owner_params]

    # ------------------------------------------------------------ meta

    def get_meta(self, key: str) -> str | None:
        row = self._fetch_one(f"SELECT value FROM meta WHERE key = {self.dialect.ph}", (key,))
        return None if row is None else row[0]

    def set_meta(self, key: str, value: str) -> None:
        with self._conn() as conn:
            conn.execute(
                f"INSERT INTO meta (key, value) VALUES ({self.dialect.marks(2)}) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    # ------------------------------------------------------------ memories

    def get(self, memory_id: str) -> MemoryRow | None:
        rows = self.get_many([memory_id])
        return rows[0] if rows else None

    def get_many(self, memory_ids: Sequence[str]) -> list[MemoryRow]:
        """Rows in the order of ``memory_ids`` (missing and unreadable ids are skipped)."""
        rows = self._fetch_in(
            f"SELECT {row_columns()} FROM memories m", "m.id", memory_ids, self._readable_sql("m")
        )
        by_id = {r.id: r for r in map(self.decode_row, rows)}
        return [by_id[i] for i in memory_ids if i in by_id]

    def resolve_prefix(self, prefix: str) -> list[str]:
        escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        owners, owner_params = self._readable_sql("m")
        rows = self._fetch(
            f"SELECT m.id FROM memories m "
            f"{conjunction([self.dialect.like_prefix('m.id'), *owners])} LIMIT 5",
            [escaped + "%", *owner_params],
        )
        return [r[0] for r in rows]

    def versions(self, root_id: str) -> list[MemoryRow]:
        owners, owner_params = self._readable_sql("m")
        rows = self._fetch(
            f"SELECT {row_columns()} FROM memories m "
            f"{conjunction([f'm.root_id = {self.dialect.ph}', *owners])} "
            "ORDER BY m.version DESC",
            [root_id, *owner_params],
        )
        return [self.decode_row(r) for r in rows]

    def find_by_hash(self, content_hash: str, project: str | None) -> MemoryRow | None:
        return self.find_by_hashes([content_hash], project).get(content_hash)

    def find_by_hashes(self, hashes: Sequence[str], project: str | None) -> dict[str, MemoryRow]:
        """The first-written active own row of ``project`` for each content hash found."""
        d = self.dialect
        mine, mine_params = self._mine_sql("m")
        project_sql, project_params = d.null_equal("m.project", project)
        rows = self._fetch_in(
            f"SELECT {row_columns()} FROM memories m{d.indexed('memories_hash')}",
            "m.content_hash",
            sorted(set(hashes)),
            ([*mine, "m.status = 'active'", project_sql], [*mine_params, *project_params]),
            tail=" ORDER BY m.created_at",
        )
        out: dict[str, MemoryRow] = {}
        for r in map(self.decode_row, rows):
            out.setdefault(r.content_hash, r)
        return out

    def ids_with_hash(self, content_hash: str) -> list[str]:
        """Every own row with this content hash, whatever its status and project (a
        resumed import looks for what an earlier run wrote: the judge may have expired
        it, a later version superseded it)."""
        d = self.dialect
        mine, mine_params = self._mine_sql("m")
        rows = self._fetch_in(
            f"SELECT m.id FROM memories m{d.indexed('memories_hash')}",
            "m.content_hash",
            [content_hash],
            (mine, mine_params),
        )
        return [r[0] for r in rows]

    def has_due(self, now: float) -> bool:
        """Whether some active row's TTL has passed (the decay loop's cheap check)."""
        d = self.dialect
        row = self._fetch_one(
            f"SELECT 1 FROM memories{d.indexed('memories_ttl')} WHERE status = 'active' "
            f"AND expires_at IS NOT NULL AND expires_at <= {d.ph} LIMIT 1",
            (now,),
        )
        return row is not None

    def select_ids(
        self,
        ids: Sequence[str],
        tags: Sequence[str],
        before: float | None,
        project: str | None = None,
    ) -> list[str]:
        """Forget's selection: ids matching every criterion (``project``: of it only)."""
        d = self.dialect
        conditions: list[str] = []
        params: list[Any] = []
        if ids:
            sql, values = d.in_list("m.id", list(ids))
            conditions.append(sql)
            params.extend(values)
        if tags:
            sql, values = d.any_tag("m", list(tags))
            conditions.append(sql)
            params.extend(values)
        if before is not None:
            conditions.append(f"m.created_at < {d.ph}")
            params.append(before)
        if project is not None:
            conditions.append(f"m.project = {d.ph}")
            params.append(project)
        if not conditions:
            return []
        # By tags or age alone: the caller's own, never every owner's (a server token's too).
        mine = not ids and project is None
        owned, owned_params = self._mine_sql("m") if mine else self._owned_sql("m")
        rows = self._fetch(
            f"SELECT m.id FROM memories m {conjunction([*conditions, *owned])}",
            [*params, *owned_params],
        )
        return [r[0] for r in rows]

    def list(
        self,
        flt: SearchFilter,
        *,
        source: str | None,
        min_sensitivity: int | None,
        order: str,
        limit: int,
        cursor: str | None,
    ) -> ListPage:
        """Keyset pagination: a page costs the same at row 100 and at row 100,000."""
        ph = self.dialect.ph
        where, params = self._filter_sql(flt)
        if source is not None:
            where += f" AND m.source = {ph}"
            params.append(source)
        if min_sensitivity is not None:
            where += f" AND m.sensitivity >= {ph}"
            params.append(min_sensitivity)
        key = LIST_ORDERS[order]
        page_where, page_params = where, list(params)
        if cursor:
            last_key, last_rowid = parse_cursor(cursor)
            if self.dialect.typed_cursor:
                last_key = float(last_key)
            page_where += f" AND (m.{key} < {ph} OR (m.{key} = {ph} AND m.rowid < {ph}))"
            page_params += [last_key, last_key, last_rowid]
        with self._conn() as conn:
            total = conn.execute(f"SELECT COUNT(*) FROM memories m WHERE {where}", params)
            total_count = int(total.fetchone()[0])
            rows = conn.execute(
                f"SELECT {row_columns()}, m.{key} FROM memories m WHERE {page_where} "
                f"ORDER BY m.{key} DESC, m.rowid DESC LIMIT {ph}",
                [*page_params, limit + 1],
            ).fetchall()
        more = len(rows) > limit
        rows = rows[:limit]
        next_cursor = json.dumps([rows[-1][-1], rows[-1][0]]) if more and rows else None
        return ListPage([self.decode_row(r) for r in rows], total_count, next_cursor)

    def anchored_to(self, path: str, flt: SearchFilter, limit: int) -> list[MemoryRow]:
        """The rows ``flt`` admits anchored to ``path`` (the read hook), pinned first,
        then the most used and most recently used."""
        where, params = self._filter_sql(flt)
        cond, values = self.dialect.anchored_to("m", path)
        rows = self._fetch(
            f"SELECT {row_columns()} FROM memories m WHERE {where} AND {cond} ORDER BY "
            f"m.pinned DESC, m.access_count DESC, m.last_referenced DESC LIMIT {self.dialect.ph}",
            [*params, *values, limit],
        )
        return [self.decode_row(r) for r in rows]

    def stats(self) -> dict[str, Any]:
        owners, params = self._readable_sql("m")
        with self._conn() as conn:

            def grouped(column: str, *extra: str) -> dict[str, int]:
                rows = conn.execute(
                    f"SELECT m.{column}, COUNT(*) FROM memories m "
                    f"{conjunction([*owners, *extra])} GROUP BY m.{column}",
                    params,
                ).fetchall()
                return {str(k): int(v) for k, v in rows if k is not None}

            by_status = grouped("status")
            span = conn.execute(
                f"SELECT MIN(m.created_at), MAX(m.created_at) FROM memories m "
                f"{conjunction(owners)}",
                params,
            ).fetchone()
            c_owned, c_params = self._owned_sql("c")
            pending_where = conjunction(["c.status = 'pending'", *c_owned])
            pending = conn.execute(
                f"SELECT COUNT(*) FROM conflicts c {pending_where}",
                c_params,
            ).fetchone()[0]
            return {
                "total_memories": sum(by_status.values()),
                "by_status": by_status,
                "by_decay_level": grouped("decay_level"),
                "by_source": grouped("source", "m.source IS NOT NULL", "m.source <> ''"),
                "by_type": grouped("type", "m.status = 'active'"),
                "by_project": grouped("project", "m.status = 'active'"),
                "conflicts_pending": int(pending),
                "oldest": span[0],
                "newest": span[1],
            }

    def decay_candidates(self, older_than: float, level: int, limit: int) -> list[MemoryRow]:
        d = self.dialect
        owned, params = self._owned_sql("m")
        rows = self._fetch(
            f"SELECT {row_columns()} FROM memories m "
            + conjunction(
                [
                    "m.status = 'active'",
                    d.is_false("m.pinned"),
                    f"m.decay_level = {d.ph}",
                    f"m.last_referenced < {d.ph}",
                    *owned,
                ]
            )
            + f" ORDER BY m.last_referenced LIMIT {d.ph}",
            [level, older_than, *params, limit],
        )
        return [self.decode_row(r) for r in rows]

    def saved_per_day(self, since: float) -> list[tuple[str, str, int]]:
        """(local day, type, count) of memories created since ``since``."""
        d = self.dialect
        day, day_params = d.local_day("m.created_at", time.localtime().tm_gmtoff)
        owners, params = self._readable_sql("m")
        rows = self._fetch(
            f"SELECT {day} AS day, m.type, COUNT(*) FROM memories m "
            f"{conjunction([f'm.created_at >= {d.ph}', *owners])} "
            "GROUP BY day, m.type ORDER BY day",
            [*day_params, since, *params],
        )
        return [(r[0], r[1], int(r[2])) for r in rows]

    def session_neighbours(self, memory_ids: Sequence[str]) -> dict[str, list[str]]:
        """For each memory with a session, the active memories stored just before and
        after it in that session: its place in the conversation."""
        d = self.dialect
        owners, params = self._readable_sql("x")
        extra = "".join(f" AND {c}" for c in owners)
        source = f"memories x{d.indexed('memories_session')}"
        rows = self._fetch_in(
            f"""
            SELECT m.id,
                (SELECT x.id FROM {source} WHERE x.session_id = m.session_id
                   AND x.rowid < m.rowid AND x.status = 'active'{extra}
                 ORDER BY x.rowid DESC LIMIT 1),
                (SELECT x.id FROM {source} WHERE x.session_id = m.session_id
                   AND x.rowid > m.rowid AND x.status = 'active'{extra}
                 ORDER BY x.rowid LIMIT 1)
            FROM memories m""",
            "m.id",
            memory_ids,
            (["m.session_id IS NOT NULL"], []),
            lead=[*params, *params],
        )
        return {mid: [x for x in (prev, nxt) if x is not None] for mid, prev, nxt in rows}

    # ------------------------------------------------------------ conflicts

    def add_conflict(self, row: ConflictRow) -> None:
        conn = self._require_tx()
        owner_cols, owner_vals = self._owner_insert()
        conn.execute(
            self.dialect.insert("conflicts", [*owner_cols, *CONFLICT_FIELDS]),
            (
                *owner_vals,
                row.id,
                row.new_id,
                row.existing_id,
                row.distance,
                row.reason,
                row.status,
                row.resolution,
                self.dialect.encode_json(row.detail),
                row.created_at,
                row.resolved_at,
            ),
        )

    def update_conflict(self, conflict_id: str, **fields: Any) -> None:
        conn = self._require_tx()
        if set(fields) - CONFLICT_UPDATABLE:
            raise StoreError(
                f"cannot update conflict fields {sorted(set(fields) - CONFLICT_UPDATABLE)}"
            )
        if "detail" in fields:
            fields["detail"] = self.dialect.encode_json(fields["detail"])
        ph = self.dialect.ph
        owned, params = self._owned_sql("conflicts")
        assignments = ", ".join(f"{k} = {ph}" for k in fields)
        conn.execute(
            f"UPDATE conflicts SET {assignments} {conjunction([f'id = {ph}', *owned])}",
            [*fields.values(), conflict_id, *params],
        )

    def _conflict(self, r: Sequence[Any]) -> ConflictRow:
        row = ConflictRow(*r)  # CONFLICT_FIELDS are ConflictRow's fields, in order
        row.detail = self.dialect.decode_json(row.detail)
        return row

    def get_conflict(self, conflict_id: str) -> ConflictRow | None:
        owned, params = self._owned_sql("c")
        r = self._fetch_one(
            f"SELECT {columns(CONFLICT_FIELDS, 'c')} FROM conflicts c "
            f"{conjunction([f'c.id = {self.dialect.ph}', *owned])}",
            [conflict_id, *params],
        )
        return None if r is None else self._conflict(r)

    def kept_both(self, first: MemoryRow, second: MemoryRow) -> bool:
        d, ph = self.dialect, self.dialect.ph

        def of(column: str, row: MemoryRow) -> tuple[str, list[Any]]:
            """``column``, a root id, is of ``row``'s belief (see the protocol)."""
            project, params = d.null_equal("x.project", row.project)
            said = f"SELECT x.root_id FROM memories x{d.indexed('memories_hash')}"
            return (
                f"({column} = {ph} OR {column} IN "
                f"({said} WHERE x.content_hash = {ph} AND {project}))",
                [row.root_id, row.content_hash, *params],
            )

        pairs = [
            (of("n.root_id", a), of("e.root_id", b)) for a, b in ((first, second), (second, first))
        ]
        either = " OR ".join(f"({n} AND {e})" for (n, _), (e, _) in pairs)
        params = [p for (_, new), (_, old) in pairs for p in (*new, *old)]
        owned, owned_params = self._owned_sql("c")
        where = ["c.status = 'resolved'", "c.resolution = 'keep_both'", f"({either})", *owned]
        found = self._fetch_one(
            "SELECT 1 FROM conflicts c JOIN memories n ON n.id = c.new_id "
            f"JOIN memories e ON e.id = c.existing_id {conjunction(where)} LIMIT 1",
            [*params, *owned_params],
        )
        return found is not None

    def list_conflicts(
        self, status: str | None, limit: int, offset: int
    ) -> tuple[list[ConflictRow], int]:
        ph = self.dialect.ph
        conditions, params = self._owned_sql("c")
        if status:
            conditions.append(f"c.status = {ph}")
            params.append(status)
        where = conjunction(conditions)
        with self._conn() as conn:
            total = conn.execute(f"SELECT COUNT(*) FROM conflicts c {where}", params)
            total_count = int(total.fetchone()[0])
            rows = conn.execute(
                f"SELECT {columns(CONFLICT_FIELDS, 'c')} FROM conflicts c {where} "
                f"ORDER BY c.created_at DESC, c.id LIMIT {ph} OFFSET {ph}",
                [*params, limit, offset],
            ).fetchall()
        return [self._conflict(r) for r in rows], total_count

    # ------------------------------------------------------------ provenance

    def add_provenance(self, row: ProvenanceRow) -> None:
        conn = self._require_tx()
        owner_cols, owner_vals = self._owner_insert()
        conn.execute(
            self.dialect.insert_ignore("provenance", [*owner_cols, *PROVENANCE_FIELDS]),
            (
                *owner_vals,
                row.memory_id,
                row.session_id,
                row.path,
                row.project,
                row.start_line,
                row.end_line,
                row.excerpt,
                row.created_at or time.time(),
                row.agent,
            ),
        )

    def provenance(self, memory_ids: Sequence[str]) -> list[ProvenanceRow]:
        rows = self._fetch_in(
            f"SELECT {columns(PROVENANCE_FIELDS, 'p')} FROM provenance p",
            "p.memory_id",
            memory_ids,
            self._readable_sql("p"),
            tail=" ORDER BY p.id",
        )
        return [ProvenanceRow(*r) for r in rows]

    # ------------------------------------------------------------ session import

    def ledger_get_many(self, paths: Sequence[str]) -> dict[str, LedgerRow]:
        rows = self._fetch_in(
            f"SELECT {columns(LEDGER_FIELDS, 'l')} FROM ledger l",
            "l.path",
            paths,
            self._mine_sql("l"),
        )
        return {r[0]: LedgerRow(*r) for r in rows}

    def ledger_put(self, row: LedgerRow) -> None:
        conn = self._require_tx()
        owner_cols, owner_vals = self._owner_insert()
        conn.execute(
            self.dialect.upsert("ledger", [*owner_cols, *LEDGER_FIELDS], [*owner_cols, "path"]),
            (
                *owner_vals,
                row.path,
                row.session_id,
                row.project,
                row.size,
                row.mtime,
                row.offset,
                row.lines,
                row.hash,
                row.status,
                row.memories,
                row.last_error,
                row.updated_at or time.time(),
                row.agent,
                row.named_root,
            ),
        )

    def ledger_stats(self) -> dict[str, Any]:
        mine, params = self._mine_sql("l")
        r = self._fetch_one(
            "SELECT COUNT(*), COUNT(*) FILTER (WHERE l.status = 'complete'), "
            "COUNT(*) FILTER (WHERE l.status = 'partial'), SUM(l.memories), "
            f"MAX(l.updated_at) FROM ledger l {conjunction(mine)}",
            params,
        )
        agents: dict[str, dict[str, Any]] = {}
        for name, sessions, memories, last in self._fetch(
            "SELECT COALESCE(l.agent, ''), COUNT(*), SUM(l.memories), MAX(l.updated_at) "
            f"FROM ledger l {conjunction(mine)} GROUP BY COALESCE(l.agent, '')",
            params,
        ):
            agents[name or "unknown"] = {
                "sessions": int(sessions or 0),
                "memories": int(memories or 0),
                "last_import": last,
                "last_error": None,
            }
        failed = self._fetch(
            "SELECT COALESCE(l.agent, ''), l.path, l.last_error, l.updated_at FROM ledger l "
            f"{conjunction([*mine, 'l.last_error IS NOT NULL'])} ORDER BY l.updated_at DESC",
            params,
        )
        for name, path, error, at in failed:
            entry = agents[name or "unknown"]
            if entry["last_error"] is None:  # the newest failure of each agent
                entry["last_error"] = {"path": path, "error": error, "at": at}
        return {
            "sessions": int(r[0] or 0),
            "complete": int(r[1] or 0),
            "partial": int(r[2] or 0),
            "memories": int(r[3] or 0),
            "last_import": r[4],
            "agents": agents,
        }

    def ledger_recent(self, limit: int = 10) -> list[LedgerRow]:
        mine, params = self._mine_sql("l")
        rows = self._fetch(
            f"SELECT {columns(LEDGER_FIELDS, 'l')} FROM ledger l {conjunction(mine)} "
            f"ORDER BY l.updated_at DESC LIMIT {self.dialect.ph}",
            [*params, limit],
        )
        return [LedgerRow(*r) for r in rows]

    def records_seen(self, uuids: Sequence[str], exclude_path: str) -> set[str]:
        mine, params = self._mine_sql("t")
        rows = self._fetch_in(
            "SELECT t.uuid FROM transcript_records t",
            "t.uuid",
            uuids,
            ([*mine, f"t.path <> {self.dialect.ph}"], [*params, exclude_path]),
        )
        return {r[0] for r in rows}

    # ------------------------------------------------------------ the agents' own memories

    def native_rows(self, folders: Sequence[str], path: str | None = None) -> list[NativeRow]:
        mine, params = self._mine_sql("n")
        if path is not None:
            mine, params = [*mine, f"n.path = {self.dialect.ph}"], [*params, path]
        rows = self._fetch_in(
            f"SELECT {columns(NATIVE_FIELDS, 'n')} FROM native_notes n",
            "n.folder",
            folders,
            (mine, params),
            tail=" ORDER BY n.path, n.start_line",
        )
        return [_native(r) for r in rows]

    def native_for_memories(self, memory_ids: Sequence[str]) -> list[NativeRow]:
        rows = self._fetch_in(
            f"SELECT {columns(NATIVE_FIELDS, 'n')} FROM native_notes n",
            "n.memory_id",
            memory_ids,
            self._mine_sql("n"),
        )
        return [_native(r) for r in rows]

    def native_put(self, rows: Sequence[NativeRow]) -> None:
        conn = self._require_tx()
        owner_cols, owner_vals = self._owner_insert()
        sql = self.dialect.upsert(
            "native_notes", [*owner_cols, *NATIVE_FIELDS], [*owner_cols, "path", "note_key"]
        )
        now = time.time()
        for r in rows:
            conn.execute(
                sql,
                (
                    *owner_vals,
                    r.path,
                    r.key,
                    r.agent,
                    r.folder,
                    r.project,
                    r.memory_id,
                    r.text_hash,
                    r.start_line,
                    r.end_line,
                    r.size,
                    r.mtime,
                    bool(r.owned),
                    r.updated_at or now,
                ),
            )

    def native_delete(self, path: str, keys: Sequence[str] | None = None) -> None:
        conn = self._require_tx()
        ph = self.dialect.ph
        mine, params = self._mine_sql("native_notes")
        conditions, values = [f"native_notes.path = {ph}", *mine], [path, *params]
        if keys is not None:
            if not keys:
                return
            in_sql, in_params = self.dialect.in_list("native_notes.note_key", list(keys))
            conditions.append(in_sql)
            values.extend(in_params)
        conn.execute(f"DELETE FROM native_notes {conjunction(conditions)}", values)

    def native_summary(self) -> list[dict[str, Any]]:
        """Per agent and folder: files and notes read, memories they hold, last read."""
        mine, params = self._mine_sql("n")
        rows = self._fetch(
            "SELECT n.agent, n.folder, "
            "SUM(CASE WHEN n.note_key = '' THEN 1 ELSE 0 END), "
            "SUM(CASE WHEN n.note_key <> '' THEN 1 ELSE 0 END), "
            "COUNT(DISTINCT n.memory_id), MAX(n.updated_at) "
            f"FROM native_notes n {conjunction(mine)} GROUP BY n.agent, n.folder "
            "ORDER BY n.agent, n.folder",
            params,
        )
        return [
            {
                "agent": r[0],
                "folder": r[1],
                "files": int(r[2] or 0),
                "notes": int(r[3] or 0),
                "memories": int(r[4] or 0),
                "read_at": r[5],
            }
            for r in rows
        ]

    # ------------------------------------------------------------ export (backups, migrate)

    def _row_batches(self, batch: int, *, embedding: bool) -> Iterator[list[MemoryRow]]:
        """Every readable row in insertion order, ``batch`` at a time (keyset, no cursor)."""
        ph = self.dialect.ph
        owners, params = self._readable_sql("m")
        last = 0
        while True:
            rows = self._fetch(
                f"SELECT {row_columns(embedding=embedding)} FROM memories m "
                f"{conjunction([f'm.rowid > {ph}', *owners])} ORDER BY m.rowid LIMIT {ph}",
                [last, *params, batch],
            )
            if not rows:
                return
            last = rows[-1][0]
            yield [self.decode_row(r) for r in rows]

    def iter_rows(self, batch: int = 1000) -> Iterator[list[MemoryRow]]:
        """Every readable row with its embedding, in insertion order, a batch at a time."""
        return self._row_batches(batch, embedding=True)

    def all_conflicts(self) -> list[ConflictRow]:
        owned, params = self._owned_sql("c")
        rows = self._fetch(
            f"SELECT {columns(CONFLICT_FIELDS, 'c')} FROM conflicts c {conjunction(owned)} "
            "ORDER BY c.created_at, c.id",
            params,
        )
        return [self._conflict(r) for r in rows]

    def all_provenance(self) -> list[ProvenanceRow]:
        owners, params = self._readable_sql("p")
        rows = self._fetch(
            f"SELECT {columns(PROVENANCE_FIELDS, 'p')} FROM provenance p "
            f"{conjunction(owners)} ORDER BY p.id",
            params,
        )
        return [ProvenanceRow(*r) for r in rows]

    def all_ledger(self) -> list[LedgerRow]:
        mine, params = self._mine_sql("l")
        rows = self._fetch(
            f"SELECT {columns(LEDGER_FIELDS, 'l')} FROM ledger l {conjunction(mine)} "
            "ORDER BY l.path",
            params,
        )
        return [LedgerRow(*r) for r in rows]

    def all_native(self) -> list[NativeRow]:
        mine, params = self._mine_sql("n")
        rows = self._fetch(
            f"SELECT {columns(NATIVE_FIELDS, 'n')} FROM native_notes n {conjunction(mine)} "
            "ORDER BY n.path, n.note_key",
            params,
        )
        return [_native(r) for r in rows]

    def all_records(self) -> list[tuple[str, str]]:
        mine, params = self._mine_sql("t")
        rows = self._fetch(
            f"SELECT t.uuid, t.path FROM transcript_records t {conjunction(mine)} ORDER BY t.uuid",
            params,
        )
        return [(r[0], r[1]) for r in rows]
