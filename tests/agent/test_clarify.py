"""Doubt is a question: when the reading is unsure between requests, which ones are offered, what
the asking and the picking turns record, what a click on a question no longer open does, and the
conversations of tests/suites_rules/clarify_choices.yaml."""

from __future__ import annotations

import json
import uuid

import pytest

from agent.app import App
from agent.domain.types import ChannelContext, ChannelType, Interaction, OutboundMessage
from agent.eval.suite import load_suite
from agent.understanding.banks import NluBanks
from agent.understanding.doubt import unsure_between
from agent.understanding.reading import Reading
from tests.helpers import CUSTOMER, REPO, rules_conversation, say
from tests.standins.telemetry import CollectingSink

BANKS = NluBanks(threshold=0.3, confident=0.6, gates={"refund_request": 0.7}, clarify=0.05)
TAKES = {"order_status": {"order_id"}, "create_ticket": {"order_id", "summary"}, "recommend_item": {"budget"}}


def reading(intent: str, **scores: float) -> Reading:
    return Reading(intent=intent, confidence=scores[intent], scores=scores)


def test_a_runner_up_within_the_margin_under_the_gate_is_offered() -> None:
    unsure = reading("order_status", order_status=0.45, create_ticket=0.42, refund_request=0.30)
    assert unsure_between(unsure, BANKS, set(TAKES) | {"refund_request"}) == ["order_status", "create_ticket"]


def test_a_sure_reading_a_distant_runner_up_and_small_talk_ask_nothing() -> None:
    choosable = {"order_status", "create_ticket", "refund_request"}
    sure = reading("order_status", order_status=0.62, create_ticket=0.60)
    assert unsure_between(sure, BANKS, choosable) == []  # at its gate: acted on
    distant = reading("order_status", order_status=0.45, create_ticket=0.39)
    assert unsure_between(distant, BANKS, choosable) == []
    chat = reading("greeting", greeting=0.45, order_status=0.44, create_ticket=0.43)
    assert unsure_between(chat, BANKS, choosable) == []  # small talk is answered, never offered
    beside_chat = reading("order_status", order_status=0.45, greeting=0.44, create_ticket=0.30)
    assert unsure_between(beside_chat, BANKS, choosable) == []  # the one near is small talk: no choice
    never = reading("order_status", order_status=0.45, create_ticket=0.45)
    assert unsure_between(never, NluBanks(clarify=0.0), choosable) == []  # a store calibrated to never ask


def test_an_intent_that_cannot_take_the_messages_values_is_no_choice() -> None:
    budget = reading("recommend_item", recommend_item=0.40, order_status=0.39)
    assert unsure_between(budget, BANKS, set(TAKES), {"budget"}, TAKES) == []
    order = reading("order_status", order_status=0.40, create_ticket=0.39, recommend_item=0.38)
    assert unsure_between(order, BANKS, set(TAKES), {"order_id"}, TAKES) == ["order_status", "create_ticket"]


async def test_the_question_and_the_pick_are_recorded_for_review(app: App, sink: CollectingSink) -> None:
    asked, shown = await say(app.router, "O-23456 was a disappointment", session="review")
    picked, _ = await say(app.router, "the 2nd", session="review")
    classified = [e.payload for e in sink.events if e.stage == "intent_classified"]
    rows = await app.store.fetch("SELECT kind, text, reading FROM review_items ORDER BY created_at")  # type: ignore[attr-defined]
    assert [o.label for o in shown[-1].choices] == [
        "check an order's status",
        "open a support ticket",
        "something else",
    ]
    assert not asked.tool_results and asked.active_goal is None  # nothing done on the unsure reading
    assert [r.tool for r in picked.tool_results] == ["create_ticket"]
    assert classified[0]["clarify"] == ["order_status", "create_ticket"]
    assert {"chosen": "create_ticket", "asked_about": "O-23456 was a disappointment"}.items() <= classified[1].items()
    kinds = [(r.kind, r.text, json.loads(r.reading)) for r in rows]
    # One item for the question: what was offered, and the pick recorded on it.
    assert [(k, t) for k, t, _ in kinds] == [("clarification", "O-23456 was a disappointment")]
    assert kinds[0][2]["clarify"] == ["order_status", "create_ticket"] and kinds[0][2]["chosen"] == "create_ticket"


async def test_a_click_on_a_question_no_longer_open_does_nothing(app: App) -> None:
    _, shown = await say(app.router, "O-23456 was a disappointment", session="stale")
    question = shown[-1]
    await say(app.router, "where is O-12345?", session="stale")  # a request of its own: the question is dropped
    delivered: list[OutboundMessage] = []

    async def reply(m: OutboundMessage) -> None:
        delivered.append(m)

    click = Interaction(
        id=f"i-{uuid.uuid4().hex[:10]}",
        text="open a support ticket",
        session_key="stale",
        customer_id=CUSTOMER,
        context=ChannelContext(channel_type=ChannelType.console),
        action="choose",
        action_hash=question.action_hash,
        choice="create_ticket",
    )
    response = await app.router.handle(click, reply=reply)
    assert [m.text for m in delivered] == [
        "That question isn't open any more, so I haven't done anything. What can I help you with?"
    ]
    assert response.tool_results == []


# The conversations (tests/suites_rules/clarify_choices.yaml), each on a database of its own.
CONVERSATIONS = REPO / "tests" / "suites_rules" / "clarify_choices.yaml"


@pytest.mark.parametrize("scenario_id", [s.id for s in load_suite(CONVERSATIONS).scenarios])
async def test_clarify_conversation(scenario_id: str, db_url: str) -> None:
    await rules_conversation(CONVERSATIONS, scenario_id, db_url)
