"""What crosses the core's seams besides its data model: policy and tool contexts, a planner's request, preferences."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agent.context.reads import NO_RECORDS, OwnRecords, TurnReads
from agent.conversation.session import Goal, SessionState, Speaker
from agent.domain.records import Preferences
from agent.domain.types import Intent, Message, ToolResult, utcnow


class PolicyContext(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    session: SessionState
    intent_id: str | None
    agent: str
    customer: dict[str, Any] | None = None
    reads: TurnReads | None = None  # the turn's reads; None (outside a turn): the engine's own source


class ToolContext(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    session_id: str
    interaction_id: str
    agent: str
    intent_id: str | None = None
    customer_id: str | None = None  # the customer who wrote the message (threads are shared)
    speaker: str = ""  # who wrote it on the platform; a guest's own data is keyed by it
    # The confirmed action this call carries out: its hash is the call's idempotency key, so a
    # second confirmation replays the first result instead of acting twice.
    action_hash: str | None = None
    # The turn's time (the app's clock: a replayed eval runs at its recording's) and its reads of the
    # business data (None outside a turn: a tool reads its own source).
    now: datetime = Field(default_factory=utcnow)
    reads: TurnReads | None = None
    records: OwnRecords = NO_RECORDS  # the tool's own records, read back (set by the gateway)

    @property
    def owner(self) -> str:
        """Whose data this run touches: a customer's follows them; a guest's belongs to that guest in
        that conversation."""
        return self.customer_id or f"session:{self.session_id}" + (f":{self.speaker}" if self.speaker else "")


class AgentRequest(BaseModel):
    """What an agent sees on each pass of a turn. Agents request tools; only the router runs them."""

    goal: Goal
    intent: Intent
    state: SessionState  # the thread
    me: Speaker = Field(default_factory=Speaker)  # the speaker's goals and confirmations
    text: str = ""  # what the user said this turn
    results: list[ToolResult] = Field(default_factory=list)  # this turn's tool results so far
    history: list[Message] = Field(default_factory=list)
    preferences: Preferences | None = None
    pass_number: int = 1
