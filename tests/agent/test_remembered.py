"""A request that leaves out the order it is about takes the one its speaker was just talking about,
through the real router on a real SQLite file; never another person's, never a guess between two.

Alice (C-001) owns O-23456 (฿3,290, delivered) and O-12345 (shipped). Each test says what she
sees and what was stored (refund rows).
"""

from __future__ import annotations

import pytest

from agent.app import App
from bots.app import build_app
from tests.helpers import REPO, say


@pytest.fixture
async def app(db_url: str):  # type: ignore[no-untyped-def]
    async with build_app(REPO / "config", REPO / "data", db_url) as app:
        yield app


async def refunds(app: App) -> list[tuple]:
    return [tuple(r) for r in await app.store.fetch("SELECT order_id, amount FROM refunds")]  # type: ignore[attr-defined]


async def test_refund_it_after_a_status_check_asks_to_refund_that_order(app: App) -> None:
    await say(app.router, "where is O-23456")
    r, _ = await say(app.router, "ok, refund it please")
    assert r.confirmation and "Refund ฿3,290 for order O-23456?" in r.text
    assert await refunds(app) == []  # the confirmation, which names the order, is still the check
    done, _ = await say(app.router, "yes")
    assert "O-23456" in done.text and await refunds(app) == [("O-23456", 3290.0)]


async def test_a_status_question_after_a_refund_is_about_the_same_order(app: App) -> None:
    await say(app.router, "refund O-23456")
    await say(app.router, "no")
    r, delivered = await say(app.router, "has it been delivered?")
    assert delivered[0].text == "Checking order O-23456..." and "delivered" in r.text


@pytest.mark.parametrize("text", ["and where is my other order?", "refund a different order", "check another order"])
async def test_a_request_about_another_order_asks_which(app: App, text: str) -> None:
    await say(app.router, "where is O-23456")
    r, _ = await say(app.router, text)
    assert "Order IDs look like" in r.text and not r.confirmation
    assert await refunds(app) == []


async def test_two_orders_just_talked_about_are_not_guessed_between(app: App) -> None:
    await say(app.router, "where is O-23456")
    await say(app.router, "and O-12345?")
    r, _ = await say(app.router, "refund it")
    assert "Order IDs look like" in r.text and not r.confirmation


async def test_an_order_talked_about_long_ago_is_not_taken(app: App) -> None:
    await say(app.router, "where is O-23456")
    for text in ["what can you do", "add buy milk to my list", "what's on my list", "thanks", "hello"]:
        await say(app.router, text)
    r, _ = await say(app.router, "refund it")
    assert "Order IDs look like" in r.text and not r.confirmation


async def test_an_order_just_refused_is_not_taken_again(app: App) -> None:
    r, _ = await say(app.router, "where is O-34567")  # Bilal's order, not Alice's
    assert "orders on your account" in r.text
    await say(app.router, "never mind")
    r, _ = await say(app.router, "refund it")
    assert "Order IDs look like" in r.text and not r.confirmation and r.alerts == []


async def test_nobody_takes_the_order_someone_else_talked_about(app: App) -> None:
    await say(app.router, "where is O-23456")  # Alice
    r, _ = await say(app.router, "refund it", customer="C-002")  # Bilal, in Alice's conversation
    assert "Order IDs look like" in r.text and not r.confirmation
    assert await refunds(app) == []
