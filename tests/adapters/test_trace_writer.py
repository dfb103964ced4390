"""The trace writer: turns only queue; a thread writes conversation files; failures lose traces, not turns."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from adapters.telemetry.files import TraceFiles, read_trace
from adapters.telemetry.otel import OTelTracer
from adapters.telemetry.writer import Item
from agent.context.log import Turn
from agent.context.tracing import observed_turn
from agent.redaction import Redactor
from tests.helpers import interaction


class BrokenSink:
    def __init__(self) -> None:
        self.calls = 0

    def prepare(self, item: Item) -> Item:
        return item

    def write(self, items: Sequence[Item]) -> None:
        self.calls += 1
        raise OSError("disk full")

    def maintain(self) -> None:
        return None

    def shutdown(self) -> None:
        return None


class WhereSink:
    """Notes the thread each span is prepared on, and how many reach `write`."""

    def __init__(self) -> None:
        self.prepared_on: list[str] = []
        self.written = 0

    def prepare(self, item: Item) -> Item:
        self.prepared_on.append(threading.current_thread().name)
        return item

    def write(self, items: Sequence[Item]) -> None:
        self.written += len(items)

    def maintain(self) -> None:
        return None

    def shutdown(self) -> None:
        return None


def conversation_files(directory: Path) -> list[Path]:
    return list(directory.glob("*.jsonl"))


def read_lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def turn_in(tracer: OTelTracer, session: str, text: str = "hello") -> list[str | None]:
    i = interaction(text, session)
    with observed_turn(tracer, i) as trace:
        t = Turn(i, session, None, Redactor(), trace)
        return [t.emit("received", {"text": text}).span_id, t.emit("memory_updated").span_id]


async def test_a_failing_sink_drops_traces_and_keeps_writing_later_ones(tmp_path: Path) -> None:
    sink = BrokenSink()
    tracer = OTelTracer(sink, interval=60)
    turn_in(tracer, "s-1")
    tracer.flush()
    assert sink.calls == 1 and tracer.writer.dropped == 1
    turn_in(tracer, "s-1")
    await tracer.aclose()
    assert sink.calls == 2 and tracer.writer.dropped == 2


async def test_a_turn_is_encoded_where_it_ends_not_on_the_writer_thread() -> None:
    sink = WhereSink()
    tracer = OTelTracer(sink, interval=60)
    turn_in(tracer, "s-1")
    assert sink.prepared_on == [threading.current_thread().name] and sink.written == 0
    await tracer.aclose()
    assert sink.written == 1


async def test_a_full_queue_drops_instead_of_making_the_turn_wait(tmp_path: Path) -> None:
    files = TraceFiles(tmp_path)
    tracer = OTelTracer(files, interval=60)
    tracer.writer.max_queue = 2
    for n in range(5):
        turn_in(tracer, f"s-{n}")
    assert tracer.writer.dropped == 3
    await tracer.aclose()
    assert len(conversation_files(tmp_path)) == 2


async def test_two_writers_append_whole_lines_to_one_conversation_file(tmp_path: Path) -> None:
    # Two workers: two tracers on one folder, the same thread's turns landing on either.
    first, second = OTelTracer(TraceFiles(tmp_path), interval=60), OTelTracer(TraceFiles(tmp_path), interval=60)
    ids = []
    for n in range(20):
        ids += turn_in(first if n % 2 else second, "thread-9", "x" * 70_000)  # lines longer than a pipe's atomic write
        (first if n % 2 else second).flush()
    await first.aclose()
    await second.aclose()
    [path] = conversation_files(tmp_path)
    lines = read_lines(path)
    assert len(lines) == 20 and all(json.loads(line)["name"] == "turn" for line in lines)
    spans = read_trace(path)
    assert [s["span_id"] for s in spans if s["name"] != "turn"] == ids
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
    [stage] = [s for s in read_trace(path) if s["name"] == "received"]
    assert stage["payload"] == {"big": 2**70, "at": str(when), "by_number": {"3": "three"}}
    assert tracer.writer.dropped == 0


class Unprintable:
    def __str__(self) -> str:
        raise ValueError("no text for this")


async def test_a_span_that_cannot_be_encoded_is_dropped_and_the_turn_goes_on(tmp_path: Path) -> None:
    """Trace lines are encoded where the turn ends: a payload value with no text loses that turn's
    trace line (counted), never the turn, and the conversation's other turns are still written."""
    tracer = OTelTracer(TraceFiles(tmp_path), interval=60)
    i = interaction("hello", "s-odd")
    with observed_turn(tracer, i) as trace:
        t = Turn(i, "s-odd", None, Redactor(), trace)
        t.emit("received", {"odd": Unprintable()})
    kept = turn_in(tracer, "s-odd")
    await tracer.aclose()
    assert tracer.writer.dropped == 1
    [path] = conversation_files(tmp_path)
    assert [s["span_id"] for s in read_trace(path) if s["name"] != "turn"] == kept


async def test_retention_removes_old_files_then_the_oldest_over_the_size_limit_within_one_cycle(tmp_path: Path) -> None:
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

    files = TraceFiles(traces, max_age_seconds=7 * 86_400, max_bytes=3_500)
    tracer = OTelTracer(files, interval=0.05)
    try:
        for _ in range(200):  # the first writer cycle, 0.05 s in; up to 10 s on a loaded machine
            if not any(p.exists() for p in [*stale, *recent[:2]]):
                break
            await asyncio.sleep(0.05)
        kept = sorted(p.name for p in traces.glob("*.jsonl"))
        # The stale ones by age; then the two oldest of the rest, which held 5,000 bytes against 3,500.
        assert kept == sorted(["metrics.jsonl", *(p.name for p in recent[2:])])
        turn_in(tracer, "s-kept")  # what is written after a sweep is found as before
        tracer.flush()
    finally:
        await tracer.aclose()
    (written,) = [p for p in traces.glob("*.jsonl") if p.name not in kept]
    assert [s["name"] for s in read_trace(written)] == ["turn", "received", "memory_updated"]


def test_the_shipped_retention_is_a_week_and_a_gigabyte(tmp_path: Path) -> None:
    files = TraceFiles(tmp_path)
    assert (files.max_age_seconds, files.max_bytes) == (7 * 86_400, 1 << 30)
