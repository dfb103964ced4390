"""The planner seam: an agent's next plan for its goal. Each planner module implements it and declares
its factory with `@planner` (registry.py)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from agent.context.log import TurnLog
from agent.domain.contexts import AgentRequest
from agent.domain.types import Plan


@runtime_checkable
class Planner(Protocol):
    """An agent's decision seam: the next plan for the active goal, given this turn's tool results.

    The router calls `plan` again with the results after each pass that ran tools, up to the
    configured number of passes; a plan without tool calls ends the turn.
    """

    # False: the planner never reads `request.preferences`, so its turns skip reading the stored
    # preferences (it gets None).
    reads_preferences: bool

    def question(self, intent_id: str, slot: str) -> str:
        """The one question that asks for `slot`."""
        ...

    async def plan(self, request: AgentRequest, turn: TurnLog | None = None) -> Plan: ...
