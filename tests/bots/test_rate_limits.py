"""A platform's 429 pauses the method for every sender, in this process and in every worker sharing
the database; real slack_sdk clients against the stand-in Slack Web API."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from adapters.storage.ratelimits import SqlPauseBoard
from adapters.storage.sql import SqlStore
from bots.ratelimits import MemoryPauseBoard, Pace, RateLimiter
from bots.slack.ratelimits import PacedWebClient
from tests.standins.slack_standin import SlackStandIn


@pytest.fixture
async def slack() -> AsyncIterator[SlackStandIn]:
    s = SlackStandIn()
    await s.start()
    yield s
    await s.aclose()


class Counted:
    def __init__(self) -> None:
        self.refused: list[tuple[str, str]] = []

    def rate_limited(self, platform: str, method: str) -> None:
        self.refused.append((platform, method))


async def test_a_429_pauses_every_sender_of_every_worker(any_db_url: str, slack: SlackStandIn) -> None:
    stores = [SqlStore(any_db_url), SqlStore(any_db_url)]  # two workers on one database
    counted = Counted()
    clients = [
        PacedWebClient(RateLimiter(SqlPauseBoard(s), "slack", counted), token="xoxb-one", base_url=f"{slack.url}/api/")
        for s in stores
    ]
    for s in stores:
        await s.ensure_schema()
    slack.rate_limit({"chat.postMessage"}, seconds=2.5, retry_after=1)
    posts = [clients[n % 2].chat_postMessage(channel=f"C{n:02d}", text=f"answer {n}") for n in range(24)]
    answers = await asyncio.gather(*posts)
    for s in stores:
        await s.aclose()
    assert all(a["ok"] for a in answers)
    assert len(slack.to("chat.postMessage")) == 24  # every post shown once
    # Nobody called again before Retry-After had passed; only a call the other worker had already
    # sent when the first 429 was answered may arrive just after it.
    assert slack.too_soon(in_flight=0.1) == []
    assert len(slack.too_soon()) <= 1
    refused = [c for c in slack.calls if not c.ok]
    assert 2 <= len(refused) <= 6  # one probe a pause, not one per sender
    assert counted.refused and set(counted.refused) == {("slack", "chat.postMessage")}


async def test_one_worker_never_calls_before_retry_after(slack: SlackStandIn) -> None:
    client = PacedWebClient(RateLimiter(MemoryPauseBoard(), "slack"), token="xoxb-one", base_url=f"{slack.url}/api/")
    slack.rate_limit({"chat.postMessage"}, seconds=2.5, retry_after=1)
    answers = await asyncio.gather(*(client.chat_postMessage(channel=f"C{n}", text=f"{n}") for n in range(20)))
    assert all(a["ok"] for a in answers) and len(slack.to("chat.postMessage")) == 20
    assert slack.too_soon() == []


async def test_another_workspace_and_another_method_do_not_wait(slack: SlackStandIn) -> None:
    limiter = RateLimiter(MemoryPauseBoard(), "slack")
    api = f"{slack.url}/api/"
    one, other = (
        PacedWebClient(limiter, token="xoxb-one", base_url=api),
        PacedWebClient(limiter, token="xoxb-two", base_url=api),
    )
    slack.fail_next("chat.postMessage", 429)
    slow = asyncio.ensure_future(one.chat_postMessage(channel="C1", text="first"))
    await asyncio.sleep(0.05)
    await other.chat_postMessage(channel="C1", text="elsewhere")
    await one.chat_update(channel="C1", ts="1.1", text="an edit")
    assert not slow.done()  # its own method and workspace is still paused
    await slow
    assert [c.params["text"] for c in slack.calls if c.ok and c.method == "chat.postMessage"] == [
        "elsewhere",
        "first",
    ]


async def test_after_a_pause_sends_are_paced_to_the_published_rate() -> None:
    limiter = RateLimiter(MemoryPauseBoard(), "slack")
    loop = asyncio.get_running_loop()
    pace = Pace(per_second=20.0, burst=2)

    async def six() -> float:
        start = loop.time()
        for _ in range(6):
            await limiter.before("k", "k:C1", pace)
            await limiter.after("k", answered=True)
        return loop.time() - start

    assert await six() < 0.1  # never refused: no guess at the limit slows it down
    await limiter.refused("k", "chat.postMessage", retry_after=0.0)
    # Once the platform has said "slow down": two back to back, then one every 50 ms.
    assert await six() >= 0.19
