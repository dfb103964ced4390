"""Follow-ups about an open goal's answer: after a recommendation, "is the second one wireless?",
"which is lighter?", "the cheaper one?" go to the intent that answers about the listed items, with
which item (or items) the message points at and what it asks; a new search replaces the answered
one; a message about something else is left to be what it is.

An intent opts in with `follow_up` in config/intents.yaml: which intent answers, which of the goal's
slots lists the items, which slot of the follow-up intent gets the message, and the store's words
that point at an item (by place, by the lowest or highest value of a field, or by standing for it).
The check is the same in every understanding mode, so a recommendation stays a conversation in
rules and llm mode.
"""

from __future__ import annotations

from typing import Any

from agent.config.schema import Choosing, FollowUp, IntentSpec
from agent.conversation.session import Goal, GoalStatus, Speaker
from agent.domain.types import Classification
from agent.text import STOPWORDS, clauses, says, without, words
from agent.understanding import levels
from agent.understanding.picking import Offered, pick


def _offered(items: list[dict]) -> list[Offered]:
    """The listed items as a reply picks them: by their name words (a brand, a model number)."""
    return [Offered(frozenset(w for w in words(str(i.get("name", ""))) if len(w) > 1)) for i in items]


def _data_words(items: list[dict]) -> set[str]:
    """Words of the listed items' attributes, labels and values ("wireless", "colours", "black")."""
    found: set[str] = set()
    for i in items:
        for label, value in (i.get("attributes") or {}).items():
            found |= set(words(f"{label} {value}"))
    return {w for w in found if len(w) > 2 and not w.isdigit()} - STOPWORDS


class ItemMention:
    """What a message says about the listed items: which one it points at and how sure that is."""

    def __init__(self, text: str, rule: FollowUp, items: list[dict], labels: list[str], choosing: Choosing):
        self.pointing = bool(says(text, rule.pointing))
        # A word of the items' data or of what the store lists about items ("wireless", "back").
        listed = [*items, {"attributes": dict.fromkeys(labels, "")}]
        self.data = bool(set(words(text)) & _data_words(listed))
        picked = pick(text, _offered(items), choosing)
        self.strong = picked.strong  # a place, a lowest/highest word or a name
        # By place first, else by name; a figure word is ranked by the planner over the items' data.
        self.index: int | None = picked.place if picked.place is not None else picked.named
        self.rank: list[str] | None = list(picked.ranked) if picked.ranked is not None else None
        # "are both in stock?", "how many of each of them are left?", "are those wireless?"
        self.all = picked.all or self.index is None and self.rank is None and bool(says(text, rule.plural))

    @property
    def about_items(self) -> bool:
        return self.strong or self.pointing or self.data or self.all


def redirect(
    me: Speaker, text: str, cls: Classification, specs: dict[str, IntentSpec], choosing: Choosing
) -> Classification:
    """The classification to act on: a follow-up about the open goal's items, or `cls` unchanged.
    A new search of the active goal's own kind (its own category) clears the earlier one's slots,
    answered or still asking for a budget, so nothing of the old search ("quiet") carries into the
    new one ("what about monitors under 8000")."""
    active = me.active_goal
    kind = specs.get(active.intent_id) if active is not None and cls.intent_id == active.intent_id else None
    restart = kind.follow_up if kind is not None else None
    if active is not None and restart is not None and _restarts(active, cls, restart):
        active.slots, active.answered = {}, False
        return cls
    goal = _open(me, cls, specs)
    spec = specs.get(goal.intent_id) if goal else None
    rule: FollowUp | None = spec.follow_up if spec else None
    if goal is None or spec is None or rule is None:
        return cls
    items = [i for i in goal.slots.get(rule.items_slot) or [] if isinstance(i, dict)]
    if not items:
        return cls
    labels = [str(label) for label in goal.slots.get("attribute_labels") or []]
    mention = ItemMention(text, rule, items, labels, choosing)
    if not mention.about_items:
        return _refined(goal, cls, spec, rule)
    if cls.intent_id in specs and specs[cls.intent_id].kind == "chat":
        return cls  # "thanks, that's great" is small talk
    # A refinement names the recommendation's own values ("a mouse instead", "under 2000").
    own = cls.intent_id == goal.intent_id and not any(k in cls.params for k in spec.required_params)
    if mention.strong or mention.data:
        # Short of sure, a message with a clear pointer at the items is read as a follow-up.
        if not (cls.intent_id in (None, rule.intent) or own or not cls.sure):
            return cls  # another request, plainly ("where is O-12345?")
    elif not (cls.intent_id == rule.intent or own or cls.intent_id is None and _asks(text, rule, choosing)):
        # "it" alone, in a message not read as a question about an item, points at nothing listed
        # ("i called the bank, tick it off"); a question that names no other request does
        # ("how many are left of those?").
        return cls
    asked, yes_no = _question(text, rule, choosing)
    params: dict[str, Any] = {rule.slot: text, "question": asked}
    skus = [str(i.get("sku")) for i in items]
    if mention.rank is not None:
        params |= {"skus": skus, "rank": mention.rank}
    elif mention.all and mention.index is None:
        params["skus"] = skus
    elif mention.index is not None:
        params["sku"] = skus[mention.index]
    else:
        # "is that one wireless?" right after asking about one of them; else the top option.
        params["sku"] = _last_discussed(me, rule, goal.slots.get("listed_turn", 0)) or skus[0]
    if yes_no:
        params["yes_no"] = True
    return Classification(intent_id=rule.intent, params=params, confidence=max(cls.confidence, levels.SURE))


