"""Trace files behind the SDK's batch processor: turns hand spans over; failures lose traces, not turns."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from adapters.telemetry.files import TraceFiles, read_trace
from adapters.telemetry.otel import OTelTracer
from agent.context.log import Turn
from agent.context.tracing import observed_turn
from agent.redaction import Redactor
from tests.helpers import interaction


def conversation_files(directory: Path) -> list[Path]:
    return list(directory.glob("*.jsonl"))


def read_lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def turn_in(tracer: OTelTracer, session: str, text: str = "hello") -> str | None:
    """A turn of two stages; the id of the span they are on, the turn's."""
    i = interaction(text, session)
    with observed_turn(tracer, i) as trace:
        t = Turn(i, session, None, Redactor(), trace)
        first, second = t.emit("received", {"text": text}).span_id, t.emit("memory_updated").span_id
    assert first == second
    return first


def processed(reader: InMemoryMetricReader, error: str) -> int:
    """How many spans the SDK's batch processor counted with this error type."""
    data = reader.get_metrics_data()
    return sum(
        int(point.value)
        for rm in (data.resource_metrics if data else [])
        for sm in rm.scope_metrics
        for metric in sm.metrics
        if metric.name == "otel.sdk.processor.span.processed"
        for point in metric.data.data_points
        if (point.attributes or {}).get("error.type") == error
    )


async def test_a_failing_disk_loses_that_batch_and_later_ones_are_written(tmp_path: Path) -> None:
    (tmp_path / "blocked").write_text("a file where the traces folder should be")
    files = TraceFiles(tmp_path / "blocked" / "traces")
    tracer = OTelTracer(files, interval=60)
    turn_in(tracer, "s-1")
    tracer.flush()
    assert files.lost == 1
    files.directory = tmp_path / "traces"  # the disk is back
    kept = turn_in(tracer, "s-1")
    await tracer.aclose()
    [path] = conversation_files(tmp_path / "traces")
    assert [s["span_id"] for s in read_trace(path)] == [kept] and files.lost == 1


async def test_the_turn_only_hands_its_span_over_and_the_processor_writes_it(tmp_path: Path) -> None:
    tracer = OTelTracer(TraceFiles(tmp_path), interval=60)
    turn_in(tracer, "s-1")
    assert conversation_files(tmp_path) == []  # nothing written on the turn's path
    await tracer.aclose()
    assert len(conversation_files(tmp_path)) == 1


class StuckDisk(SpanExporter):
    """An exporter whose writes hang until released, as on a disk that stopped answering."""

    def __init__(self) -> None:
        self.released = threading.Event()
        self.exported = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.released.wait(30)
        self.exported += len(spans)
        return SpanExportResult.SUCCESS


async def test_a_full_queue_drops_instead_of_making_the_turn_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    # The SDK counts what its processor drops when its own metrics are switched on, the standard way.
    monkeypatch.setenv("OTEL_PYTHON_SDK_INTERNAL_METRICS_ENABLED", "true")
    reader, disk = InMemoryMetricReader(), StuckDisk()
    tracer = OTelTracer(disk, [reader], interval=0.01, max_queue=2)
    for n in range(10):  # every turn ends while the disk hangs
        turn_in(tracer, f"s-{n}")
    dropped = processed(reader, "queue_full")
    disk.released.set()
    await tracer.aclose()
    # At most a batch of two is held by the stuck write and two wait in the queue; the rest are dropped.
    assert dropped >= 6 and dropped + disk.exported == 10


async def test_two_writers_append_whole_lines_to_one_conversation_file(tmp_path: Path) -> None:
    # Two workers: two tracers on one folder, the same thread's turns landing on either.
    first, second = OTelTracer(TraceFiles(tmp_path), interval=60), OTelTracer(TraceFiles(tmp_path), interval=60)
    ids = []
    for n in range(20):
        # lines longer than a pipe's atomic write
        ids.append(turn_in(first if n % 2 else second, "thread-9", "x" * 70_000))
        (first if n % 2 else second).flush()
    await first.aclose()
    await second.aclose()
    [path] = conversation_files(tmp_path)
    lines = read_lines(path)
    assert len(lines) == 20 and all(json.loads(line)["name"] == "turn" for line in lines)
    spans = read_trace(path)
    assert [s["span_id"] for s in spans] == ids
    assert all([stage["name"] for stage in s["stages"]] == ["received", "memory_updated"] for s in spans)
    assert len({s["trace_id"] for s in spans}) == 1


