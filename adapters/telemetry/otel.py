"""OpenTelemetry for agentbot: a trace per conversation, a span per turn, provider call and tool run.

The core sees only the `Tracer` Protocol. A conversation (session) is one trace, its id derived
from the session key (`ConversationIds`, the SDK's id generator); each turn is a root SDK span
`turn` in it, whose id is stored on the turn's telemetry rows, and its telemetry stages travel on
it (`spans.STAGES`); provider calls (`TracedProvider`) and tool runs (`TracedExecutor`) are child
spans, because the turn's span is the current OpenTelemetry context while the turn runs.
OpenTelemetry's `BatchSpanProcessor` hands them, off the turn's path, to an exporter: one JSON-lines
file per conversation (`traces/<trace_id>.jsonl`, `files.py`) or, when an OTLP endpoint is
configured, OTLP/HTTP.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.metrics import AlwaysOffExemplarFilter, MeterProvider
from opentelemetry.sdk.metrics.export import MetricReader, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased
from opentelemetry.trace import Status, StatusCode

from adapters.telemetry.files import DEFAULT_MAX_AGE, DEFAULT_MAX_BYTES, JsonFileMetricExporter, TraceFiles
from adapters.telemetry.spans import STAGES, RedactedExporter, stages_text
from agent.domain.records import TelemetryEvent
from agent.domain.types import Interaction
from agent.redaction import DEFAULT, Redactor


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

    def tool_run(self, attributes: dict[str, Any]) -> None:
        """A tool run's duration and count, from its span's attributes."""
        labels = {"agentbot.tool.name": attributes["agentbot.tool.name"]}
        labels["agentbot.tool.success"] = attributes["agentbot.tool.success"]
        self.tool_duration.record(attributes["agentbot.tool.duration_ms"], labels)
        self.tool_calls.add(1, labels)


ROOT = otel_context.Context()  # no current span: a turn's span is the root of its own trace


class ConversationIds(RandomIdGenerator):
    """The SDK's ids, but a turn's root span takes its conversation's trace id: `trace_ids` holds it
    while the turn's span starts. Every other id is random, as the SDK makes them."""

    def __init__(self) -> None:
        self.trace_ids: ContextVar[int] = ContextVar("agentbot_conversation_trace", default=0)

    def generate_trace_id(self) -> int:
        return self.trace_ids.get() or super().generate_trace_id()


def conversation_trace_id(session_key: str) -> int:
    """A conversation's trace id, the same in every worker and after restarts."""
    return int.from_bytes(hashlib.blake2b(session_key.encode(), digest_size=16).digest(), "big") or 1


class OTelTurnTrace:
    """One turn in its conversation's trace: an SDK span `turn`, the current span until `end`, so
    provider and tool spans nest under it. Stages are kept as the turn's plain events and written
    onto the span as one attribute when it ends (`spans.STAGES`)."""

    def __init__(self, otel: OTelTracer, interaction: Interaction):
        attributes: dict[str, str | int] = {
            "agentbot.session_id": interaction.session_key,
            "agentbot.interaction_id": interaction.id,
            "agentbot.channel": interaction.context.channel_type.value,
            "agentbot.message_chars": len(interaction.text),
        }
        if interaction.context.viewing:  # the channel beside a Slack assistant thread
            attributes["agentbot.viewing_channel"] = interaction.context.viewing
        ids = otel.ids.trace_ids.set(conversation_trace_id(interaction.session_key))
        try:
            # Always a root: a turn starts its own span in its conversation's trace, whatever is current.
            self.span = otel.tracer.start_span("turn", context=ROOT, kind=trace.SpanKind.SERVER, attributes=attributes)
        finally:
            otel.ids.trace_ids.reset(ids)
        self._token = otel_context.attach(trace.set_span_in_context(self.span))
        context = self.span.get_span_context()
        self.recording = self.span.is_recording()
        self.trace_id = format(context.trace_id, "032x") if self.recording else None
        self.span_id = format(context.span_id, "016x") if self.recording else None
        self.stages: list[TelemetryEvent] = []

    def stage(self, event: TelemetryEvent) -> str | None:
        if self.recording:
            self.stages.append(event)
        return self.span_id

    def end(self, error: BaseException | None = None) -> None:
        otel_context.detach(self._token)
        if not self.recording:
            return
        self.span.set_attribute(STAGES, stages_text(self.stages))
        if error is not None:
            self.span.record_exception(error)
            self.span.set_status(Status(StatusCode.ERROR, type(error).__name__))
        self.span.end()


