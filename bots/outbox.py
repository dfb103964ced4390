"""Sending a turn's messages exactly once: the outbox decides what is sent, the platform's own
dedupe closes the window between "sent" and "marked sent".

Every message of a channel event has a stable id (agent/context/log.py). Before a send the outbox says
where the message stands: new (a pre-message or notice, recorded now, before it goes out), pending
(an answer the turn committed), sending (an earlier attempt may have posted it: the platform is
asked first) or sent (skipped). After the send the platform's id for it is recorded.

A refused send (a 429 that outlasted its retries, an outage) leaves the event to be run again, and
the message is posted then, pre-messages included: a refusal means the platform showed nothing. A
pre-message is left out only when its answer is already in the thread (it would read after its
answer); that is recorded in the outbox (`skipped`) and counted, never silent.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Protocol

from agent.domain.types import OutboundMessage
from agent.errors import AgentbotError
from agent.storage import Outbox
from bots.dispatch import DeliveryFailed

log = logging.getLogger("agentbot.outbox")


def nonce(message_id: str, part: int = 0) -> str:
    """A platform-safe token for one posted part of a message (Discord allows 25 characters)."""
    return hashlib.sha256(f"{message_id}/{part}".encode()).hexdigest()[:25]


class Sender(Protocol):
    """Posts one message to one place on a platform (a Slack thread, a Discord thread)."""

    async def deliver(self, message: OutboundMessage, *, recovering: bool) -> str:
        """Post `message` (all its parts) and return the platform's id of the last part. With
        `recovering`, first look on the platform for parts an earlier attempt already posted."""
        ...


class SkippedPreMessages(Protocol):
    """Where pre-messages left out on purpose are counted (`/metrics`)."""

    def pre_message_skipped(self, channel: str) -> None: ...


class OutboxReply:
    """The `reply` callable of a stored channel event: each message is shown once.

    Args:
        outbox: the outbox on the session store's database.
        sender: the platform half (Slack's ThreadSender, Discord's targets).
        event_key: the inbox key of the event being answered.
        session_key: the conversation the event belongs to.
        metrics: counts pre-messages left out because their answer was shown first.
        channel: the metrics label ("slack", "discord").
    """

    def __init__(
        self,
        outbox: Outbox,
        sender: Sender,
        event_key: str,
        session_key: str,
        metrics: SkippedPreMessages | None = None,
        channel: str = "",
    ):
        self.outbox, self.sender = outbox, sender
        self.event_key, self.session_key = event_key, session_key
        self.metrics, self.channel = metrics, channel

    async def __call__(self, message: OutboundMessage) -> None:
        if not message.id:
            message = message.model_copy(update={"id": f"{self.event_key}:{message.kind}"})
        state = await self.outbox.begin(message, self.event_key, self.session_key)
        if state in ("sent", "skipped"):
            return  # shown before this (re-)run
        # An earlier attempt may have posted it (the platform is looked at first) or been refused.
        await self._deliver(message, recovering=state == "sending")

    async def resend(self) -> int:
        """An event whose turn committed but whose answers were not all marked sent (a crash, a
        platform outage): send the rest, in order, checking the platform for each first. A
        pre-message never shown goes first, unless an answer is in the thread already."""
        pre, answered = await self.outbox.unshown_pre(self.event_key)
        for message in pre:
            if answered:
                await self.outbox.skip(message.id)
                if self.metrics is not None:
                    self.metrics.pre_message_skipped(self.channel)
                log.warning("pre-message %s not shown: its answer went out first", message.id)
            else:
                await self._deliver(message, recovering=True)
        unsent = await self.outbox.unsent(self.event_key)
        for message in unsent:
            await self._deliver(message, recovering=True)
        return len(unsent)

    async def notify_once(self, message: OutboundMessage) -> None:
        """Without the database (it is what failed): the platform's dedupe alone keeps this to one."""
        try:
            await self.sender.deliver(message, recovering=True)
        except Exception:  # noqa: BLE001 - a notice that cannot be shown is only logged
            log.warning("could not post notice %s", message.id, exc_info=True)

    async def _deliver(self, message: OutboundMessage, *, recovering: bool) -> None:
        try:
            ref = await self.sender.deliver(message, recovering=recovering)
        except AgentbotError:
            raise
        except Exception as e:
            raise DeliveryFailed(f"could not send {message.id}: {e}") from e
        await self.outbox.mark_sent(message.id, ref)
