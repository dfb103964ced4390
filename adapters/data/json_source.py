"""DataSource over JSON files: data/orders.json and data/customers.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent.errors import ConfigError

PLATFORM_FIELDS = {"slack": "slack_user_id", "discord": "discord_user_id"}


def read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as e:
        raise ConfigError(str(path), "file not found") from e
    except json.JSONDecodeError as e:
        raise ConfigError(str(path), f"not valid JSON ({e.msg})", line=e.lineno) from e
    if not isinstance(data, dict):
        raise ConfigError(str(path), "the top level must be an object keyed by id", line=1)
    return data


class JSONDataSource:
    """
    Args:
        data_dir: the folder holding orders.json and customers.json (objects keyed by id).
    """

    def __init__(self, data_dir: str | Path):
        d = Path(data_dir)
        self.orders = read_json(d / "orders.json")
        self.customers = read_json(d / "customers.json")
        self._by_platform = {
            (platform, str(c[field])): c
            for c in self.customers.values()
            for platform, field in PLATFORM_FIELDS.items()
            if c.get(field)
        }

    async def get_order(self, order_id: str) -> dict[str, Any] | None:
        return self.orders.get(order_id)

    async def get_customer(self, customer_id: str) -> dict[str, Any] | None:
        return self.customers.get(customer_id)

    async def orders_of(self, customer_id: str) -> list[dict[str, Any]]:
        return [o for o in self.orders.values() if o.get("customer_id") == customer_id]

    async def find_customer(self, platform: str, user_id: str) -> dict[str, Any] | None:
        return self._by_platform.get((platform, user_id))
