"""Exactly-once, in-order channel intake on a real database: duplicates, ordering, crash recovery."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from adapters.storage.bundle import sql_storage
from adapters.storage.inbox import SqlInbox
from adapters.storage.sql import SqlStore
from agent.config.schema import Messages
from agent.domain.records import InboxEvent
from agent.domain.types import Interaction, OutboundMessage
from agent.turn.router import AgentRouter
from bots.app import build_app
from bots.dispatch import Dispatcher
from tests.agent.test_router import GatedData
from tests.helpers import REPO, say


class Channel:
    """A minimal channel: turns an inbox event into an Interaction and records what it was told."""

    def __init__(self, router: AgentRouter, gate: asyncio.Event | None = None):
        self.router = router
        self.gate = gate
        self.started: list[str] = []
        self.replies: list[tuple[str, str]] = []

    async def handle(self, event: InboxEvent) -> None:
        self.started.append(event.key)
        if self.gate is not None:
            await self.gate.wait()

        async def reply(m: OutboundMessage) -> None:
            self.replies.append((event.key, m.text))

        interaction = Interaction(
            id=event.key,
            text=event.payload["text"],
            session_key=event.session_key,
            customer_id="C-001",
            from_inbox=True,
        )
        await self.router.handle(interaction, reply=reply)


@pytest.fixture
async def parts(db_url: str) -> AsyncIterator[tuple[AgentRouter, SqlInbox]]:
    store = SqlStore(db_url)
    async with build_app(REPO / "config", REPO / "data", db_url, storage=sql_storage(store)) as app:
        router = app.router
        yield router, SqlInbox(store)


def event(key: str, text: str, session: str = "T1:C1:100.1") -> InboxEvent:
    return InboxEvent(key=key, session_key=session, payload={"text": text})


async def test_a_duplicate_delivery_is_answered_once(parts: tuple[AgentRouter, SqlInbox]) -> None:
    router, inbox = parts
    channel = Channel(router)
    dispatcher = Dispatcher(inbox, channel.handle)
    assert await dispatcher.submit(event("Ev1", "where is O-12345")) is True
    assert await dispatcher.submit(event("Ev1", "where is O-12345")) is False  # the retry
    await dispatcher.drain()
    assert [k for k, _ in channel.replies] == ["Ev1", "Ev1"]  # pre-message and answer, once
    assert await inbox.unfinished(0) == []


async def test_one_sessions_events_run_in_arrival_order(parts: tuple[AgentRouter, SqlInbox]) -> None:
    router, inbox = parts
    gate = asyncio.Event()
    channel = Channel(router, gate)
    dispatcher = Dispatcher(inbox, channel.handle)
    await dispatcher.submit(event("A1", "I want to check my order"))
    await dispatcher.submit(event("A2", "O-12345"))
    await dispatcher.submit(event("B1", "where is O-23456", session="T1:C1:200.1"))
    await asyncio.sleep(0.05)
    assert channel.started == ["A1", "B1"]  # A2 waits for A1; another session is not held up
    gate.set()
    await dispatcher.drain()
    answers = [text for key, text in channel.replies if key == "A2"]
    assert any("shipped" in a for a in answers)  # A2 answered the question A1 asked


async def test_an_event_a_crash_left_behind_runs_once_after_restart(db_url: str) -> None:
    store = SqlStore(db_url)
    inbox = SqlInbox(store)
    assert await inbox.accept(event("Ev9", "track o-12345"))  # accepted, then the process died
    await store.aclose()

    store = SqlStore(db_url)
    async with build_app(REPO / "config", REPO / "data", db_url, storage=sql_storage(store)) as app:
        router = app.router
        channel = Channel(router)
        dispatcher = Dispatcher(SqlInbox(store), channel.handle)
        assert await dispatcher.recover() == 1
        await dispatcher.drain()
        assert await dispatcher.recover() == 0
        assert await dispatcher.submit(event("Ev9", "track o-12345")) is False  # a late retry of it
        await dispatcher.drain()
    assert [k for k, _ in channel.replies] == ["Ev9", "Ev9"]
    assert "shipped" in channel.replies[-1][1]


async def test_the_turn_commit_stores_its_answers_in_the_outbox(parts: tuple[AgentRouter, SqlInbox]) -> None:
    router, inbox = parts
    await inbox.accept(event("Ev3", "hello, where is O-12345"))
    channel = Channel(router)
    await channel.handle(event("Ev3", "hello, where is O-12345"))
    # No dispatcher ran: the router's own transaction stored the answer with the turn and marked the
    # event committed; it is done once a sender marked the answer sent.
    [left] = await inbox.unfinished(0)
    assert left.key == "Ev3" and left.status == "committed"
    rows = await inbox.store.fetch("SELECT id, kind, status, body FROM outbox WHERE event_key = 'Ev3' ORDER BY seq")
    answer = channel.replies[-1][1]
    assert [(r.id, r.kind, r.status) for r in rows] == [("Ev3:0", "answer", "pending")] and answer in rows[0].body


async def test_a_failing_handler_does_not_block_the_session(parts: tuple[AgentRouter, SqlInbox]) -> None:
    router, inbox = parts
    channel = Channel(router)

    async def flaky(e: InboxEvent) -> None:
        if e.key == "bad":
            raise ValueError("malformed payload")
        await channel.handle(e)

    dispatcher = Dispatcher(inbox, flaky)
    await dispatcher.submit(event("bad", "x"))
    await dispatcher.submit(event("good", "where is O-12345"))
    await dispatcher.drain()
    assert [k for k, _ in channel.replies] == ["good", "good"]
    assert await inbox.unfinished(0) == []  # the bad event is finished (logged), not retried forever


async def test_housekeeping_recovers_and_runs_chores_until_closed(db_url: str) -> None:
    store = SqlStore(db_url)
    inbox = SqlInbox(store)
    assert await inbox.accept(event("Ev-left", "where is O-12345"))  # a crash left this behind
    seen: list[str] = []

    async def handler(e: InboxEvent) -> None:
        seen.append(e.key)

    calls: list[int] = []

    async def chore() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("a passing failure")  # logged; the next pass still runs

    dispatcher = Dispatcher(inbox, handler, poll_seconds=0.01)
    dispatcher.start_housekeeping(0.01, chore=chore)
    for _ in range(200):
        if seen and len(calls) >= 2:
            break
        await asyncio.sleep(0.01)
    await dispatcher.aclose()
    await store.aclose()
    assert seen == ["Ev-left"] and len(calls) >= 2


async def test_a_turn_longer_than_the_lease_is_not_taken_over_by_another_worker(db_url: str) -> None:
    store = SqlStore(db_url)
    runs: list[str] = []
    release = asyncio.Event()

    async def slow(e: InboxEvent) -> None:
        runs.append(f"a:{e.key}")
        await release.wait()  # a hung provider, far longer than the lease

    async def other(e: InboxEvent) -> None:
        runs.append(f"b:{e.key}")

    a = Dispatcher(SqlInbox(store), slow, lease_seconds=1.0)
    b = Dispatcher(SqlInbox(store), other, lease_seconds=1.0)
    await a.submit(event("Ev-slow", "where is O-12345"))
    await b.submit(event("Ev-next", "and O-23456?"))  # double texting, to the other worker
    for _ in range(25):  # 2.5 s: the lease was renewed, never expired
        await b.recover()
        await asyncio.sleep(0.1)
    assert runs == ["a:Ev-slow"]  # b neither ran the slow event again nor overtook it
    release.set()
    await a.drain()
    await b.drain()
    await store.aclose()
    assert runs == ["a:Ev-slow", "a:Ev-next"]  # the lease holder ran the thread's next event, in order


async def test_a_hung_turn_ends_at_its_deadline_and_frees_the_conversation(db_url: str) -> None:
    arrived, release = asyncio.Semaphore(0), asyncio.Event()
    data = GatedData(arrived, release)  # the order lookup never returns
    async with build_app(REPO / "config", REPO / "data", db_url, data_source=data) as app:
        app.settings.turn_deadline_seconds = 0.3  # the router reads the app's settings
        r, delivered = await say(app.router, "where is O-12345?", session="hung")
        after, _ = await say(app.router, "hello there", session="hung")
    assert [m.kind for m in delivered] == ["pre", "error"] and r.text == Messages.model_fields["too_slow"].default
    assert after.text  # the conversation goes on


async def test_a_message_written_earlier_but_stored_later_by_another_worker_runs_first(db_url: str) -> None:
    """Two people type in one thread a few milliseconds apart; Slack delivers the later message to
    worker 1 first and the earlier one to worker 2 three milliseconds after. With the settle window
    the earlier one runs first, whoever holds the session (without it, here, the later one did)."""
    settle = 0.05
    store = SqlStore(db_url)
    await store.ensure_schema()
    ran: list[str] = []

    async def handle(e: InboxEvent) -> None:
        ran.append(e.key)

    one = Dispatcher(SqlInbox(store), handle, worker="w1", settle_seconds=settle)
    two = Dispatcher(SqlInbox(store), handle, worker="w2", settle_seconds=settle)
    session = "slack:T1:C1:1700000000.000100"
    later = InboxEvent(key="EvB", session_key=session, payload={}, written_at=1700000001.004)
    earlier = InboxEvent(key="EvA", session_key=session, payload={}, written_at=1700000001.001)
    try:
        await one.submit(later)
        await asyncio.sleep(0.003)
        await two.submit(earlier)
        await asyncio.gather(one.drain(), two.drain())
        for _ in range(100):  # the second worker found the session leased; the first runs both
            if len(ran) == 2:
                break
            await asyncio.sleep(0.02)
    finally:
        await store.aclose()
    assert ran == ["EvA", "EvB"]


@pytest.mark.parametrize("workers", [1, 2])
async def test_a_postponed_event_holds_its_thread(any_db_url: str, workers: int) -> None:
    """A delivery that fails postpones its event, and the thread's later events wait behind it, in
    this worker and in any other polling the same database."""
    from bots.dispatch import DeliveryFailed

    store = SqlStore(any_db_url)
    inbox = SqlInbox(store)
    ran: list[str] = []
    refused = {"Ev1": 2}  # the platform refuses the first event's delivery twice

    async def handler(e: InboxEvent) -> None:
        ran.append(e.key)
        if refused.get(e.key, 0) > 0:
            refused[e.key] -= 1
            raise DeliveryFailed("429")

    dispatchers = [
        Dispatcher(inbox, handler, poll_seconds=0.02, backoff_seconds=0.2, worker=f"w{n}") for n in range(workers)
    ]
    for d in dispatchers:
        d.start_housekeeping(60.0)
    await dispatchers[0].submit(InboxEvent(key="Ev1", session_key="s", payload={}, written_at=1.0))
    await dispatchers[-1].submit(InboxEvent(key="Ev2", session_key="s", payload={}, written_at=2.0))
    await dispatchers[0].submit(InboxEvent(key="Other", session_key="t", payload={}, written_at=3.0))
    for _ in range(300):
        if "Ev2" in ran:
            break
        await asyncio.sleep(0.02)
    for d in dispatchers:
        await d.aclose()
    await store.aclose()
    in_thread = [k for k in ran if k != "Other"]
    assert in_thread == ["Ev1", "Ev1", "Ev1", "Ev2"]
    assert "Other" in ran  # another thread is not held by this one's refusal
