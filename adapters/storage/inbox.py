"""EventInbox on the session store's database: exactly-once intake of channel events."""

from __future__ import annotations

import json
from datetime import timedelta

from sqlalchemy import Connection, bindparam, select

from adapters.storage.schema import inbox, sessions
from adapters.storage.sql import FINISH_INBOX, SqlStore, insert_ignore
from agent.records import InboxEvent
from agent.types import utcnow

SELECT_UNFINISHED = (
    select(inbox.c.key, inbox.c.session_key, inbox.c.payload, inbox.c.status)
    .where(inbox.c.status == "accepted", inbox.c.accepted_at <= bindparam("b_before"))
    .order_by(inbox.c.accepted_at)
)


def accept_unit(conn: Connection, event: InboxEvent) -> bool:
    res = conn.execute(
        insert_ignore(conn, inbox, "key").values(
            key=event.key,
            session_key=event.session_key,
            payload=json.dumps(event.payload),
            status="accepted",
            accepted_at=utcnow(),
        )
    )
    return res.rowcount == 1


class SqlInbox:
    """
    Args:
        store: the SqlStore whose database (and unit-of-work runner) holds the inbox table, so a
            turn's commit can finish its inbox entry in the same transaction.
    """

    def __init__(self, store: SqlStore):
        self.store = store

    async def accept(self, event: InboxEvent) -> bool:
        await self.store.ensure_schema()
        return await self.store.run(accept_unit, event, what="accept a channel event")  # type: ignore[no-any-return]

    async def finish(self, key: str) -> None:
        await self.store.ensure_schema()

        def unit(conn: Connection) -> None:
            conn.execute(FINISH_INBOX, {"b_key": key, "b_now": utcnow()})

        await self.store.run(unit, what="finish a channel event")

    async def unfinished(self, older_than_seconds: float) -> list[InboxEvent]:
        await self.store.ensure_schema()
        before = utcnow() - timedelta(seconds=older_than_seconds)

        def unit(conn: Connection) -> list[InboxEvent]:
            rows = conn.execute(SELECT_UNFINISHED, {"b_before": before}).all()
            return [
                InboxEvent(key=r.key, session_key=r.session_key, payload=json.loads(r.payload), status=r.status)
                for r in rows
            ]

        return await self.store.run(unit, what="read unfinished channel events")  # type: ignore[no-any-return]

    async def knows(self, session_key: str) -> bool:
        """Whether the bot takes part in this conversation: a saved session or an accepted event.

        Channels use it to answer thread replies that do not mention the bot; the inbox half
        covers a reply that arrives before the conversation's first turn has committed.
        """
        await self.store.ensure_schema()

        def unit(conn: Connection) -> bool:
            if conn.execute(select(sessions.c.id).where(sessions.c.id == session_key)).first():
                return True
            accepted = select(inbox.c.key).where(inbox.c.session_key == session_key).limit(1)
            return conn.execute(accepted).first() is not None

        return await self.store.run(unit, what="look up a conversation")  # type: ignore[no-any-return]
