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
from agent.redaction import Redactor
from agent.understanding.reading import Reading
from agent.understanding.replies import YesNoAnswer


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
    # That reading as the answer to the open yes/no question, when one is open (agent/understanding/replies.py).
    answer: YesNoAnswer | None = None
    reads: TurnReads | None = None  # the business data as this attempt reads it (the router's)
    now: datetime = field(default_factory=utcnow)  # the turn's time, from the app's clock

    @property
    def read(self) -> Reading:
        """The message's one reading. Understanding is only ever asked about a typed message the
        turn has read (a click is answered by what it clicks); being asked about one it has not
        is a bug in the turn, never a reason to read the text again."""
        if self.reading is None:
            raise ValueError("a message is understood only after the turn has read it")
        return self.reading

    @classmethod
    def alone(
        cls,
        interaction: Interaction,
        reading: Reading,
        eligible: list[Intent],
        state: SessionState | None = None,
        me: Speaker | None = None,
        history: list[Message] | None = None,
    ) -> TurnContext:
        """A message read outside a conversation's turn (an evaluation, a test): a fresh session,
        a log that records nowhere and an output that sends nowhere."""
        state = state or SessionState(session_id=interaction.session_key)
        redactor = Redactor()
        t = Turn(interaction, interaction.session_key, None, redactor)
        out = TurnOutput(interaction.id, redactor, None, [])
        return cls(interaction, state, me or Speaker(), history or [], t, out, eligible=eligible, reading=reading)
