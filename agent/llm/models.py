"""What an LLM provider answers, in provider-neutral form; each adapter translates its SDK's reply."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field


@dataclass(frozen=True)
class LLMRequest:
    """One call to a model, passed whole through every wrapper (metering, tracing, retries,
    fallback, recording) to the provider that translates it.

    Args:
        messages: `{"role": "system"|"user"|"assistant"|"tool", "content": str}`; an assistant
            message may carry `"tool_calls": [{"id", "name", "arguments": dict}]` and a tool
            message a `"tool_call_id"`.
        tools: `{"name", "description", "parameters": JSON schema}` the model may call.
        response_format: `{"name", "schema": JSON schema}`: the answer is one such JSON object.
        temperature: sampling temperature (a provider without one ignores it).
        max_tokens: the longest answer (None: the provider's default).
    """

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    response_format: dict[str, Any] | None = None
    temperature: float = 0.0
    max_tokens: int | None = None
    # Which call of which turn this is (`<interaction id>/<n>`): a provider that records or
    # replays responses keys them by it. None outside a turn.
    call_key: str | None = None


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
    cached_tokens: int = 0  # prompt tokens read from the provider's cache (part of tokens_in)
    attempts: int = 1  # HTTP attempts the retry layer made, 1 when the first one answered
    retry_delays: list[float] = Field(default_factory=list)  # seconds slept before each retry


class LLMCapabilities(BaseModel):
    tools: bool = True
    json_schema: bool = True
    streaming: bool = False
    context_window: int = 128_000


class Usage(BaseModel):
    """LLM work counted during a turn (or a stage of it)."""

    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    latency_ms: float = 0.0
    errors: int = 0
    requests: int = 0  # HTTP attempts, retries included: what the provider saw

    def minus(self, other: Usage) -> Usage:
        return Usage(
            calls=self.calls - other.calls,
            tokens_in=self.tokens_in - other.tokens_in,
            tokens_out=self.tokens_out - other.tokens_out,
            cost=round(self.cost - other.cost, 8),
            latency_ms=round(self.latency_ms - other.latency_ms, 3),
            errors=self.errors - other.errors,
            requests=self.requests - other.requests,
        )

    @property
    def empty(self) -> bool:
        return self.calls == 0 and self.errors == 0

    def add(self, response: LLMResponse | None, latency_ms: float, attempts: int = 1) -> None:
        """Count one provider call of `attempts` HTTP requests; `response` None means it failed."""
        self.calls += 1
        self.requests += response.attempts if response is not None else attempts
        self.latency_ms = round(self.latency_ms + latency_ms, 3)
        if response is None:
            self.errors += 1
            return
        self.tokens_in += response.tokens_in
        self.tokens_out += response.tokens_out
        self.cost = round(self.cost + response.cost, 8)


class AgentLoop:
    """An LLM agent's conversation with the model over one turn, carried from pass to pass."""

    def __init__(self, messages: list[dict[str, Any]]):
        self.messages = messages
        self.pending: list[dict[str, Any]] = []  # tool calls awaiting results
        self.called: list[dict[str, Any]] = []  # every tool call of this turn
        self.rules = False  # the rules planner answers for the rest of the turn
