"""The LLM spend ledger in the session database: one row per UTC day and budget key.

Every worker adds to the same rows with an atomic `dollars = dollars + x` upsert, so the daily
budgets hold across workers and restarts, and CLI turns count like any other.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, select

from adapters.storage.schema import llm_spend
from adapters.storage.sql import SqlStore
from agent.domain.types import utcnow


class SqlSpend:
    """SpendLedger over the session store's database.

    Args:
        store: the SqlStore whose database keeps the `llm_spend` table.
    """

    def __init__(self, store: SqlStore):
        self.store = store

    async def _run(self, fn: Any, *args: Any, what: str) -> Any:
        await self.store.ensure_schema()
        return await self.store.run(fn, *args, what=what)

    async def spent(self, day: str, keys: list[str]) -> dict[str, float]:
        def unit(conn: Connection) -> dict[str, float]:
            rows = conn.execute(
                select(llm_spend.c.key, llm_spend.c.dollars).where(llm_spend.c.day == day, llm_spend.c.key.in_(keys))
            ).all()
            return {r.key: float(r.dollars) for r in rows}

        return await self._run(unit, what="read the LLM spend")  # type: ignore[no-any-return]

    async def add(self, day: str, keys: list[str], dollars: float) -> None:
        def unit(conn: Connection) -> None:
            now = utcnow()
            for key in keys:
                row = {"day": day, "key": key, "dollars": dollars, "updated_at": now}
                stmt: Any
                if conn.dialect.name == "postgresql":
                    from sqlalchemy.dialects.postgresql import insert as pg_insert

                    pg = pg_insert(llm_spend).values(**row)
                    stmt = pg.on_conflict_do_update(
                        index_elements=["day", "key"],
                        set_={"dollars": llm_spend.c.dollars + pg.excluded.dollars, "updated_at": now},
                    )
                else:
                    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

                    lite = sqlite_insert(llm_spend).values(**row)
                    stmt = lite.on_conflict_do_update(
                        index_elements=["day", "key"],
                        set_={"dollars": llm_spend.c.dollars + lite.excluded.dollars, "updated_at": now},
                    )
                conn.execute(stmt)

        await self._run(unit, what="record the LLM spend")
