"""PreferenceMemory in SQL: one row per customer id, the preferences as JSON.

It uses the same unit-of-work runners as the session store (a dedicated thread for SQLite, the
async engine for PostgreSQL), so a read or a write never blocks the event loop. A write is a
read-merge-upsert in one transaction; an empty update touches nothing.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, bindparam, select, update
from sqlalchemy.exc import DBAPIError

from adapters.storage.migrate import status_unit, upgrade_unit
from adapters.storage.runners import Runner, make_runner
from adapters.storage.schema import customer_preferences as preferences
from agent.conversation.preferences import is_empty, merge
from agent.domain.records import Preferences
from agent.domain.types import utcnow
from agent.errors import SchemaBehind, StorageError

SELECT_PREFERENCES = select(preferences.c.data).where(preferences.c.customer_id == bindparam("b_customer"))


def read_unit(conn: Connection, customer_id: str) -> Preferences:
    raw = conn.execute(SELECT_PREFERENCES, {"b_customer": customer_id}).scalar()
    return Preferences.model_validate_json(raw) if raw else Preferences()


def write_unit(conn: Connection, customer_id: str, change: Preferences) -> Preferences:
    stored = read_unit(conn, customer_id)
    merged = merge(stored, change)
    if merged == stored:
        return stored
    values = {"data": merged.model_dump_json(), "updated_at": utcnow()}
    done = conn.execute(update(preferences).where(preferences.c.customer_id == customer_id).values(**values))
    if done.rowcount == 0:
        conn.execute(preferences.insert().values(customer_id=customer_id, **values))
    return merged


class SqlPreferenceMemory:
    """
    Args:
        url: an SQLAlchemy URL, when the memory has a database of its own.
        runner: the session store's unit-of-work runner, to share its database (the usual choice).
        busy_timeout_ms: how long SQLite waits for another writer.
    """

    def __init__(self, url: str | None = None, *, runner: Runner | None = None, busy_timeout_ms: int = 5000):
        if runner is None and url is None:
            raise ValueError("SqlPreferenceMemory needs a database URL or a runner")
        # Sharing the session store's runner keeps one SQLite connection and thread per database.
        self._owns_runner = runner is None
        self._url = url or ""
        self.runner: Runner = runner or make_runner(url or "", busy_timeout_ms=busy_timeout_ms)
        # A shared runner belongs to the session store, which migrates its database.
        self._ready = runner is not None

    async def _prepare(self) -> None:
        """A database of its own is migrated like the session store's: SQLite at once, others by command."""
        if self._url.startswith("sqlite"):
            await self.runner.run(upgrade_unit)
            return
        status = await self.runner.run(status_unit)
        if status.behind:
            raise SchemaBehind(status.current, status.head)

    async def _run(self, fn: Any, *args: Any) -> Any:
        try:
            if not self._ready:
                await self._prepare()
                self._ready = True
            return await self.runner.run(fn, *args)
        except DBAPIError as e:
            raise StorageError(f"cannot access customer preferences: {e.orig}") from e

    async def read(self, customer_id: str) -> Preferences:
        return await self._run(read_unit, customer_id)  # type: ignore[no-any-return]

    async def write(self, customer_id: str, update: Preferences) -> None:
        if is_empty(update):
            return
        await self._run(write_unit, customer_id, update)

    async def aclose(self) -> None:
        if self._owns_runner:
            await self.runner.aclose()
