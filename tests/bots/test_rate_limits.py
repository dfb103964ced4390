"""A platform's 429 pauses the method for every sender, in this process and in every worker sharing
the database; real slack_sdk clients against the stand-in Slack Web API."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from aiohttp import ClientRequest

from adapters.storage.ratelimits import NEVER_PAUSED, Pause, SqlPauseBoard
from adapters.storage.schema import rate_pauses
from adapters.storage.sql import SqlStore
from agent.domain.types import utcnow
from bots.ratelimits import MemoryPauseBoard, Pace, RateLimiter
from bots.slack.ratelimits import PacedWebClient
from tests.standins.slack_standin import SlackStandIn, stamping


@pytest.fixture
async def slack(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[SlackStandIn]:
    """The stand-in; every call says when it left, so a call already on its way when another
    sender's call was refused is told from one made after the refusal."""
    monkeypatch.setattr(ClientRequest, "send", stamping(ClientRequest.send))
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
    # Nobody called before Retry-After had passed: one posting call is out at a time across the
    # workers, so none was even on its way when a 429 was answered.
    assert slack.too_soon() == [] and slack.in_flight_at_429() == []
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
    slack.fail_next("chat.postMessage", 429, retry_after=2)  # outlasts the other calls on a loaded machine
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
            await limiter.after("k")
        return loop.time() - start

    assert await six() < 0.1  # never refused: no guess at the limit slows it down
    await limiter.refused("k", "chat.postMessage", retry_after=0.0)
    # Once the platform has said "slow down": two back to back, then one every 50 ms.
    assert await six() >= 0.19


async def test_once_refused_one_call_is_in_flight_across_workers(any_db_url: str, slack: SlackStandIn) -> None:
    """A 429 cannot stop a call another worker has already sent: once the method was refused, the
    next call leaves only when the last one's answer is in, so none is sooner than Retry-After."""
    stores = [SqlStore(any_db_url), SqlStore(any_db_url)]
    clients = [
        PacedWebClient(RateLimiter(SqlPauseBoard(s), "slack"), token="xoxb-one", base_url=f"{slack.url}/api/")
        for s in stores
    ]
    for s in stores:
        await s.ensure_schema()
    slack.fail_next("chat.postMessage", 429)  # Retry-After 0: the method is hot, nothing waits
    await clients[0].chat_postMessage(channel="C00", text="first")
    slack.rate_limit({"chat.postMessage"}, seconds=2.5, retry_after=1)
    answers = await asyncio.gather(
        *(clients[n % 2].chat_postMessage(channel=f"C{n:02d}", text=f"answer {n}") for n in range(12))
    )
    for s in stores:
        await s.aclose()
    assert all(a["ok"] for a in answers)
    assert slack.too_soon() == []


@pytest.mark.parametrize("method", ["conversations.replies", "assistant.threads.setTitle"])
async def test_a_method_without_a_published_limit_has_one_call_in_flight_before_its_first_429(
    any_db_url: str, slack: SlackStandIn, method: str
) -> None:
    """A method the bot calls now and then (reading a thread when it joins one, titling an
    assistant thread) may be refused at its very first call; a call another worker had already sent
    would then arrive inside the pause. Held from its first call, it has none on its way."""
    stores = [SqlStore(any_db_url), SqlStore(any_db_url)]
    clients = [
        PacedWebClient(RateLimiter(SqlPauseBoard(s), "slack"), token="xoxb-one", base_url=f"{slack.url}/api/")
        for s in stores
    ]
    for s in stores:
        await s.ensure_schema()
    params = (
        {"channel": "D0ONE", "thread_ts": "1.1", "title": "t"}
        if "setTitle" in method
        else {"channel": "C1", "ts": "1.1"}
    )
    slack.rate_limit({method}, seconds=2.0, retry_after=1)
    answers = await asyncio.gather(*(clients[n % 2].api_call(method, json=params) for n in range(12)))
    for s in stores:
        await s.aclose()
    assert all(a["ok"] for a in answers) and sum(c.ok for c in slack.calls if c.method == method) == 12
    refused = [c for c in slack.calls if c.method == method and not c.ok]
    assert refused  # the window was met
    assert slack.too_soon() == [] and slack.in_flight_at_429() == []


