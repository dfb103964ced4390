"""EventInbox on the session store's database: exactly-once intake of channel events."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from sqlalchemy import Connection, and_, bindparam, delete, exists, or_, select, update

from adapters.storage.schema import inbox, session_leases, sessions
from adapters.storage.sql import FINISH_INBOX, SqlStore
from adapters.storage.writes import insert_ignore
from agent.domain.records import InboxEvent
from agent.domain.types import utcnow

OPEN = ("accepted", "committed")
EVENT_COLUMNS = (
    inbox.c.key,
    inbox.c.session_key,
    inbox.c.payload,
    inbox.c.status,
    inbox.c.attempts,
    inbox.c.written_at,
    inbox.c.accepted_at,
    inbox.c.retry_at,
)
SELECT_UNFINISHED = (
    select(*EVENT_COLUMNS)
    .where(inbox.c.status.in_(OPEN), inbox.c.accepted_at <= bindparam("b_before"))
    .order_by(inbox.c.accepted_at)
)
# The head of a conversation's queue, due or not: a postponed event holds its thread, so the
# events written after it wait behind it instead of overtaking it (the dispatcher reads `retry_at`).
SELECT_NEXT = (
    select(*EVENT_COLUMNS)
    .where(inbox.c.session_key == bindparam("b_session"), inbox.c.status.in_(OPEN))
    # In the order the messages were written; events stored before that was recorded first.
    .order_by(inbox.c.written_at.nulls_first(), inbox.c.accepted_at, inbox.c.key)
    .limit(1)
)
_held = inbox.alias()
# A conversation with a postponed event is not ready until that event is due, whatever came after it.
HELD = exists().where(
    and_(
        _held.c.session_key == inbox.c.session_key,
        _held.c.status.in_(OPEN),
        _held.c.retry_at > bindparam("b_now"),
    )
)
SELECT_READY = (
    select(inbox.c.session_key, inbox.c.accepted_at)
    .outerjoin(session_leases, session_leases.c.session_key == inbox.c.session_key)
    .where(
        inbox.c.status.in_(OPEN),
        ~HELD,
        or_(
            session_leases.c.session_key.is_(None),
            session_leases.c.expires_at < bindparam("b_now"),
            session_leases.c.owner == bindparam("b_owner"),
        ),
    )
    .order_by(inbox.c.accepted_at)
    .limit(200)
)
TAKE_LEASE = (
    update(session_leases)
    .where(
        session_leases.c.session_key == bindparam("b_session"),
        or_(session_leases.c.owner == bindparam("b_owner"), session_leases.c.expires_at < bindparam("b_now")),
    )
    .values(owner=bindparam("b_owner"), expires_at=bindparam("b_until"))
)


def _event(r: Any) -> InboxEvent:
    payload = json.loads(r.payload)
    return InboxEvent(
        key=r.key,
        session_key=r.session_key,
        payload=payload,
        status=r.status,
        attempts=r.attempts,
        written_at=r.written_at,
        accepted_at=r.accepted_at,
        retry_at=r.retry_at,
    )


def accept_unit(conn: Connection, event: InboxEvent) -> bool:
    now = utcnow()
    res = conn.execute(
        insert_ignore(conn, inbox, "key").values(
            key=event.key,
            session_key=event.session_key,
            payload=json.dumps(event.payload),
            status="accepted",
            accepted_at=now,
            attempts=0,
            written_at=event.written_at if event.written_at is not None else now.timestamp(),
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

    async def unfinished(self, older_than_seconds: float = 0.0) -> list[InboxEvent]:
        """Accepted or committed (answers not all sent) events, oldest first."""
        await self.store.ensure_schema()
        before = utcnow() - timedelta(seconds=older_than_seconds)

        def unit(conn: Connection) -> list[InboxEvent]:
            return [_event(r) for r in conn.execute(SELECT_UNFINISHED, {"b_before": before}).all()]

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

    # Session leases: one worker at a time owns a conversation's queue.

    async def claim(self, session_key: str, owner: str, seconds: float) -> bool:
        """Take (or renew) the conversation's lease; False while another worker holds it."""

        def unit(conn: Connection) -> bool:
            now = utcnow()
            until = now + timedelta(seconds=seconds)
            params = {"b_session": session_key, "b_owner": owner, "b_now": now, "b_until": until}
            if conn.execute(TAKE_LEASE, params).rowcount == 1:
                return True
            row = {"session_key": session_key, "owner": owner, "expires_at": until}
            return conn.execute(insert_ignore(conn, session_leases, "session_key").values(**row)).rowcount == 1

        return await self.store.run(unit, what="lease a conversation")  # type: ignore[no-any-return]

    async def release(self, session_key: str, owner: str) -> None:
        def unit(conn: Connection) -> None:
            conn.execute(
                delete(session_leases).where(
                    session_leases.c.session_key == session_key, session_leases.c.owner == owner
                )
            )

        await self.store.run(unit, what="release a conversation")

    async def next_event(self, session_key: str) -> InboxEvent | None:
        """The conversation's oldest unfinished event, due or postponed (`retry_at`): the queue
        lives in the database, so the order holds across workers, and nothing overtakes a
        postponed event."""
        await self.store.ensure_schema()

        def unit(conn: Connection) -> InboxEvent | None:
            row = conn.execute(SELECT_NEXT, {"b_session": session_key, "b_now": utcnow()}).first()
            return _event(row) if row else None

        return await self.store.run(unit, what="read the next channel event")  # type: ignore[no-any-return]

    async def ready_sessions(self, owner: str) -> list[str]:
        """Conversations with due events that no live worker holds (a crashed worker's, say), or
        that `owner` holds itself (a restarted worker under the same name)."""
        await self.store.ensure_schema()

        def unit(conn: Connection) -> list[str]:
            rows = conn.execute(SELECT_READY, {"b_now": utcnow(), "b_owner": owner}).all()
            return list(dict.fromkeys(r.session_key for r in rows))

        return await self.store.run(unit, what="find conversations to take over")  # type: ignore[no-any-return]

    async def postpone(self, key: str, seconds: float) -> int:
        """Count a failed attempt and wait before the next; returns the attempts so far."""

        def unit(conn: Connection) -> int:
            retry_at = utcnow() + timedelta(seconds=seconds)
            conn.execute(
                update(inbox).where(inbox.c.key == key).values(attempts=inbox.c.attempts + 1, retry_at=retry_at)
            )
            return int(conn.execute(select(inbox.c.attempts).where(inbox.c.key == key)).scalar() or 0)

        return await self.store.run(unit, what="postpone a channel event")  # type: ignore[no-any-return]
