"""Where a turn's telemetry and counts go: sinks and metrics the channels and adapters implement."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from agent.domain.records import TelemetryEvent


@runtime_checkable
class TelemetrySink(Protocol):
    """Receives every telemetry event as it happens. Must not block: buffer or log."""

    def record(self, event: TelemetryEvent) -> None: ...


class TurnMetrics(Protocol):
    """Counts turns for operators (Prometheus, `bots/metrics.py`); what happened inside a turn
    arrives as telemetry events. Must not block."""

    def turn_ended(self, channel: str, outcome: str, seconds: float) -> None:
        """A turn ended. `outcome`: answered, refused (empty, too slow, busy), too_long, duplicate, failed."""

    def commit_conflict(self) -> None:
        """A turn lost its optimistic lock on the session and is run again (or given up)."""


class MetricsExport(Protocol):
    """The process's metrics as a scrape reads them (`/metrics`)."""

    async def exposition(self) -> tuple[bytes, str]:
        """The metrics in the scraper's text format, and its content type."""
