"""A turn's trace: the router opens `observed_turn` around each turn; each stage becomes a span.

No OpenTelemetry here: the tracer is a Protocol, and `NullTrace` stands in when tracing is off.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from agent.domain.records import TelemetryEvent
from agent.domain.types import Interaction
from agent.interfaces import Tracer, TurnTrace


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
