"""Socket Mode end to end: real bolt and slack_sdk's Socket Mode client against the stand-in WebSocket.

Events, a button and a slash command arrive as envelopes; each is acked once stored, a forced
`disconnect` mid-conversation makes the client reconnect, and an envelope the old connection left
unacked is delivered again on the new one. Every event is answered exactly once, in order.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest

from bots.slack.channel import SlackChannel
from bots.slack.serve import SlackSettings, build_slack, serve_socket_mode
from bots.testing.slack_socket_mode import SocketModeStandIn
from bots.testing.slack_standin import SlackStandIn
from tests.helpers import REPO
from tests.slack_harness import ADMIN, ADMIN_CHANNEL, ALICE, CHANNEL, SlackClient, in_thread, rows


@dataclass
class SocketApp:
    channel: SlackChannel
    socket: SocketModeStandIn
    payloads: SlackClient  # builds the same bodies Slack sends over HTTP


@pytest.fixture
async def socket(slack: SlackStandIn) -> AsyncIterator[SocketModeStandIn]:
    stand_in = SocketModeStandIn(slack)
    await stand_in.start()
    yield stand_in
    await stand_in.aclose()


@asynccontextmanager
async def socket_app(db_url: str, slack: SlackStandIn, socket: SocketModeStandIn) -> AsyncIterator[SocketApp]:
    settings = SlackSettings(
        bot_token="xoxb-test",
        app_token="xapp-test",
        admin_channel=ADMIN_CHANNEL,
        admins=[ADMIN],
        api_url=f"{slack.url}/api/",
    )
    channel = build_slack(settings, REPO / "config", REPO / "data", db_url, env={})
    async with AsyncExitStack() as stack:
        await stack.enter_async_context(channel.app)
        await stack.enter_async_context(serve_socket_mode(channel, settings.app_token))
        await socket.connected()
        payloads = SlackClient("")
        payloads.stand_in_url = slack.url
        yield SocketApp(channel, socket, payloads)


def mention(app: SocketApp, text: str, ts: str, thread_ts: str | None = None) -> dict[str, Any]:
    event = {"type": "app_mention", "user": ALICE, "text": f"<@UBOTAGENT> {text}", "ts": ts, "channel": CHANNEL}
    if thread_ts:
        event["thread_ts"] = thread_ts
    return app.payloads.event_body(event)


def reply(app: SocketApp, text: str, ts: str, thread_ts: str) -> dict[str, Any]:
    event = {"type": "message", "channel_type": "channel", "user": ALICE, "text": text, "ts": ts, "channel": CHANNEL}
    return app.payloads.event_body({**event, "thread_ts": thread_ts})


async def test_a_conversation_a_button_and_a_command_over_socket_mode(
    db_url: str, slack: SlackStandIn, socket: SocketModeStandIn
) -> None:
    async with socket_app(db_url, slack, socket) as app:
        root = app.payloads.ts()
        await socket.deliver("events_api", mention(app, "I want to check my order", root))
        await slack.wait_for("chat.postMessage", 1)
        await socket.deliver("events_api", reply(app, "o-12345", app.payloads.ts(), root))
        await slack.wait_for("chat.postMessage", 3)

        refund_root = app.payloads.ts()
        await socket.deliver("events_api", mention(app, "please refund order O-23456", refund_root))
        question = (await slack.wait_for("chat.postMessage", 4))[-1]
        confirm = question["blocks"][-1]["elements"][0]
        clicked = {"ts": slack.threads[(CHANNEL, refund_root)][0]["ts"], "text": question["text"]}
        payload = app.payloads.click_payload("agentbot_confirm", confirm["value"], clicked, CHANNEL)
        await socket.deliver("interactive", payload)
        await slack.wait_for("chat.postMessage", 5)

        help_ack = await socket.deliver("slash_commands", app.payloads.command_form("help"))
        await socket.deliver("slash_commands", app.payloads.command_form("where is O-12345?"))
        await slack.wait_for("chat.postMessage", 8)  # the request's root, the pre-message, the answer
        await app.channel.dispatcher.drain()

    assert all(e.acked for e in socket.envelopes) and socket.connections == 1
    assert help_ack.ack_payload is not None and "/agentbot" in help_ack.ack_payload["text"]
    order = [p["text"] for p in in_thread(slack, CHANNEL, root)]
    assert "order id" in order[0].lower() and "O-12345" in order[1] and "shipped" in order[2]
    refund = in_thread(slack, CHANNEL, refund_root)
    assert [p["text"].count("refunded ฿89.50") for p in refund] == [0, 1]
    assert [tuple(r) for r in await rows(db_url, "SELECT order_id FROM refunds")] == [("O-23456",)]
    (ask_root,) = [ts for (_, ts), thread in slack.threads.items() if "asked:" in thread[0]["text"]]
    asked = [p["text"] for p in in_thread(slack, CHANNEL, ask_root)]
    assert len(asked) == 2 and "O-12345" in asked[0] and "shipped" in asked[1]
    assert await rows(db_url, "SELECT key FROM inbox WHERE status != 'done'") == []


async def test_a_forced_reconnect_mid_conversation_answers_every_event_once_in_order(
    db_url: str, slack: SlackStandIn, socket: SocketModeStandIn
) -> None:
    texts = ["I want to check my order", "o-12345", "and where is O-23456", "thanks"]
    async with socket_app(db_url, slack, socket) as app:
        root = app.payloads.ts()
        await socket.deliver("events_api", mention(app, texts[0], root))
        await slack.wait_for("chat.postMessage", 1)
        await socket.deliver("events_api", reply(app, texts[1], app.payloads.ts(), root))

        await socket.disconnect("refresh_requested")
        await socket.connected(2)
        third = await socket.deliver("events_api", reply(app, texts[2], app.payloads.ts(), root))

        # Sent, then the connection drops before the ack: Slack sends it again on the next one.
        fourth = await socket.send("events_api", reply(app, texts[3], app.payloads.ts(), root))
        await socket.drop()
        await socket.connected(3)
        await socket.acked(fourth)
        await slack.wait_for("chat.postMessage", 6)
        await app.channel.dispatcher.drain()

    assert socket.connections == 3 and third.acked and fourth.acked and fourth.retry_attempt == 1
    assert socket.sent_to_socket.count(fourth.envelope_id) == 2  # delivered twice, answered once
    stored = await rows(db_url, "SELECT text FROM messages WHERE role = 'user' ORDER BY id")
    assert [r[0] for r in stored] == texts  # each event one turn, in the order sent
    assert len(in_thread(slack, CHANNEL, root)) == len(slack.to("chat.postMessage"))
    answers = [p["text"] for p in in_thread(slack, CHANNEL, root)]
    assert len(answers) == len(set(answers))
