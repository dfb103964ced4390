"""Daily LLM spend per customer and per channel; spent traffic falls back to the rules mode.

The dollars live in a `SpendLedger` (adapters/storage/spend.py keeps them in the database, so
every worker shares them and a restart forgets nothing); the budget is checked before each call.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from agent.domain.types import utcnow
from agent.storage import SpendLedger


class MemorySpend:
    """A SpendLedger in this process only: for a custom session store without SQL, and unit tests."""

    def __init__(self) -> None:
        self._spent: dict[tuple[str, str], float] = {}

    async def spent(self, day: str, keys: list[str]) -> dict[str, float]:
        return {k: self._spent[(day, k)] for k in keys if (day, k) in self._spent}

    async def add(self, day: str, keys: list[str], dollars: float) -> None:
        for k in keys:
            self._spent[(day, k)] = self._spent.get((day, k), 0.0) + dollars


class DailyBudget:
    """Dollars spent today (UTC) per customer and per channel.

    Args:
        per_customer: the daily limit for one customer, or None for no limit.
        per_channel: the daily limit for one chat channel, or None for no limit.
        ledger: where the dollars are kept (default: this process's memory).
        clock: returns the current aware UTC time (tests move it past midnight).
    """

    def __init__(
        self,
        per_customer: float | None,
        per_channel: float | None,
        ledger: SpendLedger | None = None,
        clock: Callable[[], datetime] = utcnow,
    ):
        self.limits = {"customer": per_customer, "channel": per_channel}
        self.ledger: SpendLedger = ledger or MemorySpend()
        self.clock = clock

    @property
    def day(self) -> str:
        return str(self.clock().date())

    @staticmethod
    def keys(customer: str | None, channel: str) -> dict[str, str]:
        out = {"channel": f"channel:{channel}"}
        if customer:
            out["customer"] = f"customer:{customer}"
        return out

    async def add(self, customer: str | None, channel: str, dollars: float) -> None:
        if dollars > 0:
            await self.ledger.add(self.day, list(self.keys(customer, channel).values()), dollars)

    async def exhausted(self, customer: str | None, channel: str) -> tuple[str, float] | None:
        """The budget key (`customer:C-001`, `channel:slack:C1`) that is spent, and its dollars, if any."""
        keys = self.keys(customer, channel)
        limited = {kind: key for kind, key in keys.items() if self.limits[kind] is not None}
        if not limited:
            return None
        spent = await self.ledger.spent(self.day, list(limited.values()))
        for kind, key in limited.items():
            limit = self.limits[kind]
            if limit is not None and spent.get(key, 0.0) >= limit:
                return key, spent[key]
        return None
