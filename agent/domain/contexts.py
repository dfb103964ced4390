"""What crosses the core's seams besides its data model: policy and tool contexts, a planner's request, preferences."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from agent.conversation.session import Goal, SessionState, Speaker
from agent.domain.types import Intent, Message, ToolResult


class PolicyContext(BaseModel):
    session: SessionState
    intent_id: str | None
    agent: str
    customer: dict[str, Any] | None = None


class ToolContext(BaseModel):
    session_id: str
    interaction_id: str
    agent: str
    intent_id: str | None = None
    customer_id: str | None = None  # the customer who wrote the message (threads are shared)
    speaker: str = ""  # who wrote it on the platform; a guest's own data is keyed by it
    # The confirmed action this call carries out: its hash is the call's idempotency key, so a
    # second confirmation replays the first result instead of acting twice.
    action_hash: str | None = None


class Preferences(BaseModel):
    budget_range: tuple[float, float] | None = None
    preferred_brands: list[str] = Field(default_factory=list)
    disliked_brands: list[str] = Field(default_factory=list)
    preferred_features: list[str] = Field(default_factory=list)
    communication_style: str | None = None


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
