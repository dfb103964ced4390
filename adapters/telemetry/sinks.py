"""Telemetry sinks. The database copy is written with each turn; these see events live."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from agent.domain.records import TelemetryEvent
from agent.interfaces import TelemetrySink


class LogSink:
    """One JSON line per event on a logger (stderr by default in the CLI)."""

    def __init__(self, logger: logging.Logger | None = None):
        self.logger = logger or logging.getLogger("agentbot.telemetry")

    def record(self, event: TelemetryEvent) -> None:
        if self.logger.isEnabledFor(logging.INFO):
            self.logger.info(event.model_dump_json())


class CollectingSink:
    """Keeps events in memory, for the eval runner and `chat --json`."""

    def __init__(self) -> None:
        self.events: list[TelemetryEvent] = []

    def record(self, event: TelemetryEvent) -> None:
        self.events.append(event)

    def for_interaction(self, interaction_id: str) -> list[TelemetryEvent]:
        return [e for e in self.events if e.interaction_id == interaction_id]

    def clear(self) -> None:
        self.events.clear()


class FanoutSink:
    """Every event to each of several sinks, in order (a log and the metrics)."""

    def __init__(self, sinks: Sequence[TelemetrySink]):
        self.sinks = list(sinks)

    def record(self, event: TelemetryEvent) -> None:
        for sink in self.sinks:
            sink.record(event)
