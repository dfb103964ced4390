"""Several requests in one message: each part understood on its own, handled in order, or queued.

The split is kept only when it finds at least two requests and every part is either a request or
small talk ("Hi. Where is O-12345? Also ..."); two parts asking the same thing are one request
("open a ticket. The mug arrived broken.") unless they name different IDs ("O-24680 and O-45678").
"""

from __future__ import annotations

import re

from agent.config import IntentSpec, SlotSpec, Vocabulary
from agent.interfaces import Classifier, TurnLog
from agent.text import Normalizer
from agent.types import Classification, Intent, Interaction, Message, SessionState
from agent.understanding.splitter import RequestSplitter

# A part counts as a request of its own only when understood this surely ("by the way" is not one).
SURE = 0.6


class SmallTalk:
    """Recognises a message made only of small-talk words (the chat intents' keywords: "thank
    you", "cheers", "hi there"), so no understanding mode fills a free-text answer with it."""

    def __init__(self, specs: dict[str, IntentSpec], vocabulary: Vocabulary):
        self.norm = Normalizer(vocabulary.synonyms, vocabulary.filler)
        self.words = {
            s.id: {t for k in s.keywords for t in self.norm.tokens(k)} for s in specs.values() if s.kind == "chat"
        }

    def intent(self, text: str) -> str | None:
        """The chat intent the message is made of, if it is nothing but small talk."""
        tokens = set(self.norm.tokens(text))
        for intent_id, words in self.words.items():
            if tokens and tokens <= words:
                return intent_id
        return None

    def guard(self, cls: Classification, text: str, state: SessionState, slots: dict[str, SlotSpec]) -> Classification:
        """A free-text slot filled with small talk was not answered: the small talk is answered instead."""
        goal = state.active_goal
        awaited = goal.missing[0] if goal and goal.missing else None
        if not cls.fills_slot or awaited is None or not _free_text(awaited, slots):
            return cls
        chat = self.intent(text)
        return Classification(intent_id=chat, confidence=cls.confidence) if chat else cls


def splitter_for(slots: dict[str, SlotSpec]) -> RequestSplitter:
    """A splitter that treats several values of a `one_request_each` slot as several requests."""
    return RequestSplitter([re.compile(s.pattern, re.I) for s in slots.values() if s.one_request_each and s.pattern])


async def understand(
    classifier: Classifier,
    splitter: RequestSplitter,
    slots: dict[str, SlotSpec],
    interaction: Interaction,
    eligible: list[Intent],
    state: SessionState,
    history: list[Message],
    turn: TurnLog | None = None,
) -> list[Classification]:
    """The message's requests in the order made: one classification, or one per request."""
    goal = state.active_goal
    # An awaited description is one answer, however many sentences it has.
    parts = [] if goal and goal.missing and _free_text(goal.missing[0], slots) else splitter.split(interaction.text)
    if len(parts) > 1:
        kinds = {i.id: i.kind for i in eligible}
        found = [
            await classifier.classify(interaction.model_copy(update={"text": p}), eligible, state, history, turn)
            for p in parts
        ]
        tasks = [c for c in found if c.intent_id and kinds.get(c.intent_id) == "task" and c.confidence >= SURE]
        others_chat = all(c in tasks or (c.intent_id and kinds.get(c.intent_id) == "chat") for c in found)
        if len(tasks) > 1 and others_chat and _distinct(tasks) and not _dependent(tasks, eligible, slots):
            return tasks
    return [await classifier.classify(interaction, eligible, state, history, turn)]


def _free_text(slot: str, slots: dict[str, SlotSpec]) -> bool:
    return slot in slots and slots[slot].free_text


def _dependent(found: list[Classification], eligible: list[Intent], slots: dict[str, SlotSpec]) -> bool:
    """A part that lacks an ID another part names is about that thing: "My order O-24680 arrived
    damaged, can I get a refund?" is one refund request, not a ticket and a refund."""
    required = {i.id: i.required_params for i in eligible}
    named = {k for c in found for k, v in c.params.items() if v and k in slots and not slots[k].free_text}
    return any((set(required.get(c.intent_id or "", [])) - set(c.params)) & named for c in found)


def _distinct(found: list[Classification]) -> bool:
    seen = [(c.intent_id, tuple(sorted((k, str(v)) for k, v in c.params.items() if k.endswith("_id")))) for c in found]
    return len(set(seen)) == len(seen)


def waiting(state: SessionState) -> bool:
    """The bot waits for the user (a question or a confirmation): later requests have to queue."""
    goal = state.active_goal
    return state.pending_confirmation is not None or bool(goal and goal.missing)
