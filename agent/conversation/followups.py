"""Follow-ups about an open goal's answer: "the cheapest one", "the second one", "that one", "is the
second one any good?" after a recommendation go to the intent that answers about one item.

An intent opts in with `follow_up` in config/intents.yaml (which intent answers, which of the goal's
slots lists the items and which slot of the follow-up intent gets the message). The check is the
same in every understanding mode, so a recommendation stays a conversation in rules and llm mode.
"""

from __future__ import annotations

import re

from agent.config import FollowUp, IntentSpec
from agent.session import SessionState
from agent.types import Classification

# Words that point at one of the items just listed rather than name a new product.
POINTING = re.compile(
    r"\b(?:first|second|third|fourth|fifth|last|1st|2nd|3rd|4th|5th|top|cheap\w*|(?:most|least) expensive|"
    r"pricie\w*|priciest|lowest price|highest price|that one|this one|the one|that|this|it|those|these|"
    r"(?:option|number|no\.?|#)\s*\d)\b",
    re.I,
)
# Below this confidence, a message about an open goal's items is read as a follow-up.
SURE = 0.75
_WORD = re.compile(r"[a-z0-9][a-z0-9-]+", re.I)


def _name_words(items: list[dict]) -> set[str]:
    """Words that tell the listed items apart (a brand, a model number), not words they share ("pro")."""
    words = [set(_WORD.findall(str(i.get("name", "")).lower())) for i in items]
    common = set.intersection(*words) if len(words) > 1 else set()
    return {w for ws in words for w in ws if w not in common and len(w) > 1}


def redirect(
    state: SessionState, text: str, cls: Classification, specs: dict[str, IntentSpec], sure: float = SURE
) -> Classification:
    """The classification to act on: a follow-up about the open goal's items, or `cls` unchanged."""
    goal = state.active_goal
    spec = specs.get(goal.intent_id) if goal else None
    rule: FollowUp | None = spec.follow_up if spec else None
    if goal is None or spec is None or rule is None or not goal.answered:
        return cls
    items = goal.slots.get(rule.items_slot) or []
    if not items or not about_items(text, items):
        return cls
    if cls.intent_id in specs and specs[cls.intent_id].kind == "chat":
        return cls  # "thanks, that's great" is small talk
    # A refinement names the recommendation's own values ("a mouse instead", "under 2000").
    own = cls.intent_id == goal.intent_id and not any(k in cls.params for k in spec.required_params)
    if not (cls.intent_id in (None, rule.intent) or own or cls.confidence < sure):
        return cls  # another request, plainly ("where is O-12345?")
    return Classification(intent_id=rule.intent, params={rule.slot: text}, confidence=max(cls.confidence, sure))


def about_items(text: str, items: list[dict]) -> bool:
    """The message points at one of the listed items."""
    if POINTING.search(text):
        return True
    return bool(set(_WORD.findall(text.lower())) & _name_words(items))
