"""Telemetry sinks. The database copy is written with each turn; these see events live."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from agent.context.telemetry import TelemetrySink
from agent.domain.records import TelemetryEvent


class LogSink:
    """One JSON line per event on a logger (stderr by default in the CLI)."""

    def __init__(self, logger: logging.Logger | None = None):
        self.logger = logger or logging.getLogger("agentbot.telemetry")

    def record(self, event: TelemetryEvent) -> None:
        if self.logger.isEnabledFor(logging.INFO):
            self.logger.info(event.model_dump_json())


class FanoutSink:
    """Every event to each of several sinks, in order (a log and the metrics)."""

    def __init__(self, sinks: Sequence[TelemetrySink]):
        self.sinks = list(sinks)

    def record(self, event: TelemetryEvent) -> None:
        for sink in self.sinks:
            sink.record(event)
