"""OpenTelemetry for agentbot: a trace per conversation, spans per turn, stage, provider call and tool.

The core sees only the `Tracer` Protocol. A conversation (session) is one trace, its id derived
from the session key; each turn is a root span `turn` in it; every telemetry stage becomes a child
span whose id is stored on the stage's telemetry row; provider calls (`TracedProvider`) and tool
runs (`TracedExecutor`) are children too, because the turn's span is the current OpenTelemetry
context while the turn runs. A background writer (`writer.py`) appends them to one JSON-lines file
per conversation (`traces/<trace_id>.jsonl`) or, when an OTLP endpoint is configured, sends them
over OTLP/HTTP.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import MetricReader, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter
from opentelemetry.trace import NonRecordingSpan, Span, SpanContext, Status, StatusCode, TraceFlags

from adapters.telemetry.files import JsonFileMetricExporter, TraceFiles
from adapters.telemetry.writer import ExporterSink, SpanSink, TraceWriter, TurnSpans
from agent.errors import ProviderError
from agent.interfaces import LLMProvider, ToolContext, ToolExecutor
from agent.llm.models import LLMResponse
from agent.records import TelemetryEvent
from agent.types import Interaction, ToolCall, ToolResult


class Metrics:
    """The instruments of the spec's metrics list, on one meter."""

    def __init__(self, provider: MeterProvider):
        m = provider.get_meter("agentbot")
        self.llm_duration = m.create_histogram("agentbot.llm.duration", unit="ms", description="provider call time")
        self.llm_tokens = m.create_counter("agentbot.llm.tokens", description="tokens by direction (input/output)")
        self.llm_errors = m.create_counter("agentbot.llm.errors", description="failed provider calls by error type")
        self.llm_retries = m.create_counter("agentbot.llm.retries", description="provider call retries by error type")
        self.llm_cost = m.create_counter("agentbot.llm.cost", unit="USD", description="estimated provider cost")
        self.context_use = m.create_histogram(
            "agentbot.llm.context_utilization", unit="1", description="prompt tokens / context window"
        )
        self.tool_duration = m.create_histogram("agentbot.tool.duration", unit="ms", description="tool run time")
        self.tool_calls = m.create_counter("agentbot.tool.calls", description="tool runs by tool and success")


class OTelTurnTrace:
    """One turn in its conversation's trace. Stages are noted as plain values, spans made later.

    The root span's context is the current OpenTelemetry context until `end`, so provider and tool
    spans made with the SDK nest under it; the stage spans and the root itself are built by the
    writer thread from the `TurnSpans` record handed over at `end`.
    """

    def __init__(self, otel: OTelTracer, interaction: Interaction):
        self.writer = otel.writer
        trace_id, sampled = otel.conversation_trace(interaction.session_key)
        span_id = _random_id()
        flags = TraceFlags(TraceFlags.SAMPLED if sampled else TraceFlags.DEFAULT)
        root = NonRecordingSpan(SpanContext(trace_id, span_id, is_remote=False, trace_flags=flags))
        self._token = otel_context.attach(trace.set_span_in_context(root))
        self.record: TurnSpans | None = None
        self.trace_id: str | None = None
        if sampled:
            self.trace_id = format(trace_id, "032x")
            self.record = TurnSpans(
                trace_id,
                span_id,
                time.time_ns(),
                {
                    "agentbot.session_id": interaction.session_key,
                    "agentbot.interaction_id": interaction.id,
                    "agentbot.channel": interaction.context.channel_type.value,
                    "agentbot.message_chars": len(interaction.text),
                },
            )

    def stage(self, event: TelemetryEvent) -> str | None:
        if self.record is None:
            return None
        span_id = _random_id()
        self.record.stages.append((event, span_id))
        return format(span_id, "016x")

    def end(self, error: BaseException | None = None) -> None:
        otel_context.detach(self._token)
        if self.record is None:
            return
        self.record.end_ns = time.time_ns()
        if error is not None:
            self.record.fail(error)
        self.writer.submit(self.record)


def _random_id() -> int:
    return random.getrandbits(64) or 1  # 0 is the invalid span id


