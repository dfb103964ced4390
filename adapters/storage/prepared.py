"""Every turn's statements, run on SQLite's own cursor.

A turn sends the database a handful of small statements. Through SQLAlchemy Core each one also
builds an execution context and result metadata, work that outweighs SQLite's own for statements
this small. `Prepared` compiles a Core statement once per dialect and keeps the SQL text, the
parameter order and the bind and result processors of its column types (all public SQLAlchemy
API), so values are stored and read exactly as through Core; on SQLite it runs the SQL on the
driver connection inside the unit's transaction. Any other database runs the Core statement
unchanged.
"""

from __future__ import annotations

import sqlite3
from collections import namedtuple
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, Delete, Dialect, Insert, Select, Update
from sqlalchemy.exc import DBAPIError

Params = Mapping[str, Any]
Statement = Select[Any] | Insert | Update | Delete


class _Compiled:
    def __init__(self, stmt: Statement, dialect: Dialect, keys: Sequence[str] | None):
        compiled: Any = stmt.compile(dialect=dialect, column_keys=list(keys) if keys is not None else None)
        self.sql = str(compiled)
        self.order: list[str] = list(compiled.positiontup or [])
        self.defaults = {name: compiled.binds[name].effective_value for name in self.order}  # LIMIT's offset
        binds = {
            name: compiled.binds[name].type.dialect_impl(dialect).bind_processor(dialect) for name in set(self.order)
        }
        self.binds: dict[str, Callable[[Any], Any]] = {k: p for k, p in binds.items() if p is not None}
        # A SELECT's columns, or an INSERT/UPDATE's RETURNING columns: none for plain DML.
        columns = list(stmt.exported_columns.items())
        self.row: Any = namedtuple("Row", [key for key, _ in columns]) if columns else None  # type: ignore[misc]
        self.results = [col.type.dialect_impl(dialect).result_processor(dialect, None) for _, col in columns]

    def args(self, params: Params) -> tuple[Any, ...]:
        out = []
        binds, defaults = self.binds, self.defaults
        for name in self.order:
            value = params[name] if name in params else defaults[name]
            process = binds.get(name)
            out.append(process(value) if process is not None else value)
        return tuple(out)

    def rows(self, raw: Sequence[tuple[Any, ...]]) -> list[Any]:
        assert self.row is not None
        make, results = self.row._make, self.results
        if not any(results):
            return [make(r) for r in raw]
        return [make(v if p is None else p(v) for p, v in zip(results, r, strict=True)) for r in raw]


class Prepared:
    """A Core statement, run on SQLite's cursor and through Core elsewhere.

    Args:
        stmt: the statement (its bind parameter names are the keys of `params`).
        keys: for an INSERT, the columns it sets (compiled once, so every call must give them all).
    """

    def __init__(self, stmt: Statement, keys: Sequence[str] | None = None):
        self.stmt, self.keys = stmt, keys
        self._compiled: _Compiled | None = None

    def _sqlite(self, conn: Connection) -> _Compiled | None:
        if conn.dialect.name != "sqlite" or conn.dialect.driver != "pysqlite":
            return None  # the cursor path is for the standard library's driver only
        if self._compiled is None:
            self._compiled = _Compiled(self.stmt, conn.dialect, self.keys)
        return self._compiled

    def all(self, conn: Connection, params: Params) -> list[Any]:
        compiled = self._sqlite(conn)
        if compiled is None:
            return list(conn.execute(self.stmt, params).all())
        cursor = _execute(conn, compiled, params)
        return compiled.rows(cursor.fetchall())

    def first(self, conn: Connection, params: Params) -> Any | None:
        rows = self.all(conn, params)
        return rows[0] if rows else None

    def run(self, conn: Connection, params: Params | Sequence[Params]) -> int:
        """Execute for one set of parameters or many; the number of rows changed."""
        compiled = self._sqlite(conn)
        if compiled is None:
            return int(conn.execute(self.stmt, params).rowcount)
        return int(_execute(conn, compiled, params).rowcount)


def _execute(conn: Connection, compiled: _Compiled, params: Params | Sequence[Params]) -> sqlite3.Cursor:
    raw: sqlite3.Connection = conn.connection.driver_connection  # type: ignore[assignment]
    try:
        if isinstance(params, Mapping):
            return raw.execute(compiled.sql, compiled.args(params))
        return raw.executemany(compiled.sql, [compiled.args(p) for p in params])
    except sqlite3.Error as e:
        # The errors Core would raise: IntegrityError for a taken key, OperationalError for a lock.
        raise DBAPIError.instance(compiled.sql, params, e, sqlite3.Error) from e
