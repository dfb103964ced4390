"""Reads of what the bot itself wrote: tasks, refund counts, order updates, unclaimed handoffs.

Writes happen as side effects in each turn's transaction (adapters/storage/sql.py); these are the
reads the tools, the policy engine and the handoff sweep need, over the same database.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, bindparam, func, select

from adapters.storage.prepared import Prepared
from adapters.storage.schema import handoff_queue, order_updates, refunds, tasks
from adapters.storage.sql import SqlStore
from agent.records import TaskRecord

# Built once: a statement built per call is compiled from the cache but its result columns are
# worked out again on every run, which cost more than the query (py-spy, `agentbot bench`).
SELECT_ORDER_UPDATE = Prepared(select(order_updates.c.data).where(order_updates.c.order_id == bindparam("b_order")))
SELECT_ORDER_REFUNDS = Prepared(
    select(refunds.c.amount, refunds.c.created_at).where(refunds.c.order_id == bindparam("b_order"))
)
COUNT_REFUNDS = select(func.count()).where(
    refunds.c.customer_id == bindparam("b_customer"), refunds.c.created_at >= bindparam("b_since")
)


class SqlRecords:
    """TaskReader, RefundHistory and HandoffQueue over the session store's database.

    Args:
        store: the SqlStore whose database holds the turn's side effects.
    """

    def __init__(self, store: SqlStore):
        self.store = store

    async def _run(self, fn: Any, *args: Any, what: str) -> Any:
        await self.store.ensure_schema()
        return await self.store.run(fn, *args, what=what)

    async def list_tasks(self, owner: str) -> list[TaskRecord]:
        def unit(conn: Connection) -> list[TaskRecord]:
            rows = conn.execute(
                select(tasks.c.id, tasks.c.owner, tasks.c.number, tasks.c.title, tasks.c.status)
                .where(tasks.c.owner == owner, tasks.c.status != "deleted")
                .order_by(tasks.c.number)
            ).all()
            return [TaskRecord.model_validate(r._asdict()) for r in rows]

        return await self._run(unit, what="read tasks")  # type: ignore[no-any-return]

    async def next_task_number(self, owner: str) -> int:
        """Numbers are never reused, so "task 3" keeps meaning the same task after a deletion."""

        def unit(conn: Connection) -> int:
            top = conn.execute(select(func.max(tasks.c.number)).where(tasks.c.owner == owner)).scalar()
            return int(top or 0) + 1

        return await self._run(unit, what="read tasks")  # type: ignore[no-any-return]

    async def count_refunds(self, customer_id: str, since: datetime) -> int:
        def unit(conn: Connection) -> int:
            return int(conn.execute(COUNT_REFUNDS, {"b_customer": customer_id, "b_since": since}).scalar() or 0)

        return await self._run(unit, what="count refunds")  # type: ignore[no-any-return]

    async def order_update(self, order_id: str) -> dict[str, Any] | None:
        """What the bot changed about an order; refund figures come from the refund records
        themselves (the sum of every refund, the date of the latest), not from the last update."""

        def unit(conn: Connection) -> dict[str, Any] | None:
            row = SELECT_ORDER_UPDATE.first(conn, {"b_order": order_id})
            data: dict[str, Any] = json.loads(row.data) if row else {}
            issued = SELECT_ORDER_REFUNDS.all(conn, {"b_order": order_id})
            if issued:
                data["refund_amount"] = round(sum(float(r.amount) for r in issued), 2)
                data["refunded_at"] = max(r.created_at for r in issued).isoformat()
                data["refund_count"] = len(issued)
                data.setdefault("status", "refunded")
            return data or None

        return await self._run(unit, what="read order updates")  # type: ignore[no-any-return]

    async def unclaimed(self, alerted_before: datetime) -> list[str]:
        def unit(conn: Connection) -> list[str]:
            q = (
                select(handoff_queue.c.session_id)
                .where(handoff_queue.c.status == "requested", handoff_queue.c.alerted_at < alerted_before)
                .order_by(handoff_queue.c.requested_at)
            )
            return [r.session_id for r in conn.execute(q).all()]

        return await self._run(unit, what="read the handoff queue")  # type: ignore[no-any-return]