class OTelTracer:
    """The core's `Tracer`: a trace per conversation, written off the turn's path by a `TraceWriter`.

    Args:
        exporter: where spans go: a `SpanSink` (e.g. `TraceFiles`) or any OpenTelemetry SpanExporter
            (OTLP, in-memory).
        metric_readers: readers for the metrics (none: metrics are recorded nowhere).
        service_name: the `service.name` resource attribute.
        sample_rate: the share of conversations traced (whole conversations, decided by trace id,
            so every worker keeps or drops the same ones).
        interval: seconds between the writer's batches.
    """

    def __init__(
        self,
        exporter: SpanExporter | SpanSink,
        metric_readers: Sequence[MetricReader] = (),
        service_name: str = "agentbot",
        sample_rate: float = 1.0,
        interval: float = 1.0,
    ):
        resource = Resource.create({"service.name": service_name})
        sink = ExporterSink(exporter, resource) if isinstance(exporter, SpanExporter) else exporter
        self.writer = TraceWriter(sink, interval=interval)
        self.provider = TracerProvider(resource=resource, shutdown_on_exit=False)
        self.provider.add_span_processor(self.writer)
        self.meter_provider = MeterProvider(metric_readers, resource=resource, shutdown_on_exit=False)
        self.tracer = self.provider.get_tracer("agentbot")
        self.metrics = Metrics(self.meter_provider)
        self._bound = int(sample_rate * (1 << 64))
        self._closed = False

    def conversation_trace(self, session_key: str) -> tuple[int, bool]:
        """The conversation's trace id (the same in every worker and after restarts), and if it is sampled."""
        trace_id = int.from_bytes(hashlib.blake2b(session_key.encode(), digest_size=16).digest(), "big") or 1
        return trace_id, (trace_id & 0xFFFFFFFFFFFFFFFF) < self._bound

    def start_turn(self, interaction: Interaction) -> OTelTurnTrace:
        return OTelTurnTrace(self, interaction)

    @contextmanager
    def attempt(self, number: int) -> Iterator[Callable[[BaseException, float | None], None]]:
        """A span per HTTP attempt of an LLM call (under the call's `llm.generate` span): its number,
        and when it failed, the error type and the backoff before the next attempt (none: given up).
        A retry also counts in `agentbot.llm.retries`."""
        with self.tracer.start_as_current_span("llm.attempt", kind=trace.SpanKind.CLIENT) as span:
            span.set_attribute("retry.attempt", number)

            def mark(error: BaseException, wait: float | None) -> None:
                span.set_status(Status(StatusCode.ERROR, type(error).__name__))
                span.set_attributes({"error.type": type(error).__name__, "retry.will_retry": wait is not None})
                if wait is not None:
                    span.set_attribute("retry.backoff_seconds", wait)
                    self.record_retry(number, wait, error)

            yield mark

    def record_retry(self, attempt: int, delay_seconds: float, error: BaseException) -> None:
        """For a retry manager: marks the running span and counts the retry by error type."""
        span = trace.get_current_span()
        span.add_event(
            "retry",
            {"retry.attempt": attempt, "retry.backoff_seconds": delay_seconds, "error.type": type(error).__name__},
        )
        self.metrics.llm_retries.add(1, {"error.type": type(error).__name__})

    def flush(self) -> None:
        self.writer.force_flush()
        self.meter_provider.force_flush()

    def _shutdown(self) -> None:
        self.provider.shutdown()  # shuts the writer down: its last batch is written
        self.meter_provider.shutdown()

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            await asyncio.to_thread(self._shutdown)


def build_tracer(traces_dir: str | Path, otlp_endpoint: str | None = None, sample_rate: float = 1.0) -> OTelTracer:
    """A JSON-lines file per conversation under `traces_dir`, metrics in `traces_dir/metrics.jsonl`; or OTLP/HTTP.

    Args:
        traces_dir: the folder for trace files (created if missing).
        otlp_endpoint: OTEL_EXPORTER_OTLP_ENDPOINT, e.g. `http://collector:4318`; set = OTLP instead of files.
        sample_rate: the share of conversations traced.
    """
    if otlp_endpoint:
        try:
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError as e:  # pragma: no cover - depends on the install
            raise ImportError("OTLP export needs: pip install 'agentbot[otlp]'") from e
        base = otlp_endpoint.rstrip("/")
        exporter: SpanExporter | SpanSink = OTLPSpanExporter(endpoint=f"{base}/v1/traces")
        metrics_exporter: Any = OTLPMetricExporter(endpoint=f"{base}/v1/metrics")
    else:
        exporter = TraceFiles(traces_dir)
        metrics_exporter = JsonFileMetricExporter(Path(traces_dir) / "metrics.jsonl")
    reader = PeriodicExportingMetricReader(metrics_exporter, export_interval_millis=60_000)
    return OTelTracer(exporter, [reader], sample_rate=sample_rate)


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

    async def generate(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        response_format: dict[str, Any] | None = None,
        temperature: float = 0.0,
        max_tokens: int | None = None,
    ) -> LLMResponse:
        m = self.otel.metrics
        with self.otel.tracer.start_as_current_span("llm.generate", kind=trace.SpanKind.CLIENT) as span:
            span.set_attributes(
                {
                    "gen_ai.system": self.provider_name,
                    "gen_ai.request.temperature": temperature,
                    "gen_ai.request.max_tokens": max_tokens or 0,
                    "agentbot.llm.messages": len(messages),
                    "agentbot.llm.tools": len(tools or []),
                }
            )
            started = time.perf_counter()
            try:
                response = await self.inner.generate(messages, tools, response_format, temperature, max_tokens)
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
        with self.otel.tracer.start_as_current_span(f"tool {call.tool_name}") as span:
            result = await self.inner.execute(call, context)
            span.set_attributes(
                {
                    "agentbot.tool.name": call.tool_name,
                    "agentbot.tool.agent": context.agent,
                    "agentbot.tool.success": result.success,
                    "agentbot.tool.replayed": result.replayed,
                    "agentbot.tool.duration_ms": result.execution_time_ms,
                }
            )
            if not result.success:
                span.set_status(Status(StatusCode.ERROR, result.error_code or "tool_failed"))
                span.set_attribute("error.type", result.error_code or "tool_failed")
            labels: dict[str, str | bool] = {
                "agentbot.tool.name": call.tool_name,
                "agentbot.tool.success": result.success,
            }
            self.otel.metrics.tool_duration.record(result.execution_time_ms, labels)
            self.otel.metrics.tool_calls.add(1, labels)
            return result
