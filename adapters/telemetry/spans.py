"""A turn's spans: noted as plain values while it runs, handed to the SDK's batch processor as one span.

While a turn runs, its stages and tool runs are noted on a `TurnSpans` record (plain values: an SDK
span per stage and tool run cost about 40 us each on the turn's path). When the turn ends the
record becomes one `TurnSpan`, an SDK `ReadableSpan` for the root span `turn` that carries the
rest, and goes to OpenTelemetry's `BatchSpanProcessor` like any other span. The trace-file exporter
(`files.py`) writes it as one line with its stages nested; `TurnExpander` unfolds it into ordinary
SDK spans for any other exporter (OTLP, in-memory).
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Sequence
from typing import Any, NamedTuple

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

from agent.domain.records import TelemetryEvent
from agent.redaction import DEFAULT, Redactor

SAMPLED = TraceFlags(TraceFlags.SAMPLED)
Primitive = str | bool | int | float
SCOPE = InstrumentationScope("agentbot")


class ChildSpan(NamedTuple):
    """A span under the turn's root noted as plain values (a tool run): no SDK span on the turn's path."""

    name: str
    span_id: int
    start_ns: int
    end_ns: int
    attributes: dict[str, Primitive]
    error: str | None = None  # the status description of a failed run


class TurnSpans:
    """One turn while it runs, as plain values: its root's ids and attributes, a span id per stage,
    and children noted meanwhile (tool runs)."""

    __slots__ = ("trace_id", "span_id", "start_ns", "attributes", "stages", "children")

    def __init__(self, trace_id: int, span_id: int, start_ns: int, attributes: dict[str, Any]):
        self.trace_id, self.span_id, self.start_ns = trace_id, span_id, start_ns
        self.attributes = attributes
        self.stages: list[tuple[TelemetryEvent, int]] = []
        self.children: list[ChildSpan] = []


class TurnSpan(ReadableSpan):
    """A finished turn: the root span `turn`, carrying its stages and children as plain values.

    Args:
        record: what the turn noted while it ran.
        end_ns: when it ended.
        resource: the spans' resource (`service.name`).
        error: what ended it, if it failed: an `exception` event and an error status.
    """

    def __init__(self, record: TurnSpans, end_ns: int, resource: Resource, error: BaseException | None = None):
        events: Sequence[Event] = ()
        status = Status(StatusCode.UNSET)
        if error is not None:
            described = {
                "exception.type": type(error).__name__,
                "exception.message": str(error),
                "exception.stacktrace": "".join(traceback.format_exception(error)),
            }
            events = (Event("exception", described, timestamp=end_ns),)
            status = Status(StatusCode.ERROR, type(error).__name__)
        super().__init__(
            "turn",
            SpanContext(record.trace_id, record.span_id, is_remote=False, trace_flags=SAMPLED),
            None,
            resource,
            {**record.attributes, "agentbot.stages": len(record.stages)},
            events,
            kind=SpanKind.SERVER,
            status=status,
            start_time=record.start_ns,
            end_time=end_ns,
            instrumentation_scope=SCOPE,
        )
        self.stages = record.stages
        self.children = record.children

    def unfolded(self) -> list[ReadableSpan]:
        """The turn as plain SDK spans: the root, a span per stage and one per child."""
        root = self.context
        out: list[ReadableSpan] = [self]
        for event, span_id in self.stages:
            start, end = stage_times(event)
            out.append(
                ReadableSpan(
                    event.stage,
                    SpanContext(root.trace_id, span_id, is_remote=False, trace_flags=SAMPLED),
                    root,
                    self.resource,
                    stage_attributes(event),
                    status=Status(StatusCode.ERROR) if event.level == "error" else Status(StatusCode.UNSET),
                    start_time=start,
                    end_time=end,
                    instrumentation_scope=SCOPE,
                )
            )
        for child in self.children:
            out.append(
                ReadableSpan(
                    child.name,
                    SpanContext(root.trace_id, child.span_id, is_remote=False, trace_flags=SAMPLED),
                    root,
                    self.resource,
                    child.attributes,
                    status=Status(StatusCode.ERROR, child.error) if child.error else Status(StatusCode.UNSET),
                    start_time=child.start_ns,
                    end_time=child.end_ns,
                    instrumentation_scope=SCOPE,
                )
            )
        return out


def stage_times(event: TelemetryEvent) -> tuple[int, int]:
    """A stage span's start and end, in nanoseconds, from its event's timestamp and duration."""
    end = int(event.timestamp.timestamp() * 1e9)
    return end - int(event.duration_ms * 1e6), end


def attributes(payload: dict[str, Any], prefix: str) -> dict[str, Primitive | list[Primitive]]:
    """Flatten a telemetry payload into span attributes (dotted keys; other values as JSON text)."""
    out: dict[str, Primitive | list[Primitive]] = {}
    for key, value in payload.items():
        name = f"{prefix}.{key}"
        if value is None:
            continue  # OpenTelemetry has no null attribute
        if isinstance(value, dict):
            out.update(attributes(value, name))
        elif isinstance(value, Primitive):
            out[name] = value
        elif isinstance(value, list | tuple) and value and all(isinstance(v, str) for v in value):
            out[name] = [str(v) for v in value]
        else:
            out[name] = json.dumps(value, default=str)
    return out


def stage_attributes(event: TelemetryEvent) -> dict[str, Any]:
    return {
        "agentbot.stage": event.stage,
        "agentbot.level": event.level,
        "agentbot.session_id": event.session_id,
        "agentbot.interaction_id": event.interaction_id,
        # The payload is the telemetry's, redacted before it got here.
        **attributes(event.payload, "agentbot.payload"),
    }


def scrubbed(span: ReadableSpan, redactor: Redactor) -> ReadableSpan:
    """A copy of the span with its attributes, events and status description masked."""
    status = span.status
    if status.description:
        status = Status(status.status_code, redactor.text(status.description))
    return ReadableSpan(
        span.name,
        span.context,
        span.parent,
        span.resource,
        redactor.value(dict(span.attributes or {})),
        [Event(e.name, redactor.value(dict(e.attributes or {})), e.timestamp) for e in span.events],
        span.links,
        kind=span.kind,
        status=status,
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )


class TurnExpander(SpanExporter):
    """Any OpenTelemetry SpanExporter (OTLP, in-memory) behind the batch processor: each turn is
    unfolded into plain spans, and every attribute, event and status description is masked on the
    way out (spans leave the process).

    Args:
        exporter: where the spans go.
        redactor: masks the process's known secrets and the patterns (`agent.redaction`).
    """

    def __init__(self, exporter: SpanExporter, redactor: Redactor = DEFAULT):
        self.exporter, self.redactor = exporter, redactor

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        out: list[ReadableSpan] = []
        for span in spans:
            out += span.unfolded() if isinstance(span, TurnSpan) else [span]
        return self.exporter.export([scrubbed(span, self.redactor) for span in out])

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self.exporter.force_flush(timeout_millis)

    def shutdown(self) -> None:
        self.exporter.shutdown()
