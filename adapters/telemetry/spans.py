"""A turn's stages on its SDK span, and the exporter that unfolds them for OTLP and in-memory readers.

A turn is one OpenTelemetry SDK span, `turn`. Its telemetry stages (`received` ... `memory_updated`)
are not spans of their own: the turn keeps them as the plain events it already made and, when it
ends, writes them onto its span as one attribute, `agentbot.stages`, the JSON text of a list of
`[name, start_ns, end_ns, level, payload]`. The trace-file exporter (`files.py`) writes that text
as it is, nested in the turn's line; `RedactedExporter` turns each stage into an SDK span event of
the turn (its payload as dotted attributes) for any other exporter.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from typing import Any

import orjson
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import Status

from adapters.encoding import dumps
from agent.domain.records import TelemetryEvent
from agent.redaction import DEFAULT, Redactor

STAGES = "agentbot.stages"  # the turn span's attribute holding its stages as JSON text
Primitive = str | bool | int | float
log = logging.getLogger("agentbot.traces")


def stage_times(event: TelemetryEvent) -> tuple[int, int]:
    """A stage's start and end, in nanoseconds, from its event's timestamp and duration."""
    end = int(event.timestamp.timestamp() * 1e9)
    return end - int(event.duration_ms * 1e6), end


def stages_text(events: Iterable[TelemetryEvent]) -> str:
    """The stages as the JSON text of `[name, start_ns, end_ns, level, payload]` each. A payload that
    cannot be encoded is written as null and logged, so the turn keeps its other stages."""
    stages = [[e.stage, *stage_times(e), e.level, e.payload] for e in events]
    try:
        return dumps(stages).decode()
    except (TypeError, ValueError):
        for stage in stages:
            try:
                dumps(stage[-1])
            except (TypeError, ValueError):
                log.exception("the payload of stage %s could not be encoded for its trace", stage[0])
                stage[-1] = None
        return dumps(stages).decode()


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


def stage_events(text: str) -> list[Event]:
    """A turn's stages as SDK span events, each at its stage's end, with its level, duration and payload."""
    events = []
    for name, start_ns, end_ns, level, payload in orjson.loads(text):
        described: dict[str, Any] = {"agentbot.level": level, "agentbot.duration_ms": (end_ns - start_ns) / 1e6}
        described.update(attributes(payload or {}, "agentbot.payload"))
        events.append(Event(name, described, timestamp=end_ns))
    return events


def unfolded(span: ReadableSpan, redactor: Redactor) -> ReadableSpan:
    """A copy of the span as it may leave the process: a turn's stages as its events, and every
    attribute, event and status description masked."""
    found = dict(span.attributes or {})
    stages = found.pop(STAGES, None)
    events = list(span.events)
    if isinstance(stages, str):
        events = stage_events(stages) + events
    status = span.status
    if status.description:
        status = Status(status.status_code, redactor.text(status.description))
    return ReadableSpan(
        span.name,
        span.context,
        span.parent,
        span.resource,
        redactor.value(found),
        [Event(e.name, redactor.value(dict(e.attributes or {})), e.timestamp) for e in events],
        span.links,
        kind=span.kind,
        status=status,
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )


class RedactedExporter(SpanExporter):
    """Any OpenTelemetry SpanExporter (OTLP, in-memory) behind the batch processor: each turn's stages
    become events of its span, and every attribute, event and status description is masked on the
    way out (spans leave the process).

    Args:
        exporter: where the spans go.
        redactor: masks the process's known secrets and the patterns (`agent.redaction`).
    """

    def __init__(self, exporter: SpanExporter, redactor: Redactor = DEFAULT):
        self.exporter, self.redactor = exporter, redactor

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return self.exporter.export([unfolded(span, self.redactor) for span in spans])

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self.exporter.force_flush(timeout_millis)

    def shutdown(self) -> None:
        self.exporter.shutdown()
