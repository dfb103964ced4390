"""Reads of what the bot itself wrote: tasks, refund counts, order updates, unclaimed handoffs.

Writes happen as side effects in each turn's transaction (adapters/storage/sql.py); these are the
reads the tools, the policy engine and the handoff sweep need, over the same database.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy import Connection, bindparam, delete, func, select

from adapters.storage.prepared import Prepared
from adapters.storage.schema import (
    demo_calendar,
    handoff_queue,
    order_updates,
    refunds,
    risk_reports,
    tasks,
    tickets,
    tool_ledger,
)
from adapters.storage.sql import SqlStore
from adapters.storage.writes import insert_ignore
from agent.domain.records import TaskRecord, TicketRecord

# The records a demo reset forgets: what the bot changed about the demo's business data.
DEMO_RECORDS = frozenset({"refund", "order_update", "risk_report"})

# Built once: a statement built per call is compiled from the cache but its result columns are
# worked out again on every run, which cost more than the query (py-spy, `agentbot bench`).
SELECT_ORDER_UPDATE = Prepared(select(order_updates.c.data).where(order_updates.c.order_id == bindparam("b_order")))
SELECT_ORDER_REFUNDS = Prepared(
    select(refunds.c.amount, refunds.c.created_at).where(refunds.c.order_id == bindparam("b_order"))
)
COUNT_REFUNDS = select(func.count()).where(
    refunds.c.customer_id == bindparam("b_customer"), refunds.c.created_at >= bindparam("b_since")
)


def with_refunds(data: dict[str, Any], issued: Sequence[Any]) -> dict[str, Any]:
    """An order's update with its refund figures from the refund records themselves: the sum of
    every refund and the date of the latest, not the last update's."""
    if issued:
        data["refund_amount"] = round(sum(float(r.amount) for r in issued), 2)
        data["refunded_at"] = max(r.created_at for r in issued).isoformat()
        data["refund_count"] = len(issued)
        data.setdefault("status", "refunded")
    return data


class SqlRecords:
    """TaskReader, TicketReader, RefundHistory, HandoffQueue, RiskReports and the demo's calendar over
    the session store's database.

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

    async def tickets_of(self, customer_id: str | None, session_id: str, limit: int) -> list[TicketRecord]:
        """A customer's tickets from any conversation; a guest's only from this one."""
        mine = (
            tickets.c.customer_id == customer_id
            if customer_id
            else (tickets.c.session_id == session_id) & tickets.c.customer_id.is_(None)
        )

        def unit(conn: Connection) -> list[TicketRecord]:
            columns = (tickets.c.id, tickets.c.summary, tickets.c.order_id, tickets.c.status, tickets.c.created_at)
            q = select(*columns).where(mine).order_by(tickets.c.created_at.desc(), tickets.c.id).limit(limit)
            return [TicketRecord.model_validate(r._asdict()) for r in conn.execute(q).all()]

        return await self._run(unit, what="read tickets")  # type: ignore[no-any-return]

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
            return with_refunds(data, SELECT_ORDER_REFUNDS.all(conn, {"b_order": order_id})) or None

        return await self._run(unit, what="read order updates")  # type: ignore[no-any-return]

    async def updates_of(self, order_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """`order_update` for a customer's orders at once: two statements whatever their number."""
        if not order_ids:
            return {}

        def unit(conn: Connection) -> dict[str, dict[str, Any]]:
            ids = list(order_ids)
            found = select(order_updates.c.order_id, order_updates.c.data).where(order_updates.c.order_id.in_(ids))
            out: dict[str, dict[str, Any]] = {r.order_id: json.loads(r.data) for r in conn.execute(found)}
            issued: dict[str, list[Any]] = {}
            paid = select(refunds.c.order_id, refunds.c.amount, refunds.c.created_at).where(refunds.c.order_id.in_(ids))
            for r in conn.execute(paid):
                issued.setdefault(r.order_id, []).append(r)
            for order_id, rows in issued.items():
                out[order_id] = with_refunds(out.get(order_id, {}), rows)
            return out

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

    async def risk_report_on(self, release_id: str, day: date, severity: str) -> dict[str, Any] | None:
        """The report filed for a release and severity on a UTC day, if any (the first one filed)."""
        start = datetime(day.year, day.month, day.day, tzinfo=UTC)

        def unit(conn: Connection) -> dict[str, Any] | None:
            row = conn.execute(
                select(risk_reports.c.id, risk_reports.c.created_at)
                .where(
                    risk_reports.c.release_id == release_id,
                    risk_reports.c.severity == severity,
                    risk_reports.c.created_at >= start,
                    risk_reports.c.created_at < start + timedelta(days=1),
                )
                .order_by(risk_reports.c.created_at)
                .limit(1)
            ).first()
            return row._asdict() if row else None

        return await self._run(unit, what="read risk reports")  # type: ignore[no-any-return]

    async def demo_started_on(self, today: date) -> date:
        """The day the demo first ran; `today` becomes it when none is recorded yet."""

        def unit(conn: Connection) -> date:
            query = select(demo_calendar.c.started_on).where(demo_calendar.c.id == 1)
            found = conn.execute(query).scalar()
            if found is None:
                # Two workers' first lookups may race to record it: the first one's day stands.
                conn.execute(insert_ignore(conn, demo_calendar, "id").values(id=1, started_on=today.isoformat()))
                found = conn.execute(query).scalar_one()
            return date.fromisoformat(found)

        return await self._run(unit, what="read the demo calendar")  # type: ignore[no-any-return]

    async def reset_demo(self) -> int:
        """Forget what the bot changed about the demo data (refunds, order updates, risk reports) and
        the demo's first day, so it starts afresh; returns how many changes were dropped."""

        def unit(conn: Connection) -> int:
            dropped = 0
            for table in (refunds, order_updates, risk_reports):
                dropped += conn.execute(delete(table)).rowcount or 0
            # A replayed confirmation must run the action again, not return the forgotten result:
            # every kept result that wrote one of the records dropped goes too.
            forgotten = [
                row.idempotency_key
                for row in conn.execute(select(tool_ledger.c.idempotency_key, tool_ledger.c.result))
                if DEMO_RECORDS & {e.get("kind") for e in json.loads(row.result).get("effects") or ()}
            ]
            if forgotten:
                conn.execute(delete(tool_ledger).where(tool_ledger.c.idempotency_key.in_(forgotten)))
            conn.execute(delete(demo_calendar))
            return dropped

        return await self._run(unit, what="reset the demo data")  # type: ignore[no-any-return]
