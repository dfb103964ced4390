"""Spans around the work inside a turn: each LLM call (with its attempts) and each tool run, with their metrics."""

from __future__ import annotations

import time
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, Status, StatusCode

from adapters.telemetry.otel import OTelTracer
from agent.domain.contexts import ToolContext
from agent.domain.types import ToolCall, ToolResult
from agent.errors import ProviderError
from agent.llm.models import LLMRequest, LLMResponse
from agent.llm.provider import LLMProvider
from agent.tools.gateway import ToolExecutor


class TracedProvider:
    """An LLMProvider wrapper: a span per call (model, temperature, tokens, cost) and the LLM metrics.

    Args:
        inner: the provider that does the work.
        otel: the tracer and metrics.
        provider_name: e.g. `openai`, `anthropic`.
        context_window: the model's token limit, for the context-utilization metric (None: not recorded).
    """

    def __init__(
        self, inner: LLMProvider, otel: OTelTracer, provider_name: str = "", context_window: int | None = None
    ):
        self.inner, self.otel, self.provider_name, self.context_window = inner, otel, provider_name, context_window

    def __getattr__(self, name: str) -> Any:
        # The rest of the provider's surface (capabilities, estimate_tokens, aclose) passes through.
        return getattr(self.inner, name)

    async def generate(self, request: LLMRequest) -> LLMResponse:
        m = self.otel.metrics
        with self.otel.tracer.start_as_current_span("llm.generate", kind=trace.SpanKind.CLIENT) as span:
            span.set_attributes(
                {
                    "gen_ai.system": self.provider_name,
                    "gen_ai.request.temperature": request.temperature,
                    "gen_ai.request.max_tokens": request.max_tokens or 0,
                    "agentbot.llm.messages": len(request.messages),
                    "agentbot.llm.tools": len(request.tools or []),
                }
            )
            started = time.perf_counter()
            try:
                response = await self.inner.generate(request)
            except Exception as e:
                self._failed(span, e, (time.perf_counter() - started) * 1000)
                raise
            elapsed = response.latency_ms or (time.perf_counter() - started) * 1000
            labels = {"gen_ai.request.model": response.model, "gen_ai.system": self.provider_name}
            span.set_attributes(
                {
                    "gen_ai.request.model": response.model,
                    "gen_ai.usage.input_tokens": response.tokens_in,
                    "gen_ai.usage.output_tokens": response.tokens_out,
                    "agentbot.llm.cost": response.cost,
                    "agentbot.llm.latency_ms": elapsed,
                    "agentbot.llm.tool_calls": len(response.tool_calls),
                }
            )
            m.llm_duration.record(elapsed, labels)
            m.llm_tokens.add(response.tokens_in, {**labels, "direction": "input"})
            m.llm_tokens.add(response.tokens_out, {**labels, "direction": "output"})
            m.llm_cost.add(response.cost, labels)
            if self.context_window:
                use = response.tokens_in / self.context_window
                span.set_attribute("agentbot.llm.context_utilization", use)
                m.context_use.record(use, labels)
            return response

    def _failed(self, span: Span, error: Exception, elapsed_ms: float) -> None:
        kind = type(error).__name__
        span.record_exception(error)
        span.set_status(Status(StatusCode.ERROR, kind))
        span.set_attributes({"error.type": kind, "agentbot.llm.retryable": bool(getattr(error, "retryable", False))})
        labels = {"error.type": kind, "gen_ai.system": self.provider_name}
        self.otel.metrics.llm_errors.add(1, labels)
        self.otel.metrics.llm_duration.record(elapsed_ms, labels)
        if not isinstance(error, ProviderError):
            span.set_attribute("agentbot.llm.untranslated_error", True)

    def get_cost(self, tokens_in: int, tokens_out: int) -> float:
        return self.inner.get_cost(tokens_in, tokens_out)


class TracedExecutor:
    """A ToolExecutor wrapper: a span and the tool metrics for every tool run through the gateway.

    Args:
        inner: the tool gateway.
        otel: the tracer and metrics.
    """

    def __init__(self, inner: ToolExecutor, otel: OTelTracer):
        self.inner, self.otel = inner, otel

    def __getattr__(self, name: str) -> Any:
        # The gateway's other surface (tools, schemas) stays reachable through the wrapper.
        return getattr(self.inner, name)

    async def execute(self, call: ToolCall, context: ToolContext) -> ToolResult:
        # Under the turn's span when a turn runs it (the turn's span is the current context).
        with self.otel.tracer.start_as_current_span(f"tool {call.tool_name}") as span:
            result = await self.inner.execute(call, context)
            attributes = self._attributes(call, context, result)
            span.set_attributes(attributes)
            if not result.success:
                span.set_status(Status(StatusCode.ERROR, result.error_code or "tool_failed"))
                span.set_attribute("error.type", result.error_code or "tool_failed")
            self.otel.metrics.tool_run(attributes)
            return result

    @staticmethod
    def _attributes(call: ToolCall, context: ToolContext, result: ToolResult) -> dict[str, Any]:
        return {
            "agentbot.tool.name": call.tool_name,
            "agentbot.tool.agent": context.agent,
            "agentbot.tool.success": result.success,
            "agentbot.tool.replayed": result.replayed,
            "agentbot.tool.duration_ms": result.execution_time_ms,
        }
