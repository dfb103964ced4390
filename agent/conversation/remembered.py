"""Values a request leaves out that its speaker's recent requests had: "refund it" after "where is
O-12345?" is about O-12345. Which slots carry over is config (intents.yaml slots' `remembered`);
the words that say a request is about another one ("my other order") are its vocabulary's `others`.
"""

from __future__ import annotations

from typing import Any

from agent.config.schema import SlotSpec, Vocabulary
from agent.conversation.session import GoalStatus, Speaker
from agent.domain.types import Classification, Intent
from agent.text import says

# How many of a speaker's turns back a goal counts as recent.
RECENT_TURNS = 4


class Remembered:
    """Fills a request's missing values from the same speaker's recent goals, where those agree
    on one value; never from another person's part of the conversation.

    Args:
        slots: the slots of the intents; those marked `remembered` carry over.
        vocabulary: its `others` words keep a request from taking a remembered value.
    """

    def __init__(self, slots: dict[str, SlotSpec], vocabulary: Vocabulary):
        self.slots = {name for name, spec in slots.items() if spec.remembered}
        self.others = vocabulary.others

    def fill(self, me: Speaker, cls: Classification, intent: Intent, text: str) -> tuple[Classification, list[str]]:
        """The request with the values it takes from earlier, and the names of those slots."""
        given = {k for k, v in cls.params.items() if v not in (None, "")}
        wanted = self.slots & (set(intent.required_params) - given)
        if not wanted or cls.fills_slot or says(text, self.others):
            return cls, []
        found = {slot: value for slot in sorted(wanted) if (value := self._recent(me, slot)) is not None}
        if not found:
            return cls, []
        return cls.model_copy(update={"params": cls.params | found}), sorted(found)

    @staticmethod
    def _recent(me: Speaker, slot: str) -> Any:
        """The one value of `slot` among the speaker's recent goals; None for none or several. A goal
        that failed is no source: its value was just refused ("O-99999 isn't on your account")."""
        values = {
            str(value): value
            for g in me.goals.values()
            if me.turns - g.touched_turn <= RECENT_TURNS
            and g.status != GoalStatus.failed
            and (value := g.slots.get(slot)) not in (None, "")
        }
        return next(iter(values.values())) if len(values) == 1 else None
