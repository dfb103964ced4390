"""Whether a message answers what the bot waits for, decided once from the embedded reading."""

from __future__ import annotations

from datetime import timedelta

import pytest

from agent.config.files import load_config
from agent.config.intents import IntentsRegistry
from agent.conversation.answers import Answers
from agent.conversation.moves import Change, SlotAnswer
from agent.conversation.session import Goal, GoalStatus, PendingConfirmation
from agent.domain.types import IntentContext, utcnow
from agent.understanding.slots import SlotExtractor
from tests.helpers import REPO, rules_classifier

CONFIG = load_config(REPO / "config")
REGISTRY = IntentsRegistry(CONFIG)
RULES = rules_classifier()
INTENTS = REGISTRY.get_eligible(IntentContext(channel="console"))
ANSWERS = Answers(REGISTRY.specs, SlotExtractor(REGISTRY.slots))


def waiting_for(slot: str, intent_id: str = "order_status") -> Goal:
    return Goal(
        id="g1",
        type=f"support.{intent_id}",
        agent="support",
        intent_id=intent_id,
        status=GoalStatus.blocked,
        missing=[slot],
        next_question="?",
    )


def answer(text: str, goal: Goal) -> SlotAnswer | None:
    return ANSWERS.answer(goal, RULES.said(RULES.read(text), INTENTS), text)


@pytest.mark.parametrize("reply", ["O-12345", "o-12345", "12345", "it's 12345", "#12345", "order o12345 thanks"])
def test_an_id_answers_which_order(reply: str) -> None:
    found = answer(reply, waiting_for("order_id"))
    assert found is not None and found.cls.fills_slot and found.cls.intent_id == "order_status"
    assert found.cls.params == {"order_id": "O-12345"}


@pytest.mark.parametrize(
    "text",
    ["forget it, I want to talk to a human", "any news on order 24680?", "and O-34567?", "thank you!"],
)
def test_another_request_or_small_talk_is_not_the_description(text: str) -> None:
    assert answer(text, waiting_for("summary", "create_ticket")) is None


@pytest.mark.parametrize(
    ("text", "slot", "intent_id"),
    [
        ("The mug arrived chipped", "summary", "create_ticket"),
        # A device's problem reads as a fix request, which offers the ticket: it is the ticket's problem.
        ("my laptop screen keeps flickering", "summary", "create_ticket"),
        ("the webcam I bought is blurry all the time", "summary", "create_ticket"),
        ("buy oat milk and eggs", "task_title", "task_add"),  # task words, but the task it was asked for
        ("order more printer paper", "task_title", "task_add"),
    ],
)
def test_a_free_text_answer_is_the_whole_reply(text: str, slot: str, intent_id: str) -> None:
    found = answer(text, waiting_for(slot, intent_id))
    assert found is not None and found.cls.intent_id == intent_id and found.cls.params == {slot: text}


def test_a_sure_request_is_not_a_typed_answer() -> None:
    assert answer("recommend a gaming mouse under 1500", waiting_for("order_id")) is None


@pytest.mark.parametrize("text", ["the headphones one", "the one about the plumber", "the plumber task"])
def test_a_task_named_in_words_goes_to_the_waiting_task_request(text: str) -> None:
    """ "Which task is done? Tell me its number." -> "the headphones one" is for the task request
    (its planner looks the words up), not a search for headphones."""
    found = answer(text, waiting_for("task_number", "task_complete"))
    assert found is not None and found.cls.intent_id == "task_complete" and found.cls.params == {}


@pytest.mark.parametrize("text", ["show me my tasks", "where is my order O-12345?", "where's my package?"])
def test_a_sure_request_or_a_value_of_another_kind_is_not_a_task_named_in_words(text: str) -> None:
    assert answer(text, waiting_for("task_number", "task_complete")) is None


def test_a_value_of_another_kind_is_not_named_in_words() -> None:
    """Only a slot that says so (config/intents.yaml `named_by`) takes a reply in words."""
    assert answer("the blue one", waiting_for("order_id")) is None


def test_nothing_is_answered_when_nothing_is_asked() -> None:
    assert ANSWERS.answer(None, RULES.said(RULES.read("O-12345"), INTENTS), "O-12345") is None


def refund_waiting(order_id: str = "O-23456") -> PendingConfirmation:
    return PendingConfirmation(
        kind="tool",
        intent_id="refund_request",
        goal_id="g1",
        tool="issue_refund",
        params={"order_id": order_id, "amount": 3290.0},
        action_hash="h",
        prompt="Refund?",
        expires_at=utcnow() + timedelta(minutes=5),
    )


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("yes, but just $15 of it", {"amount": "15"}),
        ("make it O-24680 instead", {"order_id": "O-24680"}),
    ],
)
def test_new_values_change_the_waiting_action(text: str, values: dict) -> None:
    found = Answers.change(refund_waiting(), RULES.said(RULES.read(text), INTENTS))
    assert isinstance(found, Change) and found.cls.intent_id == "refund_request"
    assert {k: found.cls.params[k] for k in values} == values


def test_a_question_about_another_order_does_not_change_the_refund() -> None:
    assert Answers.change(refund_waiting(), RULES.said(RULES.read("sure, but where's O-12345 first?"), INTENTS)) is None
