"""A tool is a name, a pydantic parameter model (its JSON schema) and an async handler."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agent.domain.contexts import ToolContext
from agent.domain.types import Alert, SideEffect


class ToolParams(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class ToolOutput(BaseModel):
    data: dict[str, Any] = Field(default_factory=dict)
    effects: list[SideEffect] = Field(default_factory=list)
    alerts: list[Alert] = Field(default_factory=list)  # a tool declares what admins must hear of its run


Handler = Callable[[Any, ToolContext], Awaitable[ToolOutput]]


@dataclass(frozen=True)
class Tool:
    """
    Args:
        name: `[a-z0-9_]` only; provider function names allow no dots.
        description: what the tool does, shown to LLMs.
        params: the pydantic model arguments are validated against.
        handler: `async (params, context) -> ToolOutput`; raises ToolError on failure.
        side_effect: writes something; runs at most once per idempotency key.
        timeout: seconds, overriding the gateway default.
    """

    name: str
    description: str
    params: type[BaseModel]
    handler: Handler
    side_effect: bool = False
    timeout: float | None = None

    def schema(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": self.params.model_json_schema()}