class OTelTracer:
    """The core's `Tracer`: a trace per conversation, exported off the turn's path by OpenTelemetry's
    `BatchSpanProcessor`.

    Args:
        exporter: where spans go: `TraceFiles`, or any OpenTelemetry SpanExporter behind a
            `RedactedExporter` (OTLP, in-memory), which turns each turn's stages into span events.
        metric_readers: readers for the metrics (none: metrics are recorded nowhere).
        service_name: the `service.name` resource attribute.
        sample_rate: the share of conversations traced (whole conversations, decided by trace id,
            so every worker keeps or drops the same ones).
        interval: seconds between the processor's batches.
        max_queue: spans held for export; past it the oldest are dropped, so a turn never waits for
            its trace (counted in the SDK's processor metrics, `otel.sdk.processor.span.processed`,
            when `OTEL_PYTHON_SDK_INTERNAL_METRICS_ENABLED=true`).
    """

    def __init__(
        self,
        exporter: SpanExporter,
        metric_readers: Sequence[MetricReader] = (),
        service_name: str = "agentbot",
        sample_rate: float = 1.0,
        interval: float = 0.05,
        max_queue: int = 50_000,
    ):
        self.resource = resource = Resource.create({"service.name": service_name})
        # No exemplars: the metrics are recorded inside a turn, where sampling an exemplar would cost
        # each recording more than it does itself; a trace is found from the turn's ids instead.
        self.meter_provider = MeterProvider(
            metric_readers, resource=resource, shutdown_on_exit=False, exemplar_filter=AlwaysOffExemplarFilter()
        )
        self.metrics = Metrics(self.meter_provider)
        self.processor = BatchSpanProcessor(
            exporter,
            max_queue_size=max_queue,
            schedule_delay_millis=interval * 1000,
            max_export_batch_size=min(max_queue, 4096),
            meter_provider=self.meter_provider,
        )
        self.ids = ConversationIds()
        # Whole conversations are kept or dropped, by their trace id: every worker decides alike.
        sampler = ParentBased(TraceIdRatioBased(sample_rate))
        # No length limit from the environment: a turn's stages are one attribute (`spans.STAGES`).
        limits = SpanLimits(max_span_attribute_length=SpanLimits.UNSET)
        self.provider = TracerProvider(
            sampler, resource=resource, shutdown_on_exit=False, id_generator=self.ids, span_limits=limits
        )
        self.provider.add_span_processor(self.processor)
        self.tracer = self.provider.get_tracer("agentbot")
        self._closed = False

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
        self.processor.force_flush()
        self.meter_provider.force_flush()

    def _shutdown(self) -> None:
        self.provider.shutdown()  # shuts the processor down: its last batch is exported
        self.meter_provider.shutdown()

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            await asyncio.to_thread(self._shutdown)


def build_tracer(
    traces_dir: str | Path,
    otlp_endpoint: str | None = None,
    sample_rate: float = 1.0,
    redactor: Redactor = DEFAULT,
    max_age_seconds: float | None = DEFAULT_MAX_AGE,
    max_bytes: int | None = DEFAULT_MAX_BYTES,
) -> OTelTracer:
    """A JSON-lines file per conversation under `traces_dir`, metrics in `traces_dir/metrics.jsonl`; or OTLP/HTTP.

    Args:
        traces_dir: the folder for trace files (created if missing).
        otlp_endpoint: OTEL_EXPORTER_OTLP_ENDPOINT, e.g. `http://collector:4318`; set = OTLP instead of files.
        sample_rate: the share of conversations traced.
        redactor: masks what trace files carry (the process's known secrets, and the patterns).
        max_age_seconds, max_bytes: the trace files' retention (`TraceFiles`); None = no limit.
    """
    if otlp_endpoint:
        try:
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError as e:  # pragma: no cover - depends on the install
            raise ImportError("OTLP export needs: pip install 'agentbot[otlp]'") from e
        base = otlp_endpoint.rstrip("/")
        exporter: SpanExporter = RedactedExporter(OTLPSpanExporter(endpoint=f"{base}/v1/traces"), redactor)
        metrics_exporter: Any = OTLPMetricExporter(endpoint=f"{base}/v1/metrics")
    else:
        exporter = TraceFiles(traces_dir, redactor=redactor, max_age_seconds=max_age_seconds, max_bytes=max_bytes)
        metrics_exporter = JsonFileMetricExporter(Path(traces_dir) / "metrics.jsonl")
    reader = PeriodicExportingMetricReader(metrics_exporter, export_interval_millis=60_000)
    return OTelTracer(exporter, [reader], sample_rate=sample_rate)
