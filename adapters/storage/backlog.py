"""What is waiting in the database, for operators' gauges: open handoffs, unsent answers, events being retried."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel
from sqlalchemy import Connection, func, select

from adapters.storage.schema import handoff_queue, inbox, outbox
from agent.domain.types import utcnow
from agent.storage import Database


class WaitingEvents(BaseModel):
    """Channel events of one workspace not yet answered: a platform outage or a rate limit shows here."""

    workspace: str  # the Slack team, Discord guild ("dm" for direct messages); "" for other channels
    events: int
    oldest_seconds: float  # how long the oldest of them has waited since it was stored


class Backlog(BaseModel):
    handoffs_open: int  # requested or claimed, not yet released
    outbox_unsent: int
    outbox_oldest_unsent_seconds: float  # 0 when nothing is waiting
    inbox_unfinished: int
    inbox_retrying: int  # unfinished events whose delivery failed at least once
    waiting: list[WaitingEvents] = []  # per workspace, the most waiting first


def _oldest(when: datetime | None, now: datetime) -> float:
    if when is None:
        return 0.0
    if when.tzinfo is None:
        when = when.replace(tzinfo=now.tzinfo)
    return max(0.0, (now - when).total_seconds())


def workspace_of(session_key: str) -> str:
    """A channel session key's workspace (`slack:<team>:...`, `discord:<guild>:...`)."""
    parts = session_key.split(":")
    return parts[1] if len(parts) >= 3 and parts[0] in ("slack", "discord") else ""


def _by_workspace(rows: Sequence[Any], now: datetime) -> list[WaitingEvents]:
    counts: dict[str, int] = {}
    oldest: dict[str, float] = {}
    for session_key, events, first in rows:
        ws = workspace_of(session_key)
        counts[ws] = counts.get(ws, 0) + events
        oldest[ws] = max(oldest.get(ws, 0.0), _oldest(first, now))
    waiting = [WaitingEvents(workspace=ws, events=n, oldest_seconds=oldest[ws]) for ws, n in counts.items()]
    return sorted(waiting, key=lambda w: (-w.events, w.workspace))


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
        per_session = conn.execute(
            select(inbox.c.session_key, func.count(), func.min(inbox.c.accepted_at))
            .where(inbox.c.status != "done")
            .group_by(inbox.c.session_key)
        ).all()
        return Backlog(
            waiting=_by_workspace(per_session, utcnow()),
            handoffs_open=handoffs,
            outbox_unsent=unsent,
            outbox_oldest_unsent_seconds=_oldest(oldest, utcnow()),
            inbox_unfinished=unfinished,
            inbox_retrying=retrying,
        )

    await store.ensure_schema()
    return await store.run(unit, what="count the backlog")  # type: ignore[no-any-return]
