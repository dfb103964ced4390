"""A reply to the bot's own yes/no question on Discord, through discord.py against the stand-in
gateway and REST API: a typed yes with thanks runs the refund once, a typed "yes, but not now" runs
nothing and keeps the question open with its buttons, and the Confirm button then runs it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from tests.bots.discord_harness import ALICE, running_bot
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


async def asked(standin: StandInDiscord) -> str:
    """/ask for the refund; returns the thread its confirmation question was asked in."""
    await standin.slash("ask", {"question": "please refund order O-23456"}, ALICE)
    threads = await standin.wait_until(lambda: standin.calls_to("POST", "/threads"))
    thread = threads[0].path.split("/")[4]
    (question,) = await posted(standin, thread, 1)
    assert "฿3,290" in question and "confirm or cancel" in question
    return thread


async def test_a_typed_yes_with_thanks_runs_the_refund_once(standin: StandInDiscord, db_url: str) -> None:
    async with running_bot(standin, db_url) as run:
        thread = await asked(standin)
        await standin.say(thread, ALICE, "yep that's the one, thanks so much!")
        replies = await posted(standin, thread, 2)
        refunds = await run.app.store.fetch("SELECT order_id, amount FROM refunds")  # type: ignore[attr-defined]
    assert "refunded ฿3,290" in replies[-1]
    assert [tuple(r) for r in refunds] == [("O-23456", 3290.0)]


async def test_a_typed_yes_but_not_now_runs_nothing_until_the_button(standin: StandInDiscord, db_url: str) -> None:
    async with running_bot(standin, db_url) as run:
        thread = await asked(standin)
        await standin.say(thread, ALICE, "sure, but not this week")
        replies = await posted(standin, thread, 2)
        held = standin.posted(thread)[-1]
        refunds_meanwhile = await run.app.store.fetch("SELECT order_id FROM refunds")  # type: ignore[attr-defined]
        custom_ids = [b["custom_id"] for b in held["components"][0]["components"]]
        await standin.click(held, custom_ids[0], ALICE)
        done = await posted(standin, thread, 3)
        refunds = await run.app.store.fetch("SELECT order_id FROM refunds")  # type: ignore[attr-defined]
    assert refunds_meanwhile == []
    assert "nothing happens until you say so" in replies[-1] and "O-23456" in replies[-1]
    assert custom_ids == [f"agentbot:confirm:{ALICE['id']}", f"agentbot:cancel:{ALICE['id']}"]
    assert "refunded ฿3,290" in done[-1]
    assert [tuple(r) for r in refunds] == [("O-23456",)]


async def test_a_go_ahead_in_own_words_runs_and_a_condition_first_holds(standin: StandInDiscord, db_url: str) -> None:
    async with running_bot(standin, db_url) as run:
        thread = await asked(standin)
        await standin.say(thread, ALICE, "ok, but look up O-24680 first")
        await standin.wait_until(lambda: "Still waiting" in standin.posted(thread)[-1]["content"])
        refunds_meanwhile = await run.app.store.fetch("SELECT order_id FROM refunds")  # type: ignore[attr-defined]
        await standin.say(thread, ALICE, "right, carry on and get it done")
        await standin.wait_until(lambda: "refunded" in standin.posted(thread)[-1]["content"])
        replies = await posted(standin, thread, 1)
        refunds = await run.app.store.fetch("SELECT order_id, amount FROM refunds")  # type: ignore[attr-defined]
    assert refunds_meanwhile == []  # the condition is answered first; nothing runs on it
    assert "refunded ฿3,290" in replies[-1]
    assert [tuple(r) for r in refunds] == [("O-23456", 3290.0)]


async def test_thats_it_then_a_question_about_the_refund_runs_it_once(standin: StandInDiscord, db_url: str) -> None:
    async with running_bot(standin, db_url) as run:
        thread = await asked(standin)
        await standin.say(thread, ALICE, "that's it. will I get an email about it?")
        await standin.wait_until(lambda: "refunded" in standin.posted(thread)[-1]["content"])
        refunds = await run.app.store.fetch("SELECT order_id, amount FROM refunds")  # type: ignore[attr-defined]
    assert [tuple(r) for r in refunds] == [("O-23456", 3290.0)]


async def test_a_typed_no_in_other_words_cancels(standin: StandInDiscord, db_url: str) -> None:
    async with running_bot(standin, db_url) as run:
        thread = await asked(standin)
        await standin.say(thread, ALICE, "no, on second thought I'll hang on to it")
        replies = await posted(standin, thread, 2)
        refunds = await run.app.store.fetch("SELECT order_id FROM refunds")  # type: ignore[attr-defined]
    assert "cancelled" in replies[-1]
    assert refunds == []


async def test_a_typed_change_asks_the_changed_refund_and_its_button_runs_that(
    standin: StandInDiscord, db_url: str
) -> None:
    async with running_bot(standin, db_url) as run:
        thread = await asked(standin)
        await standin.say(thread, ALICE, "hmm, make it ฿2,500")
        replies = await posted(standin, thread, 2)
        changed = standin.posted(thread)[-1]
        refunds_meanwhile = await run.app.store.fetch("SELECT order_id FROM refunds")  # type: ignore[attr-defined]
        await standin.click(changed, changed["components"][0]["components"][0]["custom_id"], ALICE)
        done = await posted(standin, thread, 3)
        refunds = await run.app.store.fetch("SELECT order_id, amount FROM refunds")  # type: ignore[attr-defined]
    assert refunds_meanwhile == []
    assert "Refund ฿2,500 for order O-23456?" in replies[-1]
    assert "refunded ฿2,500" in done[-1]
    assert [tuple(r) for r in refunds] == [("O-23456", 2500.0)]


async def test_an_unsure_reply_says_so_and_the_cancel_button_drops_it(standin: StandInDiscord, db_url: str) -> None:
    async with running_bot(standin, db_url) as run:
        thread = await asked(standin)
        await standin.say(thread, ALICE, "yes. no. I really can't decide")
        replies = await posted(standin, thread, 2)
        unsure = standin.posted(thread)[-1]
        await standin.click(unsure, unsure["components"][0]["components"][1]["custom_id"], ALICE)
        done = await posted(standin, thread, 3)
        refunds = await run.app.store.fetch("SELECT order_id FROM refunds")  # type: ignore[attr-defined]
    assert "nothing has been done yet" in replies[-1] and "Refund ฿3,290" in replies[-1]
    assert "cancelled" in done[-1]
    assert refunds == []


async def test_a_thumbs_up_emoji_alone_runs_the_refund(standin: StandInDiscord, db_url: str) -> None:
    """Discord sends emoji as they are: "👍🏽" alone is a yes, whatever its skin tone."""
    async with running_bot(standin, db_url) as run:
        thread = await asked(standin)
        await standin.say(thread, ALICE, "👍🏽")
        replies = await posted(standin, thread, 2)
        refunds = await run.app.store.fetch("SELECT order_id FROM refunds")  # type: ignore[attr-defined]
    assert "refunded ฿3,290" in replies[-1]
    assert [tuple(r) for r in refunds] == [("O-23456",)]
