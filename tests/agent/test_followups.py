"""Follow-ups about listed items read the store's words from config/, never from agent/ (issue 25)."""

from __future__ import annotations

import re

import pytest

from agent.config.files import load_config
from agent.conversation.followups import redirect
from agent.conversation.session import Goal, Speaker
from agent.domain.types import Classification
from agent.eval.suite import load_suite
from tests.helpers import REPO, rules_conversation

LISTED = [
    {"sku": "A-1", "name": "Alpha One", "price": 300, "stock": 2, "attributes": {"weight": "900 g"}},
    {"sku": "B-2", "name": "Beta Two", "price": 100, "stock": 5, "attributes": {"weight": "400 g"}},
]


def _state(slots: dict | None = None) -> Speaker:
    state = Speaker()
    goal = Goal(
        id="g-1",
        type="sales.recommend_item",
        agent="sales",
        intent_id="recommend_item",
        answered=True,
        slots=slots or {"category": "mouse", "feature": "gaming", "budget": 1500, "recommended": LISTED},
    )
    state.goals[goal.id], state.active_goal_id = goal, goal.id
    return state


CHOOSING = load_config(REPO / "config").intents.vocabulary.choosing


def test_no_word_for_pointing_at_items_is_written_in_the_core() -> None:
    """Ordinals, cheapest/lighter words and pointing words are config data: none is a string in agent/."""
    words: set[str] = set()
    for config in (REPO / "config", REPO / "config" / "stores" / "outdoor"):
        intents = load_config(config).intents
        c = intents.vocabulary.choosing
        words |= {*c.ordinals, *c.lowest, *c.highest}
        for spec in intents.intents:
            if rule := spec.follow_up:
                # A slot's name is no pointing word.
                words |= set(rule.pointing) - {"it", "that", "this", rule.items_slot}
    assert words
    for path in sorted((REPO / "agent").rglob("*.py")):
        lines = path.read_text(encoding="utf-8").lower().splitlines()
        text = "\n".join(line for line in lines if not line.lstrip().startswith("#"))  # comments may quote them
        # A Python string literal of its own (the formatter writes them in double quotes); a phrase
        # quoted inside prose ("... ('that one', its name)") is an example, not a list.
        found = {w for w in words if re.search(rf"\"{re.escape(w.lower())}\"", text)}
        assert not found, f"{path.relative_to(REPO)} writes {sorted(found)}"


def test_a_store_that_words_its_lists_differently_is_understood_by_them() -> None:
    """A phrase nobody wrote in the shipped lists works once the store's config says it."""
    intents = load_config(REPO / "config").intents
    specs, choosing = {s.id: s for s in intents.intents}, intents.vocabulary.choosing
    unsure = Classification(intent_id=None, confidence=0.2)
    assert redirect(_state(), "the runner-up, please", unsure, specs, choosing).intent_id is None
    choosing.ordinals["runner-up"] = 2
    choosing.lowest["featherweight"] = "weight"
    got = redirect(_state(), "the runner-up, please", unsure, specs, choosing)
    assert got.intent_id == "check_stock" and got.params["sku"] == "B-2"
    got = redirect(_state(), "which one is the featherweight?", unsure, specs, choosing)
    assert got.params["skus"] == ["A-1", "B-2"] and got.params["rank"] == ["weight", "lowest"]


def test_a_new_category_clears_the_answered_search() -> None:
    specs = {s.id: s for s in load_config(REPO / "config").intents.intents}
    state = _state()
    laptop = Classification(intent_id="recommend_item", params={"category": "laptop", "budget": "25k"}, confidence=0.9)
    assert redirect(state, "I need a laptop for uni, budget around 25k", laptop, specs, CHOOSING) is laptop
    goal = state.active_goal
    assert goal is not None and goal.slots == {} and not goal.answered  # no "gaming" carried over
    refine = Classification(intent_id="recommend_item", params={"budget": "800"}, confidence=0.9)
    state = _state()
    redirect(state, "anything under 800?", refine, specs, CHOOSING)
    assert state.active_goal is not None and state.active_goal.slots["feature"] == "gaming"  # a refinement keeps it


# The conversations of tests/suites_rules/follow_ups.yaml, each on a database of its own.
FOLLOW_UPS = REPO / "tests" / "suites_rules" / "follow_ups.yaml"


@pytest.mark.parametrize("scenario_id", [s.id for s in load_suite(FOLLOW_UPS).scenarios])
async def test_follow_up_conversation(scenario_id: str, db_url: str) -> None:
    await rules_conversation(FOLLOW_UPS, scenario_id, db_url)
