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
    # A customer's own orders, in the data's order, alike from both; none for a stranger.
    alice = [o["order_id"] for o in await json_src.orders_of("C-001")]
    assert alice == ["O-12345", "O-23456", "O-24680"]
    assert [o["order_id"] for o in await sqlite_src.orders_of("C-001")] == alice
    assert await sqlite_src.orders_of("C-404") == await json_src.orders_of("C-404") == []


async def test_router_runs_on_the_sqlite_source(tmp_path: Path, db_url: str) -> None:
    data = SQLiteDataSource(tmp_path / "shop.db")
    await data.import_json(REPO / "data")
    async with build_app(REPO / "config", REPO / "data", db_url, data_source=data) as app:
        router = app.router
        response, _ = await say(router, "where's O-12345")
    assert "shipped" in response.text and "UPS" in response.text


async def test_own_orders_show_what_the_bot_recorded(db_url: str) -> None:
    """Through the app's data (the bot's records over the files, demo dates resolved), a refunded
    order is refunded in the customer's list too, and its dates are real dates."""
    async with build_app(REPO / "config", REPO / "data", db_url) as app:
        await say(app.router, "refund O-23456", customer="C-001")
        await say(app.router, "yes", customer="C-001")
        orders = {o["order_id"]: o for o in await app.data.orders_of("C-001")}
    assert orders["O-23456"]["status"] == "refunded"
    assert orders["O-23456"]["refund_amount"] == 3290
    assert orders["O-12345"]["status"] == "shipped"
    assert not str(orders["O-12345"]["eta"]).startswith("+")
