"""JSON and SQLite data sources answer alike, and swapping one for the other takes a line."""

from __future__ import annotations

from pathlib import Path

from adapters.data.json_source import JSONDataSource
from adapters.data.sqlite_source import SQLiteDataSource
from bots.app import build_app
from tests.helpers import REPO, say


async def test_sqlite_source_matches_json_source(tmp_path: Path) -> None:
    json_src = JSONDataSource(REPO / "data")
    sqlite_src = SQLiteDataSource(tmp_path / "shop.db")
    await sqlite_src.import_json(REPO / "data")
    for order_id in [*json_src.orders, "O-99999"]:
        assert await sqlite_src.get_order(order_id) == await json_src.get_order(order_id)
    assert await sqlite_src.get_customer("C-001") == await json_src.get_customer("C-001")
    assert (await sqlite_src.find_customer("slack", "U0ALICE01"))["customer_id"] == "C-001"  # type: ignore[index]
    assert (await json_src.find_customer("discord", "510000000000000002"))["customer_id"] == "C-002"  # type: ignore[index]
    assert await json_src.find_customer("slack", "U-NOBODY") is None


async def test_router_runs_on_the_sqlite_source(tmp_path: Path, db_url: str) -> None:
    data = SQLiteDataSource(tmp_path / "shop.db")
    await data.import_json(REPO / "data")
    async with build_app(REPO / "config", REPO / "data", db_url, data_source=data) as app:
        router = app.router
        response, _ = await say(router, "where's O-12345")
    assert "shipped" in response.text and "UPS" in response.text
