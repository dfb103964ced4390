"""The understanding seam: a classifier reads a message into an intent, its parameters and whether it
answers the open question. Rules, LLM and cascade modes each implement it."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from agent.context.log import TurnLog
from agent.conversation.session import SessionState, Speaker
from agent.domain.types import Classification, Intent, Interaction, Message
from agent.understanding.reading import Reading


@runtime_checkable
class Classifier(Protocol):
    """Understanding: which intent, which parameters, and whether the message answers a question."""

    async def classify(
        self,
        interaction: Interaction,
        intents: list[Intent],
        state: SessionState,
        me: Speaker,
        history: list[Message],
        turn: TurnLog | None = None,
        reading: Reading | None = None,
    ) -> Classification:
        """`turn` None: outside a turn (a unit test); nothing is recorded. `reading`: the message's
        one reading (agent/understanding/reading.py), which every mode understands it from;
        None: read here."""
        ...
