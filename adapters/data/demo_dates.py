"""Demo data's dates as day offsets ("-1d", "+6d") from the day the demo first ran.

A fixed date in demo data is in the past a week after it was written; an offset keeps the demo's
story true whenever it starts (shipped yesterday, arriving next week). Real business data holds
real dates, which pass through unchanged.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Any, Protocol

from agent.domain.types import Clock, utcnow
from agent.sources import DataSource

OFFSET = re.compile(r"^([+-]\d{1,4})d$")


class DemoStart(Protocol):
    async def demo_started_on(self, today: date) -> date: ...


def resolve(order: dict[str, Any], start: date) -> dict[str, Any]:
    """The order with every offset value read as a date counted from `start`."""
    resolved = {}
    for key, value in order.items():
        m = OFFSET.match(value) if isinstance(value, str) else None
        resolved[key] = (start + timedelta(days=int(m.group(1)))).isoformat() if m else value
    return resolved


class DemoCalendar:
    """
    Args:
        base: the demo data (JSON files), whose orders may hold day offsets.
        start: where the demo's first day is recorded (adapters/storage/records.py `SqlRecords`).
        clock: the current UTC time (the app's).
    """

    def __init__(self, base: DataSource, start: DemoStart, clock: Clock = utcnow):
        self.base = base
        self.start = start
        self.clock = clock

    async def get_order(self, order_id: str) -> dict[str, Any] | None:
        order = await self.base.get_order(order_id)
        if order is None or not any(isinstance(v, str) and OFFSET.match(v) for v in order.values()):
            return order
        return resolve(order, await self.start.demo_started_on(self.clock().date()))

    async def get_customer(self, customer_id: str) -> dict[str, Any] | None:
        return await self.base.get_customer(customer_id)

    async def orders_of(self, customer_id: str) -> list[dict[str, Any]]:
        orders = await self.base.orders_of(customer_id)
        if not any(isinstance(v, str) and OFFSET.match(v) for o in orders for v in o.values()):
            return orders
        start = await self.start.demo_started_on(self.clock().date())
        return [resolve(o, start) for o in orders]

    async def find_customer(self, platform: str, user_id: str) -> dict[str, Any] | None:
        return await self.base.find_customer(platform, user_id)
