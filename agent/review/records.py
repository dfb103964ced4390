"""Misses kept for review: what a turn did not understand, read from what the turn already recorded.

A turn's telemetry events say how it read the message (`intent_classified`: the intent, its
confidence, the ranked `candidates`, the intents offered as a choice in `clarify` and the one the
customer took in `chosen`) and how it answered (`response_generated`: a fallback, out of scope);
its side effects say whether it handed the conversation to a person; the conversation's previous
messages say whether it follows a fallback. From those alone, a turn yields at most one review
item for its own message, plus one for the message before it when this one rephrases a miss.
No item holds a secret, an e-mail address or a phone number: texts pass the same redactor as traces.
"""

from __future__ import annotations

import hashlib
from typing import Any

from agent.domain.records import TelemetryEvent, TurnRecord
from agent.domain.types import Message
from agent.redaction import Redactor
from agent.review.items import ReviewItem, ReviewKind, ReviewReading


def item_id(interaction_id: str, kind: str) -> str:
    """A short stable id: the same turn replayed (a retried commit) writes the same item once."""
    return hashlib.blake2b(f"{interaction_id}\x00{kind}".encode(), digest_size=6).hexdigest()


def _classified(events: list[TelemetryEvent]) -> dict[str, Any]:
    """The turn's reading: its first `intent_classified` payload (a message of several requests
    is reviewed by its first request; a choice made is read from any event that carries it)."""
    found = [e.payload for e in events if e.stage == "intent_classified"]
    return found[0] if found else {}


def reading_of(events: list[TelemetryEvent]) -> ReviewReading:
    payload = _classified(events)
    chosen = next((e.payload["chosen"] for e in events if "chosen" in e.payload), None)
    clarify = next((list(e.payload["clarify"]) for e in events if e.payload.get("clarify")), [])
    candidates = [(str(c[0]), round(float(c[1]), 3)) for c in payload.get("candidates") or [] if len(c) == 2]
    out_of_scope = any(e.payload.get("out_of_scope") for e in events if e.stage == "response_generated")
    return ReviewReading(
        intent=payload.get("intent_id"),
        confidence=round(float(payload.get("confidence") or 0.0), 3),
        candidates=candidates,
        clarify=clarify,
        chosen=chosen,
        out_of_scope=out_of_scope,
        move=payload.get("reply"),
        values={k: v for k, v in (payload.get("params") or {}).items()},
    )


def _fell_back(events: list[TelemetryEvent]) -> bool:
    return any(e.payload.get("fallback") for e in events if e.stage == "response_generated")


def misses(record: TurnRecord, history: list[Message], redactor: Redactor) -> list[ReviewItem]:
    """The review items of one committed turn (usually none).

    Args:
        record: what the turn commits: its events, messages, side effects and the session state.
        history: the conversation's messages before this turn, oldest first.
        redactor: the process's scrubber (secrets by value, personal data by pattern).
    """
    user = next((m for m in reversed(record.messages) if m.role == "user"), None)
    if user is None or not user.text.strip():
        return []
    state, events = record.state, record.events
    interaction = str(user.metadata.get("interaction_id") or (events[0].interaction_id if events else ""))
    reading = reading_of(events)
    base = {
        "session_id": state.session_id,
        "channel": state.channel_type.value,
        "workspace": state.workspace_id,
        "reading": reading,
        "created_at": user.timestamp,
    }
    found: list[ReviewItem] = []
    kind: ReviewKind | None = None
    if any(e.payload.get("requires_escalation") for e in events if e.stage == "policy_check"):
        kind = "escalation"  # a policy asked for a person before an action runs
    elif any(e.kind == "handoff" for e in record.effects):
        kind = "handoff"
    elif reading.clarify or reading.chosen:
        kind = "clarification"
    elif _fell_back(events):
        kind = "out_of_scope" if reading.out_of_scope else "fallback"
    if kind is not None:
        # A pick ("2") is reviewed with the message the question was about, which it says the meaning of.
        asked = next((str(e.payload["asked_about"]) for e in events if e.payload.get("asked_about")), None)
        # One item per question: the pick completes the item its question left (by that turn's id),
        # which holds what was offered (adapters/storage/review.py merges the choice into it).
        question = _asking(history, asked) if kind == "clarification" and reading.chosen else None
        found.append(
            ReviewItem(
                id=item_id(question or interaction, kind),
                kind=kind,
                text=redactor.text(asked if kind == "clarification" and asked else user.text),
                interaction_id=interaction,
                **base,
            )
        )
    # A bare "no" right after an answer ("no, that's not what I meant") says the answer misread the
    # message before it: that one is kept, with what the customer said.
    if kind is None and _says_misread(events) and history:
        before = _answered_before(history)
        return found + ([_correction(before, user, interaction, base, redactor)] if before is not None else [])
    # A message read as an intent right after the bot fell back is often the customer saying the
    # missed message again in other words: the missed one, with the intent its rephrase read as.
    if kind is None and reading.intent and history:
        before = _missed_before(history)
        if before is not None:
            found.append(_correction(before, user, interaction, base, redactor))
    return found


def _asking(history: list[Message], asked: str | None) -> str | None:
    """The interaction id of the customer's message a clarifying question was about."""
    users = [m for m in reversed(history) if m.role == "user"]
    found = next((m for m in users if asked is not None and m.text == asked), users[0] if users else None)
    return str(found.metadata.get("interaction_id") or "") or None if found is not None else None


def _correction(
    before: Message, user: Message, interaction: str, base: dict[str, Any], redactor: Redactor
) -> ReviewItem:
    """The earlier message a correction says was misread, with what the customer said next."""
    missed_id = str(before.metadata.get("interaction_id") or "")
    return ReviewItem(
        id=item_id(missed_id or interaction, "correction"),
        kind="correction",
        text=redactor.text(before.text),
        interaction_id=missed_id or interaction,
        followed_by=redactor.text(user.text),
        **base,
    )


def _says_misread(events: list[TelemetryEvent]) -> bool:
    """The turn read as a bare refusal with nothing asked of the customer."""
    return any(
        e.payload.get("control") == "empty" and e.payload.get("reply") == "refusal"
        for e in events
        if e.stage == "intent_classified"
    )


def _answered_before(history: list[Message]) -> Message | None:
    """The customer's previous message, when the bot's last word on it was an answer."""
    last_agent = next((m for m in reversed(history) if m.role == "agent"), None)
    if last_agent is None or last_agent.kind != "answer":
        return None
    return next((m for m in reversed(history) if m.role == "user"), None)


def _missed_before(history: list[Message]) -> Message | None:
    """The customer's previous message, when the bot's last word on it was the fallback."""
    last_agent = next((m for m in reversed(history) if m.role == "agent"), None)
    if last_agent is None or last_agent.kind != "fallback":
        return None
    return next((m for m in reversed(history) if m.role == "user"), None)
