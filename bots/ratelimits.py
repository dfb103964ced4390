"""When a platform says "slow down": one pause per method and workspace, shared by every sender.

A platform answers a call beyond its rate limit with HTTP 429 and how long to wait (Slack's
`Retry-After`, Discord's `retry_after`). The SDKs retry the one request that got it after that
wait, while every other conversation keeps calling the same method, so the platform keeps
refusing and counts it against the app. Here a 429 pauses the method for every sender: the pause is
kept on a board (the bot's database, so every worker sees it) and nobody calls the method until it
ends.

A 429 can only stop calls that have not left yet, and reaches other workers only once the
refused one has recorded it; a call another worker sends meanwhile is made after the 429. Any
method can be refused, so every method has one call in flight across all workers from its first
call on: a caller holds the method on the board (`claim`) before its call and lets go when the
answer is in, so the next call leaves only once the last one's answer, 429 or not, is known and
recorded. That is the one call in flight a single worker keeps per method; more workers do not
make it more, and it costs two small writes a call. After a pause the first call is thus the probe,
and the rest wait for its answer. A hold ends on its own, so a worker killed mid-call blocks nobody
for good: after `hold_seconds` while the method is "hot" (`hot_seconds` after its pause ended, as
the board says, so every worker and a restarted one agree), longer than the platform's usual wait,
so that a 429 it never got to record has passed by then too; after `cool_hold_seconds` otherwise.
While hot, a method with a published limit is also paced to it, so that the queue a pause built up
does not run straight into the next 429; a method never refused is not slowed by a guess at the
limit.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from adapters.storage.ratelimits import NEVER_PAUSED, Pause
from agent.domain.types import utcnow

log = logging.getLogger("agentbot.ratelimits")


class PauseBoard(Protocol):
    """Where pauses and holds are kept (`adapters.storage.ratelimits.SqlPauseBoard`: every worker's)."""

    async def read(self, key: str) -> Pause | None: ...

    async def pause(self, key: str, until: datetime) -> None: ...

    async def claim(self, key: str, hold_seconds: float) -> Pause | None: ...

    async def unclaim(self, key: str, hold: datetime) -> None: ...


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
        self._pauses[key] = Pause(until if held is None else max(held.until, until))

    async def claim(self, key: str, hold_seconds: float) -> Pause | None:
        held, now = self._pauses.get(key) or Pause(NEVER_PAUSED), utcnow()
        if held.until > now or (held.probe_until is not None and held.probe_until >= now):
            return None
        self._pauses[key] = Pause(held.until, now + timedelta(seconds=hold_seconds))
        return self._pauses[key]

    async def unclaim(self, key: str, hold: datetime) -> None:
        held = self._pauses.get(key)
        if held is not None and held.probe_until == hold:
            self._pauses[key] = Pause(held.until)


@dataclass(frozen=True)
class Pace:
    """A published limit: `per_second` calls on average, up to `burst` of them back to back."""

    per_second: float
    burst: int = 1


class RateLimiter:
    """Pauses, holds and pacing for one platform's calls, keyed by whoever the platform limits together.

    Args:
        board: where pauses and holds are kept; the database's board shares them across workers.
        platform: the metrics label ("slack", "discord").
        metrics: counts every refused call.
        hold_seconds: how long one call may hold a hot method before another caller may go instead:
            longer than a call takes and than the platform's usual `Retry-After`, so that a worker
            killed mid-call neither blocks the method for good nor lets the next call meet a 429 it
            never recorded.
        cool_hold_seconds: the same for a method not refused lately: longer than a call takes,
            short enough that a worker killed mid-call holds up the others' answers only briefly.
        poll_seconds: how often a caller waiting on another worker's hold looks again.
        hot_seconds: how long after a pause ends (this worker's or another's) the method's calls
            are paced (those with a published limit) and held for `hold_seconds`.
    """

    def __init__(
        self,
        board: PauseBoard,
        platform: str,
        metrics: RateLimitMetrics | None = None,
        *,
        hold_seconds: float = 30.0,
        cool_hold_seconds: float = 5.0,
        poll_seconds: float = 0.05,
        hot_seconds: float = 60.0,
    ):
        self.board = board
        self.platform = platform
        self.metrics = metrics
        self.hold_seconds = hold_seconds
        self.cool_hold_seconds = cool_hold_seconds
        self.poll_seconds = poll_seconds
        self.hot_seconds = hot_seconds
        self._changed: dict[str, asyncio.Event] = {}
        self._holds: dict[str, tuple[asyncio.Task[object] | None, datetime]] = {}  # key -> this process's hold on it
        self._in_flight: dict[str, asyncio.Lock] = {}  # a key's one call in flight in this process
        self._holders: dict[str, asyncio.Task[object]] = {}
        self._next_slot: dict[str, float] = {}  # pace key -> the theoretical time of its next call
        self._hot_until: dict[str, float] = {}  # key -> until when its calls are paced (monotonic)

    async def before(self, key: str, pace_key: str = "", pace: Pace | None = None) -> None:
        """Wait until a call under `key` may go: its place in its pace (`pace_key`, a channel say)
        while the method is hot and has a published limit (`pace`), then its turn as this
        process's call in flight, then no pause on it and its hold on it. `after` must follow."""
        if pace is not None and self._hot_until.get(key, 0.0) > time.monotonic():
            await self._paced(pace_key or key, pace)
        lock = self._in_flight.setdefault(key, asyncio.Lock())
        await lock.acquire()
        task = asyncio.current_task()
        if task is not None:
            self._holders[key] = task
        try:
            await self._turn(key)
        except BaseException:
            self._holders.pop(key, None)
            lock.release()
            raise

    async def again(self, key: str) -> None:
        """After a 429 (`refused`), the same call's next attempt: it keeps its turn in this process
        and waits out the pause for its hold again. `after` still follows, once."""
        await self._turn(key)

    async def _turn(self, key: str) -> None:
        hot = self._hot_until.get(key, 0.0) > time.monotonic()
        if await self._hold(key, hot):
            return  # nobody else's call is out: one round trip
        while True:
            held, now = await self.board.read(key), utcnow()
            if held is None:
                if await self._hold(key, hot=False):
                    return
                continue  # another caller entered it on the board first
            cools = held.until + timedelta(seconds=self.hot_seconds)
            hot = cools > now
            if hot:
                self._hot_until[key] = time.monotonic() + (cools - now).total_seconds()
            if held.until > now:
                await self._wait(key, (held.until - now).total_seconds())
            elif held.probe_until is not None and held.probe_until >= now:
                await self._wait(key, self.poll_seconds)  # another caller's call is out: its answer decides
            elif await self._hold(key, hot):
                return

    async def _hold(self, key: str, hot: bool) -> bool:
        held = await self.board.claim(key, self.hold_seconds if hot else self.cool_hold_seconds)
        if held is None or held.probe_until is None:
            return False
        self._holds[key] = (asyncio.current_task(), held.probe_until)
        cools = held.until + timedelta(seconds=self.hot_seconds)
        if not hot and cools > utcnow():  # another worker's pause: paced from the next call on
            self._hot_until[key] = time.monotonic() + (cools - utcnow()).total_seconds()
        return True

    async def after(self, key: str) -> None:
        """The call is over, answered or not: the next call may go."""
        task = asyncio.current_task()
        if self._holders.get(key) is task:
            del self._holders[key]
            self._in_flight[key].release()
        await self._let_go(key)

    async def _let_go(self, key: str) -> None:
        mine = self._holds.get(key)
        if mine is None or mine[0] is not asyncio.current_task():
            return
        del self._holds[key]
        await self.board.unclaim(key, mine[1])
        self._notify(key)

    async def refused(self, key: str, method: str, retry_after: float | None, attempt: int = 0) -> float:
        """A 429: pause `key` for everyone for `retry_after` seconds (without one, a backoff that
        doubles with each attempt), plus up to a second at random so that waiting callers and
        workers do not all come back in the same instant. The refused call's hold ends with it.
        Returns the pause in seconds."""
        base = retry_after if retry_after is not None and retry_after >= 0 else min(2.0**attempt, 30.0)
        seconds = base + random.uniform(0.05, 1.0)
        mine = self._holds.get(key)
        if mine is not None and mine[0] is asyncio.current_task():
            del self._holds[key]
        await self.board.pause(key, utcnow() + timedelta(seconds=seconds))
        self._hot_until[key] = time.monotonic() + seconds + self.hot_seconds
        if self.metrics is not None:
            self.metrics.rate_limited(self.platform, method)
        log.warning("%s: %s is rate limited; every sender waits %.1f s", self.platform, method, seconds)
        self._notify(key)
        return seconds

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
