"""A question with choices in Slack, end to end through slack-bolt against the stand-in Web API:
"Did you mean ...?" and "Which one ...?" as buttons, picked only by the person asked.

Alice (U0ALICE01) is customer C-001, Bilal (U0BILAL02) C-002.
"""

from __future__ import annotations

import json
from typing import Any

from tests.slack_harness import ALICE, CHANNEL, in_thread, rows, running_app
from tests.standins.slack_standin import SlackStandIn

BILAL = "U0BILAL02"


def choice_buttons(message: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The choice buttons of a posted question, by what they say."""
    actions = [b for b in message.get("blocks") or [] if b["type"] == "actions"]
    assert actions, f"no buttons on {message['text']!r}"
    return {e["text"]["text"]: e for e in actions[-1]["elements"] if e["action_id"].startswith("agentbot_choose_")}


def clicked(slack: SlackStandIn, root: str, question: dict[str, Any]) -> dict[str, Any]:
    ts = next(m["ts"] for m in slack.threads[(CHANNEL, root)] if m["text"] == question["text"])
    return {"ts": ts, "text": question["text"], "thread_ts": root}


def ephemerals(slack: SlackStandIn, user: str) -> list[str]:
    return [p["text"] for p in slack.to("chat.postEphemeral") if p["user"] == user]


async def test_the_person_asked_picks_a_choice_and_someone_else_cannot(db_url: str, slack: SlackStandIn) -> None:
    async with running_app(db_url, slack) as app:
        root, _ = await app.client.mention("O-23456 was a disappointment")  # Alice, unsure between two requests
        (question,) = await slack.wait_for("chat.postMessage", 1)
        buttons = choice_buttons(question)
        ticket = buttons["open a support ticket"]
        # Bilal clicks Alice's choice: he is told privately, and nothing is opened.
        where = clicked(slack, root, question)
        label = "open a support ticket"
        await app.client.click(ticket["action_id"], ticket["value"], where, CHANNEL, BILAL, label=label)
        await app.channel.dispatcher.drain()
        tickets_meanwhile = await rows(db_url, "SELECT order_id FROM tickets")
        # Alice clicks it, then clicks it again (a double click is one answer).
        for _ in range(2):
            await app.client.click(ticket["action_id"], ticket["value"], where, CHANNEL, ALICE, label=label)
            await app.channel.dispatcher.drain()
    assert "Did you mean" in question["text"]
    assert list(buttons) == ["check an order's status", "open a support ticket", "something else"]
    assert tickets_meanwhile == []
    assert [t for t in ephemerals(slack, BILAL)] == [
        "Only the person who was asked can choose here, so nothing has changed."
    ]
    thread = [p["text"] for p in in_thread(slack, CHANNEL, root)]
    assert len(thread) == 3 and "I've opened ticket" in thread[-1] and "O-23456 was a disappointment" in thread[-1]
    tickets = await rows(db_url, "SELECT order_id, customer_id FROM tickets")
    assert [tuple(t) for t in tickets] == [("O-23456", "C-001")]  # the first message's order, carried over
    updates = slack.to("chat.update")
    assert len(updates) == 1 and f"Chose “open a support ticket” by <@{ALICE}>" in json.dumps(
        updates[0]["blocks"], ensure_ascii=False
    )


async def test_which_order_is_asked_with_a_button_per_order(db_url: str, slack: SlackStandIn) -> None:
    async with running_app(db_url, slack) as app:
        root, _ = await app.client.mention("refund my mouse")  # Alice has two mice on her orders
        (question,) = await slack.wait_for("chat.postMessage", 1)
        buttons = choice_buttons(question)
        second = buttons["HyperX Pulsefire Haste (O-24680)"]
        await app.client.click(second["action_id"], second["value"], clicked(slack, root, question), CHANNEL, ALICE)
        await app.channel.dispatcher.drain()
    assert "Which one" in question["text"]
    assert list(buttons) == ["Logitech MX Master 3S (O-12345)", "HyperX Pulsefire Haste (O-24680)"]
    thread = [p["text"] for p in in_thread(slack, CHANNEL, root)]
    assert "O-24680" in thread[-1] and "O-12345" not in thread[-1]  # the refund asks its yes for the one picked
    assert await rows(db_url, "SELECT order_id FROM refunds") == []  # nothing refunded without that yes
