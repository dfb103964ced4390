"""Small real implementations shared by the LLM tests."""

from __future__ import annotations

from agent.domain.types import Alert


class CollectingAlerts:
    """An AlertNotifier that keeps alerts, deduplicated by key like a real admin channel."""

    def __init__(self) -> None:
        self.alerts: list[Alert] = []

    async def notify(self, alert: Alert) -> None:
        if alert.dedupe_key and any(a.dedupe_key == alert.dedupe_key for a in self.alerts):
            return
        self.alerts.append(alert)
