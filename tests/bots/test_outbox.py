"""What users see happens once: the outbox, platform dedupe, unique task numbers, storage trouble,
thread replies before their root, and a recovered Discord /ask (real SQLite, real SDKs, stand-ins)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adapters.storage.inbox import SqlInbox
from adapters.storage.outbox import SqlOutbox, commit_event
from adapters.storage.sql import SqlStore
from agent.conversation.session import SessionState
from agent.domain.records import InboxEvent, TurnRecord
from agent.domain.types import OutboundMessage, SideEffect, utcnow
from agent.errors import ReferenceCollision, StorageError
from bots.app import build_app
from bots.discord.events import DiscordEvent
from bots.outbox import OutboxReply
from bots.slack.delivery import ThreadReply
from tests.bots.discord_harness import ALICE as DISCORD_ALICE
from tests.bots.discord_harness import running_bot
from tests.helpers import REPO, say
from tests.slack_harness import CHANNEL, in_thread, rows, running_app
from tests.standins.discord_standin import GENERAL_ID, StandInDiscord
from tests.standins.slack_standin import BOT_USER_ID, SlackStandIn


@pytest.fixture
async def slack() -> AsyncIterator[SlackStandIn]:
    server = SlackStandIn()
    await server.start()
    yield server
    await server.aclose()


async def test_task_numbers_stay_unique_per_owner_across_threads_and_workers(db_url: str) -> None:
    # Two apps stand for two worker processes; one customer adds tasks from four threads at once.
    apps = [build_app(REPO / "config", REPO / "data", db_url) for _ in range(2)]
    turns = [
        say(apps[i % 2].router, f"add a task: pack crate {i}", session=f"thread-{i}", customer="C-001")
        for i in range(4)
    ]
    answers = [r.text for r, _ in await asyncio.gather(*turns)]
    stored = await rows(db_url, "SELECT number, title FROM tasks WHERE owner = 'C-001' ORDER BY number")
    for app in apps:
        await app.aclose()
    assert [r.number for r in stored] == list(range(1, 5))
    shown = sorted(int(a.split("task ")[1].split(":")[0]) for a in answers)
    assert shown == list(range(1, 5))  # every answer names the number that was stored


async def test_a_resend_after_a_crash_finds_the_posted_answer_in_the_thread(db_url: str, slack: SlackStandIn) -> None:
    store = SqlStore(db_url)
    outbox = SqlOutbox(store)
    await store.ensure_schema()
    thread = ThreadReply(_client(slack), CHANNEL, "1700000001.000100", "slack:T:C:1")
    answer = OutboundMessage(kind="answer", text="Your order shipped.", id="Ev1:0")
    # The turn committed its answer; the sender posted it and died before marking it sent.
    await SqlInbox(store).accept(InboxEvent(key="Ev1", session_key="slack:T:C:1", payload={}))
    await store.run(commit_event, "Ev1", "slack:T:C:1", [answer], utcnow(), what="commit")
    await thread.deliver(answer, recovering=False)
    reply = OutboxReply(outbox, thread, "Ev1", "slack:T:C:1")
    assert await reply.resend() == 1  # found unsent, and found posted: nothing is posted again
    assert await reply.resend() == 0
    await reply(answer)  # a re-run of the same message is skipped too
    posted = in_thread(slack, CHANNEL, "1700000001.000100")
    sent = await rows(db_url, "SELECT status, ref FROM outbox WHERE id = 'Ev1:0'")
    await store.aclose()
    assert [p["text"] for p in posted] == ["Your order shipped."]
    assert posted[0]["metadata"] == {"event_type": "agentbot_message", "event_payload": {"id": "Ev1:0/0"}}
    assert [tuple(r) for r in sent] == [("sent", thread.posted[0])]


def _client(slack: SlackStandIn) -> object:
    from slack_sdk.web.async_client import AsyncWebClient

    return AsyncWebClient(token="xoxb-test", base_url=f"{slack.url}/api/")


async def test_a_thread_reply_that_arrives_before_its_root_is_answered(db_url: str, slack: SlackStandIn) -> None:
    root = "1700000100.000100"
    # In Slack the root mention exists; its delivery to us failed and waits for Slack's retry.
    slack.seed_thread(CHANNEL, [{"ts": root, "user": "U0ALICE01", "text": f"<@{BOT_USER_ID}> hi there"}])
    async with running_app(db_url, slack) as app:
        event = {"type": "message", "user": "U0ALICE01", "text": "where is O-12345?", "ts": "1700000100.000200"}
        sent, _ = await app.client.event(event | {"channel": CHANNEL, "channel_type": "channel", "thread_ts": root})
        await slack.wait_for("chat.postMessage", 2)
        await app.channel.dispatcher.drain()
    assert sent.status == 200
    texts = [p["text"] for p in in_thread(slack, CHANNEL, root)]
    assert texts[0] == "Checking order O-12345..." and "shipped" in texts[1]


async def test_a_failed_save_tells_the_user_once_and_answers_when_the_database_is_back(
    db_url: str, slack: SlackStandIn, caplog: pytest.LogCaptureFixture
) -> None:
    async with running_app(db_url, slack) as app:
        store = app.channel.store
        real_commit = store.commit
        failures = 0

        async def flaky_commit(turn: object) -> None:
            nonlocal failures
            if failures < 2:  # the database is away for two attempts (locked by a backup, say)
                failures += 1
                raise StorageError("cannot save session: database is locked")
            await real_commit(turn)  # type: ignore[arg-type]

        store.commit = flaky_commit  # type: ignore[method-assign]
        app.channel.dispatcher.poll_seconds = 0.05
        app.channel.dispatcher.start_housekeeping(60.0)
        root, sent = await app.client.mention("add a task: renew the domain")
        await slack.wait_for("chat.postMessage", 2, within=20)
        await app.channel.dispatcher.drain()
    texts = [p["text"] for p in in_thread(slack, CHANNEL, root)]
    assert sent.status == 200 and failures == 2
    assert texts == [StorageError.retry_notice, "Added to your list as task 1: renew the domain."]
    stored = await rows(db_url, "SELECT count(*) AS n FROM tasks")
    assert stored[0].n == 1
    assert [tuple(r) for r in await rows(db_url, "SELECT status FROM inbox")] == [("done",)]


async def test_a_damaged_sqlite_file_is_reported_at_startup(tmp_path: Path) -> None:
    path = tmp_path / "agentbot.db"
    store = SqlStore(f"sqlite+aiosqlite:///{path}")
    inbox = SqlInbox(store)
    for i in range(300):  # enough rows for several pages
        await inbox.accept(InboxEvent(key=f"k{i}", session_key="s", payload={"text": "x" * 200}))
    await store.aclose()
    data = bytearray(path.read_bytes())
    data[4096 * 2 : 4096 * 2 + 64] = b"\xff" * 64  # one damaged page
    path.write_bytes(bytes(data))
    store = SqlStore(f"sqlite+aiosqlite:///{path}")
    with pytest.raises(StorageError, match="damaged") as raised:
        await store.ensure_schema()
    await store.aclose()
    assert str(path) in str(raised.value) and ".recover" in str(raised.value)  # where, and what to do


async def test_a_recovered_discord_ask_continues_its_thread_under_the_same_anchor(db_url: str) -> None:
    standin = await StandInDiscord().start()
    try:
        async with running_bot(standin, db_url) as run:
            await standin.slash("ask", {"question": "where is O-12345"}, DISCORD_ALICE)
            await standin.wait_until(lambda: len(standin.calls_to("POST", "/threads")) == 1)
            await run.bot.dispatcher.drain()
            [(key, payload, status)] = [tuple(r) for r in await rows(db_url, "SELECT key, payload, status FROM inbox")]
            assert status == "done"
            ev = DiscordEvent.model_validate_json(payload)
            # A crash before the commit: the event runs again from the start.
            first = standin.messages[GENERAL_ID][0]["id"]
            _, thread_id = await run.bot._where(key, ev)
            again = OutboundMessage(kind="pre", text="Checking order O-12345...", id=f"{key}:p0")
            target, _ = await run.bot._where(key, ev)
            await target.deliver(again, recovering=True)
        anchors = [m for m in standin.messages[GENERAL_ID] if "asked:" in m["content"]]
        assert len(anchors) == 1 and str(thread_id) == first == anchors[0]["id"]
        threads = [c for c in standin.channels.values() if c["type"] == 11]
        assert len(threads) == 1  # the second attempt found the thread the first one started
        pre = [m for m in standin.posted(first) if m["content"].startswith("Checking")]
        assert len(pre) == 1  # the nonce made the repeated send return the message already there
    finally:
        await standin.aclose()


async def test_a_reference_that_belongs_to_another_conversation_is_never_skipped(db_url: str) -> None:
    store = SqlStore(db_url)

    def turn(session: str) -> TurnRecord:
        row = {"id": "T-0000CAFE", "session_id": session, "summary": "broken zip", "status": "open",
               "created_at": utcnow().isoformat()}  # fmt: skip
        state = SessionState(session_id=session, version=1)
        return TurnRecord(state=state, expected_version=0, messages=[], events=[],
                          effects=[SideEffect(kind="ticket", key="T-0000CAFE", data=row)])  # fmt: skip

    await store.commit(turn("s-1"))
    await store.commit(turn("s-1").model_copy(update={"expected_version": 1}))  # a replay of its own row
    with pytest.raises(ReferenceCollision):
        await store.commit(turn("s-2"))
    tickets = await store.fetch("SELECT session_id FROM tickets")
    sessions = await store.fetch("SELECT id FROM sessions")
    await store.aclose()
    assert [t.session_id for t in tickets] == ["s-1"] and [s.id for s in sessions] == ["s-1"]


async def test_a_refused_pre_message_is_posted_when_its_event_runs_again(db_url: str, slack: SlackStandIn) -> None:
    """A 429 means Slack posted nothing: the pre-message goes out on the re-run, once."""
    from bots.dispatch import DeliveryFailed

    store = SqlStore(db_url)
    outbox = SqlOutbox(store)
    await store.ensure_schema()
    thread = ThreadReply(_client(slack), CHANNEL, "1700000001.000100", "slack:T:C:1")
    reply = OutboxReply(outbox, thread, "Ev1", "slack:T:C:1")
    pre = OutboundMessage(kind="pre", text="Checking order O-12345...", id="Ev1:p0")
    slack.fail_next("chat.postMessage", 400, {"ok": False, "error": "ratelimited"})
    with pytest.raises(DeliveryFailed):
        await reply(pre)
    await reply(pre)  # the event's re-run
    await reply(pre)  # and another: it is in the thread now
    await store.aclose()
    assert [p["text"] for p in in_thread(slack, CHANNEL, "1700000001.000100")] == ["Checking order O-12345..."]


async def test_a_pre_message_whose_answer_went_out_is_skipped_and_counted(db_url: str, slack: SlackStandIn) -> None:
    store = SqlStore(db_url)
    outbox = SqlOutbox(store)
    await store.ensure_schema()
    thread = ThreadReply(_client(slack), CHANNEL, "1700000001.000100", "slack:T:C:1")
    counted: list[str] = []

    class Counts:
        def pre_message_skipped(self, channel: str) -> None:
            counted.append(channel)

    reply = OutboxReply(outbox, thread, "Ev1", "slack:T:C:1", Counts(), "slack")
    pre = OutboundMessage(kind="pre", text="Checking order O-12345...", id="Ev1:p0")
    first, second = (OutboundMessage(kind="answer", text=t, id=f"Ev1:{n}") for n, t in enumerate(["Shipped.", "More?"]))
    await SqlInbox(store).accept(InboxEvent(key="Ev1", session_key="slack:T:C:1", payload={}))
    await outbox.begin(pre, "Ev1", "slack:T:C:1")  # recorded, then the post was refused
    await store.run(commit_event, "Ev1", "slack:T:C:1", [first, second], utcnow(), what="commit")
    await reply(first)  # the first answer went out; the second did not
    assert await reply.resend() == 1
    statuses = await rows(db_url, "SELECT id, status FROM outbox ORDER BY id")
    await store.aclose()
    assert [p["text"] for p in in_thread(slack, CHANNEL, "1700000001.000100")] == ["Shipped.", "More?"]
    assert [tuple(r) for r in statuses] == [("Ev1:0", "sent"), ("Ev1:1", "sent"), ("Ev1:p0", "skipped")]
    assert counted == ["slack"]
