"""Traces and metrics in local files: a JSON-lines trace file per conversation, metrics as JSON lines."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult, MetricsData
from opentelemetry.sdk.trace import ReadableSpan

from adapters.telemetry.writer import Item, TurnSpans, iso, stage_attributes


def span_record(span: ReadableSpan) -> dict[str, Any]:
    """An SDK span (a tool run, a provider call) as one line of a trace file."""
    ctx = span.get_span_context()
    assert ctx is not None
    start, end = span.start_time or 0, span.end_time or 0
    return {
        "name": span.name,
        "trace_id": format(ctx.trace_id, "032x"),
        "span_id": format(ctx.span_id, "016x"),
        "parent_span_id": format(span.parent.span_id, "016x") if span.parent else None,
        "kind": span.kind.name,
        "start_time": iso(span.start_time),
        "end_time": iso(span.end_time),
        "duration_ms": round((end - start) / 1e6, 3),
        "status": span.status.status_code.name,
        "status_description": span.status.description,
        "attributes": dict(span.attributes or {}),
        "events": [
            {"name": e.name, "timestamp": iso(e.timestamp), "attributes": dict(e.attributes or {})} for e in span.events
        ],
    }


def turn_records(turn: TurnSpans) -> list[dict[str, Any]]:
    """A turn as trace-file lines: its root span `turn`, then a span per stage in order."""
    trace_id, root_id = format(turn.trace_id, "032x"), format(turn.span_id, "016x")
    error = turn.error
    records = [
        {
            "name": "turn",
            "trace_id": trace_id,
            "span_id": root_id,
            "parent_span_id": None,
            "kind": "SERVER",
            "start_time": iso(turn.start_ns),
            "end_time": iso(turn.end_ns),
            "duration_ms": round((turn.end_ns - turn.start_ns) / 1e6, 3),
            "status": "ERROR" if error else "UNSET",
            "status_description": error["exception.type"] if error else None,
            "attributes": {**turn.attributes, "agentbot.stages": len(turn.stages)},
            "events": [{"name": "exception", "timestamp": iso(turn.end_ns), "attributes": error}] if error else [],
        }
    ]
    for event, span_id in turn.stages:
        start, end = turn.stage_times(event)
        records.append(
            {
                "name": event.stage,
                "trace_id": trace_id,
                "span_id": format(span_id, "016x"),
                "parent_span_id": root_id,
                "kind": "INTERNAL",
                "start_time": iso(start),
                "end_time": iso(end),
                "duration_ms": event.duration_ms,
                "status": "ERROR" if event.level == "error" else "UNSET",
                "status_description": None,
                "attributes": stage_attributes(event),
                "events": [],
            }
        )
    return records


class TraceFiles:
    """A trace per conversation in `<directory>/<trace_id>.jsonl`: one JSON span per line, appended.

    Each batch is one `write` per file on a file opened for appending, so two workers adding to the
    same conversation's file interleave whole batches of lines, never parts of a line.

    Args:
        directory: where trace files go (created if missing).
    """

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)

    def path(self, trace_id: str) -> Path:
        return self.directory / f"{trace_id}.jsonl"

    def write(self, items: Sequence[Item]) -> None:
        lines: dict[str, list[str]] = {}
        dumps = json.JSONEncoder(separators=(",", ":"), default=str).encode
        for item in items:
            records = turn_records(item) if isinstance(item, TurnSpans) else [span_record(item)]
            out = lines.setdefault(records[0]["trace_id"], [])
            out += [dumps(r) for r in records]
        for trace_id, body in lines.items():
            data = ("\n".join(body) + "\n").encode()
            try:
                fd = os.open(self.path(trace_id), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            except FileNotFoundError:
                self.directory.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.path(trace_id), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)

    def shutdown(self) -> None:
        return None


def read_trace(path: str | Path) -> list[dict[str, Any]]:
    """The spans of a trace file, in the order they were written."""
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line]


class JsonFileMetricExporter(MetricExporter):
    """Appends each metrics export as one JSON line.

    Args:
        path: the JSON-lines file (its folder is created if missing).
    """

    def __init__(self, path: str | Path):
        super().__init__(preferred_temporality={}, preferred_aggregation={})
        self.path = Path(path)

    def export(self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any) -> MetricExportResult:
        if not any(sm.metrics for rm in metrics_data.resource_metrics for sm in rm.scope_metrics):
            return MetricExportResult.SUCCESS
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as f:
                f.write(metrics_data.to_json(indent=None) + "\n")
        except OSError:
            return MetricExportResult.FAILURE
        return MetricExportResult.SUCCESS

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        return None
