"""The customer's own orders when no order is named: a question about something that exists (a
refund's status) is answered from the customer's record and never opens a request.

The shipped config's status intent comes with its banks; here a store of our own declares one
(an intent whose `own_orders` names the statuses it is about) over a copy of the shipped config,
so the mechanism is shown on its own, through the real router and the demo data.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.app import App
from agent.eval.suite import load_suite
from bots.app import build_app
from tests.helpers import REPO, rules_conversation, say
from tests.standins.telemetry import CollectingSink


@pytest.fixture
def store() -> Path:
    """The shipped config: its refund_status intent answers about the customer's refunded orders."""
    return REPO / "config"


async def test_where_is_my_refund_answers_from_the_refunded_order(store: Path, db_url: str) -> None:
    app: App
    async with build_app(store, REPO / "data", db_url) as app:
        # Chen (C-003) has one refunded order, O-56789, and a delivered laptop.
        response, delivered = await say(app.router, "hey, where's my refund at?", customer="C-003")
        later, _ = await say(app.router, "any update on the money back?", session="s-2", customer="C-003")
    assert response.intent_id == "refund_status"
    assert [r.tool for r in response.tool_results] == ["check_order_status"]
    assert "O-56789 was refunded" in response.text and "3-5 business days" in response.text
    assert "O-67890" not in response.text  # the laptop's order is not what was asked about
    assert not response.confirmation and not response.handoff
    assert all(r.tool not in ("issue_refund", "create_ticket") for r in later.tool_results)
    assert all("refund" not in m.text.lower() or "?" not in m.text for m in delivered if m.kind == "question")


async def test_refund_status_with_no_refunded_order_asks_which(store: Path, db_url: str) -> None:
    async with build_app(store, REPO / "data", db_url) as app:
        # Alice (C-001) has no refunded order: nothing to look up by itself, so the bot asks.
        response, _ = await say(app.router, "hey, where's my refund at?", customer="C-001")
    assert response.intent_id == "refund_status"
    assert response.tool_results == []
    assert response.missing_param == "order_id"
    assert "Which order's refund" in response.text


async def test_intent_classified_carries_the_ranked_candidates(db_url: str) -> None:
    """The reading's three likeliest intents, best first, in the stage's payload (the review inbox
    reads misses from it), for an understood request and for one no intent fits."""
    sink = CollectingSink()
    async with build_app(REPO / "config", REPO / "data", db_url, telemetry=sink) as app:
        understood, _ = await say(app.router, "could you look up how my parcel O-12345 is doing", customer="C-001")
        unplaced, _ = await say(app.router, "what's the capital of peru", session="s-2", customer="C-001")
    payloads = [e.payload for e in sink.events if e.stage == "intent_classified"]
    first, second = payloads
    assert first["intent_id"] == "order_status"
    assert [c[0] for c in first["candidates"]][0] == "order_status" and len(first["candidates"]) == 3
    scores = [c[1] for c in first["candidates"]]
    assert scores == sorted(scores, reverse=True)
    assert second["intent_id"] is None and len(second["candidates"]) == 3
    assert unplaced.tool_results == [] and understood.tool_results[0].tool == "check_order_status"


# The own-things conversations (tests/suites_rules/own_things.yaml) run in the embedded mode, each
# scenario on a database of its own: several of them refund the same demo order.
OWN_THINGS = REPO / "tests" / "suites_rules" / "own_things.yaml"


@pytest.mark.parametrize("scenario_id", [s.id for s in load_suite(OWN_THINGS).scenarios])
async def test_own_things_conversation(scenario_id: str, db_url: str) -> None:
    await rules_conversation(OWN_THINGS, scenario_id, db_url)
