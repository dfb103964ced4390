"""What a turn writes: its telemetry events and the record committed in one transaction."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from agent.conversation.session import SessionState
from agent.domain.types import Message, Model, OutboundMessage, SideEffect, ToolResult, utcnow
from agent.review.items import ReviewItem

Level = Literal["info", "warn", "error"]


class TelemetryEvent(Model):
    timestamp: datetime = Field(default_factory=utcnow)
    session_id: str
    interaction_id: str
    stage: str
    level: Level = "info"
    payload: dict[str, Any] = Field(default_factory=dict)
    duration_ms: float = 0.0
    # The turn's trace and this stage's span in it (None when tracing is off).
    trace_id: str | None = None
    span_id: str | None = None


class TurnRecord(Model):
    """Everything one turn writes, committed in one transaction."""

    state: SessionState
    expected_version: int
    messages: list[Message]
    events: list[TelemetryEvent]
    effects: list[SideEffect] = Field(default_factory=list)
    ledger: dict[str, ToolResult] = Field(default_factory=dict)  # idempotency key -> result
    inbox_key: str | None = None  # the channel inbox entry this turn completes
    # Messages shown after the commit; stored in it (the outbox) when the turn has an inbox entry.
    outbox: list[OutboundMessage] = Field(default_factory=list)
    trace_id: str | None = None  # stored with the turn's messages, to find its trace file
    review: list[ReviewItem] = Field(default_factory=list)  # misses kept for review (agent/review/)


class InboxEvent(Model):
    key: str  # the platform's id for the event: Slack event_id, Discord interaction/message id
    session_key: str
    payload: dict[str, Any]
    status: str = "accepted"  # accepted | committed (answers stored, some unsent) | done
    attempts: int = 0
    # When the platform says the message was written (Slack ts, Discord snowflake), seconds since
    # the epoch: a session's events run in this order. None: the time it is stored.
    written_at: float | None = None
    accepted_at: datetime | None = None  # when it was stored (set by the inbox)


class ToolRecord(Model):
    """A record a tool wrote of a kind without a table of its own, as it reads it back."""

    kind: str
    key: str  # unique within its kind
    owner: str | None  # the requester it was written for (ToolContext.owner)
    session_id: str  # the conversation that wrote it
    data: dict[str, Any]
    created_at: datetime


class TaskRecord(Model):
    id: str
    owner: str
    number: int  # what the user calls it: "mark 2 as done"
    title: str
    status: str  # open | done | deleted


class TicketRecord(Model):
    """A support ticket the bot opened, as its customer may see it."""

    id: str
    summary: str
    order_id: str | None = None
    status: str  # open until the support team changes it
    created_at: datetime


class Preferences(BaseModel):
    budget_range: tuple[float, float] | None = None
    preferred_brands: list[str] = Field(default_factory=list)
    disliked_brands: list[str] = Field(default_factory=list)
    preferred_features: list[str] = Field(default_factory=list)
    communication_style: str | None = None
