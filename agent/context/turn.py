"""The one argument every step of a turn takes."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agent.context.log import Turn
from agent.context.output import TurnOutput
from agent.context.reads import TurnReads
from agent.conversation.preferences import TurnPreferences
from agent.conversation.session import SessionState, Speaker
from agent.domain.types import Intent, Interaction, Message, utcnow
from agent.understanding.reading import Reading


@dataclass(frozen=True)
class TurnContext:
    """What every step of a turn reads, as one argument: the message, the thread, the speaker's
    part of it (resolved once), the history, the customer, the turn's log (`t`) and its output (`out`)."""

    interaction: Interaction
    state: SessionState
    me: Speaker
    history: list[Message]
    t: Turn
    out: TurnOutput
    customer: dict[str, Any] | None = None
    preferences: TurnPreferences | None = None
    eligible: list[Intent] = field(default_factory=list)  # the intents this speaker may use here
    # The one reading of the typed message (None for a click): every step takes it, none reads the text again.
    reading: Reading | None = None
    reads: TurnReads | None = None  # the business data as this attempt reads it (the router's)
    now: datetime = field(default_factory=utcnow)  # the turn's time, from the app's clock
