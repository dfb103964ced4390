"""Policy engines. The core ships allow-all; the YAML rule engine implements the same Protocol."""

from __future__ import annotations

from agent.interfaces import PolicyContext
from agent.types import PolicyDecision, ToolCall


class AllowAllPolicy:
    async def validate(self, call: ToolCall, context: PolicyContext) -> PolicyDecision:
        return PolicyDecision(allowed=True, rule="allow_all")
