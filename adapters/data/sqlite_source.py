"""DataSource over an SQLite file with `orders` and `customers` tables (JSON rows)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aiosqlite

from adapters.data.json_source import PLATFORM_FIELDS, JSONDataSource

SCHEMA = """
CREATE TABLE IF NOT EXISTS orders (order_id TEXT PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS customers (
    customer_id TEXT PRIMARY KEY, slack_user_id TEXT, discord_user_id TEXT, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS ix_customers_slack ON customers (slack_user_id);
CREATE INDEX IF NOT EXISTS ix_customers_discord ON customers (discord_user_id);
"""


class SQLiteDataSource:
    """
    Args:
        path: the SQLite file; `import_json` fills it from a data folder.
    """

    def __init__(self, path: str | Path):
        self.path = str(path)

    async def _one(self, sql: str, *args: str) -> dict[str, Any] | None:
        async with aiosqlite.connect(self.path) as db:
            row = await (await db.execute(sql, args)).fetchone()
        return json.loads(row[0]) if row else None

    async def get_order(self, order_id: str) -> dict[str, Any] | None:
        return await self._one("SELECT data FROM orders WHERE order_id = ?", order_id)

    async def get_customer(self, customer_id: str) -> dict[str, Any] | None:
        return await self._one("SELECT data FROM customers WHERE customer_id = ?", customer_id)

    async def orders_of(self, customer_id: str) -> list[dict[str, Any]]:
        async with aiosqlite.connect(self.path) as db:
            rows = await (
                await db.execute(
                    "SELECT data FROM orders WHERE json_extract(data, '$.customer_id') = ? ORDER BY rowid",
                    (customer_id,),
                )
            ).fetchall()
        return [json.loads(r[0]) for r in rows]

    async def find_customer(self, platform: str, user_id: str) -> dict[str, Any] | None:
        field = PLATFORM_FIELDS.get(platform)
        if field is None:
            return None
        return await self._one(f"SELECT data FROM customers WHERE {field} = ?", user_id)  # noqa: S608 - fixed names

    async def import_json(self, data_dir: str | Path) -> None:
        src = JSONDataSource(data_dir)
        async with aiosqlite.connect(self.path) as db:
            await db.executescript(SCHEMA)
            await db.executemany(
                "INSERT OR REPLACE INTO orders VALUES (?, ?)", [(k, json.dumps(v)) for k, v in src.orders.items()]
            )
            await db.executemany(
                "INSERT OR REPLACE INTO customers VALUES (?, ?, ?, ?)",
                [
                    (k, v.get("slack_user_id"), v.get("discord_user_id"), json.dumps(v))
                    for k, v in src.customers.items()
                ],
            )
            await db.commit()
