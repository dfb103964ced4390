"""The review inbox in the bot's database: misses written with their turn, read and labelled by people.

Items are written in the turn's own transaction (`write_review`, from `commit_unit`), so a turn
retried after a lost lock writes its items once. Every read names a workspace or none: the CLI and
the operator page show one workspace's items only under that workspace's filter.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Row, delete, func, select, update

from adapters.storage.base import OnDatabase
from adapters.storage.schema import review_items
from adapters.storage.writes import insert_ignore
from agent.domain.types import utcnow
from agent.review.items import ReviewItem, ReviewReading


def write_review(conn: Connection, items: list[ReviewItem]) -> None:
    """Insert a turn's review items; one already there (the same turn committed before) is kept,
    except that a customer's pick completes its question's waiting item with what was chosen."""
    for item in items:
        if item.reading.chosen is not None:
            row = conn.execute(select(review_items.c.reading).where(review_items.c.id == item.id)).first()
            if row is not None:
                asked = ReviewReading.model_validate_json(row.reading)
                merged = asked.model_copy(update={"chosen": item.reading.chosen})
                waiting = (review_items.c.id == item.id) & (review_items.c.status == "waiting")
                conn.execute(
                    update(review_items).where(waiting).values(reading=merged.model_dump_json(), nearest=merged.nearest)
                )
                continue
        conn.execute(insert_ignore(conn, review_items, "id").values(**_row(item)))


def _row(item: ReviewItem) -> dict[str, Any]:
    return {
        "id": item.id,
        "kind": item.kind,
        "status": item.status,
        "text": item.text,
        "reading": item.reading.model_dump_json(),
        "nearest": item.reading.nearest,
        "session_id": item.session_id,
        "interaction_id": item.interaction_id,
        "channel": item.channel,
        "workspace": item.workspace,
        "followed_by": item.followed_by,
        "label": item.label,
        "created_at": item.created_at,
        "labelled_at": item.labelled_at,
    }


def _item(row: Row[Any]) -> ReviewItem:
    return ReviewItem(
        id=row.id,
        kind=row.kind,
        status=row.status,
        text=row.text,
        reading=ReviewReading.model_validate_json(row.reading),
        session_id=row.session_id,
        interaction_id=row.interaction_id,
        channel=row.channel,
        workspace=row.workspace,
        followed_by=row.followed_by,
        label=row.label,
        created_at=row.created_at,
        labelled_at=row.labelled_at,
    )


class SqlReview(OnDatabase):
    """The review inbox over the database the turns commit to (`app.storage.database`)."""

    async def items(
        self,
        workspace: str | None = None,
        status: str | None = "waiting",
        session_id: str | None = None,
        limit: int = 200,
    ) -> list[ReviewItem]:
        """Newest first. `workspace` None: every workspace (the CLI on the operator's own machine)."""

        def unit(conn: Connection) -> list[ReviewItem]:
            q = select(review_items).order_by(review_items.c.created_at.desc(), review_items.c.id).limit(limit)
            if workspace is not None:
                q = q.where(review_items.c.workspace == workspace)
            if status is not None:
                q = q.where(review_items.c.status == status)
            if session_id is not None:
                q = q.where(review_items.c.session_id == session_id)
            return [_item(r) for r in conn.execute(q).all()]

        return await self._run(unit, what="read the review inbox")

    async def get(self, item_id: str) -> ReviewItem | None:
        def unit(conn: Connection) -> ReviewItem | None:
            row = conn.execute(select(review_items).where(review_items.c.id == item_id)).first()
            return _item(row) if row else None

        return await self._run(unit, what="read a review item")

    async def settle(self, item_id: str, status: str, label: str | None) -> bool:
        """Mark an item labelled (with its label) or skipped; False when no such item exists."""

        def unit(conn: Connection) -> bool:
            done = conn.execute(
                update(review_items)
                .where(review_items.c.id == item_id)
                .values(status=status, label=label, labelled_at=utcnow())
            )
            return bool(done.rowcount)

        return await self._run(unit, what="label a review item")

    async def purge(self, before: datetime) -> int:
        """Delete items older than the retention; returns how many went."""

        def unit(conn: Connection) -> int:
            return int(conn.execute(delete(review_items).where(review_items.c.created_at < before)).rowcount or 0)

        return await self._run(unit, what="purge the review inbox")

    async def counts(self, workspace: str | None = None) -> dict[str, int]:
        """How many items wait, by kind."""

        def unit(conn: Connection) -> dict[str, int]:
            q = select(review_items.c.kind, func.count()).where(review_items.c.status == "waiting")
            if workspace is not None:
                q = q.where(review_items.c.workspace == workspace)
            return {str(kind): int(n) for kind, n in conn.execute(q.group_by(review_items.c.kind)).all()}

        return await self._run(unit, what="count the review inbox")


def dumped(item: ReviewItem) -> dict[str, Any]:
    """An item as JSON-ready data (the CLI's --json)."""
    return json.loads(item.model_dump_json()) | {"nearest": item.reading.nearest}
