"""Slack's assistant thread (the AI-app split view) end to end: real bolt over signed HTTP, the stand-in
Web API records every call. From the thread opening to a confirmed refund.

    .venv/bin/pytest tests/bots/test_slack_assistant.py -s    # prints what Slack received, call by call
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from tests.slack_harness import ALICE, Running, rows, running_app
from tests.standins.slack_standin import TEAM_ID, SlackStandIn

DM = "D0ALICE01"  # Alice's DM with the bot, where her assistant threads live
THREAD = "1700000100.000100"
SHOP = "C0SHOPFLOOR"  # the channel Alice had open when she started the thread
ORDERS = "C0ORDERS"  # the channel she switched to before asking
BILAL = "U0BILAL02"


async def open_thread(app: Running) -> None:
    started = {
        "type": "assistant_thread_started",
        "assistant_thread": {
            "user_id": ALICE,
            "context": {"channel_id": SHOP, "team_id": TEAM_ID, "enterprise_id": None},
            "channel_id": DM,
            "thread_ts": THREAD,
        },
        "event_ts": THREAD,
    }
    sent, _ = await app.client.event(started)
    assert sent.status == 200


async def look_at(app: Running, channel: str) -> None:
    changed = {
        "type": "assistant_thread_context_changed",
        "assistant_thread": {
            "user_id": ALICE,
            "context": {"channel_id": channel, "team_id": TEAM_ID},
            "channel_id": DM,
            "thread_ts": THREAD,
        },
        "event_ts": app.client.ts(),
    }
    assert (await app.client.event(changed))[0].status == 200
    for _ in range(250):  # bolt's context listener runs after the ack
        if (await app.channel.records.thread_context(DM, THREAD) or {}).get("channel_id") == channel:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"the thread's context never became {channel}")


async def say(app: Running, text: str) -> None:
    event = {
        "type": "message",
        "channel_type": "im",
        "channel": DM,
        "user": ALICE,
        "text": text,
        "ts": app.client.ts(),
        "thread_ts": THREAD,
        "parent_user_id": "UBOTAGENT",
    }
    assert (await app.client.event(event))[0].status == 200


def transcript(slack: SlackStandIn) -> list[str]:
    """What Slack received, one line per call (auth.test aside)."""
    lines = []
    for call in slack.calls:
        p = call.params
        if call.method == "auth.test":
            continue
        if call.method == "assistant.threads.setSuggestedPrompts":
            detail = f"title={p.get('title')!r} prompts={[x['title'] for x in p['prompts']]}"
        elif call.method == "assistant.threads.setStatus":
            detail = f"status={p.get('status')!r} loading_messages={p.get('loading_messages')}"
        elif call.method == "assistant.threads.setTitle":
            detail = f"title={p.get('title')!r}"
        elif call.method in ("chat.postMessage", "chat.postEphemeral", "chat.update"):
            elements = (p.get("blocks") or [{}])[-1].get("elements", [])
            buttons = [b["action_id"] for b in elements if "action_id" in b]
            who = f" user={p['user']}" if call.method == "chat.postEphemeral" else ""
            detail = f"thread_ts={p.get('thread_ts')}{who} text={p.get('text')!r}" + (
                f" buttons={buttons}" if buttons else ""
            )
        else:
            detail = json.dumps({k: v for k, v in p.items() if k in ("channel", "channel_id", "ts", "thread_ts")})
        lines.append(f"{call.method:40} {detail}")
    return lines


def buttons_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    return list(message["blocks"][-1]["elements"])


async def test_an_assistant_thread_from_start_to_a_confirmed_refund(db_url: str, slack: SlackStandIn) -> None:
    async with running_app(db_url, slack) as app:
        await open_thread(app)
        (greeting,) = await slack.wait_for("chat.postMessage", 1)
        (prompts,) = await slack.wait_for("assistant.threads.setSuggestedPrompts", 1)
        await look_at(app, ORDERS)

        await say(app, "please refund order O-23456")
        question = (await slack.wait_for("chat.postMessage", 2))[-1]
        await app.channel.dispatcher.drain()
        confirm = buttons_of(question)[0]
        clicked = {"ts": slack.threads[(DM, THREAD)][-1]["ts"], "text": question["text"], "thread_ts": THREAD}
        # Someone else's click (a forwarded question, say) is refused, privately; the buttons stay.
        assert (await app.client.click("agentbot_confirm", confirm["value"], clicked, DM, user=BILAL)).status == 200
        await app.channel.dispatcher.drain()
        assert (await app.client.click("agentbot_confirm", confirm["value"], clicked, DM)).status == 200
        await app.channel.dispatcher.drain()
        refund_calls = len(slack.calls)
        await say(app, "and where is O-12345?")  # a request with a pre-message
        await slack.wait_for("chat.postMessage", 4)
        await app.channel.dispatcher.drain()

    print("\n" + "\n".join(transcript(slack)))
    assert greeting["channel"] == DM and greeting["thread_ts"] == THREAD and "Byte Bazaar" in greeting["text"]
    assert prompts["channel_id"] == DM and prompts["thread_ts"] == THREAD
    assert [p["title"] for p in prompts["prompts"]][:2] == ["Where is my order?", "Refund an order"]
    assert slack.to("assistant.threads.setTitle") == [
        {"channel_id": DM, "thread_ts": THREAD, "title": "please refund order O-23456"}
    ]
    assert "฿3,290" in question["text"] and [b["action_id"] for b in buttons_of(question)] == [
        "agentbot_confirm",
        "agentbot_cancel",
    ]
    (refused,) = slack.to("chat.postEphemeral")
    assert refused["user"] == BILAL and "Only the person who asked" in refused["text"]

    # Each turn: the status line is set, the answer lands in the thread, the status is cleared.
    shown = [
        c.params.get("status", "posted")
        for c in slack.calls[:refund_calls]
        if c.method in ("assistant.threads.setStatus", "chat.postMessage")
    ]
    assert shown[shown.index("posted", 1) - 1 :] == [
        "is working on it...",  # the request
        "posted",  # the confirmation question
        "",
        "is working on it...",  # Bilal's click
        "",
        "is working on it...",  # Alice's click
        "posted",  # the answer
        "",
    ]
    answer = slack.to("chat.postMessage")[2]
    assert answer["thread_ts"] == THREAD and "refunded ฿3,290" in answer["text"]
    # The pre-message of the order lookup is the status line (and only that), the answer a message.
    order = [(c.method, c.params) for c in slack.calls[refund_calls:] if c.method != "conversations.replies"]
    assert [m for m, _ in order] == [
        "assistant.threads.setStatus",
        "assistant.threads.setStatus",
        "chat.postMessage",
        "assistant.threads.setStatus",
    ]
    assert order[1][1]["status"] == "is checking order O-12345..." and order[1][1]["loading_messages"]
    assert "shipped" in order[2][1]["text"] and order[3][1]["status"] == ""
    assert sum("refunded" in p["text"] for p in slack.to("chat.postMessage")) == 1
    refunds = await rows(db_url, "SELECT order_id, amount, customer_id FROM refunds")
    assert [tuple(r) for r in refunds] == [("O-23456", 3290.0, "C-001")]

    session = f"slack:{TEAM_ID}:{DM}:{THREAD}"
    received = await rows(
        db_url, "SELECT payload FROM telemetry_events WHERE session_id = :s AND stage = 'received'", s=session
    )
    assert received and all(json.loads(r.payload).get("viewing") == ORDERS for r in received)
    traces = Path(db_url.split("///", 1)[1]).parent / "traces"
    roots = [json.loads(line) for f in traces.glob("*.jsonl") for line in f.read_text().splitlines()]
    turns = [r for r in roots if r.get("attributes", {}).get("agentbot.session_id") == session]
    assert turns and all(r["attributes"]["agentbot.viewing_channel"] == ORDERS for r in turns)
    assert await rows(db_url, "SELECT key FROM inbox WHERE status != 'done'") == []


async def test_a_dm_thread_that_is_not_an_assistant_thread_keeps_its_pre_message(
    db_url: str, slack: SlackStandIn
) -> None:
    async with running_app(db_url, slack) as app:
        event = {"type": "message", "channel_type": "im", "channel": DM, "user": ALICE, "text": "where is O-12345"}
        await app.client.event({**event, "ts": "1700000200.000100", "thread_ts": "1700000199.000100"})
        await slack.wait_for("chat.postMessage", 2)
        await app.channel.dispatcher.drain()
    assert not [c for c in slack.calls if c.method.startswith("assistant.")]
    assert "O-12345" in slack.to("chat.postMessage")[0]["text"]  # the pre-message, as a message


async def test_assistant_events_are_stored_before_the_ack_and_retries_are_answered_once(
    db_url: str, slack: SlackStandIn
) -> None:
    import sqlite3

    async with running_app(db_url, slack) as app:
        await open_thread(app)
        await slack.wait_for("chat.postMessage", 1)
        retried = {
            "type": "message",
            "channel_type": "im",
            "channel": DM,
            "user": ALICE,
            "text": "where is O-12345",
            "ts": app.client.ts(),
            "thread_ts": THREAD,
        }
        await app.client.event(retried, event_id="EvASSIST1")
        again, _ = await app.client.event(retried, event_id="EvASSIST1", retry=1)
        await app.channel.dispatcher.drain()
        with sqlite3.connect(db_url.split("///", 1)[1]) as db:
            db.execute("DROP TABLE inbox")  # the database breaks under the running app
        lost, _ = await app.client.event({**retried, "ts": app.client.ts()}, event_id="EvASSIST2")
        await app.channel.dispatcher.drain()
    assert again.status == 200 and lost.status == 503  # not stored, so not acked: Slack sends it again
    assert sum("shipped" in p["text"] for p in slack.to("chat.postMessage")) == 1
