"""Daily LLM spend per customer and per channel; spent traffic falls back to the rules mode."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime

from agent.types import utcnow


class DailyBudget:
    """Dollars spent today (UTC) per customer and per channel, kept in this process.

    Args:
        per_customer: the daily limit for one customer, or None for no limit.
        per_channel: the daily limit for one chat channel, or None for no limit.
        clock: returns the current aware UTC time (tests move it past midnight).
    """

    def __init__(
        self,
        per_customer: float | None,
        per_channel: float | None,
        clock: Callable[[], datetime] = utcnow,
    ):
        self.limits = {"customer": per_customer, "channel": per_channel}
        self.clock = clock
        self._day: date | None = None
        self._spent: dict[str, float] = {}

    def _today(self) -> dict[str, float]:
        today = self.clock().date()
        if today != self._day:
            # A new UTC day starts every budget afresh.
            self._day, self._spent = today, {}
        return self._spent

    @staticmethod
    def keys(customer: str | None, channel: str) -> dict[str, str]:
        out = {"channel": f"channel:{channel}"}
        if customer:
            out["customer"] = f"customer:{customer}"
        return out

    def add(self, customer: str | None, channel: str, dollars: float) -> None:
        spent = self._today()
        for key in self.keys(customer, channel).values():
            spent[key] = spent.get(key, 0.0) + dollars

    def spent(self, key: str) -> float:
        return self._today().get(key, 0.0)

    def exhausted(self, customer: str | None, channel: str) -> str | None:
        """The budget key (`customer:C-001`, `channel:slack:C1`) that is spent, if any."""
        spent = self._today()
        for kind, key in self.keys(customer, channel).items():
            limit = self.limits[kind]
            if limit is not None and spent.get(key, 0.0) >= limit:
                return key
        return None

    @property
    def day(self) -> str:
        self._today()
        return str(self._day)
