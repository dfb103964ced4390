"""When a platform says "slow down": one pause per method and workspace, shared by every sender.

A platform answers a call beyond its rate limit with HTTP 429 and how long to wait (Slack's
`Retry-After`, Discord's `retry_after`). The SDKs retry the one request that got it after that
wait, while every other conversation keeps calling the same method, so the platform keeps
refusing and counts it against the app. Here a 429 pauses the method for every sender: the pause is
kept on a board (the bot's database, so every worker sees it), nobody calls the method until it
ends, then exactly one caller tries again (the probe) while the rest wait for its answer; a
success opens the method to all, another 429 pauses it anew. A paced method has one call in
flight per process: the answer to one is known before the next goes, so a 429 is never followed by
calls that were already on their way. For a while after a pause (`hot_seconds`) its calls are also
paced to the platform's published limit, so that the queue a pause built up does not run straight
into the next 429; a method that was never refused is not slowed down by a guess at the limit.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from adapters.storage.ratelimits import Pause
from agent.domain.types import utcnow

log = logging.getLogger("agentbot.ratelimits")


class PauseBoard(Protocol):
    """Where pauses are kept (`adapters.storage.ratelimits.SqlPauseBoard`: every worker's)."""

    async def read(self, key: str) -> Pause | None: ...

    async def pause(self, key: str, until: datetime) -> None: ...

    async def claim(self, key: str, hold_seconds: float) -> bool: ...

    async def lift(self, key: str) -> None: ...

    async def unclaim(self, key: str) -> None: ...


class RateLimitMetrics(Protocol):
    """Where refused calls are counted (`/metrics`)."""

    def rate_limited(self, platform: str, method: str) -> None: ...


class MemoryPauseBoard:
    """A board of this process alone: for one worker without a database, and for tests."""

    def __init__(self) -> None:
        self._pauses: dict[str, Pause] = {}

    async def read(self, key: str) -> Pause | None:
        return self._pauses.get(key)

    async def pause(self, key: str, until: datetime) -> None:
        held = self._pauses.get(key)
        if held is None or held.until < until:
            self._pauses[key] = Pause(until)

    async def claim(self, key: str, hold_seconds: float) -> bool:
        held, now = self._pauses.get(key), utcnow()
        if held is None or held.until > now or (held.probe_until is not None and held.probe_until > now):
            return False
        self._pauses[key] = Pause(held.until, now + timedelta(seconds=hold_seconds))
        return True

    async def lift(self, key: str) -> None:
        held = self._pauses.get(key)
        if held is not None and held.until <= utcnow():
            del self._pauses[key]

    async def unclaim(self, key: str) -> None:
        held = self._pauses.get(key)
        if held is not None:
            self._pauses[key] = Pause(held.until)


@dataclass(frozen=True)
class Pace:
    """A published limit: `per_second` calls on average, up to `burst` of them back to back."""

    per_second: float
    burst: int = 1


class RateLimiter:
    """Pauses and pacing for one platform's calls, keyed by whoever the platform limits together.

    Args:
        board: where pauses are kept; the database's board shares them across workers.
        platform: the metrics label ("slack", "discord").
        metrics: counts every refused call.
        probe_hold: how long a probe may take before another caller may try instead (a worker
            that died while probing must not hold the method for good).
        poll_seconds: how often a caller waiting on another worker's probe looks again.
        hot_seconds: how long after a pause (this worker's or another's) calls are paced.
    """

    def __init__(
        self,
        board: PauseBoard,
        platform: str,
        metrics: RateLimitMetrics | None = None,
        *,
        probe_hold: float = 30.0,
        poll_seconds: float = 0.2,
        hot_seconds: float = 60.0,
    ):
        self.board = board
        self.platform = platform
        self.metrics = metrics
        self.probe_hold = probe_hold
        self.poll_seconds = poll_seconds
        self._changed: dict[str, asyncio.Event] = {}
        self._probes: dict[str, asyncio.Task[object]] = {}  # key -> the task of this process probing it
        self._in_flight: dict[str, asyncio.Lock] = {}  # a paced key's one call in flight
        self._holders: dict[str, asyncio.Task[object]] = {}
        self._next_slot: dict[str, float] = {}  # pace key -> the theoretical time of its next call
        self.hot_seconds = hot_seconds
        self._hot_until: dict[str, float] = {}  # key -> until when its calls are paced (monotonic)

    async def before(self, key: str, pace_key: str = "", pace: Pace | None = None) -> None:
        """Wait until a call under `key` may go: its place in its pace (`pace_key`, a channel say),
        while the method is hot, then, for a paced method, its turn as the one call in flight, then
        no pause on it (or this caller is its probe). `after` must follow."""
        if pace is None:
            await self._unpaused(key)
            return
        if self._hot_until.get(key, 0.0) > time.monotonic():
            await self._paced(pace_key or key, pace)
        lock = self._in_flight.setdefault(key, asyncio.Lock())
        await lock.acquire()
        task = asyncio.current_task()
        if task is not None:
            self._holders[key] = task
        try:
            await self._unpaused(key)
        except BaseException:
            self._holders.pop(key, None)
            lock.release()
            raise

    async def _unpaused(self, key: str) -> None:
        while True:
            held, now = await self.board.read(key), utcnow()
            if held is None:
                break
            self._heat(key)
            if held.until > now:
                await self._wait(key, (held.until - now).total_seconds())
            elif held.probe_until is not None and held.probe_until > now:
                await self._wait(key, self.poll_seconds)  # another caller's probe is out: its answer decides
            elif await self.board.claim(key, self.probe_hold):
                task = asyncio.current_task()
                if task is not None:
                    self._probes[key] = task
                break

    async def after(self, key: str, *, answered: bool) -> None:
        """The call is over. A probe that got an answer other than 429 opens the method to everyone;
        one that got no answer at all (a network error) lets another caller try."""
        task = asyncio.current_task()
        if self._holders.get(key) is task:
            del self._holders[key]
            self._in_flight[key].release()
        if self._probes.get(key) is not task:
            return
        del self._probes[key]
        if answered:
            await self.board.lift(key)
        else:
            await self.board.unclaim(key)
        self._notify(key)

    async def refused(self, key: str, method: str, retry_after: float | None, attempt: int = 0) -> float:
        """A 429: pause `key` for everyone for `retry_after` seconds (without one, a backoff that
        doubles with each attempt), plus up to a second at random so that waiting callers and
        workers do not all come back in the same instant. Returns the pause in seconds."""
        base = retry_after if retry_after is not None and retry_after >= 0 else min(2.0**attempt, 30.0)
        seconds = base + random.uniform(0.05, 1.0)
        if self._probes.get(key) is asyncio.current_task():
            del self._probes[key]
        await self.board.pause(key, utcnow() + timedelta(seconds=seconds))
        self._heat(key)
        if self.metrics is not None:
            self.metrics.rate_limited(self.platform, method)
        log.warning("%s: %s is rate limited; every sender waits %.1f s", self.platform, method, seconds)
        self._notify(key)
        return seconds

    def _heat(self, key: str) -> None:
        self._hot_until[key] = time.monotonic() + self.hot_seconds

    async def _paced(self, key: str, pace: Pace) -> None:
        interval = 1.0 / pace.per_second
        now = time.monotonic()
        slot = max(self._next_slot.get(key, now), now)
        self._next_slot[key] = slot + interval
        wait = slot - now - (pace.burst - 1) * interval
        if wait > 0:
            await asyncio.sleep(wait)

    async def _wait(self, key: str, seconds: float) -> None:
        event = self._changed.setdefault(key, asyncio.Event())
        event.clear()
        try:
            async with asyncio.timeout(max(seconds, 0.0)):
                await event.wait()
        except TimeoutError:
            pass

    def _notify(self, key: str) -> None:
        event = self._changed.get(key)
        if event is not None:
            event.set()
