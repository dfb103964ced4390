"""What an LLM provider answers, in provider-neutral form; each adapter translates its SDK's reply."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class LLMToolCall(BaseModel):
    id: str = ""
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    # The raw text when the model's arguments were not a JSON object (weak local models do this).
    invalid_arguments: str | None = None


class LLMResponse(BaseModel):
    content: str | None = None
    tool_calls: list[LLMToolCall] = Field(default_factory=list)
    model: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    latency_ms: float = 0.0
    cost: float = 0.0
    attempts: int = 1  # HTTP attempts the retry layer made, 1 when the first one answered
    retry_delays: list[float] = Field(default_factory=list)  # seconds slept before each retry


class LLMCapabilities(BaseModel):
    tools: bool = True
    json_schema: bool = True
    streaming: bool = False
    context_window: int = 128_000
