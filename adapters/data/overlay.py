"""A DataSource that shows the bot's own changes (a refunded order) on top of read-only demo data."""

from __future__ import annotations

from typing import Any, Protocol

from agent.interfaces import DataSource


class OrderUpdates(Protocol):
    async def order_update(self, order_id: str) -> dict[str, Any] | None: ...


class OverlayDataSource:
    """
    Args:
        base: the business data (JSON files, an SQLite file); never written to.
        updates: what this bot recorded about orders (adapters/storage/records.py `SqlRecords`).
    """

    def __init__(self, base: DataSource, updates: OrderUpdates):
        self.base = base
        self.updates = updates

    async def get_order(self, order_id: str) -> dict[str, Any] | None:
        order = await self.base.get_order(order_id)
        if order is None:
            return None
        change = await self.updates.order_update(order_id)
        return {**order, **change} if change else order

    async def get_customer(self, customer_id: str) -> dict[str, Any] | None:
        return await self.base.get_customer(customer_id)

    async def find_customer(self, platform: str, user_id: str) -> dict[str, Any] | None:
        return await self.base.find_customer(platform, user_id)