def _refined(goal: Goal, cls: Classification, spec: IntentSpec, rule: FollowUp) -> Classification:
    """A message read as no other request that gives the listed search a value of its own ("let's
    say 3k", "only ones of that brand") refines that search; else `cls` unchanged."""
    own = (*spec.required_params, *spec.optional_params)
    values = {k: v for k, v in cls.params.items() if k in own and k not in rule.restart_on and v not in (None, "")}
    if not values or cls.intent_id not in (None, goal.intent_id):
        return cls  # "is <an item> in stock?" asks a question of its own
    return Classification(intent_id=goal.intent_id, params=values, confidence=max(cls.confidence, levels.SURE))


def _question(text: str, rule: FollowUp, choosing: Choosing) -> tuple[str, bool]:
    """What the message asks about the item, without the words that point at it or at all of them
    ("are all of them in stock?" asks only whether they are), and whether it is a yes/no question
    (a clause opening with one of `yes_no`: "by the way, is it wireless?")."""
    said = clauses(text)
    yes_no = [c for c in said if words(c)[:1] and words(c)[0] in {w.lower() for w in rule.yes_no}]
    asked = " ".join(yes_no or said)
    pointing = says(asked, [*rule.pointing, *choosing.ordinals, *choosing.lowest, *choosing.highest, *choosing.all])
    return without(asked, pointing), bool(yes_no)


def _asks(text: str, rule: FollowUp, choosing: Choosing) -> bool:
    """The message is a question: it ends with its mark, or a clause opens with a yes/no word."""
    return text.rstrip().endswith("?") or _question(text, rule, choosing)[1]


def _restarts(goal: Goal, cls: Classification, rule: FollowUp) -> bool:
    """The message asks for a search of its own: it names a restart slot with a new value."""
    return any(
        cls.params.get(s) not in (None, "") and str(cls.params[s]).lower() != str(goal.slots.get(s, "")).lower()
        for s in rule.restart_on
    )


def _open(me: Speaker, cls: Classification, specs: dict[str, IntentSpec]) -> Goal | None:
    """The answered goal whose items a message may be about: the active one, or, for a message
    read as the follow-up intent itself, the latest one still standing (a recommendation suspended
    behind another request)."""
    active = me.active_goal
    if active is not None and active.answered:
        return active
    follow = {s.id for s in specs.values() if s.follow_up is not None and s.follow_up.intent == cls.intent_id}
    ended = (GoalStatus.cancelled, GoalStatus.abandoned)
    standing = [g for g in me.goals.values() if g.intent_id in follow and g.answered and g.status not in ended]
    return max(standing, key=lambda g: g.updated_at) if standing else None


def _last_discussed(me: Speaker, rule: FollowUp, since: int) -> str | None:
    """The item the latest follow-up answered about, from turn `since` on ("is the <name> in stock?"
    then "when will it be back?")."""
    said = [
        g
        for g in me.goals.values()
        if g.intent_id == rule.intent and g.slots.get("answered_sku") and g.slots.get("answered_turn", -1) >= since
    ]
    if not said:
        return None
    return str(max(said, key=lambda g: (g.slots["answered_turn"], g.updated_at)).slots["answered_sku"])
