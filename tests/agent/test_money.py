"""Money is worded in the store's currency everywhere the bot phrases it, in one format."""

from __future__ import annotations

from agent.domain.catalog import load_store_settings
from agent.templates import money, render
from tests.helpers import REPO


def test_one_format_for_every_amount() -> None:
    assert money(1490, "฿") == "฿1,490" and money(89.5, "฿") == "฿89.50" and money(19.99, "$") == "$19.99"
    assert render("Refund {amount|money} for {order_id}?", {"amount": "89.5", "order_id": "O-1"}, "฿") == (
        "Refund ฿89.50 for O-1?"
    )
    assert render("{amount|money}", {"amount": "n/a"}, "฿") == "n/a"  # not a number: shown as given


def test_each_store_has_its_own_currency() -> None:
    assert load_store_settings(REPO / "config").currency == "฿"
    assert load_store_settings(REPO / "config" / "stores" / "outdoor").currency == "$"
