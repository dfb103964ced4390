"""Whether a message answers what the bot waits for: one decision, before any classifier runs.

The bot waits for a value (the goal's missing slot) or for a yes to an action (a confirmation).
A message is that value, or a new value for the waiting action, only when it is of the kind asked
for and does not plainly ask something else; it is decided here from what the embedded model and
the slot patterns read (`Said`), the same way in rules, llm and cascade modes, so no LLM is asked
whether "buy oat milk and eggs" is the task that "What's the task?" asked for.
"""

from __future__ import annotations

from typing import Any

from agent.config.schema import IntentSpec, SlotSpec
from agent.conversation.moves import Change, SlotAnswer
from agent.conversation.session import Goal, PendingConfirmation
from agent.domain.types import Classification
from agent.text import says
from agent.understanding.levels import ANSWERED
from agent.understanding.rules import Said
from agent.understanding.slots import SlotExtractor

# At most this many words name a value in words ("the one about the plumber"); a longer reply is a
# request of its own.
NAMING_WORDS = 5


class Answers:
    """Reads a message as the answer to the goal's open question or a change of the waiting action,
    or as neither.

    Args:
        specs: the intents, by id.
        slots: the slot patterns (what a value of each kind looks like).
    """

    def __init__(self, specs: dict[str, IntentSpec], slots: SlotExtractor):
        self.specs = specs
        self.slots = slots

    @staticmethod
    def change(pending: PendingConfirmation | None, said: Said) -> Change | None:
        """New values for the waiting action, unless the message reads as another request ("sure, but
        where's O-12345 first?" asks about that order; it does not refund it)."""
        if pending is None or pending.kind != "tool":
            return None
        if said.intent_id not in (None, pending.intent_id) and not said.changes:
            return None
        values = {k: v for k, v in said.values.items() if k in pending.params}
        if not values:
            return None
        return Change(Classification(intent_id=pending.intent_id, params=values, confidence=ANSWERED, fills_slot=True))

    def answer(self, goal: Goal | None, said: Said, text: str, direct: Any = None) -> SlotAnswer | None:
        """The awaited slot's value when the message gives it and is not another request: small talk
        ("thank you") is answered as small talk and the question kept; "any news on order 24680?"
        while a ticket waits for its description is that order's request."""
        if goal is None or not goal.missing:
            return None
        awaited = goal.missing[0]
        if direct is not None:  # nothing but a value of the awaited kind ("O-46802" to "which order?")
            return _answer(goal, {awaited: direct}, ANSWERED)
        spec = self.slots.specs.get(awaited)
        free_text = spec is not None and spec.free_text
        own = said.intent_id in (None, goal.intent_id)
        small_talk = not own and self.specs[said.intent_id or ""].kind == "chat"
        if free_text and small_talk:
            return None
        if free_text and not own and len(said.tokens) <= 1:
            return None  # "and O-34567?", "what about o-45678": an ID for another request
        if self._restated(goal, awaited, said, text):
            return None
        if not own and not small_talk and self._another(goal, awaited, said, text):
            return None
        values = said.values
        # A bare number answers "which order?" unless the message reads as a request of its own
        # ("forget the order, recommend a webcam under 3000").
        bare = free_text or own or small_talk or said.reading.words_besides_values <= 3
        if awaited not in values and bare and (value := self.slots.extract_reply(awaited, text)) is not None:
            values = {awaited: value}
        if awaited not in values:
            return self._in_words(goal, spec, said, text)
        return _answer(goal, values, max(said.confidence, ANSWERED))

    @staticmethod
    def _in_words(goal: Goal, spec: SlotSpec | None, said: Said, text: str) -> SlotAnswer | None:
        """ "the plumber one" to "Which task? Tell me its number.": a short reply that names the value
        in words (config/intents.yaml `named_by`) goes to the waiting request, whose planner looks
        the words up, unless it plainly asks for something else."""
        if spec is None or not spec.named_by or said.sure:
            return None
        if not 0 < said.reading.words_besides_values <= NAMING_WORDS:
            return None
        return _answer(goal, {}, ANSWERED) if says(text, spec.named_by) else None

    def _restated(self, goal: Goal, awaited: str, said: Said, text: str) -> bool:
        """ "my headphones have no sound" to "which device?": the request again, with another of its
        values, and no name of the kind the question asked for."""
        spec = self.slots.specs.get(awaited)
        return (
            spec is not None
            and spec.free_text
            and bool(spec.reply_pattern)
            and said.reading.intent == goal.intent_id
            and self.slots.typed_reply(awaited, text) is None
            and any(k in said.values for k in self.specs[goal.intent_id].required_params if k != awaited)
        )

    def _another(self, goal: Goal, awaited: str, said: Said, text: str) -> bool:
        """The message plainly asks for another intent. For a typed slot, when the model is sure
        of it; for a free-text answer only when it names a typed value that request takes and the
        awaited one does not ("any news on order 24680?" while a ticket waits for its description),
        reads like one of its examples, or carries a value the request needs and is understood
        surely or asked as a question. Trigger words alone ("buy oat milk" as a task) do not.
        Neither does a problem told in words that happen to read surely as another request ("my
        laptop keeps freezing" is a fine ticket description), unless that request is one the
        customer asks the bot to do something for (it has an offer, as the action gate counts
        them: "can I get my money back for the keyboard" is a refund, not the ticket's problem), or
        it asks about one of the customer's own things and names one ("has my keyboard arrived?")."""
        spec = self.slots.specs.get(awaited)
        if spec is None or not spec.free_text:
            return said.sure
        other = self.specs[said.intent_id or ""]
        if other.offers == goal.intent_id:
            # "my laptop screen keeps flickering" to a ticket's "what's the problem?": the request
            # that offers the waiting one is about the same problem, and tells it (intents.yaml `offers`).
            return False
        takes = set(other.required_params) | set(other.optional_params)
        waiting = self.specs[goal.intent_id]
        own = set(waiting.required_params) | set(waiting.optional_params)
        typed = {k for k in said.values if k in takes and not self.slots.specs[k].free_text}
        sure = said.sure
        asked = sure or text.rstrip().endswith("?")
        needed = asked and typed & set(other.required_params)
        owned = any(self.slots.specs[k].owned for k in other.required_params if k in self.slots.specs)
        names_a_thing = any(self.slots.specs[k].values for k in said.values if k in self.slots.specs)
        # A question about one of the customer's own things read likely is that request.
        likely = said.likely and text.rstrip().endswith("?")
        acts = (sure and bool(other.templates.offer)) or ((sure or likely) and owned and names_a_thing)
        return bool(typed - own) or bool(needed) or said.reads_like_example or acts


def _answer(goal: Goal, values: dict[str, Any], confidence: float) -> SlotAnswer:
    return SlotAnswer(Classification(intent_id=goal.intent_id, params=values, confidence=confidence, fills_slot=True))
