"""Exactly-once, in-order processing of channel events across restarts and workers.

A channel acks the platform at once and hands the event here. The event is stored in the inbox by
its platform key before any work (a retry or duplicate is dropped there). The inbox is also the
queue: a worker that holds a conversation's lease runs its unfinished events one at a time in the
order their messages were written (Slack `ts`, Discord snowflake), renewing the lease while it
works. An event runs only once it has been stored for a short settle window (`settle_seconds`), so
that a message written a few milliseconds earlier but stored later (two people typing at once, a
second worker, the platform delivering out of order) runs first, even when several workers share
the database. An event whose delivery failed is postponed and holds its conversation: nothing
written after it runs before it does (the next poll after its retry time picks it up again). A
crashed worker's lease expires after a few seconds and the next poll of any worker takes its
conversations over.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import socket
import uuid
from collections.abc import Awaitable, Callable

from agent.domain.records import InboxEvent
from agent.domain.types import utcnow
from agent.errors import StorageError
from agent.storage import LeasedInbox

log = logging.getLogger("agentbot.dispatch")

Handler = Callable[[InboxEvent], Awaitable[None]]


class DeliveryFailed(Exception):
    """The platform refused or failed a send; the event's stored answers are sent again later."""


class Dispatcher:
    """
    Args:
        inbox: where events are accepted by key, leased per conversation, and marked finished.
        handler: runs one event (translate, `router.handle`, deliver; or, for an event whose turn
            committed but whose answers were not all sent, send those).
        lease_seconds: how long a conversation stays ours without a renewal; renewed every third.
        poll_seconds: how often housekeeping looks for conversations nobody holds.
        max_attempts: deliveries of a committed event tried before it is given up (logged).
        settle_seconds: how long an event waits after it was stored before it runs, for an
            earlier-written message still on its way.
        backoff_seconds: the wait before a failed delivery's first retry; it doubles with each
            attempt (up to a minute), with up to a quarter more at random so that conversations
            refused together do not all come back in the same instant.
        worker: this worker's name in leases. A name that survives a restart (a Slack worker's
            host and port) lets the restarted process take its own conversations back at once;
            by default it is unique per process and a crashed one's leases are waited out.
    """

    def __init__(
        self,
        inbox: LeasedInbox,
        handler: Handler,
        *,
        lease_seconds: float = 10.0,
        poll_seconds: float = 1.0,
        max_attempts: int = 5,
        worker: str | None = None,
        settle_seconds: float = 0.0,
        backoff_seconds: float = 2.0,
    ):
        self.inbox = inbox
        self.handler = handler
        self.lease_seconds = lease_seconds
        self.poll_seconds = poll_seconds
        self.max_attempts = max_attempts
        self.settle_seconds = settle_seconds
        self.backoff_seconds = backoff_seconds
        self.worker = worker or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self.shutdown_grace_seconds = 10.0
        self._owned: dict[str, asyncio.Task[None]] = {}
        self._again: set[str] = set()  # woken while owned: look once more after releasing
        self._lost: set[str] = set()
        self._housekeeping: list[asyncio.Task[None]] = []

    async def submit(self, event: InboxEvent) -> bool:
        """Accept and schedule an event; False if it was seen before (nothing more happens)."""
        if not await self.inbox.accept(event):
            log.info("duplicate event %s dropped", event.key)
            return False
        self._wake(event.session_key)
        return True

    async def recover(self) -> int:
        """Take over conversations with unfinished events that no live worker holds."""
        sessions = [s for s in await self.inbox.ready_sessions(self.worker) if s not in self._owned]
        for session_key in sessions:
            self._wake(session_key)
        if sessions:
            log.warning("taking over %d conversation(s) with unfinished events", len(sessions))
        return len(sessions)

    def start_housekeeping(self, every_seconds: float, **chores: Callable[[], Awaitable[object]]) -> None:
        """Poll for abandoned conversations every `poll_seconds`, and run each chore (e.g.
        `realert_unclaimed=router.realert_unclaimed`) every `every_seconds`. A failing pass is
        logged under the chore's name only."""
        self._housekeeping = [
            asyncio.create_task(self._every(self.poll_seconds, {"recover": self.recover}), name="dispatch-recover"),
            asyncio.create_task(self._every(every_seconds, chores), name="dispatch-chores"),
        ]

    async def _every(self, seconds: float, chores: dict[str, Callable[[], Awaitable[object]]]) -> None:
        while True:
            await asyncio.sleep(seconds)
            for name, chore in chores.items():
                try:
                    await chore()
                except Exception:  # noqa: BLE001 - a database hiccup must not end housekeeping for good
                    log.exception("housekeeping: %s failed", name)

    def _wake(self, session_key: str) -> None:
        if session_key in self._owned:
            self._again.add(session_key)
            return
        task = asyncio.create_task(self._own(session_key), name=f"session:{session_key}")
        self._owned[session_key] = task
        task.add_done_callback(lambda _t: self._owned.pop(session_key, None))

    async def _own(self, session_key: str) -> None:
        """Hold the conversation's lease and run its events oldest first until none is due."""
        while True:
            self._again.discard(session_key)
            try:
                if not await self.inbox.claim(session_key, self.worker, self.lease_seconds):
                    return  # another worker holds it and runs this event after its own
            except StorageError:
                log.exception("cannot lease %s; the next poll tries again", session_key)
                return
            renewal = asyncio.create_task(self._renew(session_key))
            try:
                await self._run_due(session_key)
            finally:
                renewal.cancel()
                await asyncio.gather(renewal, return_exceptions=True)
                self._lost.discard(session_key)
                with contextlib.suppress(StorageError):
                    await self.inbox.release(session_key, self.worker)
            if session_key not in self._again:
                return

    async def _run_due(self, session_key: str) -> None:
        while session_key not in self._lost:
            try:
                event = await self._next_settled(session_key)
            except StorageError:
                log.exception("cannot read the queue of %s", session_key)
                return
            if event is None or not await self._run(event):
                return

    async def _next_settled(self, session_key: str) -> InboxEvent | None:
        """The conversation's next event once it has been stored for `settle_seconds`; an event
        written earlier that arrives meanwhile comes first (the inbox orders by when written).
        None when there is none, or when the next one is postponed: the conversation waits for it."""
        while True:
            event = await self.inbox.next_event(session_key)
            if event is not None and event.retry_at is not None and event.retry_at > utcnow():
                return None  # held: housekeeping's poll wakes the conversation once it is due
            if event is None or event.accepted_at is None:
                return event
            wait = self.settle_seconds - (utcnow() - event.accepted_at).total_seconds()
            if wait <= 0:
                return event
            await asyncio.sleep(wait)

    async def _renew(self, session_key: str) -> None:
        while True:
            await asyncio.sleep(self.lease_seconds / 3)
            try:
                held = await self.inbox.claim(session_key, self.worker, self.lease_seconds)
            except StorageError:
                continue  # the lease runs out if the database stays away; the turn fails with it
            if not held:
                log.warning("lost the lease of %s to another worker", session_key)
                self._lost.add(session_key)
                return

    async def _run(self, event: InboxEvent) -> bool:
        """Run one event; False when it was left for later (the conversation waits with it)."""
        try:
            await self.handler(event)
            await self.inbox.finish(event.key)
            return True
        except StorageError:
            # The database is unavailable: the event stays accepted and a later poll retries it.
            log.exception("event %s left for retry", event.key)
            return False
        except DeliveryFailed:
            return await self._postpone(event)
        except Exception:
            # A bug or bad payload must not retry forever; the error is logged with the event.
            log.exception("event %s failed", event.key)
            with contextlib.suppress(StorageError):
                await self.inbox.finish(event.key)
            return True

    async def _postpone(self, event: InboxEvent) -> bool:
        try:
            wait = min(self.backoff_seconds * 2.0**event.attempts, 60.0) * random.uniform(1.0, 1.25)
            attempts = await self.inbox.postpone(event.key, wait)
            if attempts < self.max_attempts:
                log.warning("delivery of event %s failed (attempt %d); trying again later", event.key, attempts)
                return False
            log.error("giving up delivering event %s after %d attempts", event.key, attempts)
            await self.inbox.finish(event.key)
        except StorageError:
            log.exception("cannot postpone event %s", event.key)
            return False
        return True

    async def drain(self) -> None:
        """Wait until every conversation this worker took up has no due event left."""
        while self._owned:
            await asyncio.gather(*list(self._owned.values()), return_exceptions=True)

    async def aclose(self) -> None:
        """Let running turns finish (up to `shutdown_grace_seconds`), then cancel the rest."""
        for task in self._housekeeping:
            task.cancel()
        await asyncio.gather(*self._housekeeping, return_exceptions=True)
        try:
            await asyncio.wait_for(self.drain(), self.shutdown_grace_seconds)
        except TimeoutError:
            tasks = list(self._owned.values())
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
