"""The admin side of handoffs: claim and release, a person's decision on an escalated action, the
re-alert sweep, and delivering admin alerts.

Each admin action or re-alert is a small turn of its own on the session: loaded, changed, and
committed with its telemetry under the session lock and the optimistic version check.
"""

from __future__ import annotations

import logging
import uuid
from datetime import datetime, timedelta

from agent.config.schema import Messages, Settings
from agent.context.log import Turn
from agent.context.output import AlertNotifier, Reply, TurnOutput
from agent.context.reads import TurnReads
from agent.context.telemetry import TelemetrySink
from agent.conversation import handoff
from agent.conversation.session import Escalation, SessionState
from agent.domain.contexts import PolicyContext, ToolContext
from agent.domain.records import TurnRecord
from agent.domain.types import Alert, Interaction, Message, OutboundMessage, SideEffect, ToolCall, ToolResult, utcnow
from agent.errors import VersionConflict
from agent.policy.engine import PolicyEngine
from agent.redaction import Redactor
from agent.sources import DataSource
from agent.storage import HandoffQueue, SessionStore
from agent.templates import render
from agent.tools.gateway import ToolExecutor
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
        policy: checks an approved action again before it runs (only its escalation is waived).
        executor: the tool gateway an approved action runs through.
        data: the business data the policy and the tool read; without these three nothing can be approved.
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
        policy: PolicyEngine | None = None,
        executor: ToolExecutor | None = None,
        data: DataSource | None = None,
    ):
        self.store, self.locks, self.telemetry, self.redactor = store, locks, telemetry, redactor
        self.settings, self.messages, self.alerts, self.queue = settings, messages, alerts, queue
        self.policy, self.executor, self.data = policy, executor, data

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

    async def decide(
        self,
        session_key: str,
        verdict: handoff.Verdict,
        actor: str,
        *,
        escalation_id: str = "",
        reason: str = "",
        reply: Reply | None = None,
    ) -> str:
        """A person approves or denies the action the policy held in this conversation; returns
        what the operator is told. Approved, it runs once through the tool gateway with every rule
        but its escalation checked again, keyed by the escalation: a second click, or a second
        worker, finds it decided (or loses the commit) and runs nothing. The thread is told either way.

        Args:
            session_key: the conversation.
            verdict: approve or deny.
            actor: who decided, as the operator page or the admin channel names them.
            escalation_id: the escalation the button or form was for; "" means the one waiting now.
            reason: the operator's reason for a denial ("" for the messages' default wording).
            reply: posts in the customer's thread; None records the message in the transcript only.
        """
        m = self.messages
        async with self.locks.hold(session_key):
            for _ in range(self.settings.commit_retries):
                saved, _history = await self.store.load(session_key, 0)
                held = saved.handoff.escalation if saved is not None and saved.handoff is not None else None
                if saved is None or held is None or (escalation_id and held.id != escalation_id):
                    return m.no_escalation
                if held.decision is not None:
                    return render(
                        m.escalation_decided, {"decision": held.decision, "actor": held.by or m.handoff_someone}
                    )
                t = self._turn(session_key, f"/{verdict} {held.id}", f"decide-{held.id}")
                result = await self._approved(saved, held, t) if verdict == handoff.APPROVE else None
                told = self._told(verdict, result, reason)
                handoff.decide(saved, verdict, actor, told if result is not None else reason)
                t.emit(
                    "escalation_decided",
                    {
                        "escalation": held.id,
                        "tool": held.tool,
                        "decision": held.decision,
                        "by": actor,
                        "ok": bool(result and result.success),
                    },
                )
                out = TurnOutput(t.interaction.id, self.redactor, reply, [])
                await out.send(OutboundMessage(kind="notice", text=told))
                meta = {"interaction_id": t.interaction.id, "escalation": held.id}
                said = f"{actor}: {verdict} {held.tool} ({held.id})" + (
                    f": {reason}" if reason and result is None else ""
                )
                admin = Message(role="system", kind="admin", text=said, metadata=meta)
                ran = [result] if result is not None and result.success else []
                ledger = {r.idempotency_key: r for r in ran if r.idempotency_key and not r.replayed}
                effects = [e for r in ran for e in r.effects]
                if await self._commit(saved, t, [admin, *out.agent_messages()], effects, ledger):
                    await out.flush()
                    if result is not None and not result.replayed:
                        await self.notify(result.alerts)
                    return told
        return m.busy

    async def _approved(self, state: SessionState, held: Escalation, t: Turn) -> ToolResult:
        """The held call run through the gateway, after the policy's other rules pass again."""
        if self.policy is None or self.executor is None or self.data is None:
            return ToolResult(tool=held.tool, success=False, error="no tools here", error_code="unavailable")
        reads = TurnReads(self.data)
        customer = await reads.get_customer(held.customer_id) if held.customer_id else None
        call = ToolCall(tool_name=held.tool, params=held.params)
        context = PolicyContext(
            session=state, intent_id=held.intent_id, agent=held.agent, customer=customer, reads=reads
        )
        decision = await self.policy.validate(call, context)
        t.emit(
            "policy_check", {"tool": held.tool, "approved_by_person": True, **decision.model_dump(exclude={"params"})}
        )
        waived = decision.requires_escalation and decision.rule == held.rule
        if not decision.allowed and not waived:
            # Something changed since it was held (the order was refunded meanwhile): it does not run.
            reason = "; ".join(v for v in decision.violations if v) or "not allowed"
            return ToolResult(tool=held.tool, success=False, error=reason, error_code="policy_denied")
        tool_context = ToolContext(
            session_id=state.session_id,
            interaction_id=t.interaction.id,
            agent=held.agent,
            intent_id=held.intent_id,
            customer_id=held.customer_id,
            speaker=held.speaker,
            action_hash=f"escalation:{held.id}",  # the idempotency key: one run per escalation
            reads=reads,
        )
        result = await self.executor.execute(call, tool_context)
        t.emit(
            "tool_execute",
            {"tool": held.tool, "ok": result.success, "error_code": result.error_code, "replayed": result.replayed},
        )
        return result

    def _told(self, verdict: handoff.Verdict, result: ToolResult | None, reason: str) -> str:
        """What the customer's thread is told of the decision."""
        m = self.messages
        if result is None:
            return render(m.escalation_denied, {"reason": reason or m.escalation_denied_default})
        if not result.success:
            return render(m.escalation_failed, {"error": result.error or ""})
        done = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in (result.data or {}).items())
        return render(m.escalation_approved, {"result": done})

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

    def _turn(self, session_key: str, text: str, interaction_id: str = "") -> Turn:
        interaction_id = interaction_id or f"control-{uuid.uuid4().hex[:12]}"
        interaction = Interaction(id=interaction_id, text=text, session_key=session_key)
        return Turn(interaction, session_key, self.telemetry, self.redactor)

    async def _commit(
        self,
        state: SessionState,
        t: Turn,
        messages: list[Message],
        effects: list[SideEffect] | None = None,
        ledger: dict[str, ToolResult] | None = None,
    ) -> bool:
        expected = state.version
        state.version += 1
        try:
            await self.store.commit(
                TurnRecord(
                    state=state,
                    expected_version=expected,
                    messages=messages,
                    events=t.events,
                    effects=[*(effects or []), handoff.queue_row(state)],
                    ledger=ledger or {},
                )
            )
        except VersionConflict:
            return False
        return True
