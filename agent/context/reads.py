"""What a turn's steps read through: the business data read once per attempt, and a tool's own records."""

from __future__ import annotations

from typing import Any

from agent.domain.records import ToolRecord
from agent.errors import ToolError
from agent.sources import DataSource
from agent.storage import ToolRecords


class TurnReads:
    """The business data as one attempt at a turn reads it: its policy check and its tools see the
    same order, read once. The router starts one per attempt, so a retried turn reads afresh.

    Args:
        data: where orders and customers come from.
    """

    def __init__(self, data: DataSource) -> None:
        self.data = data
        self._orders: dict[str, dict[str, Any] | None] = {}
        self._orders_of: dict[str, list[dict[str, Any]]] = {}

    async def get_order(self, order_id: str) -> dict[str, Any] | None:
        if order_id not in self._orders:
            self._orders[order_id] = await self.data.get_order(order_id)
        return self._orders[order_id]  # shared, like every DataSource's answers: read, never changed

    async def get_customer(self, customer_id: str) -> dict[str, Any] | None:
        return await self.data.get_customer(customer_id)

    async def orders_of(self, customer_id: str) -> list[dict[str, Any]]:
        if customer_id not in self._orders_of:
            orders = await self.data.orders_of(customer_id)
            # The attempt's later lookups of these orders (the policy check, the tool) see the same facts.
            self._orders_of[customer_id] = [self._orders.setdefault(str(o.get("order_id")), o) or o for o in orders]
        return self._orders_of[customer_id]

    async def find_customer(self, platform: str, user_id: str) -> dict[str, Any] | None:
        return await self.data.find_customer(platform, user_id)


class OwnRecords:
    """A running tool's records, read back: the kinds it declares (`Tool.records`) that have no table
    of their own, written for the same requester. The gateway hands each run its own.

    Args:
        source: where such records are kept (`Storage.records`); None: this storage keeps none.
        tool: the running tool's name, for its errors.
        kinds: the kinds the tool declares.
        owner: the requester (`ToolContext.owner`): only their records are read.
    """

    def __init__(
        self, source: ToolRecords | None, tool: str = "", kinds: frozenset[str] = frozenset(), owner: str = ""
    ):
        self.source, self.tool, self.kinds, self.owner = source, tool, kinds, owner

    async def find(self, kind: str, key: str | None = None) -> list[ToolRecord]:
        """The requester's records of `kind` (only the one with `key`, if given), oldest first."""
        if kind not in self.kinds:
            raise ToolError(self.tool, f"reads records it does not declare ({kind!r})", code="undeclared_record")
        if self.source is None:
            raise ToolError(self.tool, f"this storage keeps no {kind!r} records", code="no_records")
        return await self.source.find_records(kind, self.owner, key)


NO_RECORDS = OwnRecords(None, "a tool")  # a tool that declares no records, or a run outside the gateway, reads none
