"""A telemetry sink that keeps events in memory, for tests that read what a turn recorded."""

from __future__ import annotations

from agent.domain.records import TelemetryEvent


class CollectingSink:
    """Keeps every event in memory, so a test can read what a turn recorded."""

    def __init__(self) -> None:
        self.events: list[TelemetryEvent] = []

    def record(self, event: TelemetryEvent) -> None:
        self.events.append(event)

    def for_interaction(self, interaction_id: str) -> list[TelemetryEvent]:
        return [e for e in self.events if e.interaction_id == interaction_id]

    def clear(self) -> None:
        self.events.clear()