async def test_every_payload_value_reaches_the_trace_file(tmp_path: Path) -> None:
    """Stage payloads hold whatever a stage noted: an integer wider than 64 bits, a date, a key that
    is no string. Each is written (not dropped with its turn's line), as the json module would."""
    tracer = OTelTracer(TraceFiles(tmp_path), interval=60)
    i = interaction("hello", "s-wide")
    when = datetime(2026, 11, 23, 0, 30, tzinfo=UTC)
    with observed_turn(tracer, i) as trace:
        t = Turn(i, "s-wide", None, Redactor(), trace)
        t.emit("received", {"big": 2**70, "at": when, "by_number": {3: "three"}})
    await tracer.aclose()
    [path] = conversation_files(tmp_path)
    [turn] = read_trace(path)
    [stage] = turn["stages"]
    assert stage["payload"] == {"big": 2**70, "at": str(when), "by_number": {"3": "three"}}


class Unprintable:
    def __str__(self) -> str:
        raise ValueError("no text for this")


async def test_a_payload_that_cannot_be_encoded_is_left_out_and_the_turn_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A payload value with no text loses that stage's payload (logged), never the turn, its other
    stages or the conversation's other turns."""
    files = TraceFiles(tmp_path)
    tracer = OTelTracer(files, interval=60)
    i = interaction("hello", "s-odd")
    with observed_turn(tracer, i) as trace:
        t = Turn(i, "s-odd", None, Redactor(), trace)
        t.emit("received", {"odd": Unprintable()})
        t.emit("memory_updated", {"kept": True})
    turn_in(tracer, "s-odd")
    await tracer.aclose()
    [path] = conversation_files(tmp_path)
    odd, plain = read_trace(path)
    stages = [(s["name"], s["payload"]) for s in odd["stages"]]
    assert stages == [("received", None), ("memory_updated", {"kept": True})]
    assert [s["name"] for s in plain["stages"]] == ["received", "memory_updated"] and files.skipped == 0
    assert "the payload of stage received could not be encoded" in caplog.text


def test_retention_removes_old_files_then_the_oldest_over_the_size_limit(tmp_path: Path) -> None:
    traces, now = tmp_path / "traces", time.time()
    traces.mkdir()
    stale = [traces / f"{n:032x}.jsonl" for n in range(3)]  # untouched for eight days
    recent = [traces / f"{n:032x}.jsonl" for n in range(10, 15)]  # an hour old to ten minutes old
    for path in stale:
        path.write_text('{"name": "turn"}\n')
        os.utime(path, (now - 8 * 86_400, now - 8 * 86_400))
    for k, path in enumerate(recent):
        path.write_bytes(b"x" * 999 + b"\n")
        os.utime(path, (now - 3600 + k * 600, now - 3600 + k * 600))
    (traces / "metrics.jsonl").write_text("{}\n")  # not a conversation: never removed
    os.utime(traces / "metrics.jsonl", (now - 9 * 86_400, now - 9 * 86_400))

    TraceFiles(traces, max_age_seconds=7 * 86_400, max_bytes=3_500).maintain()
    kept = sorted(p.name for p in traces.glob("*.jsonl"))
    # The stale ones by age; then the two oldest of the rest, which held 5,000 bytes against 3,500.
    assert kept == sorted(["metrics.jsonl", *(p.name for p in recent[2:])])


async def test_the_first_batch_sweeps_and_the_next_sweep_waits_its_interval(tmp_path: Path) -> None:
    stale = tmp_path / f"{1:032x}.jsonl"
    files = TraceFiles(tmp_path, max_age_seconds=86_400, maintain_every=3600)
    tracer = OTelTracer(files, interval=60)
    for n in range(2):
        stale.write_text('{"name": "turn"}\n')
        os.utime(stale, (time.time() - 2 * 86_400,) * 2)
        turn_in(tracer, "s-kept")
        tracer.flush()
        assert stale.exists() == (n == 1)  # swept with the first batch, not again within the hour
    await tracer.aclose()
    (written,) = [p for p in conversation_files(tmp_path) if p != stale]
    assert [s["name"] for s in read_trace(written)] == ["turn"] * 2


def test_the_shipped_retention_is_a_week_and_a_gigabyte(tmp_path: Path) -> None:
    files = TraceFiles(tmp_path)
    assert (files.max_age_seconds, files.max_bytes) == (7 * 86_400, 1 << 30)
