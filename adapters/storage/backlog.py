"""What is waiting in the database, for operators' gauges: open handoffs, unsent answers, events being retried."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel
from sqlalchemy import Connection, func, select

from adapters.storage.schema import handoff_queue, inbox, outbox
from agent.domain.types import utcnow
from agent.interfaces import Database


class Backlog(BaseModel):
    handoffs_open: int  # requested or claimed, not yet released
    outbox_unsent: int
    outbox_oldest_unsent_seconds: float  # 0 when nothing is waiting
    inbox_unfinished: int
    inbox_retrying: int  # unfinished events whose delivery failed at least once


def _oldest(when: datetime | None, now: datetime) -> float:
    if when is None:
        return 0.0
    if when.tzinfo is None:
        when = when.replace(tzinfo=now.tzinfo)
    return max(0.0, (now - when).total_seconds())


async def read_backlog(store: Database) -> Backlog:
    """Counted in one transaction; a few indexed counts, cheap enough for every scrape."""

    def unit(conn: Connection) -> Backlog:
        handoffs = conn.execute(
            select(func.count()).where(handoff_queue.c.status.in_(("requested", "claimed")))
        ).scalar_one()
        unsent, oldest = conn.execute(
            select(func.count(), func.min(outbox.c.created_at)).where(outbox.c.status.notin_(("sent", "skipped")))
        ).one()
        unfinished, retrying = conn.execute(
            select(func.count(), func.count().filter(inbox.c.attempts > 0)).where(inbox.c.status != "done")
        ).one()
        return Backlog(
            handoffs_open=handoffs,
            outbox_unsent=unsent,
            outbox_oldest_unsent_seconds=_oldest(oldest, utcnow()),
            inbox_unfinished=unfinished,
            inbox_retrying=retrying,
        )

    await store.ensure_schema()
    return await store.run(unit, what="count the backlog")  # type: ignore[no-any-return]
