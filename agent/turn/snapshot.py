"""A turn reads each order once: its policy check and its tool see the same facts.

The router opens a `turn_reads()` scope around each attempt at a turn; inside it, `TurnSnapshot`
answers a second lookup of the same order from the first. A retried turn opens a new scope, so it
reads fresh data; outside any scope (admin commands, tests) every lookup goes to the source.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from agent.interfaces import DataSource

_reads: ContextVar[dict[str, dict[str, Any] | None] | None] = ContextVar("agentbot_turn_reads", default=None)


@contextmanager
def turn_reads() -> Iterator[None]:
    token = _reads.set({})
    try:
        yield
    finally:
        _reads.reset(token)


class TurnSnapshot:
    """A DataSource that reads an order at most once per turn scope.

    Args:
        data: where orders and customers come from.
    """

    def __init__(self, data: DataSource):
        self.data = data

    async def get_order(self, order_id: str) -> dict[str, Any] | None:
        seen = _reads.get()
        if seen is None:
            return await self.data.get_order(order_id)
        if order_id not in seen:
            seen[order_id] = await self.data.get_order(order_id)
        return seen[order_id]  # shared, like every DataSource's answers: read, never changed

    async def get_customer(self, customer_id: str) -> dict[str, Any] | None:
        return await self.data.get_customer(customer_id)

    async def orders_of(self, customer_id: str) -> list[dict[str, Any]]:
        orders = await self.data.orders_of(customer_id)
        seen = _reads.get()
        if seen is None:
            return orders
        # The turn's later lookups of these orders (the policy check, the tool) see the same facts.
        return [seen.setdefault(str(o.get("order_id")), o) or o for o in orders]

    async def find_customer(self, platform: str, user_id: str) -> dict[str, Any] | None:
        return await self.data.find_customer(platform, user_id)
