"""A circuit breaker per provider: after repeated failures the model is not called for a while.

Closed: calls go through. After `threshold` failed calls in a row it opens: for `cooldown` seconds
every call fails at once (no request), so understanding and agents answer from the embedded rules
instead of making each user wait for a provider that is down. Then it half-opens: one probe call
goes through; its success closes the circuit, its failure opens it again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal

State = Literal["closed", "open", "half_open"]
# Failures that say the provider is unwell; a bad request or a malformed answer says nothing about it.
OUTAGE_KINDS = frozenset({"auth", "rate_limited", "unavailable", "timeout", "connection"})


class CircuitBreaker:
    """
    Args:
        name: the provider it guards (for alerts and telemetry).
        threshold: consecutive outage failures that open the circuit.
        cooldown: seconds the circuit stays open before one probe call is let through.
        clock: monotonic seconds (tests move it).
    """

    def __init__(
        self, name: str, threshold: int = 3, cooldown: float = 30.0, clock: Callable[[], float] = time.monotonic
    ):
        self.name = name
        self.threshold = threshold
        self.cooldown = cooldown
        self.clock = clock
        self.state: State = "closed"
        self.failures = 0
        self.opened_at = 0.0
        self.openings = 0  # how many times it opened; each opening is told to admins once
        self._probing = False

    def allow(self) -> bool:
        """Whether a call may go out now (in half-open state, only the one probe)."""
        if self.state == "open" and self.clock() - self.opened_at >= self.cooldown:
            self.state, self._probing = "half_open", False
        if self.state == "closed":
            return True
        if self.state == "half_open" and not self._probing:
            self._probing = True
            return True
        return False

    def success(self) -> None:
        self.state, self.failures, self._probing = "closed", 0, False

    def failure(self, kind: str) -> bool:
        """Count a failed call; True when this failure opened the circuit."""
        if kind not in OUTAGE_KINDS:
            if self.state == "half_open":
                self._probing = False
            return False
        self.failures += 1
        if self.state == "half_open" or (self.state == "closed" and self.failures >= self.threshold):
            self.state, self.opened_at, self._probing = "open", self.clock(), False
            self.openings += 1
            return True
        return False

    @property
    def retry_in(self) -> float:
        """Seconds until the next probe is allowed (0 when not open)."""
        if self.state != "open":
            return 0.0
        return max(0.0, self.cooldown - (self.clock() - self.opened_at))
