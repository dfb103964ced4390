"""Trace export off the turn's path: finished turns and SDK spans queue here; a thread writes them.

A turn hands over one `TurnSpans` record (its root span and one entry per stage, plain values) when
it ends; provider and tool spans made with the OpenTelemetry SDK arrive through `on_end`, because
`TraceWriter` is also the tracer provider's span processor. Each is given to its sink's `prepare`
where it arrives and queued; the writer thread wakes every `interval` seconds (or when the queue
fills) and hands the batch to the sink's `write`: trace files (`files.py`) or any OpenTelemetry
exporter (`ExporterSink`, e.g. OTLP). When the queue is full, spans are dropped and counted rather
than making a turn wait.

Why the file sink encodes where the turn ends, not on the writer thread: the writer shares the
interpreter lock with the turns, and a batch encoded there held it for milliseconds at a time, so a
turn that overlapped a batch waited that long (sequential p99 4.0-4.8 ms against 2.8-3.5 encoded
in the turn, at the same p50). What is left for the thread is the file calls, which let go of it.
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Protocol

from opentelemetry.context import Context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, Span, SpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

from agent.domain.records import TelemetryEvent
from agent.redaction import DEFAULT, Redactor

log = logging.getLogger("agentbot.traces")
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
    """One finished turn as plain values: the root span `turn`, a child span per stage, and
    children noted while it ran (tool runs)."""

    __slots__ = ("trace_id", "span_id", "start_ns", "end_ns", "attributes", "stages", "children", "error")

    def __init__(self, trace_id: int, span_id: int, start_ns: int, attributes: dict[str, Any]):
        self.trace_id, self.span_id, self.start_ns = trace_id, span_id, start_ns
        self.end_ns = start_ns
        self.attributes = attributes
        self.stages: list[tuple[TelemetryEvent, int]] = []
        self.children: list[ChildSpan] = []
        self.error: dict[str, str] | None = None  # exception.type / message / stacktrace

    def fail(self, error: BaseException) -> None:
        self.error = {
            "exception.type": type(error).__name__,
            "exception.message": str(error),
            "exception.stacktrace": "".join(traceback.format_exception(error)),
        }

    def stage_times(self, event: TelemetryEvent) -> tuple[int, int]:
        end = int(event.timestamp.timestamp() * 1e9)
        return end - int(event.duration_ms * 1e6), end

    def spans(self, resource: Resource) -> list[ReadableSpan]:
        """The turn as SDK spans, for exporters (OTLP, in-memory) that take nothing else."""
        root = SpanContext(self.trace_id, self.span_id, is_remote=False, trace_flags=SAMPLED)
        attrs = {**self.attributes, "agentbot.stages": len(self.stages)}
        events, status = (), Status(StatusCode.UNSET)
        if self.error is not None:
            events = (Event("exception", self.error, timestamp=self.end_ns),)  # type: ignore[assignment]
            status = Status(StatusCode.ERROR, self.error["exception.type"])
        out = [
            ReadableSpan(
                "turn",
                root,
                None,
                resource,
                attrs,
                events,
                kind=SpanKind.SERVER,
                status=status,
                start_time=self.start_ns,
                end_time=self.end_ns,
                instrumentation_scope=SCOPE,
            )
        ]
        for event, span_id in self.stages:
            start, end = self.stage_times(event)
            out.append(
                ReadableSpan(
                    event.stage,
                    SpanContext(self.trace_id, span_id, is_remote=False, trace_flags=SAMPLED),
                    root,
                    resource,
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
                    SpanContext(self.trace_id, child.span_id, is_remote=False, trace_flags=SAMPLED),
                    root,
                    resource,
                    child.attributes,
                    status=Status(StatusCode.ERROR, child.error) if child.error else Status(StatusCode.UNSET),
                    start_time=child.start_ns,
                    end_time=child.end_ns,
                    instrumentation_scope=SCOPE,
                )
            )
        return out


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


Item = TurnSpans | ReadableSpan


class SpanSink(Protocol):
    """Where spans go. `prepare` runs where a span arrives (a turn's end, an SDK span's end), once
    per span; `write`, `maintain` and `shutdown` run on the writer thread, `write` with what
    `prepare` returned, `maintain` between batches every so often (retention)."""

    def prepare(self, item: Item) -> Any: ...

    def write(self, batch: Sequence[Any]) -> None: ...

    def maintain(self) -> None: ...

    def shutdown(self) -> None: ...


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


class ExporterSink:
    """Any OpenTelemetry SpanExporter (OTLP, in-memory): turns become SDK spans first, every
    attribute, event and status description masked on the way out (spans leave the process).

    Args:
        exporter: where the spans go.
        resource: the spans' resource (`service.name`).
        redactor: masks the process's known secrets and the patterns (`agent.redaction`).
    """

    def __init__(self, exporter: SpanExporter, resource: Resource, redactor: Redactor = DEFAULT):
        self.exporter, self.resource, self.redactor = exporter, resource, redactor

    def prepare(self, item: Item) -> Item:
        return item  # made into SDK spans on the writer thread, where the exporter runs

    def write(self, items: Sequence[Item]) -> None:
        spans: list[ReadableSpan] = []
        for item in items:
            if isinstance(item, TurnSpans):
                spans += item.spans(self.resource)
            else:
                spans.append(item)
        self.exporter.export([scrubbed(span, self.redactor) for span in spans])

    def maintain(self) -> None:
        return None  # what is exported is the collector's to keep

    def shutdown(self) -> None:
        self.exporter.shutdown()


class TraceWriter(SpanProcessor):
    """The background writer and the SDK's span processor in one.

    Args:
        sink: receives every batch, on the writer thread.
        interval: seconds between writes; a flush or a full batch writes sooner.
        max_queue: items held before new ones are dropped (and counted in `dropped`).
        maintain_every: seconds between the sink's housekeeping (`maintain`: trace retention),
            the first at the writer's first cycle.
    """

    def __init__(
        self,
        sink: SpanSink,
        interval: float = 1.0,
        max_queue: int = 50_000,
        batch: int = 4096,
        observe: Callable[[Item], None] | None = None,
        maintain_every: float = 60.0,
    ):
        self.sink, self.interval, self.max_queue, self.batch = sink, interval, max_queue, batch
        self.maintain_every = maintain_every
        self._maintained_at = -math.inf
        self.observe = observe  # sees every span as it arrives (metrics from the spans' values)
        self.dropped = 0
        self._queue: deque[Any] = deque()
        self._wake = threading.Event()
        self._stop = False
        self._write_lock = threading.Lock()
        self._thread = threading.Thread(target=self._loop, name="agentbot-traces", daemon=True)
        self._thread.start()

    def submit(self, item: Item) -> None:
        """Called on the turn's path: the sink's `prepare` and an append, never a wait. A span that
        cannot be prepared is dropped and counted; the turn goes on."""
        queue = self._queue
        try:
            if self.observe is not None:
                self.observe(item)
            if len(queue) >= self.max_queue:
                self.dropped += 1
                return
            queue.append(self.sink.prepare(item))
        except Exception:  # noqa: BLE001 - a trace is never worth a turn
            self.dropped += 1
            return
        if len(queue) == self.batch:
            self._wake.set()

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        return None

    def on_end(self, span: ReadableSpan) -> None:
        if span.context is not None and span.context.trace_flags.sampled:
            self.submit(span)

    def _loop(self) -> None:
        while not self._stop:
            self._wake.wait(self.interval)
            self._wake.clear()
            self._drain()
            if time.monotonic() - self._maintained_at >= self.maintain_every:
                self._maintain()

    def _maintain(self) -> None:
        with self._write_lock:  # the sink's files are not written meanwhile
            self._maintained_at = time.monotonic()
            try:
                self.sink.maintain()
            except Exception:  # noqa: BLE001 - housekeeping that fails is tried again next time
                log.exception("trace housekeeping failed")

    def _drain(self) -> None:
        with self._write_lock:
            queue = self._queue
            while queue:
                items = [queue.popleft() for _ in range(min(len(queue), self.batch))]
                try:
                    self.sink.write(items)
                except Exception:  # noqa: BLE001 - a failing sink must not kill the writer
                    self.dropped += len(items)

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        self._drain()
        return True

    def shutdown(self) -> None:
        self._stop = True
        self._wake.set()
        self._thread.join(timeout=30)
        self._drain()
        self.sink.shutdown()
