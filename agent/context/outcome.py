"""What one turn made of its message and what it did with it, recorded once as its steps decide.

The `intent_classified` telemetry payload and the turn's review item (agent/review/records.py) are
both derived from this record, so the two can never tell different stories of the same turn.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from agent.domain.types import Model

ControlKind = Literal["cancel", "farewell", "empty"]


class Chosen(Model):
    """What the customer picked from a question with choices, and the message it was about."""

    chosen: str
    asked_about: str


class Classified(Model):
    """One reading the turn acted on (one per request of the message): what was read, how sure,
    what else was near, what was offered as a choice or picked from one, what the message did as
    a reply or control move. Its set fields are the `intent_classified` telemetry payload."""

    intent_id: str | None = None
    unknown_intent: bool | None = None  # no intent of this customer fits
    confidence: float | None = None
    params: dict[str, Any] | None = None
    candidates: list[tuple[str, float]] | None = None  # the intents the reading ranked nearest
    clarify: list[str] | None = None  # the intents offered as a choice
    chosen: str | None = None  # the intent (or "something else") picked from such a choice
    asked_about: str | None = None  # the message that choice was about
    control: ControlKind | None = None
    redacted_params: list[str] | None = None
    fills_slot: bool | None = None  # the reading is the value of the slot the bot asked for
    reply: str | None = None  # a reply move (assent, refusal...) the reading found

    def payload(self) -> dict[str, Any]:
        """The telemetry payload: exactly the fields the step that read the message set."""
        found = self.model_dump(exclude_unset=True)
        if self.candidates is not None and "candidates" in found:
            found["candidates"] = [[i, s] for i, s in self.candidates]
        return found


class TurnOutcome(Model):
    """Everything a turn's review needs of it, written by the steps that decided it."""

    classified: list[Classified] = Field(default_factory=list)  # in the order the turn read them
    fell_back: bool = False  # no intent fitted and the fallback was sent
    out_of_scope: bool = False  # ... because the message asked for something the store does not serve
    escalated: bool = False  # a policy asked for a person before an action ran
