"""Counts for admin status commands, read from the session database."""

from __future__ import annotations

from datetime import datetime, time

from pydantic import BaseModel
from sqlalchemy import Connection, func, select

from adapters.storage.schema import handoffs, sessions
from agent.domain.types import utcnow
from agent.storage import Database


class DailyStats(BaseModel):
    since: datetime  # midnight UTC today
    sessions_active: int  # sessions with a turn today
    sessions_started: int
    handoffs: int  # handoffs requested today


async def today(store: Database) -> DailyStats:
    await store.ensure_schema()
    since = datetime.combine(utcnow().date(), time(0), tzinfo=utcnow().tzinfo)

    def unit(conn: Connection) -> DailyStats:
        def count(table, column) -> int:  # type: ignore[no-untyped-def]
            return int(conn.execute(select(func.count()).select_from(table).where(column >= since)).scalar_one())

        return DailyStats(
            since=since,
            sessions_active=count(sessions, sessions.c.updated_at),
            sessions_started=count(sessions, sessions.c.created_at),
            handoffs=count(handoffs, handoffs.c.created_at),
        )

    return await store.run(unit, what="count today's sessions")  # type: ignore[no-any-return]
