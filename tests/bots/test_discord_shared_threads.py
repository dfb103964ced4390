"""Two people in one Discord thread, through discord.py against the stand-in Discord.

Alice (510...001, customer C-001) asks for a refund; Mallory (no customer) is in the same thread.
Each test says what each person sees and what was stored.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.bots.discord_harness import ALICE, MALLORY, running_bot
from tests.standins.discord_standin import GENERAL_ID, StandInDiscord


@pytest.fixture
async def standin() -> AsyncIterator[StandInDiscord]:
    server = await StandInDiscord().start()
    yield server
    await server.aclose()


@pytest.fixture(params=[{}, {"shard_count": 2}], ids=["one connection", "two shards"])
def shards(request: pytest.FixtureRequest) -> dict[str, Any]:
    return request.param  # type: ignore[no-any-return]


async def test_only_the_requester_confirms_by_button_or_by_yes(
    standin: StandInDiscord, db_url: str, shards: dict[str, Any]
) -> None:
    async with running_bot(standin, db_url, **shards) as run:
        await standin.slash("ask", {"question": "please refund order O-23456"}, ALICE, channel_id=GENERAL_ID)
        threads = await standin.wait_until(lambda: standin.calls_to("POST", "/threads"))
        thread = threads[0].path.split("/")[4]
        question = (await standin.wait_until(lambda: standin.posted(thread)))[0]
        confirm = question["components"][0]["components"][0]["custom_id"]
        # Mallory clicks Alice's Confirm: an ephemeral refusal, nothing runs.
        click = await standin.click(question, confirm, MALLORY)
        refused = await standin.wait_until(lambda: standin.calls_to("POST", f"/interactions/{click}"))
        # Mallory types "yes" in Alice's thread.
        await standin.say(thread, MALLORY, "yes")
        await standin.wait_until(lambda: len(standin.posted(thread)) >= 2)
        await run.bot.dispatcher.drain()
        refunds_meanwhile = await run.app.store.fetch("SELECT order_id FROM refunds")  # type: ignore[attr-defined]
        # Alice's own "yep" confirms.
        await standin.say(thread, ALICE, "yep")
        await standin.wait_until(lambda: len(standin.posted(thread)) >= 3)
        await run.bot.dispatcher.drain()  # the answer can be posted before its turn has committed
        refunds = await run.app.store.fetch("SELECT order_id, amount FROM refunds")  # type: ignore[attr-defined]
    assert refused[0].body["data"]["flags"] & 64  # ephemeral: only Mallory sees it
    texts = [m["content"] for m in standin.posted(thread)]
    assert "Only the person who asked" in texts[1]  # Mallory's "yes" changed nothing
    assert refunds_meanwhile == []
    assert "refunded" in texts[2] and [tuple(r) for r in refunds] == [("O-23456", 3290.0)]
