"""Several requests in one message: each part understood on its own, handled in order, or queued.

The split is kept only when it finds at least two requests and every part is either a request or
small talk ("Hi. Where is O-12345? Also ..."); two parts asking the same thing are one request
("open a ticket. The mug arrived broken.") unless they name different IDs ("O-24680 and O-45678").
"""

from __future__ import annotations

import re
from collections.abc import Callable

from agent.config.intents import IntentsRegistry
from agent.config.schema import Messages, SlotSpec
from agent.context.log import TurnLog
from agent.context.turn import TurnContext
from agent.conversation import goals, notices
from agent.conversation.session import Goal, SessionState, Speaker
from agent.domain.types import Classification, Intent, Interaction, Message
from agent.understanding.classifier import Classifier
from agent.understanding.reading import Reading
from agent.understanding.splitter import RequestSplitter

# A part counts as a request of its own only when understood surely, at the level where the offline
# classifier acts without asking (understanding/rules.py STRONG): "I bought a keyboard last week" is
# context, not a request.
SURE = 0.75


def splitter_for(slots: dict[str, SlotSpec]) -> RequestSplitter:
    """A splitter that treats several values of a `one_request_each` slot as several requests."""
    return RequestSplitter([re.compile(s.pattern, re.I) for s in slots.values() if s.one_request_each and s.pattern])


class Requests:
    """The requests of one message: understood (split when there are several), then acted on in
    order while nobody waits for the user, the rest queued behind the one that asked.

    Args:
        registry: the intents, slots and vocabulary.
        messages: phrases the queue announcement.
        names: names goals in words people use.
    """

    def __init__(self, registry: IntentsRegistry, messages: Messages, names: Callable[[Goal], str]):
        self.registry = registry
        self.messages = messages
        self.names = names
        self.splitter = splitter_for(registry.slots)

    async def understand(self, classifier: Classifier, ctx: TurnContext) -> list[Classification]:
        """The message's requests in the order made: one classification, or one per request."""
        return await understand(
            classifier,
            self.splitter,
            self.registry.slots,
            ctx.interaction,
            ctx.eligible,
            ctx.state,
            ctx.me,
            ctx.history,
            ctx.t,
            ctx.reading,
            frozenset(self.registry.vocabulary.pointing),
        )

    async def queue(self, ctx: TurnContext, rest: list[Classification], asks: goals.Asks) -> None:
        """Later requests of the message wait while the bot waits for the user; the user is told."""
        queued = goals.queue(ctx.me, rest, self.registry.intents, asks)
        await ctx.out.send(notices.queued([self.names(g) for g in queued], self.messages))


async def understand(
    classifier: Classifier,
    splitter: RequestSplitter,
    slots: dict[str, SlotSpec],
    interaction: Interaction,
    eligible: list[Intent],
    state: SessionState,
    me: Speaker,
    history: list[Message],
    turn: TurnLog | None = None,
    reading: Reading | None = None,
    pointing: frozenset[str] = frozenset(),
) -> list[Classification]:
    """The message's requests in the order made: one classification, or one per request; the whole
    message is understood from its `reading`, each part of it from its own (`pointing`: the words
    that point back at something already named)."""
    goal = me.active_goal
    # An awaited description is one answer, however many sentences it has.
    parts = [] if goal and goal.missing and _free_text(goal.missing[0], slots) else splitter.split(interaction.text)
    found: list[Classification] = []
    tasks: list[Classification] = []
    kinds = {i.id: i.kind for i in eligible}
    if len(parts) > 1:
        found = [
            await classifier.classify(interaction.model_copy(update={"text": p}), eligible, state, me, history, turn)
            for p in parts
        ]
        tasks = [c for c in found if kinds.get(c.intent_id or "") == "task" and _request(c, eligible, slots)]
        others_chat = all(c in tasks or (c.intent_id and kinds.get(c.intent_id) == "chat") for c in found)
        own = not _dependent(tasks, eligible, slots) and not _points_back(parts, found, slots, pointing)
        if len(tasks) > 1 and others_chat and _distinct(tasks) and own:
            return tasks
    whole = await classifier.classify(interaction, eligible, state, me, history, turn, reading)

    def aside(cls: Classification) -> bool:
        return _unplaced(cls) or kinds.get(cls.intent_id or "") == "chat"

    if aside(whole) and len(tasks) == 1 and all(c in tasks or aside(c) for c in found):
        # "Where's O-12345? mail me at alice@example.com", "greetings friend, where is O-12345?
        # many thanks": the one request is what the message asks; the rest (a greeting, thanks,
        # contact details) is politeness or an aside.
        return tasks
    return [whole]


def _unplaced(cls: Classification) -> bool:
    """Understood as nothing: no intent, no answer to wait for, no out-of-scope topic of its own."""
    return cls.intent_id is None and cls.reply is None and cls.out_of_scope is None


def _request(cls: Classification, eligible: list[Intent], slots: dict[str, SlotSpec]) -> bool:
    """A part is a request of its own when understood surely or when it names a typed value its
    intent needs ("where are O-35791"); "I bought a keyboard last week" is context."""
    intent = next((i for i in eligible if i.id == cls.intent_id), None)
    needed = intent.required_params if intent else []
    return cls.confidence >= SURE or any(p in cls.params and not _free_text(p, slots) for p in needed)


def _free_text(slot: str, slots: dict[str, SlotSpec]) -> bool:
    return slot in slots and slots[slot].free_text


def _dependent(found: list[Classification], eligible: list[Intent], slots: dict[str, SlotSpec]) -> bool:
    """A part that lacks an ID another part names is about that thing: "My order O-24680 arrived
    damaged, can I get a refund?" is one refund request, not a ticket and a refund."""
    required = {i.id: i.required_params for i in eligible}
    named = {k for c in found for k, v in c.params.items() if v and k in slots and not slots[k].free_text}
    return any((set(required.get(c.intent_id or "", [])) - set(c.params)) & named for c in found)


def _points_back(
    parts: list[str], found: list[Classification], slots: dict[str, SlotSpec], pointing: frozenset[str]
) -> bool:
    """A part that points back and names no typed value of its own, after a part that names one,
    is about that thing: "my order O-34567 hasn't turned up, can you check it?" is one request."""
    named = False
    for part, cls in zip(parts, found, strict=True):
        typed = any(v and k in slots and slots[k].pattern and not slots[k].free_text for k, v in cls.params.items())
        if named and not typed and set(re.findall(r"[a-z']+", part.lower())) & pointing:
            return True
        named = named or typed
    return False


def _distinct(found: list[Classification]) -> bool:
    seen = [(c.intent_id, tuple(sorted((k, str(v)) for k, v in c.params.items() if k.endswith("_id")))) for c in found]
    return len(set(seen)) == len(seen)


def waiting(me: Speaker) -> bool:
    """The bot waits for the user (a question or a confirmation): later requests have to queue."""
    goal = me.active_goal
    return me.pending_confirmation is not None or me.clarification is not None or bool(goal and goal.missing)
