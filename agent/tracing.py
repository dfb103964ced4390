"""Observability seams of a turn: its trace, and the LLM usage its stages caused.

The router opens `observed_turn` around a turn. LLM providers are wrapped (MeteredProvider) so
each call adds to the turn's `Usage`; `Turn.emit` attaches what changed since the previous stage
to that stage's telemetry (`payload["llm"]`), so cost and tokens land on the stage that spent them
and in the database with the turn. No OpenTelemetry here: the tracer is a Protocol.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from pydantic import BaseModel

from agent.interfaces import LLMProvider, Tracer, TurnTrace
from agent.llm.models import LLMResponse
from agent.records import TelemetryEvent
from agent.types import Interaction


class Usage(BaseModel):
    """LLM work counted during a turn (or a stage of it)."""

    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    latency_ms: float = 0.0
    errors: int = 0

    def minus(self, other: Usage) -> Usage:
        return Usage(
            calls=self.calls - other.calls,
            tokens_in=self.tokens_in - other.tokens_in,
            tokens_out=self.tokens_out - other.tokens_out,
            cost=round(self.cost - other.cost, 8),
            latency_ms=round(self.latency_ms - other.latency_ms, 3),
            errors=self.errors - other.errors,
        )

    @property
    def empty(self) -> bool:
        return self.calls == 0 and self.errors == 0


_usage: ContextVar[Usage | None] = ContextVar("agentbot_turn_usage", default=None)


def current_usage() -> Usage | None:
    """The running turn's usage, or None outside a turn."""
    return _usage.get()


def record_llm_call(response: LLMResponse | None, latency_ms: float, error: BaseException | None = None) -> None:
    """Add one provider call to the running turn's usage (a no-op outside a turn)."""
    usage = _usage.get()
    if usage is None:
        return
    usage.calls += 1
    usage.latency_ms = round(usage.latency_ms + latency_ms, 3)
    if error is not None or response is None:
        usage.errors += 1
        return
    usage.tokens_in += response.tokens_in
    usage.tokens_out += response.tokens_out
    usage.cost = round(usage.cost + response.cost, 8)


class MeteredProvider:
    """Wraps any LLMProvider so every call counts toward the turn's usage.

    Args:
        inner: the provider that does the work.
    """

    def __init__(self, inner: LLMProvider):
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        # The rest of the provider's surface (capabilities, estimate_tokens, aclose) passes through.
        return getattr(self.inner, name)

    async def generate(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        response_format: dict[str, Any] | None = None,
        temperature: float = 0.0,
        max_tokens: int | None = None,
    ) -> LLMResponse:
        started = time.perf_counter()
        try:
            response = await self.inner.generate(messages, tools, response_format, temperature, max_tokens)
        except BaseException as e:
            record_llm_call(None, (time.perf_counter() - started) * 1000, e)
            raise
        record_llm_call(response, response.latency_ms or (time.perf_counter() - started) * 1000)
        return response

    def get_cost(self, tokens_in: int, tokens_out: int) -> float:
        return self.inner.get_cost(tokens_in, tokens_out)


class NullTrace:
    """The trace of a turn when tracing is off."""

    trace_id: str | None = None

    def stage(self, event: TelemetryEvent) -> str | None:
        return None

    def end(self, error: BaseException | None = None) -> None:
        return None


@contextmanager
def observed_turn(tracer: Tracer | None, interaction: Interaction) -> Iterator[TurnTrace]:
    """A turn's trace and usage scope; the trace ends (with the error, if any) when the block does."""
    token = _usage.set(Usage())
    trace: TurnTrace = tracer.start_turn(interaction) if tracer is not None else NullTrace()
    try:
        yield trace
    except BaseException as e:
        trace.end(e)
        raise
    else:
        trace.end()
    finally:
        _usage.reset(token)
