"""Several people in one Slack thread, end to end through slack-bolt against the stand-in Web API.

Alice (U0ALICE01) is customer C-001, Bilal (U0BILAL02) C-002, Chen (U0CHEN003) C-003; U0GUEST99 is
no customer (a guest). Each test says what each person sees and what was stored.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from adapters.storage.sql import SqlStore
from agent.conversation.session import SessionState
from bots.slack.events import session_key
from tests.slack_harness import ALICE, CHANNEL, in_thread, rows, running_app
from tests.standins.slack_standin import TEAM_ID, SlackStandIn

BILAL, CHEN, GUEST = "U0BILAL02", "U0CHEN003", "U0GUEST99"
PRIVACY = "I can only share details of orders on your account."


async def state_of(db_url: str, root: str) -> SessionState:
    store = SqlStore(db_url)
    try:
        saved, _ = await store.load(session_key(TEAM_ID, CHANNEL, root), 0)
    finally:
        await store.aclose()
    assert saved is not None
    return saved


def ephemerals(slack: SlackStandIn, user: str) -> list[str]:
    return [p["text"] for p in slack.to("chat.postEphemeral") if p["user"] == user]


def clicked(slack: SlackStandIn, root: str, question: dict[str, Any]) -> dict[str, Any]:
    ts = next(m["ts"] for m in slack.threads[(CHANNEL, root)] if m["text"] == question["text"])
    return {"ts": ts, "text": question["text"], "thread_ts": root}


async def test_only_the_requester_can_confirm_a_refund_in_a_shared_thread(db_url: str, slack: SlackStandIn) -> None:
    async with running_app(db_url, slack) as app:
        root, _ = await app.client.mention("please refund order O-23456")  # Alice
        (question,) = await slack.wait_for("chat.postMessage", 1)
        confirm = question["blocks"][-1]["elements"][0]
        # Bilal clicks Alice's Confirm, then types "yes" in her thread.
        await app.client.click("agentbot_confirm", confirm["value"], clicked(slack, root, question), CHANNEL, BILAL)
        await app.channel.dispatcher.drain()
        await app.client.message("yes", user=BILAL, extra={"thread_ts": root})
        await app.channel.dispatcher.drain()
        refunds_meanwhile = await rows(db_url, "SELECT order_id FROM refunds")
        waiting = (await state_of(db_url, root)).speakers[ALICE].pending_confirmation
        # Alice's own click still works: her question was not used up by Bilal's.
        await app.client.click("agentbot_confirm", confirm["value"], clicked(slack, root, question), CHANNEL, ALICE)
        await app.channel.dispatcher.drain()
    # Bilal saw two private notices; nobody else saw anything from his attempts.
    assert len(ephemerals(slack, BILAL)) == 2
    assert all("Only the person who asked" in t for t in ephemerals(slack, BILAL))
    assert refunds_meanwhile == []
    assert waiting is not None and waiting.tool == "issue_refund" and waiting.params["order_id"] == "O-23456"
    thread = [p["text"] for p in in_thread(slack, CHANNEL, root)]
    assert len(thread) == 2 and "refunded ฿3,290" in thread[-1]
    updates = slack.to("chat.update")
    assert len(updates) == 1 and f"Confirmed by <@{ALICE}>" in json.dumps(updates[0]["blocks"])
    refunds = await rows(db_url, "SELECT order_id, amount, customer_id FROM refunds")
    assert [tuple(r) for r in refunds] == [("O-23456", 3290.0, "C-001")]


async def test_each_person_in_a_thread_has_their_own_list_orders_and_slots(db_url: str, slack: SlackStandIn) -> None:
    async with running_app(db_url, slack) as app:
        await app.client.mention("add a task to renew my passport", user=CHEN)  # Chen's own thread
        root, _ = await app.client.mention("add a task to call the bank", user=BILAL)
        await app.channel.dispatcher.drain()
        # Chen writes in Bilal's thread.
        await app.client.message("show my tasks", user=CHEN, extra={"thread_ts": root})
        await app.channel.dispatcher.drain()
        await app.client.message("refund O-35791", user=CHEN, extra={"thread_ts": root})  # Bilal's order
        await app.channel.dispatcher.drain()
        await app.client.message("yes", user=CHEN, extra={"thread_ts": root})
        await app.channel.dispatcher.drain()
        # Two people filling their own slots at once: each question is answered by its asker.
        await app.client.message("I want to check my order", user=BILAL, extra={"thread_ts": root})
        await app.client.message("I'd like to check an order", user=ALICE, extra={"thread_ts": root})
        await app.client.message("O-34567", user=BILAL, extra={"thread_ts": root})
        await app.client.message("O-12345", user=ALICE, extra={"thread_ts": root})
        await app.channel.dispatcher.drain()
    thread = [p["text"] for p in in_thread(slack, CHANNEL, root)]
    (listing,) = [t for t in thread if "passport" in t]  # what Chen saw for "show my tasks"
    assert "call the bank" not in listing  # Chen's list, not Bilal's
    assert any("isn't on your account" in t for t in thread)  # Chen's refund of Bilal's order
    assert not any("$120.00" in t and "?" in t for t in thread)  # no confirmation was asked
    assert any("O-34567" in t and "in transit" in t for t in thread)  # Bilal's own order, to Bilal
    assert any("O-12345" in t and "shipped" in t for t in thread)  # Alice's own order, to Alice
    assert await rows(db_url, "SELECT order_id FROM refunds") == []
    tasks = await rows(db_url, "SELECT owner, title FROM tasks ORDER BY owner")
    assert [tuple(t) for t in tasks] == [("C-002", "call the bank"), ("C-003", "renew my passport")]
    speakers = (await state_of(db_url, root)).speakers
    assert {BILAL, CHEN, ALICE} <= set(speakers) and speakers[CHEN].customer_id == "C-003"


async def test_order_details_are_only_for_the_orders_customer(db_url: str, slack: SlackStandIn) -> None:
    async with running_app(db_url, slack) as app:
        guest_root, _ = await app.client.mention("where is O-12345?", user=GUEST)
        missing_root, _ = await app.client.mention("where is O-99999?", user=GUEST)
        other_root, _ = await app.client.mention("where is O-12345?", user=BILAL)
        own_root, _ = await app.client.mention("where is O-12345?", user=ALICE)
        await app.channel.dispatcher.drain()
    refused = {
        root: [p["text"] for p in in_thread(slack, CHANNEL, root)] for root in (guest_root, missing_root, other_root)
    }
    for texts in refused.values():
        # The same words for someone else's order and an order that does not exist; a person on offer.
        assert texts[-2] == PRIVACY and "loop in a human" in texts[-1]
        assert not any(w in " ".join(texts) for w in ("shipped", "UPS", "FedEx", "tracking", "1Z", "ETA"))
    offer = in_thread(slack, CHANNEL, guest_root)[-1]
    assert [b["action_id"] for b in offer["blocks"][-1]["elements"]] == ["agentbot_human"]
    assert "shipped" in in_thread(slack, CHANNEL, own_root)[-1]["text"]
    checks = await rows(db_url, "SELECT payload FROM telemetry_events WHERE stage = 'policy_check'")
    decisions = [json.loads(r.payload) for r in checks]
    denied = [d for d in decisions if not d["allowed"]]
    assert len(denied) == 3 and {d["rule"] for d in denied} == {"order_details_own_customer_only"}
    assert slack.to("chat.postMessage") and not [p for p in slack.to("chat.postMessage") if p["channel"] == "C0ADMINS"]


async def test_unsigned_input_of_any_shape_gets_401_and_one_log_line(
    db_url: str, slack: SlackStandIn, caplog: pytest.LogCaptureFixture
) -> None:
    bodies = [
        (b'{"type": "event_callback", "event": {', "application/json"),  # malformed JSON
        (b"\xff\xfe\x00garbage", "application/json"),
        (b"payload=%7Bnot-json", "application/x-www-form-urlencoded"),
        (b"", "application/json"),
        (b'{"type": "url_verification", "challenge": "x"}', "text/plain"),
    ]
    async with running_app(db_url, slack) as app:
        assert app.client.session is not None
        caplog.clear()
        statuses = []
        for body, kind in bodies:
            async with app.client.session.post(app.client.url, data=body, headers={"Content-Type": kind}) as r:
                statuses.append(r.status)
        forged = await app.client.post(bodies[0][0], "application/json", secret="wrong")
        async with app.client.session.post(app.client.url, data=io.BytesIO(b"x" * (2 * 1024 * 1024))) as big:
            oversized = big.status
        root, ok = await app.client.mention("where is O-12345")  # a signed request still works
        await app.channel.dispatcher.drain()
    assert statuses == [401] * len(bodies) and forged.status == 401 and oversized in (401, 413)
    refusals = [r for r in caplog.records if "refused an unsigned" in r.getMessage()]
    assert len(refusals) == len(bodies) + 1 + (oversized == 401)  # one line per request
    assert not any(r.exc_info for r in caplog.records)  # never a traceback
    assert ok.status == 200 and "shipped" in in_thread(slack, CHANNEL, root)[-1]["text"]
    assert await rows(db_url, "SELECT key FROM inbox") != []  # only the signed mention was stored


async def test_echoed_user_text_loses_bidi_controls_and_cannot_format_or_mention(
    db_url: str, slack: SlackStandIn
) -> None:
    sneaky = "photo\u202egnp.exe is *broken* <!here> `rm -rf` @channel"
    async with running_app(db_url, slack) as app:
        root, _ = await app.client.mention(f"open a ticket about {sneaky}")
        await app.channel.dispatcher.drain()
        await app.client.command(f"track {sneaky}")
        await app.channel.dispatcher.drain()
    answer = in_thread(slack, CHANNEL, root)[-1]  # "I've opened ticket T-... for you: ..."
    assert "photognp.exe is *broken*" in answer["text"].lower()
    assert "\u202e" not in json.dumps(answer, ensure_ascii=False)
    assert answer["mrkdwn"] is False  # the asterisks and backticks show as typed
    assert "<!here>" not in answer["text"] and "@\u2060channel" in answer["text"]  # no ping from the echo
    asked = next(p for p in slack.to("chat.postMessage") if "asked" in p["text"])
    assert "\u202e" not in json.dumps(asked, ensure_ascii=False) and "<!here>" not in asked["text"]
    assert asked["blocks"][1]["text"]["type"] == "plain_text"  # the question cannot start formatting
    tickets = await rows(db_url, "SELECT summary FROM tickets")
    assert tickets and not any("\u202e" in t.summary for t in tickets)  # no stored summary keeps the override
