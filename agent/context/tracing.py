"""A turn's trace: the router opens `observed_turn` around each turn, and each stage is recorded on it.

No OpenTelemetry here: the tracer is a Protocol, and `NullTrace` stands in when tracing is off.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol, runtime_checkable

from agent.domain.records import TelemetryEvent
from agent.domain.types import Interaction


@runtime_checkable
class TurnTrace(Protocol):
    """One turn in its conversation's trace: a root span that carries the turn's telemetry stages.

    Implementations must not wait on the turn's path (no disk, no network): the turn calls
    `stage` several times and `end` once, and hands the spans to a background writer there.
    """

    trace_id: str | None

    def stage(self, event: TelemetryEvent) -> str | None:
        """Record the stage the (already redacted) event closes; returns the id of the span it is on."""
        ...

    def end(self, error: BaseException | None = None) -> None: ...


@runtime_checkable
class Tracer(Protocol):
    """Starts each turn's spans in its conversation's trace (OpenTelemetry in adapters/telemetry/otel.py)."""

    def start_turn(self, interaction: Interaction) -> TurnTrace: ...

    def flush(self) -> None:
        """Block until every ended turn's spans are written (a benchmark counts their cost)."""
        ...

    async def aclose(self) -> None:
        """Flush and stop exporting."""
        ...


class NullTrace:
    """The trace of a turn when tracing is off."""

    trace_id: str | None = None

    def stage(self, event: TelemetryEvent) -> str | None:
        return None

    def end(self, error: BaseException | None = None) -> None:
        return None


@contextmanager
def observed_turn(tracer: Tracer | None, interaction: Interaction) -> Iterator[TurnTrace]:
    """A turn's trace; it ends (with the error, if any) when the block does."""
    trace: TurnTrace = tracer.start_turn(interaction) if tracer is not None else NullTrace()
    try:
        yield trace
    except BaseException as e:
        trace.end(e)
        raise
    else:
        trace.end()
