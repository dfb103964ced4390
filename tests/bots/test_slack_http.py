"""What reaches the Slack app over HTTP and what it does with it: signatures, retries, restarts."""

from __future__ import annotations

import json

from adapters.storage.inbox import SqlInbox
from adapters.storage.sql import SqlStore
from agent.domain.records import InboxEvent
from bots.slack.events import SlackEvent
from tests.slack_harness import CHANNEL, SECRET, in_thread, rows, running_app
from tests.standins.slack_standin import TEAM_ID, SlackStandIn


async def nothing_stored(db_url: str) -> bool:
    return await rows(db_url, "SELECT key FROM inbox") == [] and await rows(db_url, "SELECT id FROM sessions") == []


async def test_a_bad_signature_gets_401_and_stores_nothing(db_url: str, slack: SlackStandIn) -> None:
    async with running_app(db_url, slack) as app:
        body = json.dumps(
            app.client.event_body({"type": "app_mention", "user": "U1", "text": "hi", "ts": "1.1", "channel": CHANNEL})
        ).encode()
        forged = await app.client.post(body, "application/json", secret="not-" + SECRET)
        stale = await app.client.post(body, "application/json", age=400)
        future = await app.client.post(body, "application/json", age=-400)
        await app.channel.dispatcher.drain()
    assert (forged.status, stale.status, future.status) == (401, 401, 401)
    assert slack.to("chat.postMessage") == []
    assert await nothing_stored(db_url)


async def test_malformed_json_is_refused_and_the_app_keeps_working(db_url: str, slack: SlackStandIn) -> None:
    async with running_app(db_url, slack) as app:
        bad = await app.client.post(b'{"type": "event_callback", "event": {', "application/json")
        assert bad.status >= 400
        assert await nothing_stored(db_url)
        root, ok = await app.client.mention("where is O-12345")
        assert ok.status == 200
        await slack.wait_for("chat.postMessage", 2)


async def test_an_event_for_another_workspace_is_acked_and_ignored(db_url: str, slack: SlackStandIn) -> None:
    async with running_app(db_url, slack) as app:
        _, sent = await app.client.mention("where is O-12345", team="T0SOMEONEELSE")
        await app.channel.dispatcher.drain()
    assert sent.status == 200  # acked so Slack does not retry it
    assert slack.to("chat.postMessage") == []
    assert await nothing_stored(db_url)


async def test_a_retried_event_is_answered_once(db_url: str, slack: SlackStandIn) -> None:
    async with running_app(db_url, slack) as app:
        event = {
            "type": "app_mention",
            "user": "U0ALICE01",
            "text": "<@UBOTAGENT> where is O-12345",
            "ts": "1700000500.000100",
            "channel": CHANNEL,
        }
        first, _ = await app.client.event(event, event_id="EvRETRY1")
        again, _ = await app.client.event(event, event_id="EvRETRY1", retry=1)
        third, _ = await app.client.event(event, event_id="EvRETRY1", retry=2)
        await app.channel.dispatcher.drain()
    assert (first.status, again.status, third.status) == (200, 200, 200)
    assert len(slack.to("chat.postMessage")) == 2  # pre-message and answer, once
    assert [tuple(r) for r in await rows(db_url, "SELECT key, status FROM inbox")] == [("EvRETRY1", "done")]


async def test_the_same_event_after_a_restart_is_not_answered_again(db_url: str, slack: SlackStandIn) -> None:
    event = {
        "type": "app_mention",
        "user": "U0ALICE01",
        "text": "<@UBOTAGENT> where is O-12345",
        "ts": "1700000600.000100",
        "channel": CHANNEL,
    }
    async with running_app(db_url, slack) as app:
        await app.client.event(event, event_id="EvRESTART")
        await slack.wait_for("chat.postMessage", 2)
    async with running_app(db_url, slack) as app:  # a new process on the same database
        sent, _ = await app.client.event(event, event_id="EvRESTART", retry=1)
        await app.channel.dispatcher.drain()
    assert sent.status == 200
    assert len(slack.to("chat.postMessage")) == 2


async def test_an_event_a_crash_left_behind_is_answered_once_after_restart(db_url: str, slack: SlackStandIn) -> None:
    root = "1700000700.000100"
    ev = SlackEvent(
        key="EvCRASH",
        kind="message",
        team=TEAM_ID,
        channel=CHANNEL,
        user="U0ALICE01",
        text="track o-12345",
        root_ts=root,
        reply_ts=root,
        ts=root,
    )
    store = SqlStore(db_url)
    # The previous process stored the event (and acked Slack), then died before the turn committed.
    assert await SqlInbox(store).accept(InboxEvent(key=ev.key, session_key=ev.session_key, payload=ev.model_dump()))
    await store.aclose()
    async with running_app(db_url, slack) as app:
        await slack.wait_for("chat.postMessage", 2)
        retry = await app.client.event(
            {
                "type": "app_mention",
                "user": "U0ALICE01",
                "text": "<@UBOTAGENT> track o-12345",
                "ts": root,
                "channel": CHANNEL,
            },
            event_id="EvCRASH",
            retry=3,
        )
        await app.channel.dispatcher.drain()
        assert await app.channel.dispatcher.recover() == 0
    assert retry[0].status == 200
    posted = in_thread(slack, CHANNEL, root)
    assert len(posted) == 2 and "shipped" in posted[1]["text"]
    assert [tuple(r) for r in await rows(db_url, "SELECT key, status FROM inbox")] == [("EvCRASH", "done")]


async def test_an_event_that_cannot_be_stored_is_not_acked_so_slack_retries(db_url: str, slack: SlackStandIn) -> None:
    import sqlite3

    async with running_app(db_url, slack) as app:
        await app.client.mention("where is O-12345")
        await slack.wait_for("chat.postMessage", 2)
        await app.channel.dispatcher.drain()
        with sqlite3.connect(db_url.split("///", 1)[1]) as db:
            db.execute("DROP TABLE inbox")  # the database breaks under the running app
        _, sent = await app.client.mention("where is O-23456")
        await app.channel.dispatcher.drain()
    assert sent.status == 503
    assert len(slack.to("chat.postMessage")) == 2
