"""Rate-limit pauses in the bot's database, so that every worker honours a 429 any of them got."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import Connection, bindparam, case, or_, select, update

from adapters.storage.schema import rate_pauses
from adapters.storage.writes import insert_ignore
from agent.domain.types import utcnow
from agent.storage import Database

READ = select(rate_pauses.c.until, rate_pauses.c.probe_until).where(rate_pauses.c.key == bindparam("b_key"))
# A new pause keeps a later one already recorded, and ends the call in flight's hold: its answer is in.
PAUSE = (
    update(rate_pauses)
    .where(rate_pauses.c.key == bindparam("b_key"))
    .values(
        until=case((rate_pauses.c.until < bindparam("b_until"), bindparam("b_until")), else_=rate_pauses.c.until),
        probe_until=None,
    )
)
CLAIM = (
    update(rate_pauses)
    .where(
        rate_pauses.c.key == bindparam("b_key"),
        rate_pauses.c.until <= bindparam("b_now"),
        or_(rate_pauses.c.probe_until.is_(None), rate_pauses.c.probe_until < bindparam("b_now")),
    )
    .values(probe_until=bindparam("b_hold"))
    .returning(rate_pauses.c.until)
)
UNCLAIM = (
    update(rate_pauses)
    .where(rate_pauses.c.key == bindparam("b_key"), rate_pauses.c.probe_until == bindparam("b_hold"))
    .values(probe_until=None)
)
# What a method held but never paused has as its pause's end: long over, so it is not hot.
NEVER_PAUSED = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Pause:
    """A method's pause: nobody calls before `until` (`NEVER_PAUSED` for a method only ever held);
    after it, one call at a time across every worker, held until `probe_until` at the latest."""

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
        """Nobody calls before `until` (a later pause already recorded stays); the hold on the call
        that was refused ends."""

        def unit(conn: Connection) -> None:
            if conn.execute(PAUSE, {"b_key": key, "b_until": until}).rowcount == 0:
                conn.execute(insert_ignore(conn, rate_pauses, "key").values(key=key, until=until, probe_until=None))

        await self.store.run(unit, what="record a rate-limit pause")

    async def claim(self, key: str, hold_seconds: float) -> Pause | None:
        """Become the one caller with a call in flight, for `hold_seconds` at most; returns the
        method's pause as now held (its `probe_until` is what `unclaim` names the hold by), or None
        while the method is paused or another caller holds it. A method never paused is entered on
        the board, held."""

        def unit(conn: Connection) -> Pause | None:
            now = utcnow()
            hold = now + timedelta(seconds=hold_seconds)
            row = conn.execute(CLAIM, {"b_key": key, "b_now": now, "b_hold": hold}).first()
            if row is not None:
                return Pause(row.until, hold)
            new = insert_ignore(conn, rate_pauses, "key").values(key=key, until=NEVER_PAUSED, probe_until=hold)
            return Pause(NEVER_PAUSED, hold) if conn.execute(new).rowcount == 1 else None

        return await self.store.run(unit, what="claim a rate-limited method")  # type: ignore[no-any-return]

    async def unclaim(self, key: str, hold: datetime) -> None:
        """The call is over: the next caller may go (a hold that ran out and was taken by another
        caller stays theirs)."""

        def unit(conn: Connection) -> None:
            conn.execute(UNCLAIM, {"b_key": key, "b_hold": hold})

        await self.store.run(unit, what="release a rate-limited method")
