"""The transactional outbox on the session store's database: what a channel event's turn shows.

A turn's answers are inserted in its commit (`commit_event`) and sent after it; pre-messages and
notices are inserted just before they are sent (`SqlOutbox.begin`). A sender marks each message
sent with the platform's id for it; recovery sends only what is not marked.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection, bindparam, insert, select, update

from adapters.storage.base import OnDatabase
from adapters.storage.schema import inbox, outbox
from agent.domain.types import OutboundMessage, utcnow
from agent.errors import AlreadyCommitted
from agent.storage import Begun

COMMIT_INBOX = (
    update(inbox)
    .where(inbox.c.key == bindparam("b_key"), inbox.c.status == "accepted")
    .values(status=bindparam("b_status"), finished_at=bindparam("b_now"))
)
SELECT_STATUS = select(outbox.c.status).where(outbox.c.id == bindparam("b_id"))
MARK_SENT = (
    update(outbox)
    .where(outbox.c.id == bindparam("b_id"))
    .values(status="sent", ref=bindparam("b_ref"), sent_at=bindparam("b_now"))
)
SELECT_UNSENT = (
    select(outbox.c.body)
    .where(outbox.c.event_key == bindparam("b_key"), outbox.c.status != "sent", outbox.c.seq >= 0)
    .order_by(outbox.c.seq)
)


def _row(m: OutboundMessage, event_key: str, session_key: str, seq: int, status: str, now: datetime) -> dict:
    return {
        "id": m.id,
        "event_key": event_key,
        "session_key": session_key,
        "seq": seq,
        "kind": m.kind,
        "body": m.model_dump_json(),
        "status": status,
        "created_at": now,
    }


def commit_event(conn: Connection, key: str, session_key: str, answers: list[OutboundMessage], now: datetime) -> None:
    """In the turn's transaction: its answers go into the outbox and the event is marked committed
    (done when there is nothing to send). When another worker committed the event first, this
    turn is dropped whole (AlreadyCommitted), so nothing of it is stored or shown."""
    status = "committed" if answers else "done"
    res = conn.execute(COMMIT_INBOX, {"b_key": key, "b_now": now, "b_status": status})
    if res.rowcount != 1 and conn.execute(select(inbox.c.key).where(inbox.c.key == key)).first():
        raise AlreadyCommitted(key)
    if answers:
        conn.execute(insert(outbox), [_row(m, key, session_key, n, "pending", now) for n, m in enumerate(answers)])


class SqlOutbox(OnDatabase):
    """The outbox on the database the turns commit to (`commit_event` writes into it in their commit)."""

    async def begin(self, message: OutboundMessage, event_key: str, session_key: str) -> Begun:
        """Where this message stands before a send. A message the turn did not commit (a
        pre-message, a notice) is recorded here first, as `sending`, and reported `new`."""

        def unit(conn: Connection) -> Begun:
            status = conn.execute(SELECT_STATUS, {"b_id": message.id}).scalar()
            if status is None:
                conn.execute(insert(outbox).values(**_row(message, event_key, session_key, -1, "sending", utcnow())))
                return "new"
            return status  # type: ignore[no-any-return]

        return await self._run(unit, what="record an outgoing message")

    async def mark_sent(self, message_id: str, ref: str) -> None:
        def unit(conn: Connection) -> None:
            conn.execute(MARK_SENT, {"b_id": message_id, "b_ref": ref, "b_now": utcnow()})

        await self._run(unit, what="mark a message sent")

    async def unsent(self, event_key: str) -> list[OutboundMessage]:
        """The event's committed answers not yet marked sent, in the order the turn produced them."""

        def unit(conn: Connection) -> list[OutboundMessage]:
            rows = conn.execute(SELECT_UNSENT, {"b_key": event_key}).all()
            return [OutboundMessage.model_validate_json(r.body) for r in rows]

        return await self._run(unit, what="read unsent messages")

    async def unshown_pre(self, event_key: str) -> tuple[list[OutboundMessage], bool]:
        """The event's pre-messages recorded but not marked sent, and whether an answer went out."""

        def unit(conn: Connection) -> tuple[list[OutboundMessage], bool]:
            rows = conn.execute(
                select(outbox.c.body)
                .where(outbox.c.event_key == event_key, outbox.c.kind == "pre", outbox.c.status == "sending")
                .order_by(outbox.c.created_at, outbox.c.id)
            ).all()
            answered = conn.execute(
                select(outbox.c.id)
                .where(outbox.c.event_key == event_key, outbox.c.seq >= 0, outbox.c.status == "sent")
                .limit(1)
            ).first()
            return [OutboundMessage.model_validate_json(r.body) for r in rows], answered is not None

        return await self._run(unit, what="read unshown pre-messages")

    async def skip(self, message_id: str) -> None:
        def unit(conn: Connection) -> None:
            conn.execute(update(outbox).where(outbox.c.id == message_id).values(status="skipped", sent_at=utcnow()))

        await self._run(unit, what="skip a message")

    async def ref(self, message_id: str) -> str | None:
        """The platform id recorded for a sent message (a Discord anchor, for instance)."""

        def unit(conn: Connection) -> str | None:
            return conn.execute(select(outbox.c.ref).where(outbox.c.id == message_id)).scalar()  # type: ignore[no-any-return]

        return await self._run(unit, what="read a sent message")
