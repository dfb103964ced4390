"""Several requests in one message: each part understood on its own, handled in order, or queued.

The split is kept only when it finds at least two requests and every part is either a request or
small talk ("Hi. Where is O-12345? Also ..."); two parts asking the same thing are one request
("open a ticket. The mug arrived broken.") unless they name different IDs ("O-24680 and O-45678").
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable

from agent.config import Messages, SlotSpec
from agent.conversation import goals, notices
from agent.intents import IntentsRegistry
from agent.interfaces import Classifier, TurnLog
from agent.session import Goal, SessionState
from agent.turn import Turn
from agent.types import Classification, Intent, Interaction, Message, ToolResult
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

    async def understand(
        self,
        classifier: Classifier,
        interaction: Interaction,
        eligible: list[Intent],
        state: SessionState,
        history: list[Message],
        turn: TurnLog | None = None,
    ) -> list[Classification]:
        slots = self.registry.slots
        return await understand(classifier, self.splitter, slots, interaction, eligible, state, history, turn)

    async def handle(
        self,
        found: list[Classification],
        state: SessionState,
        t: Turn,
        act: Callable[[Classification], Awaitable[list[ToolResult]]],
        question: Callable[[str, str], str],
    ) -> list[ToolResult]:
        results = await act(found[0])
        for n, more in enumerate(found[1:], start=1):
            if waiting(state):
                queued = goals.queue(state, found[n:], self.registry.intents, question)
                await t.send(notices.queued([self.names(g) for g in queued], self.messages))
                break
            results += await act(more)
        return results


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
    found: list[Classification] = []
    tasks: list[Classification] = []
    kinds = {i.id: i.kind for i in eligible}
    if len(parts) > 1:
        found = [
            await classifier.classify(interaction.model_copy(update={"text": p}), eligible, state, history, turn)
            for p in parts
        ]
        tasks = [c for c in found if kinds.get(c.intent_id or "") == "task" and _request(c, eligible, slots)]
        others_chat = all(c in tasks or (c.intent_id and kinds.get(c.intent_id) == "chat") for c in found)
        if len(tasks) > 1 and others_chat and _distinct(tasks) and not _dependent(tasks, eligible, slots):
            return tasks
    whole = await classifier.classify(interaction, eligible, state, history, turn)

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


def _distinct(found: list[Classification]) -> bool:
    seen = [(c.intent_id, tuple(sorted((k, str(v)) for k, v in c.params.items() if k.endswith("_id")))) for c in found]
    return len(set(seen)) == len(seen)


async def run_queued(
    state: SessionState,
    goal: Goal,
    intents: dict[str, Intent],
    run: Callable[[Goal, Intent], Awaitable[list[ToolResult]]],
) -> tuple[Goal, Goal | None, list[ToolResult]]:
    """Later requests of an earlier message whose turn has come (nobody waits for the user) run now.
    Returns the last goal run, the goal the conversation is back to (None if `goal` is still
    active) and the results."""
    results: list[ToolResult] = []
    resumed = state.active_goal if goal.id != state.active_goal_id else None
    while resumed is not None and resumed.queued and not waiting(state):
        resumed.queued, goal = False, resumed
        results += await run(goal, intents[goal.intent_id])
        resumed = state.active_goal if goal.id != state.active_goal_id else None
    return goal, resumed, results


def waiting(state: SessionState) -> bool:
    """The bot waits for the user (a question or a confirmation): later requests have to queue."""
    goal = state.active_goal
    return state.pending_confirmation is not None or bool(goal and goal.missing)
