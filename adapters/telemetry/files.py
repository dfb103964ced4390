"""Traces and metrics in local files: a JSON-lines trace file per conversation, metrics as JSON lines."""

from __future__ import annotations

import contextlib
import heapq
import json
import logging
import math
import os
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson
from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult, MetricsData
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from adapters.encoding import dumps
from adapters.telemetry.spans import STAGES
from agent.redaction import DEFAULT, Redactor


def span_record(span: ReadableSpan) -> dict[str, Any]:
    """An SDK span (a tool run, a provider call) as one line of a trace file."""
    ctx = span.get_span_context()
    assert ctx is not None
    return {
        "name": span.name,
        "trace_id": format(ctx.trace_id, "032x"),
        "span_id": format(ctx.span_id, "016x"),
        "parent_span_id": format(span.parent.span_id, "016x") if span.parent else None,
        "kind": span.kind.name,
        "start_ns": span.start_time,
        "end_ns": span.end_time,
        "status": span.status.status_code.name,
        "status_description": span.status.description,
        "attributes": dict(span.attributes or {}),
        "events": [{"name": e.name, "ns": e.timestamp, "attributes": dict(e.attributes or {})} for e in span.events],
    }


def line(span: ReadableSpan, redact: Redactor = DEFAULT) -> bytes:
    """A span as one line of its trace file; a turn's with its stages nested, as the turn wrote them.

    The stage payloads were redacted when the turn emitted them (with the config's named parameters
    too), so only the span's own attributes, events and status are scanned here.
    """
    record = span_record(span)
    stages = record["attributes"].pop(STAGES, None)
    record = redact.value(record)
    if isinstance(stages, str):
        record["stages"] = orjson.Fragment(stages)
    return dumps(record) + b"\n"


STAGE_FIELDS = ("name", "start_ns", "end_ns", "level", "payload")


def read_trace(path: str | Path) -> list[dict[str, Any]]:
    """Every span of a conversation's trace file in the order written; a turn's stages as a list of
    dicts under its `stages`."""
    spans: list[dict[str, Any]] = []
    for text in Path(path).read_text(encoding="utf-8").splitlines():
        if text:
            record = json.loads(text)
            if "stages" in record:
                record["stages"] = [dict(zip(STAGE_FIELDS, stage, strict=True)) for stage in record["stages"]]
            spans.append(record)
    return spans


DEFAULT_MAX_AGE = 7 * 86_400.0  # seconds: a week of conversations
DEFAULT_MAX_BYTES = 1 << 30  # 1 GiB of trace files (about 200,000 conversations)
METRICS_FILE = "metrics.jsonl"
log = logging.getLogger("agentbot.traces")


