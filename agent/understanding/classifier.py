"""The understanding seam: a classifier reads a message into an intent, its parameters and whether it
answers the open question. Rules, LLM and cascade modes each implement it."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from agent.context.turn import TurnContext
from agent.domain.types import Classification


@runtime_checkable
class Classifier(Protocol):
    """Understanding: which intent, which parameters, and whether the message answers a question."""

    async def classify(self, ctx: TurnContext) -> Classification:
        """The message of `ctx` understood among the intents it may use (`ctx.eligible`), from its
        one reading (`ctx.read`, agent/understanding/reading.py), never from the text again."""
        ...
