"""Reads of what the bot itself wrote: tasks, refund counts, order updates, unclaimed handoffs, and
the records tools keep of kinds without a table of their own.

Writes happen as side effects in each turn's transaction (adapters/storage/sql.py); these are the
reads the tools, the policy engine and the handoff sweep need, over the same database.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy import Connection, bindparam, delete, func, select

from adapters.storage.base import OnDatabase
from adapters.storage.prepared import Prepared
from adapters.storage.schema import (
    demo_calendar,
    handoff_queue,
    order_updates,
    records,
    refunds,
    risk_reports,
    tasks,
    tickets,
    tool_ledger,
)
from adapters.storage.writes import BUILT_IN_KINDS, insert_ignore
from agent.domain.records import TaskRecord, TicketRecord, ToolRecord
from agent.storage import Database

# The records a demo reset forgets, by kind: what the bot changed about the demo's business data.
DEMO_RECORDS = {"refund": refunds, "order_update": order_updates, "risk_report": risk_reports}

# Built once at import: a statement built per call is found in the compiled cache, but its result
# columns would still be worked out again on every run.
SELECT_ORDER_UPDATE = Prepared(select(order_updates.c.data).where(order_updates.c.order_id == bindparam("b_order")))
SELECT_ORDER_REFUNDS = Prepared(
    select(refunds.c.amount, refunds.c.created_at).where(refunds.c.order_id == bindparam("b_order"))
)
# A customer's orders' updates in one statement per table: the IDs fill a fixed row of parameters
# (unused ones stay NULL, which matches nothing), so the statement is prepared once like the others.
IDS_PER_STATEMENT = 16
_IDS: list[Any] = [bindparam(f"b_id{n}") for n in range(IDS_PER_STATEMENT)]
SELECT_UPDATES_OF = Prepared(
    select(order_updates.c.order_id, order_updates.c.data).where(order_updates.c.order_id.in_(_IDS))
)
SELECT_REFUNDS_OF = Prepared(
    select(refunds.c.order_id, refunds.c.amount, refunds.c.created_at).where(refunds.c.order_id.in_(_IDS))
)
SELECT_DEMO_START = Prepared(select(demo_calendar.c.started_on).where(demo_calendar.c.id == 1))
DEMO_START_FRESH_S = 60.0  # how long the demo's first day is kept once read (`SqlRecords.demo_started_on`)
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


class SqlRecords(OnDatabase):
    """TaskReader, TicketReader, RefundHistory, HandoffQueue, RiskReports, ToolRecords and the demo's
    calendar over the database that holds the turns' side effects (the SqlStore's)."""

    def __init__(self, database: Database):
        super().__init__(database)
        self._demo_start: tuple[date, float] | None = None  # the demo's first day, and when it was read
        self._demo_read = asyncio.Lock()  # one read at a time: turns arriving together share it

    async def list_tasks(self, owner: str) -> list[TaskRecord]:
        def unit(conn: Connection) -> list[TaskRecord]:
            rows = conn.execute(
                select(tasks.c.id, tasks.c.owner, tasks.c.number, tasks.c.title, tasks.c.status)
                .where(tasks.c.owner == owner, tasks.c.status != "deleted")
                .order_by(tasks.c.number)
            ).all()
            return [TaskRecord.model_validate(r._asdict()) for r in rows]

        return await self._run(unit, what="read tasks")

    async def next_task_number(self, owner: str) -> int:
        """Numbers are never reused, so "task 3" keeps meaning the same task after a deletion."""

        def unit(conn: Connection) -> int:
            top = conn.execute(select(func.max(tasks.c.number)).where(tasks.c.owner == owner)).scalar()
            return int(top or 0) + 1

        return await self._run(unit, what="read tasks")

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

        return await self._run(unit, what="count refunds")

    async def order_update(self, order_id: str) -> dict[str, Any] | None:
        """What the bot changed about an order; refund figures come from the refund records
        themselves (the sum of every refund, the date of the latest), not from the last update."""

        def unit(conn: Connection) -> dict[str, Any] | None:
            row = SELECT_ORDER_UPDATE.first(conn, {"b_order": order_id})
            data: dict[str, Any] = json.loads(row.data) if row else {}
            return with_refunds(data, SELECT_ORDER_REFUNDS.all(conn, {"b_order": order_id})) or None

        return await self._run(unit, what="read order updates")

    async def updates_of(self, order_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """`order_update` for a customer's orders at once: two statements for up to IDS_PER_STATEMENT orders."""
        if not order_ids:
            return {}

        def unit(conn: Connection) -> dict[str, dict[str, Any]]:
            out: dict[str, dict[str, Any]] = {}
            issued: dict[str, list[Any]] = {}
            for params in _id_rows(order_ids):
                out |= {r.order_id: json.loads(r.data) for r in SELECT_UPDATES_OF.all(conn, params)}
                for r in SELECT_REFUNDS_OF.all(conn, params):
                    issued.setdefault(r.order_id, []).append(r)
            for order_id, rows in issued.items():
                out[order_id] = with_refunds(out.get(order_id, {}), rows)
            return out

        return await self._run(unit, what="read order updates")

    async def unclaimed(self, alerted_before: datetime) -> list[str]:
        def unit(conn: Connection) -> list[str]:
            q = (
                select(handoff_queue.c.session_id)
                .where(handoff_queue.c.status == "requested", handoff_queue.c.alerted_at < alerted_before)
                .order_by(handoff_queue.c.requested_at)
            )
            return [r.session_id for r in conn.execute(q).all()]

        return await self._run(unit, what="read the handoff queue")

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

        return await self._run(unit, what="read risk reports")

    async def find_records(self, kind: str, owner: str, key: str | None = None) -> list[ToolRecord]:
        """`owner`'s records of a kind without a table of its own (only the one with `key`, if
        given), oldest first."""
        if kind in BUILT_IN_KINDS:
            raise ValueError(f"{kind} records have a table of their own; tools read them through their own reader")
        columns = [records.c[name] for name in ToolRecord.model_fields]
        query = select(*columns).where(records.c.kind == kind, records.c.owner == owner)
        if key is not None:
            query = query.where(records.c.key == key)
        query = query.order_by(records.c.created_at, records.c.id)

        def unit(conn: Connection) -> list[ToolRecord]:
            rows = conn.execute(query).all()
            return [ToolRecord.model_validate({**r._asdict(), "data": json.loads(r.data)}) for r in rows]

        return await self._run(unit, what=f"read {kind} records")

    async def demo_started_on(self, today: date) -> date:
        """The day the demo first ran; `today` becomes it when none is recorded yet.

        It changes only when the demo is reset, so it is kept for DEMO_START_FRESH_S after it is read
        (a turn that reads the customer's orders would otherwise ask the database for it every
        time). A reset through this object forgets it at once; one by another process (`agentbot
        demo reset` while the bot runs) is seen within that time."""
        if self._demo_start is not None and time.monotonic() - self._demo_start[1] < DEMO_START_FRESH_S:
            return self._demo_start[0]
        async with self._demo_read:
            # Fifty turns meeting a fresh (or stale) day would otherwise each read it.
            if self._demo_start is not None and time.monotonic() - self._demo_start[1] < DEMO_START_FRESH_S:
                return self._demo_start[0]
            return await self._read_demo_start(today)

    async def _read_demo_start(self, today: date) -> date:
        def unit(conn: Connection) -> date:
            found = SELECT_DEMO_START.first(conn, {})
            if found is None:
                # Two workers' first lookups may race to record it: the first one's day stands.
                conn.execute(insert_ignore(conn, demo_calendar, "id").values(id=1, started_on=today.isoformat()))
                found = SELECT_DEMO_START.first(conn, {})
            assert found is not None  # recorded just now, or by the worker that raced this one
            return date.fromisoformat(found.started_on)

        started = await self._run(unit, what="read the demo calendar")
        self._demo_start = started, time.monotonic()
        return started

    async def reset_demo(self) -> int:
        """Forget what the bot changed about the demo data (refunds, order updates, risk reports) and
        the demo's first day, so it starts afresh; returns how many changes were dropped."""

        def unit(conn: Connection) -> int:
            dropped = 0
            for table in DEMO_RECORDS.values():
                dropped += conn.execute(delete(table)).rowcount or 0
            # A replayed confirmation must run the action again, not return the forgotten result:
            # every kept result that wrote one of the records dropped goes too.
            forgotten = [
                row.idempotency_key
                for row in conn.execute(select(tool_ledger.c.idempotency_key, tool_ledger.c.result))
                if DEMO_RECORDS.keys() & {e.get("kind") for e in json.loads(row.result).get("effects") or ()}
            ]
            if forgotten:
                conn.execute(delete(tool_ledger).where(tool_ledger.c.idempotency_key.in_(forgotten)))
            conn.execute(delete(demo_calendar))
            return dropped

        dropped = await self._run(unit, what="reset the demo data")
        self._demo_start = None
        return dropped


def _id_rows(order_ids: Sequence[str]) -> list[dict[str, str | None]]:
    """The IDs as rows of IDS_PER_STATEMENT parameters, the last one padded with NULLs."""
    ids = list(dict.fromkeys(order_ids))
    rows = []
    for start in range(0, len(ids), IDS_PER_STATEMENT):
        chunk: list[str | None] = list(ids[start : start + IDS_PER_STATEMENT])
        chunk += [None] * (IDS_PER_STATEMENT - len(chunk))
        rows.append({f"b_id{n}": v for n, v in enumerate(chunk)})
    return rows
