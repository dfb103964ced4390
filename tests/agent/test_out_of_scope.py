"""Out of scope, policy questions and the action gate, through the real router and a real SQLite file."""

from __future__ import annotations

import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agent.app import App
from agent.turn.router import AgentRouter
from bots.app import build_app
from tests.helpers import REPO, say
from tests.standins.telemetry import CollectingSink


async def rows(app: App, query: str) -> list[Any]:
    return list(await app.store.fetch(query))  # type: ignore[attr-defined]


async def effects(app: App) -> dict[str, int]:
    tables = ("tickets", "refunds", "handoffs", "tasks")
    return {t: len(await rows(app, f"SELECT id FROM {t}")) for t in tables}


NOTHING = {"tickets": 0, "refunds": 0, "handoffs": 0, "tasks": 0}


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("I forgot my password and the reset email never came", "I can't change account settings"),
        ("please cancel order O-12345, I ordered the wrong thing", "I can't cancel or change an order"),
        ("invoice INV-4471 shows $45.99 but I paid $39.99", "I can't send or change invoices"),
        ("unsubscribe me from your newsletter", "newsletter"),
        ("who won the football last night?", "outside what I can help with"),
    ],
)
async def test_out_of_scope_gets_an_honest_answer_and_the_human_offer(
    app: App, router: AgentRouter, text: str, answer: str
) -> None:
    response, delivered = await say(router, text)
    assert response.intent_id is None
    assert response.tool_results == []
    assert answer in response.text
    assert response.text.endswith("Would you like me to loop in a human support agent?")
    assert delivered[-1].buttons == ["human"]
    assert await effects(app) == NOTHING


async def test_a_yes_to_the_human_offer_after_out_of_scope_hands_off(app: App, router: AgentRouter) -> None:
    await say(router, "change the delivery address on O-12345")
    response, _ = await say(router, "yes please")
    assert response.handoff
    assert (await effects(app))["handoffs"] == 1


@pytest.mark.parametrize(
    ("text", "fact", "source"),
    [
        ("what's your return policy?", "within 30 days", "Returns and refunds policy"),
        ("how long does delivery usually take", "2-4 business days", "Delivery options and times"),
        ("do you accept paypal?", "PayPal", "Payment methods"),
    ],
)
async def test_a_policy_question_is_answered_from_the_kb_with_its_source(
    app: App, router: AgentRouter, text: str, fact: str, source: str
) -> None:
    response, _ = await say(router, text)
    assert response.intent_id == "policy_question"
    assert [r.tool for r in response.tool_results] == ["knowledge_base_search"]
    assert fact in response.text
    assert f"Source: {source}" in response.text
    assert await effects(app) == NOTHING


async def test_a_ticket_summary_is_the_problem_not_the_whole_message(app: App, router: AgentRouter) -> None:
    response, _ = await say(router, "Hi! Can you open a ticket: my monitor arrived with a cracked screen. Thanks!")
    assert "opened ticket T-" in response.text
    assert [r[0] for r in await rows(app, "SELECT summary FROM tickets")] == [
        "My monitor arrived with a cracked screen"
    ]


@pytest.fixture
async def cautious(tmp_path: Path, sink: CollectingSink) -> AsyncIterator[App]:
    """The shipped config with a stricter action gate: every model-read side-effecting intent asks first."""
    config = tmp_path / "config"
    shutil.copytree(REPO / "config", config)
    banks = config / "nlu.yaml"
    text, levels = re.subn(r"(?m)^confident: .*$", "confident: 0.95", banks.read_text())
    text, gates = re.subn(r"(?m)^gates: .*$", "gates: {}", text)
    assert (levels, gates) == (1, 1), "nlu.yaml no longer has the lines this fixture raises"
    banks.write_text(text)
    async with build_app(config, REPO / "data", f"sqlite+aiosqlite:///{tmp_path / 'a.db'}", telemetry=sink) as a:
        yield a


async def test_an_unsure_side_effecting_intent_asks_before_acting(cautious: App) -> None:
    response, delivered = await say(cautious.router, "the product I got has a problem")
    assert response.text == "Do you want me to open a support ticket about this?"
    assert response.tool_results == []
    assert await effects(cautious) == NOTHING
    response, _ = await say(cautious.router, "yes")
    assert "opened ticket T-" in response.text
    assert [r[0] for r in await rows(cautious, "SELECT summary FROM tickets")] == ["The product I got has a problem"]


async def test_no_to_the_gate_question_acts_on_nothing(cautious: App) -> None:
    await say(cautious.router, "the product I got has a problem")
    response, _ = await say(cautious.router, "no")
    assert response.tool_results == []
    assert await effects(cautious) == NOTHING
