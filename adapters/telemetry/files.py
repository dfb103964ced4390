"""OpenTelemetry exporters to local files: one JSON file per trace, metrics as JSON lines."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult, MetricsData
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from agent.redaction import redact_text

Primitive = str | bool | int | float


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


def _iso(ns: int | None) -> str | None:
    return datetime.fromtimestamp(ns / 1e9, UTC).isoformat() if ns is not None else None


def span_record(span: ReadableSpan) -> dict[str, Any]:
    ctx = span.get_span_context()
    assert ctx is not None
    start, end = span.start_time or 0, span.end_time or 0
    return {
        "name": span.name,
        "trace_id": format(ctx.trace_id, "032x"),
        "span_id": format(ctx.span_id, "016x"),
        "parent_span_id": format(span.parent.span_id, "016x") if span.parent else None,
        "kind": span.kind.name,
        "start_time": _iso(span.start_time),
        "end_time": _iso(span.end_time),
        "duration_ms": round((end - start) / 1e6, 3),
        "status": span.status.status_code.name,
        "status_description": span.status.description,
        "attributes": dict(span.attributes or {}),
        "events": [
            {"name": e.name, "timestamp": _iso(e.timestamp), "attributes": dict(e.attributes or {})}
            for e in span.events
        ],
    }


class JsonFileSpanExporter(SpanExporter):
    """Writes `<directory>/<trace_id>.json` when a trace's root span ends, with all its spans.

    Args:
        directory: where trace files go (created if missing).
    """

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)
        self._pending: dict[str, list[dict[str, Any]]] = {}
        # Traces already written, so a late span joins its file without a stat per span (bounded).
        self._written: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()

    def path(self, trace_id: str) -> Path:
        return self.directory / f"{trace_id}.json"

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        done: list[str] = []
        with self._lock:
            for span in spans:
                record = span_record(span)
                self._pending.setdefault(record["trace_id"], []).append(record)
                if record["parent_span_id"] is None or record["trace_id"] in self._written:
                    done.append(record["trace_id"])
            batches = {tid: self._pending.pop(tid) for tid in dict.fromkeys(done) if tid in self._pending}
            late = {tid for tid in batches if tid in self._written}
            for tid in batches:
                self._written[tid] = None
            while len(self._written) > 10_000:
                self._written.popitem(last=False)
        try:
            for trace_id, records in batches.items():
                self._write(trace_id, records, append=trace_id in late)
        except OSError:
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def _write(self, trace_id: str, records: list[dict[str, Any]], append: bool = False) -> None:
        path = self.path(trace_id)
        # A span that ends after its root (rare) joins the file already written.
        spans = json.loads(path.read_text())["spans"] + records if append and path.exists() else records
        spans.sort(key=lambda s: s["start_time"] or "")
        body = json.dumps({"trace_id": trace_id, "spans": spans}, separators=(",", ":"), default=str)
        # Exception events carry provider messages and stack traces: scanned like everything written.
        body = redact_text(body)
        # Written aside and renamed, so a reader never sees half a trace.
        tmp = path.with_suffix(".tmp")
        try:
            tmp.write_text(body)
        except FileNotFoundError:
            self.directory.mkdir(parents=True, exist_ok=True)
            tmp.write_text(body)
        tmp.replace(path)

    def shutdown(self) -> None:
        # Traces whose root never ended (a crash mid-turn) are still worth keeping.
        with self._lock:
            left, self._pending = self._pending, {}
        for trace_id, records in left.items():
            self._write(trace_id, records)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


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
