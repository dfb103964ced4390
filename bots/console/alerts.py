"""Admin alerts in the console: one short, quiet line of their own between the bot's lines, never a log record.

In the console the person typing is also the admin, so they see that an alert went out and what it
was about; the details stay in telemetry and the admin channels of the real deployments.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TextIO

from agent.domain.types import Alert
from bots.alerts import heading


def alert_line(alert: Alert) -> str:
    """`(admins alerted: High-risk release report - Release 2.4.1 assessed HIGH risk (report R-1A2B3C4D))`."""
    what = heading(alert)
    headline = alert.summary.split(": ", 1)[0].strip()  # the summary's subject, before its details
    return f"(admins alerted: {what} - {headline})" if headline else f"(admins alerted: {what})"


class ConsoleNotifier:
    """
    Args:
        out: where the console prints; the line is dimmed on a terminal that draws it.
        env: the environment, read for TERM and NO_COLOR.
    """

    def __init__(self, out: TextIO, env: Mapping[str, str]):
        # Dim only for a person at a terminal that draws it (no-color.org's NO_COLOR, TERM=dumb).
        self.dim = out.isatty() and env.get("TERM", "") != "dumb" and "NO_COLOR" not in env
        self.out = out

    async def notify(self, alert: Alert) -> None:
        line = alert_line(alert)
        if self.dim:
            line = f"\x1b[2m{line}\x1b[0m"
        print(line, file=self.out, flush=True)