class Watched(MemoryPauseBoard):
    """A board that counts what it is asked."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    async def read(self, key: str) -> Pause | None:
        self.asked.append("read")
        return await super().read(key)

    async def claim(self, key: str, hold_seconds: float) -> Pause | None:
        self.asked.append("claim")
        return await super().claim(key, hold_seconds)


async def test_a_paced_method_is_held_from_its_first_call_and_not_slowed() -> None:
    """A posting method has one call in flight across workers before any 429 (the hold is its one
    round trip), and no guess at the limit slows it down."""
    board = Watched()
    limiter = RateLimiter(board, "slack", hot_seconds=0.3)
    loop = asyncio.get_running_loop()
    start = loop.time()
    for _ in range(3):
        await limiter.before("k", "k:C1", Pace(per_second=1.0))
        held = await board.read("k")
        assert held is not None and held.probe_until is not None  # held while its call is out
        await limiter.after("k")
    assert loop.time() - start < 0.5
    assert board.asked == ["claim", "read"] * 3


async def test_a_method_is_held_from_its_first_call_and_paced_only_once_refused() -> None:
    board = Watched()
    limiter = RateLimiter(board, "slack", hot_seconds=0.3)
    for _ in range(3):
        await limiter.before("k")
        await limiter.after("k")
    assert board.asked == ["claim"] * 3  # held, one round trip a call: nobody else's call is out
    await limiter.refused("k", "chat.postMessage", retry_after=0.0)
    board.asked.clear()
    await limiter.before("k", "k:C1", Pace(per_second=100.0))
    await limiter.after("k")
    assert "claim" in board.asked
    await asyncio.sleep(1.3)  # the pause (at most a second) and the hot spell are over
    board.asked.clear()
    loop = asyncio.get_running_loop()
    start = loop.time()
    for _ in range(3):
        await limiter.before("k", "k:C1", Pace(per_second=1.0))
        await limiter.after("k")
    assert board.asked == ["claim"] * 3 and loop.time() - start < 0.5  # cooled down: held, not paced


async def test_a_worker_killed_holding_a_hot_method_blocks_it_only_for_its_hold(any_db_url: str) -> None:
    stores = [SqlStore(any_db_url), SqlStore(any_db_url)]
    for s in stores:
        await s.ensure_schema()
    killed, other = (RateLimiter(SqlPauseBoard(s), "slack", hold_seconds=1.5) for s in stores)
    await killed.refused("k", "chat.postMessage", retry_after=0.0)
    await killed.before("k")  # waits out the pause, then holds the method; it dies before `after`
    loop = asyncio.get_running_loop()
    start = loop.time()
    await other.before("k")
    waited = loop.time() - start
    assert 1.3 < waited < 2.0  # a 429 the dead worker never recorded has had its hold to pass
    start = loop.time()
    restarted = RateLimiter(SqlPauseBoard(stores[0]), "slack", hold_seconds=1.5)  # a new process on its database
    waiting = asyncio.ensure_future(restarted.before("k"))
    await asyncio.sleep(0.3)
    assert not waiting.done()  # the live holder's call is still out
    await other.after("k")
    await waiting
    # Its answer lets the next call go at once, well before the hold (1.5 s from its claim) would end;
    # a database at load 17 took 0.4 s to pass it on.
    assert loop.time() - start < 1.2
    for s in stores:
        await s.aclose()


async def test_the_board_keeps_the_later_pause_and_only_its_own_hold(any_db_url: str) -> None:
    store = SqlStore(any_db_url)
    await store.ensure_schema()
    board = SqlPauseBoard(store)
    now = utcnow()
    await board.pause("k", now + timedelta(seconds=5))
    await board.pause("k", now + timedelta(seconds=1))
    held = await board.read("k")
    assert held is not None and held.until == now + timedelta(seconds=5)  # the later pause stays
    assert await board.claim("k", 30.0) is None  # paused: nobody holds it
    ended = rate_pauses.update().values(until=now - timedelta(seconds=1))
    await store.run(lambda conn: conn.execute(ended), what="end the pause")
    mine = await board.claim("k", 30.0)
    assert mine is not None and mine.probe_until is not None
    assert await board.claim("k", 30.0) is None  # one holder at a time
    await board.unclaim("k", mine.probe_until - timedelta(seconds=1))  # not its hold: nothing changes
    assert await board.claim("k", 30.0) is None
    await board.unclaim("k", mine.probe_until)
    again = await board.claim("k", 30.0)
    assert again is not None
    await board.pause("k", utcnow() + timedelta(seconds=1))  # the held call was refused: its hold ends
    held = await board.read("k")
    assert held is not None and held.probe_until is None
    fresh = await board.claim("new", 5.0)  # never paused: entered on the board, held
    assert fresh is not None and fresh.until == NEVER_PAUSED and fresh.probe_until is not None
    assert await board.claim("new", 5.0) is None
    await board.unclaim("new", fresh.probe_until)
    assert await board.claim("new", 5.0) is not None
    await store.aclose()
