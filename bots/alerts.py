"""Admin alerts: de-duplicated and rate limited before they reach the admin channels."""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Mapping

from agent.config.schema import AlertTitle
from agent.context.output import AlertNotifier
from agent.domain.types import Alert

log = logging.getLogger("agentbot.alerts")


def heading(alert: Alert) -> str:
    """What every admin channel calls the alert: its kind's title, else the kind itself."""
    return alert.title or alert.kind


class Titled:
    """Gives each alert its kind's title and icon from agents.yaml `alerts:`, the one place every
    admin channel takes them from, then hands it on.

    Args:
        inner: where the titled alerts go (the fanout to the admin channels).
        titles: agents.yaml's titles by alert kind.
    """

    def __init__(self, inner: AlertNotifier, titles: Mapping[str, AlertTitle]):
        self.inner, self.titles = inner, titles

    async def notify(self, alert: Alert) -> None:
        title = self.titles.get(alert.kind)
        if title is not None and not alert.title:
            alert = alert.model_copy(update={"title": title.title, "icon": title.icon})
        await self.inner.notify(alert)


class AlertFanout:
    """
    Args:
        notifiers: where alerts go (a Slack admin channel, a Discord one, the log).
        dedupe_seconds: an alert with the same dedupe key within this window is dropped.
        max_per_minute: alerts of one kind beyond this in a minute are dropped (an outage storm).
        clock: monotonic seconds; tests pass their own.
    """

    def __init__(
        self,
        notifiers: list[AlertNotifier],
        *,
        dedupe_seconds: float = 300.0,
        max_per_minute: int = 20,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.notifiers = notifiers
        self.dedupe_seconds = dedupe_seconds
        self.max_per_minute = max_per_minute
        self.clock = clock
        self._seen: dict[str, float] = {}
        self._recent: dict[str, deque[float]] = {}
        self.sent: list[Alert] = []  # what went out, newest last (bounded)

    def _admit(self, alert: Alert) -> bool:
        now = self.clock()
        key = alert.dedupe_key or f"{alert.kind}:{alert.session_id}:{alert.summary}"
        self._seen = {k: t for k, t in self._seen.items() if now - t < self.dedupe_seconds}
        if key in self._seen:
            return False
        recent = self._recent.setdefault(alert.kind, deque())
        while recent and now - recent[0] >= 60:
            recent.popleft()
        if len(recent) >= self.max_per_minute:
            log.warning("alert %s rate limited", alert.kind)
            return False
        self._seen[key] = now
        recent.append(now)
        return True

    async def notify(self, alert: Alert) -> None:
        if not self._admit(alert):
            return
        self.sent = [*self.sent[-99:], alert]
        for notifier in self.notifiers:
            try:
                await notifier.notify(alert)
            except Exception:  # noqa: BLE001 - one broken admin channel must not silence the others
                log.exception("alert %s could not be delivered by %s", alert.kind, type(notifier).__name__)


class LogNotifier:
    """Alerts as log lines, for the console and as a fallback when no admin channel is set."""

    def __init__(self, logger: logging.Logger | None = None):
        self.logger = logger or log

    async def notify(self, alert: Alert) -> None:
        self.logger.warning("ALERT %s [%s] %s", alert.kind, alert.session_id, alert.summary)
