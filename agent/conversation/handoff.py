"""Human handoff: requested -> claimed (the bot is silent) -> released (the bot takes over again).

A request comes from the human_handoff intent, a "yes" to the unknown-intent offer, or a policy
escalation; admins get an alert with a Claim action. An unclaimed request is alerted again after a
configured time (`HandoffDesk.realert_unclaimed`). Every transition is saved in the session state
and mirrored in the handoff queue table (`queue_row`), which the re-alert sweep reads.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from agent.config.schema import Messages
from agent.conversation.session import Escalation, Handoff, SessionState
from agent.domain.types import Alert, Intent, Message, SideEffect, utcnow
from agent.templates import render

Action = Literal["claim", "release"]
Verdict = Literal["approve", "deny"]

# Admin-side actions a channel renders as buttons on the alert: Claim, then Resume bot; on an
# escalated action, Approve and Deny.
CLAIM, RESUME, APPROVE, DENY = "claim", "release", "approve", "deny"


def request(
    state: SessionState,
    reason: str,
    history: list[Message],
    *,
    kind: str = "handoff",
    summary: str | None = None,
) -> Alert:
    """Hand the session to people and describe it for the admin channel."""
    state.handoff = Handoff(status="requested", reason=reason)
    who = state.customer_id or "guest"
    return _alert(state, history, kind, summary or f"Customer {who} asked for a human: {reason}")


def _alert(state: SessionState, history: list[Message], kind: str, summary: str) -> Alert:
    last = [f"{m.role}: {m.text}" for m in history[-5:]]
    sent = state.handoff.alerts_sent if state.handoff else 1
    since = state.handoff.requested_at.isoformat() if state.handoff else ""
    return Alert(
        kind=kind,
        session_id=state.session_id,
        summary=summary,
        details={
            "customer_id": state.customer_id,
            "channel": state.channel_type.value,
            "last_messages": last,
            "actions": [CLAIM],
            "alert_number": sent,
        },
        # A re-alert is a new message on purpose, so it must not be de-duplicated against the first.
        dedupe_key=f"handoff:{state.session_id}:{since}:{sent}",
    )


def escalate(state: SessionState, alert: Alert, held: Escalation) -> Alert:
    """The handoff just requested is for an action held for a person: it is kept with the handoff,
    and the alert offers Approve and Deny for it."""
    assert state.handoff is not None
    state.handoff.escalation = held
    details = {**alert.details, "actions": [CLAIM, APPROVE, DENY], "escalation_id": held.id, "tool": held.tool}
    return alert.model_copy(update={"details": details})


def decide(state: SessionState, verdict: Verdict, actor: str, note: str) -> Escalation:
    """Record a person's decision on the held action and give the conversation back to the bot."""
    h = state.handoff
    assert h is not None and h.escalation is not None
    h.escalation.decision = "approved" if verdict == APPROVE else "denied"
    h.escalation.by, h.escalation.note, h.escalation.decided_at = actor, note, utcnow()
    h.status, h.by, h.updated_at, h.acknowledged = "released", actor, utcnow(), False
    return h.escalation


def queue_row(state: SessionState) -> SideEffect:
    """The handoff's current state as a row of the handoff queue."""
    h = state.handoff or Handoff(status="released")
    data = {
        "session_id": state.session_id,
        "status": h.status,
        "reason": h.reason,
        "requested_at": h.requested_at.isoformat(),
        "alerted_at": h.alerted_at.isoformat(),
        "updated_at": h.updated_at.isoformat(),
    }
    return SideEffect(kind="handoff_state", key=state.session_id, data=data)


def due(state: SessionState, now: datetime, after_seconds: float) -> bool:
    h = state.handoff
    return h is not None and h.status == "requested" and (now - h.alerted_at).total_seconds() >= after_seconds


def realert(state: SessionState, history: list[Message], now: datetime) -> Alert:
    """Nobody claimed it yet: tell the admins again, saying how long the customer has waited."""
    h = state.handoff
    assert h is not None
    h.alerts_sent += 1
    h.alerted_at = now
    minutes = int((now - h.requested_at).total_seconds() // 60)
    summary = f"Still unclaimed after {minutes} min: customer {state.customer_id or 'guest'} is waiting ({h.reason})"
    if h.escalation is not None and h.escalation.decision is None:
        # Still waiting for a decision: the reminder carries Approve and Deny again.
        return escalate(state, _alert(state, history, "policy_escalation", summary), h.escalation)
    return _alert(state, history, "handoff", summary)


def acknowledgement(state: SessionState, m: Messages) -> str | None:
    """While people have the conversation the bot says once that someone is coming, then nothing."""
    if state.handoff is None or state.handoff.status != "requested" or state.handoff.acknowledged:
        return None
    state.handoff.acknowledged = True
    return m.handoff_waiting


def control(state: SessionState, action: Action, actor: str, m: Messages) -> str | None:
    """Apply an admin's claim or release; the notice for the thread, or None if nothing changed."""
    handoff = state.handoff
    if handoff is None or not handoff.active:
        return None
    handoff.status = "claimed" if action == "claim" else "released"
    handoff.by, handoff.updated_at = actor, utcnow()
    if action == "release":
        handoff.acknowledged = False
        return m.handoff_released
    handoff.acknowledged = True
    return render(m.handoff_claimed, {"actor": actor or m.handoff_someone})


def handoff_intent(eligible: list[Intent]) -> str | None:
    """The intent a yes to the offer of a person starts (`handoff: true` in intents.yaml), when
    this speaker may use one here."""
    return next((i.id for i in eligible if i.handoff), None)