class TraceFiles(SpanExporter):
    """A trace per conversation in `<directory>/<trace_id>.jsonl`, appended: a line per turn (its
    stages nested) and a line per tool or provider span. It runs behind OpenTelemetry's
    `BatchSpanProcessor`, on the processor's thread.

    Each batch is one `write` per file opened for appending, so two workers adding to the same
    conversation's file interleave whole lines. Recently used files stay open. A span that cannot
    be encoded is skipped and counted in `skipped`; a batch that cannot be written is lost, counted
    in `lost`, and the next one is tried as usual.

    Retention, at most once every `maintain_every` seconds, after a batch: files not written to for
    `max_age_seconds` are removed, then the oldest until the folder holds at most `max_bytes`, so
    the newest conversations are always kept.

    Args:
        directory: where trace files go (created if missing).
        open_files: how many files to keep open between batches.
        redactor: masks what is written (the process's known secrets, and the patterns).
        max_age_seconds: a file untouched this long is removed (None: kept whatever its age).
        max_bytes: the most the trace files may hold together (None: no limit).
        maintain_every: seconds between two retention sweeps; the first comes with the first batch.
    """

    def __init__(
        self,
        directory: str | Path,
        open_files: int = 256,
        redactor: Redactor = DEFAULT,
        max_age_seconds: float | None = DEFAULT_MAX_AGE,
        max_bytes: int | None = DEFAULT_MAX_BYTES,
        maintain_every: float = 60.0,
    ):
        self.redactor = redactor
        self.max_age_seconds, self.max_bytes = max_age_seconds, max_bytes
        self.directory = Path(directory)
        self.open_files = open_files
        self.maintain_every = maintain_every
        self._maintained_at = -math.inf
        self._fds: OrderedDict[str, int] = OrderedDict()
        self.skipped = self.lost = 0

    def path(self, trace_id: str) -> Path:
        return self.directory / f"{trace_id}.jsonl"

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        files: dict[str, list[bytes]] = {}
        for span in spans:
            try:
                encoded = line(span, self.redactor)
            except Exception:  # noqa: BLE001 - one span that cannot be encoded costs that span only
                self.skipped += 1
                log.exception("a span could not be encoded for its trace file")
                continue
            files.setdefault(format(span.context.trace_id, "032x"), []).append(encoded)
        result = SpanExportResult.SUCCESS
        try:
            for trace_id, chunks in files.items():
                os.write(self._fd(trace_id), b"".join(chunks))
        except OSError:
            self.lost += len(spans)
            log.exception("trace files could not be written")
            result = SpanExportResult.FAILURE
        if time.monotonic() - self._maintained_at >= self.maintain_every:
            self.maintain()
        return result

    def _fd(self, trace_id: str) -> int:
        fd = self._fds.pop(trace_id, None)
        if fd is None:
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
            try:
                fd = os.open(self.path(trace_id), flags, 0o644)
            except FileNotFoundError:
                self.directory.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.path(trace_id), flags, 0o644)
            while len(self._fds) >= self.open_files:
                os.close(self._fds.popitem(last=False)[1])
        self._fds[trace_id] = fd
        return fd

    def maintain(self) -> None:
        """Apply the retention: by age, then by total size, oldest first.

        A sweep holds no list of the folder's files, only the few it must remove to get under
        `max_bytes`: a list of every file, made on the processor's thread while the turns allocate
        on theirs, left its peak in the process for good, so a server's memory grew with its trace
        folder (docs/performance.md#a-long-run).
        """
        self._maintained_at = time.monotonic()
        if self.max_age_seconds is None and self.max_bytes is None:
            return
        cutoff = time.time() - self.max_age_seconds if self.max_age_seconds is not None else -math.inf
        total = 0
        for modified, size, name in self._files():
            if modified < cutoff:
                self._remove(name)
            else:
                total += size
        if self.max_bytes is None or total <= self.max_bytes:
            return
        excess = total - self.max_bytes
        # The oldest files whose sizes cover the excess, newest on top of the heap: each file seen is
        # pushed, and the newest held is dropped as long as the others still cover it.
        oldest: list[tuple[float, int, str]] = []  # (-modified, size, name)
        held = 0
        for modified, size, name in self._files():
            heapq.heappush(oldest, (-modified, size, name))
            held += size
            while held - oldest[0][1] >= excess:
                held -= heapq.heappop(oldest)[1]
        for _, _, name in oldest:
            self._remove(name)

    def _files(self) -> Iterator[tuple[float, int, str]]:
        """Each conversation's file in the folder: when it was last written, its size and name."""
        try:
            entries = os.scandir(self.directory)
        except OSError:  # no folder yet, or not a folder: nothing to sweep
            return
        with entries:
            for entry in entries:
                if entry.name.endswith(".jsonl") and entry.name != METRICS_FILE:
                    try:
                        st = entry.stat()
                    except FileNotFoundError:
                        continue  # removed by another worker meanwhile
                    yield st.st_mtime, st.st_size, entry.name

    def _remove(self, name: str) -> None:
        fd = self._fds.pop(name.removesuffix(".jsonl"), None)
        if fd is not None:
            os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.directory / name)

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True  # every batch is written when it is exported

    def shutdown(self) -> None:
        while self._fds:
            os.close(self._fds.popitem()[1])


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
