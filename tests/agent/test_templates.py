"""Every user-facing template in config/ renders with its documented fields and leaves no `{...}`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agent.config.files import load_config
from agent.config.schema import MESSAGE_FIELDS, BotConfig, Messages
from agent.conversation.notices import GoalNames
from agent.conversation.session import Goal
from agent.templates import render
from tests.helpers import REPO

CONFIG_DIRS = sorted({p.parent for p in (REPO / "config").rglob("intents.yaml")})
LEFTOVER = re.compile(r"\{[^{}]*\}")
# A value of the right kind for the filters templates use ({eta|date}, {amount|money}, {items|list}).
SAMPLE = {"date": "2025-10-18", "money": 12.5, "list": ["a mug", "a lid"]}


def _values(template: str, fields: set[str]) -> dict[str, object]:
    out: dict[str, object] = {}
    for name, flt in re.findall(r"\{(\w+)(?:\|(\w+))?\}", template):
        if name in fields:
            out[name] = SAMPLE.get(flt, f"<{name}>")
    return out


def _leftover(template: str, fields: set[str]) -> list[str]:
    return LEFTOVER.findall(render(template, _values(template, fields)))


def _messages(dumped: dict[str, object], prefix: str = "") -> list[tuple[str, str]]:
    """Each message's dotted name and template, those of a nested wording (`sales.looking`) too."""
    found: list[tuple[str, str]] = []
    for name, value in dumped.items():
        if isinstance(value, dict):
            found += _messages(value, f"{prefix}{name}.")
        elif isinstance(value, str):
            found.append((f"{prefix}{name}", value))
    return found


def _cases(config: BotConfig) -> list[tuple[str, str, set[str]]]:
    """(where, template, the fields it is documented to get)."""
    cases = []
    for spec in config.intents.intents:
        params = set(spec.required_params) | set(spec.optional_params)
        t = spec.templates
        later = params | set(t.fields)
        cases += [(f"{spec.id}.ask.{k}", v, params) for k, v in t.ask.items()]
        cases += [(f"{spec.id}.pre", t.pre, later), (f"{spec.id}.confirm", t.confirm, later)]
        cases += [(f"{spec.id}.answer.{k}", v, later) for k, v in t.answer.items()]
        cases += [(f"{spec.id}.error.{k}", v, later) for k, v in t.error.items()]
        cases += [(f"{spec.id}.goal_name", v, params) for v in spec.goal_name[-1:]]
    for name, value in _messages(config.intents.messages.model_dump()):
        cases.append((f"messages.{name}", value, set(MESSAGE_FIELDS.get(name, []))))
    return cases


@pytest.mark.parametrize("config_dir", CONFIG_DIRS, ids=[str(d.relative_to(REPO)) for d in CONFIG_DIRS])
def test_every_template_renders_with_its_documented_fields(config_dir: Path) -> None:
    config = load_config(config_dir)
    leaks = {where: left for where, template, fields in _cases(config) if (left := _leftover(template, fields))}
    assert leaks == {}
    unnamed = [s.id for s in config.intents.intents if s.kind == "task" and not s.goal_name]
    assert unnamed == [], "resume notices would call these 'your earlier request'"


def test_the_documented_fields_are_of_messages_that_exist() -> None:
    names = {name for name, _ in _messages(Messages(fallback="").model_dump())}
    assert "sales.in_stock" in names  # the nested wordings are checked too
    assert sorted(set(MESSAGE_FIELDS) - names) == []


def test_the_checker_catches_an_undocumented_field() -> None:
    assert _leftover("What should task {task_number} say instead?", {"new_title"}) == ["{task_number}"]
    assert _leftover("Order {order_id} was refunded: {refund_amount|money}.", {"order_id"}) == ["{refund_amount|money}"]


def test_the_last_goal_name_needs_no_slot_and_earlier_ones_fall_back() -> None:
    config = load_config(REPO / "config")
    names = GoalNames({s.id: s for s in config.intents.intents}, config.intents.messages)

    def goal(intent_id: str, **slots: object) -> Goal:
        return Goal(id="g", type=f"x.{intent_id}", agent="x", intent_id=intent_id, slots=dict(slots))

    assert names(goal("recommend_item", category="laptop")) == "your laptop recommendation"
    assert names(goal("recommend_item")) == "your product recommendation"
    assert names(goal("troubleshoot", device="mouse")) == "fixing your mouse"
    assert names(goal("no_such_intent")) == "your earlier request"
    for spec in config.intents.intents:
        assert not LEFTOVER.search(names(goal(spec.id))), spec.id


def test_a_template_that_does_not_parse_keeps_the_config_from_loading() -> None:
    from pydantic import ValidationError

    from agent.config.schema import IntentTemplates, Messages

    with pytest.raises(ValidationError, match="not a template"):
        IntentTemplates(confirm="Refund {amount|money for order {order_id}?")
    with pytest.raises(ValidationError, match="not a template"):
        Messages(fallback="Sorry {", resume="Now, back to {goal.}.")
    with pytest.raises(ValidationError, match="not a template"):
        IntentTemplates(answer={"default": "Sent {x|no_such_filter}"})


def test_a_placeholder_with_no_value_stays_as_written_until_one_is_given() -> None:
    once = render("Refund {amount|money} for {order_id}? {typo}", {"order_id": "O-1"}, "฿")
    assert once == "Refund {amount|money} for O-1? {typo}"
    assert render(once, {"amount": 3290}, "฿") == "Refund ฿3,290 for O-1? {typo}"
    assert render("{items|list_or}", {"items": ["a", "b", "c"]}) == "a, b or c"
    assert render("{when|date}", {"when": "2026-11-24"}) == "Tue, Nov 24, 2026 (2026-11-24)"
