"""The admin side of handoffs: claim and release, the re-alert sweep, and delivering admin alerts.

Each admin action or re-alert is a small turn of its own on the session: loaded, changed, and
committed with its telemetry under the session lock and the optimistic version check.
"""

from __future__ import annotations

import logging
import uuid
from datetime import datetime, timedelta

from agent.config.schema import Messages, Settings
from agent.context.log import Turn
from agent.context.output import TurnOutput
from agent.conversation import handoff
from agent.conversation.session import SessionState
from agent.domain.records import TurnRecord
from agent.domain.types import Alert, Interaction, Message, OutboundMessage, utcnow
from agent.errors import VersionConflict
from agent.interfaces import AlertNotifier, HandoffQueue, Reply, SessionStore, TelemetrySink
from agent.redaction import Redactor
from agent.turn.locks import SessionLocks

log = logging.getLogger("agentbot.router")


class HandoffDesk:
    """
    Args:
        store: the session store.
        locks: the router's per-session locks, so admin actions and turns never interleave.
        telemetry: receives the admin actions' telemetry, as every turn's.
        redactor: masks it, as every turn's.
        settings: retries and the re-alert interval.
        messages: the bot's fixed messages.
        alerts: where admin alerts go; None drops them.
        queue: finds unclaimed handoffs for the sweep; None disables the sweep.
    """

    def __init__(
        self,
        store: SessionStore,
        locks: SessionLocks,
        settings: Settings,
        messages: Messages,
        alerts: AlertNotifier | None,
        queue: HandoffQueue | None,
        telemetry: TelemetrySink | None,
        redactor: Redactor,
    ):
        self.store, self.locks, self.telemetry, self.redactor = store, locks, telemetry, redactor
        self.settings, self.messages, self.alerts, self.queue = settings, messages, alerts, queue

    async def notify(self, alerts: list[Alert]) -> None:
        """Admins hear about a turn only after it committed; a failing notifier never fails the turn."""
        if self.alerts is None:
            return
        for alert in alerts:
            try:
                await self.alerts.notify(alert)
            except Exception:  # noqa: BLE001 - an alert channel outage must not lose the user's turn
                log.exception("admin alert %s for %s could not be sent", alert.kind, alert.session_id)

    async def control(self, session_key: str, action: handoff.Action, actor: str, reply: Reply | None = None) -> str:
        """An admin claims or releases a handed-off session; returns what the thread is told."""
        async with self.locks.hold(session_key):
            for _ in range(self.settings.commit_retries):
                saved, _history = await self.store.load(session_key, 0)
                notice = handoff.control(saved, action, actor, self.messages) if saved else None
                if saved is None or notice is None:
                    return self.messages.no_handoff
                t = self._turn(session_key, f"/{action}")
                out = TurnOutput(t.interaction.id, self.redactor, reply, [])
                t.emit("handoff_updated", {"action": action, "status": saved.handoff.status, "by": actor})  # type: ignore[union-attr]
                await out.send(OutboundMessage(kind="notice", text=notice))
                meta = {"interaction_id": t.interaction.id}
                admin = Message(role="system", kind="admin", text=f"{actor}: {action}", metadata=meta)
                if await self._commit(saved, t, [admin, *out.agent_messages()]):
                    await out.flush()
                    return notice
        return self.messages.busy

    async def realert_unclaimed(self, now: datetime | None = None) -> list[Alert]:
        """Alert admins again about every handoff still unclaimed after the configured time.

        Channels call this periodically; `now` lets tests move time instead of sleeping.
        """
        if self.queue is None:
            return []
        now = now or utcnow()
        wait = self.settings.handoff_realert_seconds
        sent: list[Alert] = []
        for session_key in await self.queue.unclaimed(now - timedelta(seconds=wait)):
            async with self.locks.hold(session_key):
                for _ in range(self.settings.commit_retries):
                    saved, history = await self.store.load(session_key, 5)
                    if saved is None or not handoff.due(saved, now, wait):
                        break
                    alert = handoff.realert(saved, history, now)
                    t = self._turn(session_key, "/realert")
                    count = saved.handoff.alerts_sent  # type: ignore[union-attr]
                    t.emit("handoff_realerted", {"alerts_sent": count, "status": "requested"})
                    if await self._commit(saved, t, []):
                        sent.append(alert)
                        break
        await self.notify(sent)
        return sent

    def _turn(self, session_key: str, text: str) -> Turn:
        interaction = Interaction(id=f"control-{uuid.uuid4().hex[:12]}", text=text, session_key=session_key)
        return Turn(interaction, session_key, self.telemetry, self.redactor)

    async def _commit(self, state: SessionState, t: Turn, messages: list[Message]) -> bool:
        expected = state.version
        state.version += 1
        try:
            await self.store.commit(
                TurnRecord(
                    state=state,
                    expected_version=expected,
                    messages=messages,
                    events=t.events,
                    effects=[handoff.queue_row(state)],
                )
            )
        except VersionConflict:
            return False
        return True
