"""Rate-limit pauses in the bot's database, so that every worker honours a 429 any of them got."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Connection, and_, bindparam, delete, or_, select, update

from adapters.storage.schema import rate_pauses
from adapters.storage.writes import insert_ignore
from agent.domain.types import utcnow
from agent.interfaces import Database

READ = select(rate_pauses.c.until, rate_pauses.c.probe_until).where(rate_pauses.c.key == bindparam("b_key"))
EXTEND = (
    update(rate_pauses)
    .where(rate_pauses.c.key == bindparam("b_key"), rate_pauses.c.until < bindparam("b_until"))
    .values(until=bindparam("b_until"), probe_until=None)
)
CLAIM = (
    update(rate_pauses)
    .where(
        rate_pauses.c.key == bindparam("b_key"),
        rate_pauses.c.until <= bindparam("b_now"),
        or_(rate_pauses.c.probe_until.is_(None), rate_pauses.c.probe_until < bindparam("b_now")),
    )
    .values(probe_until=bindparam("b_hold"))
)
LIFT = delete(rate_pauses).where(
    and_(rate_pauses.c.key == bindparam("b_key"), rate_pauses.c.until <= bindparam("b_now"))
)
UNCLAIM = update(rate_pauses).where(rate_pauses.c.key == bindparam("b_key")).values(probe_until=None)


@dataclass(frozen=True)
class Pause:
    """A method's pause: nobody calls before `until`; after it, one probe at a time (`probe_until`)."""

    until: datetime
    probe_until: datetime | None = None


class SqlPauseBoard:
    """
    Args:
        store: the bot's database (the `rate_pauses` table, migration 0012).
    """

    def __init__(self, store: Database):
        self.store = store

    async def read(self, key: str) -> Pause | None:
        await self.store.ensure_schema()

        def unit(conn: Connection) -> Pause | None:
            row = conn.execute(READ, {"b_key": key}).first()
            return Pause(row.until, row.probe_until) if row else None

        return await self.store.run(unit, what="read a rate-limit pause")  # type: ignore[no-any-return]

    async def pause(self, key: str, until: datetime) -> None:
        """Nobody calls before `until` (a later pause already recorded stays)."""

        def unit(conn: Connection) -> None:
            if conn.execute(EXTEND, {"b_key": key, "b_until": until}).rowcount == 0:
                conn.execute(insert_ignore(conn, rate_pauses, "key").values(key=key, until=until, probe_until=None))

        await self.store.run(unit, what="record a rate-limit pause")

    async def claim(self, key: str, hold_seconds: float) -> bool:
        """Become the one caller that tries the method after its pause; False if another is."""

        def unit(conn: Connection) -> bool:
            now = utcnow()
            params = {"b_key": key, "b_now": now, "b_hold": now + timedelta(seconds=hold_seconds)}
            return conn.execute(CLAIM, params).rowcount == 1

        return await self.store.run(unit, what="claim a rate-limit probe")  # type: ignore[no-any-return]

    async def lift(self, key: str) -> None:
        """The probe got through: the method is open again (unless it was paused anew meanwhile)."""

        def unit(conn: Connection) -> None:
            conn.execute(LIFT, {"b_key": key, "b_now": utcnow()})

        await self.store.run(unit, what="lift a rate-limit pause")

    async def unclaim(self, key: str) -> None:
        """The probe ended without an answer either way (a network error): another may try."""

        def unit(conn: Connection) -> None:
            conn.execute(UNCLAIM, {"b_key": key})

        await self.store.run(unit, what="release a rate-limit probe")
