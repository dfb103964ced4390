"""A question with choices on Discord, through discord.py against the stand-in gateway and REST API:
"Did you mean ...?" as buttons, pressable only by the person asked."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from tests.bots.discord_harness import ALICE, MALLORY, running_bot
from tests.standins.discord_standin import StandInDiscord


@pytest.fixture
async def standin() -> AsyncIterator[StandInDiscord]:
    server = await StandInDiscord().start()
    yield server
    await server.aclose()


async def posted(standin: StandInDiscord, channel: str, count: int) -> list[str]:
    await standin.wait_until(lambda: len(standin.posted(channel)) >= count)
    await asyncio.sleep(0.05)  # anything more that would (wrongly) follow
    return [m["content"] for m in standin.posted(channel)]


async def test_a_choice_button_continues_the_request_and_only_its_user_can_press_it(
    standin: StandInDiscord, db_url: str
) -> None:
    async with running_bot(standin, db_url) as run:
        await standin.slash("ask", {"question": "O-23456 was a disappointment"}, ALICE)
        threads = await standin.wait_until(lambda: standin.calls_to("POST", "/threads"))
        thread = threads[0].path.split("/")[4]
        await posted(standin, thread, 1)
        question = standin.posted(thread)[0]
        buttons = {b["label"]: b["custom_id"] for row in question["components"] for b in row["components"]}
        ticket = buttons["open a support ticket"]

        other = await standin.click(question, ticket, MALLORY)
        refusal = (await standin.wait_until(lambda: standin.calls_to("POST", f"/interactions/{other}")))[0]
        tickets_meanwhile = await run.app.store.fetch("SELECT order_id FROM tickets")  # type: ignore[attr-defined]
        click = await standin.click(question, ticket, ALICE)
        replies = await posted(standin, thread, 3)
        tickets = await run.app.store.fetch("SELECT order_id FROM tickets")  # type: ignore[attr-defined]
    assert question["content"].startswith("Did you mean")
    assert list(buttons) == ["check an order's status", "open a support ticket", "something else"]
    assert refusal.body["type"] == 4 and refusal.body["data"]["flags"] == 64  # ephemeral, only to Mallory
    assert "Only the person who asked" in refusal.body["data"]["content"]
    assert tickets_meanwhile == []
    ack = standin.calls_to("POST", f"/interactions/{click}")[0]
    assert ack.body["type"] == 7 and ack.body["data"]["components"] == []  # the choices are used up
    assert "I've opened ticket" in replies[-1] and "O-23456 was a disappointment" in replies[-1]
    assert [tuple(t) for t in tickets] == [("O-23456",)]
