"""A review item: one message the bot did not understand well, kept for a person to label."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from agent.domain.types import Model, utcnow

ReviewKind = Literal["out_of_scope", "fallback", "clarification", "correction", "handoff", "escalation"]
ReviewStatus = Literal["waiting", "labelled", "skipped"]
SOMETHING_ELSE = "something_else"  # the choice that is none of the offered intents
OUT_OF_SCOPE_LABEL = "out-of-scope"  # a label: the message is one the bot should not serve
SKIP = "skip"


class ReviewReading(Model):
    """What the bot made of the message: its intent and confidence, the intents it ranked nearest,
    what it offered as a choice and what the customer chose, and what the message did as a move."""

    intent: str | None = None
    confidence: float = 0.0
    candidates: list[tuple[str, float]] = Field(default_factory=list)
    clarify: list[str] = Field(default_factory=list)
    chosen: str | None = None
    out_of_scope: bool = False
    move: str | None = None  # a reply move (assent, refusal...) the turn read, when it read one
    values: dict[str, Any] = Field(default_factory=dict)  # typed values, already redacted

    @property
    def nearest(self) -> str | None:
        """The intent the bot thought likeliest: its own reading, else the top candidate."""
        if self.chosen and self.chosen != SOMETHING_ELSE:
            return self.chosen
        return self.intent or (self.candidates[0][0] if self.candidates else None)


class ReviewItem(Model):
    """One message waiting for a person to say what it meant."""

    id: str
    kind: ReviewKind
    text: str  # redacted
    reading: ReviewReading = Field(default_factory=ReviewReading)
    session_id: str
    interaction_id: str
    channel: str
    workspace: str = ""
    created_at: datetime = Field(default_factory=utcnow)
    status: ReviewStatus = "waiting"
    label: str | None = None  # an intent id, `out-of-scope[:topic]`, or `skip`
    labelled_at: datetime | None = None
    # For a correction: what the customer said next, which read as the intent they meant.
    followed_by: str | None = None
