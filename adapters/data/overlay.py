"""A DataSource that shows the bot's own changes (a refunded order) on top of read-only demo data."""

from __future__ import annotations

from typing import Any

from agent.sources import DataSource
from agent.storage import OrderUpdates


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
        return None if order is None else await self._overlaid(order_id, order)

    async def _overlaid(self, order_id: str, order: dict[str, Any]) -> dict[str, Any]:
        return overlaid(order, await self.updates.order_update(order_id))

    async def get_customer(self, customer_id: str) -> dict[str, Any] | None:
        return await self.base.get_customer(customer_id)

    async def orders_of(self, customer_id: str) -> list[dict[str, Any]]:
        orders = await self.base.orders_of(customer_id)
        changes = await self.updates.updates_of([str(o.get("order_id")) for o in orders])
        return [overlaid(o, changes.get(str(o.get("order_id")))) for o in orders]

    async def find_customer(self, platform: str, user_id: str) -> dict[str, Any] | None:
        return await self.base.find_customer(platform, user_id)


def overlaid(order: dict[str, Any], change: dict[str, Any] | None) -> dict[str, Any]:
    """The order as the business data has it, with what this bot recorded about it on top."""
    if order.get("status") == "refunded" and "refund_amount" not in order:
        # Refunded in the business data, before this bot: the whole order was refunded.
        order = {**order, "refund_amount": order.get("amount")}
    if not change:
        return order
    merged = {**order, **change}
    refunded, total = float(merged.get("refund_amount") or 0), float(order.get("amount") or 0)
    if merged.get("status") == "refunded" and 0 < refunded < total:
        # Part of the order was refunded: it keeps its delivery status in `delivery_status`.
        merged |= {"status": "partially_refunded", "delivery_status": order.get("status")}
    return merged
