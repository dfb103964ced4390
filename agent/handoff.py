"""Human handoff: requested -> claimed (the bot is silent) -> released (the bot takes over again)."""

from __future__ import annotations

from typing import Literal

from agent.interfaces import Alert
from agent.types import Handoff, Message, SessionState, utcnow

Action = Literal["claim", "release"]

ACKNOWLEDGED = "handoff_acknowledged"
WAITING = "A human support agent has been asked to join; they'll reply here."
CLAIMED = "{actor} from our support team has joined and will take it from here."
RELEASED = "I'm back in this conversation. What else can I help you with?"


def request(state: SessionState, reason: str, history: list[Message]) -> Alert:
    """Hand the session to people and describe it for the admin channel."""
    state.handoff = Handoff(status="requested", reason=reason)
    state.facts.pop(ACKNOWLEDGED, None)
    last = [f"{m.role}: {m.text}" for m in history[-5:]]
    return Alert(
        kind="handoff",
        session_id=state.session_id,
        summary=f"Customer {state.customer_id or 'guest'} asked for a human: {reason}",
        details={"customer_id": state.customer_id, "channel": state.channel_type.value, "last_messages": last},
        dedupe_key=f"handoff:{state.session_id}",
    )


def acknowledgement(state: SessionState) -> str | None:
    """While people have the conversation the bot says once that someone is coming, then nothing."""
    if state.handoff is None or state.handoff.status != "requested" or state.facts.get(ACKNOWLEDGED):
        return None
    state.facts[ACKNOWLEDGED] = True
    return WAITING


def control(state: SessionState, action: Action, actor: str) -> str | None:
    """Apply an admin's claim or release; the notice for the thread, or None if nothing changed."""
    handoff = state.handoff
    if handoff is None or not handoff.active:
        return None
    handoff.status = "claimed" if action == "claim" else "released"
    handoff.by, handoff.updated_at = actor, utcnow()
    if action == "release":
        state.facts.pop(ACKNOWLEDGED, None)
        return RELEASED
    state.facts[ACKNOWLEDGED] = True
    return CLAIMED.format(actor=actor or "Someone")
