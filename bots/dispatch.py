"""Exactly-once, in-order processing of channel events; shared by every chat channel.

A channel acks the platform at once and hands the event here. The event is stored in the inbox by
its platform key before any work (a retry or duplicate is dropped there, across restarts and
workers); then each session's events run one at a time, in arrival order, while other sessions run
concurrently. Events a crash left unfinished are picked up again by `recover`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from agent.errors import StorageError
from agent.interfaces import EventInbox
from agent.records import InboxEvent

log = logging.getLogger("agentbot.dispatch")

Handler = Callable[[InboxEvent], Awaitable[None]]


class Dispatcher:
    """
    Args:
        inbox: where events are accepted by key, and marked finished.
        handler: runs one event (translate, `router.handle`, deliver). A turn's commit finishes
            its inbox entry itself; the dispatcher finishes the rest after the handler returns.
        recover_after_seconds: an unfinished event older than this is taken to be abandoned by a
            crashed worker and is run again by `recover`.
    """

    def __init__(self, inbox: EventInbox, handler: Handler, *, recover_after_seconds: float = 120.0):
        self.inbox = inbox
        self.handler = handler
        self.recover_after_seconds = recover_after_seconds
        self.shutdown_grace_seconds = 10.0
        self._queues: dict[str, asyncio.Queue[InboxEvent]] = {}
        self._inflight: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._housekeeping: asyncio.Task[None] | None = None

    async def submit(self, event: InboxEvent) -> bool:
        """Accept and schedule an event; False if it was seen before (nothing more happens)."""
        if not await self.inbox.accept(event):
            log.info("duplicate event %s dropped", event.key)
            return False
        self._enqueue(event)
        return True

    async def recover(self) -> int:
        """Schedule events that were accepted but never finished; returns how many."""
        events = [e for e in await self.inbox.unfinished(self.recover_after_seconds) if e.key not in self._inflight]
        for event in events:
            self._enqueue(event)
        if events:
            log.warning("recovering %d unfinished event(s)", len(events))
        return len(events)

    def start_housekeeping(self, every_seconds: float, *chores: Callable[[], Awaitable[object]]) -> None:
        """Every `every_seconds`: recover abandoned events, then run each chore (e.g. re-alerting
        unclaimed handoffs). A failing pass is logged and the next one runs as usual."""
        self._housekeeping = asyncio.create_task(self._housekeep(every_seconds, chores), name="dispatch-housekeeping")

    async def _housekeep(self, every_seconds: float, chores: tuple[Callable[[], Awaitable[object]], ...]) -> None:
        while True:
            await asyncio.sleep(every_seconds)
            for chore in (self.recover, *chores):
                try:
                    await chore()
                except Exception:  # noqa: BLE001 - a database hiccup must not end housekeeping for good
                    log.exception("housekeeping: %s failed", getattr(chore, "__name__", chore))

    def _enqueue(self, event: InboxEvent) -> None:
        self._inflight.add(event.key)
        queue = self._queues.get(event.session_key)
        if queue is None:
            queue = self._queues[event.session_key] = asyncio.Queue()
            task = asyncio.create_task(self._drain(event.session_key, queue), name=f"session:{event.session_key}")
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        queue.put_nowait(event)

    async def _drain(self, session_key: str, queue: asyncio.Queue[InboxEvent]) -> None:
        while True:
            try:
                event = queue.get_nowait()
            except asyncio.QueueEmpty:
                del self._queues[session_key]
                return
            try:
                await self.handler(event)
                await self.inbox.finish(event.key)
            except StorageError:
                # The database is unavailable: leave the event accepted so `recover` retries it.
                log.exception("event %s left for recovery", event.key)
            except Exception:
                # A bug or bad payload must not retry forever; the error is logged with the event.
                log.exception("event %s failed", event.key)
                await self._finish_quietly(event.key)
            finally:
                self._inflight.discard(event.key)

    async def _finish_quietly(self, key: str) -> None:
        try:
            await self.inbox.finish(key)
        except StorageError:
            log.exception("could not mark event %s finished", key)

    async def drain(self) -> None:
        """Wait until every scheduled event has run."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def aclose(self) -> None:
        """Let running turns finish (up to `shutdown_grace_seconds`), then cancel the rest."""
        if self._housekeeping is not None:
            self._housekeeping.cancel()
            await asyncio.gather(self._housekeeping, return_exceptions=True)
        try:
            await asyncio.wait_for(self.drain(), self.shutdown_grace_seconds)
        except TimeoutError:
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
